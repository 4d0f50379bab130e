// Background jobs with several nodes: each tick of the expiry job runs on exactly one node (a lock in Redis
// names the tick), and when the node that ran a tick dies, the next ticks run on the others. Ticks are whole
// seconds (--expiry-job-interval 1). Each node logs the number of every tick it runs (at --log-level debug), so
// the test reads which node ran which tick instead of counting runs over a stretch of wall-clock time: how late
// a timer fires on a loaded machine changes when a tick runs, never whether two nodes ran it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ChildNode } from '../support/child-node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { ADMIN_TOKEN, freshPrefix, startNodes, stopNode, stopNodes, waitFor } from './fleet.ts';

/**
 * The expiry ticks each node says it ran, from the log lines on its stdout (read line by line here: the
 * node's combined output can interleave a stderr chunk into a stdout line).
 */
const ticksOf = new Map<ChildNode, number[]>();
function recordTicks(node: ChildNode): void {
  const ticks: number[] = [];
  ticksOf.set(node, ticks);
  let partial = '';
  node.process.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (!line.includes('"job tick ran"')) continue;
      const entry = JSON.parse(line) as { job?: string; tick?: number };
      if (entry.job === 'expiry' && typeof entry.tick === 'number') ticks.push(entry.tick);
    }
  });
}
const ticksRun = (node: ChildNode): number[] => ticksOf.get(node)!;

/** Every tick run by any of the nodes, with the nodes (indexes) that ran it. */
function whoRan(nodes: readonly ChildNode[]): Map<number, number[]> {
  const runs = new Map<number, number[]>();
  nodes.forEach((node, i) => {
    for (const tick of ticksRun(node)) runs.set(tick, [...(runs.get(tick) ?? []), i]);
  });
  return runs;
}

/** Fails on a tick run by two nodes, or on more than one tick skipped in the span of ticks after `from`. */
function assertOncePerTick(runs: Map<number, number[]>, from: number, what: string): number[] {
  const ticks = [...runs.keys()].filter((tick) => tick > from).sort((a, b) => a - b);
  for (const tick of ticks) assert.equal(runs.get(tick)!.length, 1, `${what}: tick ${tick} ran on nodes ${runs.get(tick)}`);
  const span = ticks.at(-1)! - ticks[0]! + 1;
  // A tick is skipped only if every node's timer fired a whole interval late: allowed once, on a loaded machine.
  assert.ok(span - ticks.length <= 1, `${what}: ticks ${ticks.join(', ')} skip ${span - ticks.length}`);
  return ticks;
}

describe('background jobs on three nodes', () => {
  let redis: RedisServer;
  let nodes: ChildNode[];

  before(async () => {
    redis = await startRedisServer();
    nodes = await startNodes(3, redis.url, [
      '--redis-key-prefix', freshPrefix(),
      '--admin-token', ADMIN_TOKEN,
      '--expiry-job-interval', '1',
      '--log-level', 'debug',
    ]);
    nodes.forEach(recordTicks);
  });
  after(async () => {
    await stopNodes(nodes ?? []);
    await redis?.destroy();
  });

  it('the expiry job runs exactly once per tick across the nodes, and keeps running when the node that ran a tick is killed', async () => {
    // Four ticks after the first one every node could have taken (a node started later may have missed it).
    const first = await waitFor('a first tick', () => (whoRan(nodes).size > 0 ? Math.min(...whoRan(nodes).keys()) : undefined), 10_000, 20);
    await waitFor('four more ticks', () => [...whoRan(nodes).keys()].filter((tick) => tick > first).length >= 4, 20_000, 20);
    const before = assertOncePerTick(whoRan(nodes), first, 'three nodes');

    // The node that runs the next tick is killed right after it.
    const last = before.at(-1)!;
    const ranIt = await waitFor('the next tick', () => {
      const next = Math.min(...[...whoRan(nodes).keys()].filter((tick) => tick > last));
      return Number.isFinite(next) ? whoRan(nodes).get(next)![0]! + 1 : 0; // 0 (falsy) until some node ran it
    }, 10_000, 5) - 1;
    const victim = nodes[ranIt]!;
    victim.process.kill('SIGKILL');
    await victim.exited;
    const survivors = nodes.filter((node) => node !== victim);
    const victimsLast = Math.max(...ticksRun(victim));

    // The ticks after the victim's last one: three at least, each on one of the two nodes left.
    await waitFor('three ticks after the kill', () => [...whoRan(survivors).keys()].filter((tick) => tick > victimsLast).length >= 3, 20_000, 20);
    const runs = whoRan(nodes);
    const later = assertOncePerTick(runs, victimsLast, 'after the kill');
    assert.ok(later[0]! - victimsLast <= 2, `the first tick after the kill is ${later[0]}, the victim's last ${victimsLast}`);
    // No tick ran twice in the whole run, before and after the kill.
    for (const [tick, ran] of runs) assert.equal(ran.length, 1, `tick ${tick} ran on nodes ${ran}`);
    await stopNode(victim);
  });
});
