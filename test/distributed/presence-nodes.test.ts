// Presence across nodes (issue 34): two nodes share one real Redis and one clock; visitors join and beat on
// node B, whose marks reach Redis only when B merges them (every 2 s), while node A runs the admission tick.
// A mark B has not merged yet must never make anyone look absent to A: the visitors who are there are admitted
// in order, none is passed, and nobody arrives late — so the room is never over total_active_users. (Before,
// A passed B's visitors as absent, they claimed at once as late arrivals, and the three-node load test counted
// 69 admissions over total_active_users: 40.) The clock moves only when the test moves it; B merges when the
// test tells it to (its 2 s timer never fires within a step of this test).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admissionJob } from '../../src/app.ts';
import type { RoomSettings } from '../../src/domain/room-settings.ts';
import { join, read } from '../support/api-calls.ts';
import { eventSettings, startTestNode, TestClock, type TestNode } from '../support/node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

const room = (eventId: string, extra: Partial<RoomSettings> = {}): RoomSettings =>
  eventSettings(eventId, {
    admission: 'automatic',
    new_users_per_minute: 6000,
    total_active_users: 2,
    presence_timeout: 60,
    arrival_window: 120,
    queue_position_expiry_period: 900,
    ...extra,
  });

describe('presence on two nodes sharing one Redis', () => {
  let redis: RedisServer;
  let a: TestNode;
  let b: TestNode;
  const clock = new TestClock();

  before(async () => {
    redis = await startRedisServer();
    const config = {
      store: { kind: 'redis' as const, url: redis.url },
      redisKeyPrefix: `presence-${process.pid}:`,
      hotReadTtlMs: 0,
      events: [room('Joins'), room('Away', { total_active_users: 1 })],
    };
    a = await startTestNode(config, { clock });
    b = await startTestNode(config, { clock });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await redis?.destroy();
  });

  /** One admission tick, on node A. */
  async function tick(): Promise<void> {
    clock.advance(1);
    assert.equal(await a.scheduler.runTick(admissionJob(a.room), Math.floor(clock.now() / 1000)), true);
  }
  /** A beat of the waiting page (GET /queue_num with beat=1) through `node`. */
  const beat = async (node: TestNode, eventId: string, requestId: string) =>
    assert.equal((await node.get(`/queue_num?event_id=${eventId}&request_id=${requestId}&beat=1`)).status, 200);
  const serving = async (eventId: string) => (await a.room.reports.counters(eventId)).serving;
  const claim = (node: TestNode, eventId: string, requestId: string) =>
    read(node.post('/generate_token', { event_id: eventId, request_id: requestId }));
  const figures = async (eventId: string) => {
    const res = await read<{ presence: Record<string, number> }>(a.admin('GET', `/rooms/${eventId}/figures`));
    assert.equal(res.status, 200, res.text);
    return res.body.presence;
  };

  it('visitors who joined and beat on the other node, not merged yet, are admitted in order: nobody passed, nobody late, no overshoot', async () => {
    const onB = [await join(b, 'Joins'), await join(b, 'Joins'), await join(b, 'Joins')];
    for (const id of onB) await beat(b, 'Joins', id);
    const onA = await join(a, 'Joins');
    await beat(a, 'Joins', onA);
    await tick();
    assert.equal(await serving('Joins'), 2, 'two places: positions 1 and 2 (B\'s), not 4 past three "absent" ones');
    for (const id of [...onB, onA]) {
      const res = await claim(b, 'Joins', id);
      assert.ok(res.status === 200 || res.status === 202, res.text);
    }
    await b.room.presence.flush();
    await tick();
    const seen = await figures('Joins');
    assert.equal(seen.late_arrivals, 0, 'nobody was passed, so nobody arrives late');
    assert.equal(seen.overshoot, 0);
    assert.ok(seen.overshoot! <= seen.late_arrivals!, 'overshoot ≤ late arrivals');
    assert.equal((await a.room.reports.counters('Joins')).tokens, 2, 'exactly total_active_users in');
  });

  it('a visitor whose beats stopped is passed across nodes, one who beats on the other node is not; the one passed comes back as a late arrival within the bound', async () => {
    const gone = await join(b, 'Away');
    const staying = await join(b, 'Away');
    await beat(b, 'Away', gone);
    await beat(b, 'Away', staying);
    await b.room.presence.flush();
    // A minute and more: `staying` beats on B every 10 s; B merges each beat but the last before A's tick.
    for (let step = 0; step < 7; step++) {
      clock.advance(10);
      await beat(b, 'Away', staying);
      if (step < 6) await b.room.presence.flush();
    }
    await tick();
    assert.equal(await serving('Away'), 2, 'position 1 (gone for 70 s) passed, position 2 admitted');
    assert.equal((await claim(b, 'Away', staying)).status, 200);
    assert.equal((await claim(b, 'Away', gone)).status, 200, 'passed while absent, it keeps its place and claims at once');
    const seen = await figures('Away');
    assert.equal(seen.late_arrivals, 1);
    assert.equal(seen.overshoot, 1);
    assert.ok(seen.overshoot! <= seen.late_arrivals!, 'overshoot ≤ late arrivals');
  });
});
