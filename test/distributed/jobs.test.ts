// Background jobs with several nodes: each tick of the expiry job runs on exactly one node (a lock in Redis
// names the tick), and when the node that ran a tick dies, the next ticks run on the others. Ticks are
// aligned to whole seconds with --expiry-job-interval 1, so the test reads the counters half-way between
// ticks and waits for the wall clock itself: time passing is what is under test.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ChildNode } from '../support/child-node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { ADMIN_TOKEN, freshPrefix, metricValue, startNodes, stopNode, stopNodes, waitFor } from './fleet.ts';

const expiryRuns = (node: ChildNode) => metricValue(node.url, 'anteroom_job_runs_total', { job: 'expiry', outcome: 'ok' });
const runsOf = (nodes: readonly ChildNode[]) => Promise.all(nodes.map(expiryRuns));
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** Waits until the wall clock reaches `second` (epoch seconds, may be fractional). */
async function until(second: number): Promise<void> {
  await waitFor(`the wall clock to reach ${second}`, () => Date.now() >= second * 1000, 15_000, 5);
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
    ]);
  });
  after(async () => {
    await stopNodes(nodes ?? []);
    await redis?.destroy();
  });

  it('the expiry job runs exactly once per tick across the nodes, and keeps running when the node that ran a tick is killed', async () => {
    // Every node is ticking (each one's first tick may have been won by another, so wait for the total).
    await waitFor('the first ticks', async () => sum(await runsOf(nodes)) >= 2, 10_000, 50);

    // Counts are read half-way between ticks (which fire on whole seconds), over three ticks each time.
    const s0 = Math.ceil(Date.now() / 1000);
    await until(s0 + 0.5);
    const start = await runsOf(nodes);
    await until(s0 + 3.5);
    const end = await runsOf(nodes);
    const ticks = sum(end) - sum(start);
    // ±1 allows for a tick delayed past the half-second on a loaded machine.
    assert.ok(Math.abs(ticks - 3) <= 1, `${ticks} runs in 3 ticks (per node: ${start} → ${end})`);

    // The node that runs the next tick (its count moves) is killed right after it.
    const ranIt = await waitFor('the next tick', async () => {
      const counts = await runsOf(nodes);
      return counts.findIndex((count, i) => count > end[i]!) + 1; // 0 (falsy) while no node has run it
    }, 5000, 20) - 1;
    const victim = nodes[ranIt]!;
    victim.process.kill('SIGKILL');
    await victim.exited;
    const survivors = nodes.filter((node) => node !== victim);

    const s1 = Math.ceil(Date.now() / 1000);
    await until(s1 + 0.5);
    const from = await runsOf(survivors);
    await until(s1 + 3.5);
    const to = await runsOf(survivors);
    const later = sum(to) - sum(from);
    assert.ok(Math.abs(later - 3) <= 1, `${later} runs in 3 ticks after the kill (per node: ${from} → ${to})`);
    await stopNode(victim);
  });
});
