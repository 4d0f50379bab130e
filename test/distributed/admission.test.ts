// Automatic admission with three nodes on one Redis (spec/rooms.md §2): each admission tick runs on exactly one
// node (the job lock names the tick), and what the three admit together respects the room's limits — at most
// ⌈n/60⌉ a second and n a minute, at most total_active_users in at once. The nodes run on the wall clock and
// tick every second: time passing is what is under test, so the test waits for the clock itself.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { ChildNode } from '../support/child-node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { ADMIN_TOKEN, freshPrefix, join, metricValue, startNodes, stopNodes, waitFor } from './fleet.ts';

const admissionRuns = (node: ChildNode) => metricValue(node.url, 'anteroom_job_runs_total', { job: 'admission', outcome: 'ok' });
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** Waits until the wall clock reaches `second` (epoch seconds, may be fractional). */
async function until(second: number): Promise<void> {
  await waitFor(`the wall clock to reach ${second}`, () => Date.now() >= second * 1000, 70_000, 5);
}

describe('automatic admission on three nodes', () => {
  let redis: RedisServer;
  let inspector: Redis;
  let nodes: ChildNode[];
  const prefix = freshPrefix();
  const dir = mkdtempSync(joinPath(tmpdir(), 'anteroom-admission-'));

  before(async () => {
    const events = [
      // ⌈4/60⌉ = 1 a second, and 4 a minute: after four ticks nobody more for the rest of the minute.
      { event_id: 'Rate', admission: 'automatic', new_users_per_minute: 4, total_active_users: 1000 },
      // Fast, but at most 5 in at once (nobody claims here, so the five admitted keep their places).
      { event_id: 'Capacity', admission: 'automatic', new_users_per_minute: 6000, total_active_users: 5 },
    ];
    writeFileSync(joinPath(dir, 'events.json'), JSON.stringify({ events }));
    redis = await startRedisServer();
    inspector = new Redis(redis.url);
    nodes = await startNodes(3, redis.url, [
      '--redis-key-prefix', prefix,
      '--admin-token', ADMIN_TOKEN,
      '--config', joinPath(dir, 'events.json'),
    ]);
  });
  after(async () => {
    await stopNodes(nodes ?? []);
    inspector?.disconnect();
    await redis?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const serving = async (eventId: string) => Number((await inspector.hget(`${prefix}{${eventId}}:c`, 's')) ?? 0);

  it('each tick runs once across the nodes, and the admissions of all three respect the limits', async () => {
    for (let i = 0; i < 20; i++) {
      assert.ok(await join(nodes[i % 3]!.url, 'Rate'));
      assert.ok(await join(nodes[i % 3]!.url, 'Capacity'));
    }

    // Once per tick. A run of tick t (second t of the wall clock) starts at or after second t, so the runs
    // counted between two readings belong to the seconds from the one before the first reading was sent (a
    // run then still finishing) to when the second reading came back: at most one run each, however late a
    // loaded machine runs them. Three nodes that each ran every tick would show about three times as many.
    const sentAt = Date.now();
    const start = await Promise.all(nodes.map(admissionRuns));
    await until(Math.floor(sentAt / 1000) + 3.5);
    const end = await Promise.all(nodes.map(admissionRuns));
    const seconds = Math.floor(Date.now() / 1000) - Math.floor(sentAt / 1000) + 2;
    const ticks = sum(end) - sum(start);
    assert.ok(ticks >= 1 && ticks <= seconds, `${ticks} admission runs in ${seconds} ticks (per node: ${start} → ${end})`);

    // Rate: the serving history says when each position was first reached; at most one per second.
    await waitFor('the first four admissions of Rate', async () => (await serving('Rate')) >= 4, 15_000, 100);
    const firstAdmission = Math.min(
      ...(await inspector.zrange(`${prefix}{Rate}:sh`, '0', '-1')).map((member) => Number(member.split(':')[1])),
    );
    await until(firstAdmission + 8.5); // four ticks more than the four it took
    assert.equal(await serving('Rate'), 4, 'n = 4 in the first minute, whichever nodes ran the ticks');
    const history = (await inspector.zrange(`${prefix}{Rate}:sh`, '0', '-1')).map((member) => member.split(':').map(Number));
    const perSecond = new Map<number, number>();
    let previous = 0;
    for (const [value, at] of history as [number, number][]) {
      perSecond.set(at, (perSecond.get(at) ?? 0) + value - previous);
      previous = value;
    }
    assert.ok([...perSecond.values()].every((n) => n <= 1), `admissions per second: ${JSON.stringify([...perSecond])}`);

    // Capacity: five in at once, not one more, though the rate would allow a hundred a second.
    assert.equal(await serving('Capacity'), 5);
  });
});
