// Rooms that admit by themselves (spec/rooms.md §2) on a real node, with a test clock and the admission job's
// ticks run by hand through the node's scheduler (each tick claimed through the job lock, as on a live node):
// joins refused by the phase, `off` rooms, the rate and capacity limits, the closed loop (a session or a place
// that ends frees its place at the next tick), paused rooms, the start time, and inlets that never pass the
// queue. No sleeps: time moves only when a test advances the clock.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admissionJob } from '../../src/app.ts';
import type { RoomSettings } from '../../src/domain/room-settings.ts';
import { join, positionOf, read } from '../support/api-calls.ts';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';

const automatic = (eventId: string, limits: { perMinute: number; active: number }, extra: Partial<RoomSettings> = {}) =>
  eventSettings(eventId, {
    admission: 'automatic',
    new_users_per_minute: limits.perMinute,
    total_active_users: limits.active,
    ...extra,
  });

/** The schedule fields (spec/rooms.md §3), ISO 8601 UTC. */
type Schedule = { prequeue_start_time?: string; event_start_time?: string; event_end_time?: string };
const scheduled = (settings: RoomSettings, schedule: Schedule) => ({ ...settings, ...schedule }) as RoomSettings;

describe('rooms that admit by themselves', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ events: [eventSettings('Sample')] });
  });
  after(() => node.stop());

  const iso = (secondsFromNow: number) => new Date(node.clock.now() + secondsFromNow * 1000).toISOString();
  /** One tick of the admission job, claimed through the scheduler's lock for the clock's current second. */
  async function tick(): Promise<void> {
    assert.equal(await node.scheduler.runTick(admissionJob(node.room), Math.floor(node.clock.now() / 1000)), true);
  }
  const serving = async (eventId: string) => (await node.room.reports.counters(eventId)).serving;
  const claim = (eventId: string, requestId: string) =>
    read<{ error?: string }>(node.post('/generate_token', { event_id: eventId, request_id: requestId }));
  const endSession = async (eventId: string, requestId: string, status: 1 | -1) =>
    assert.equal((await node.admin('POST', '/update_session', { event_id: eventId, request_id: requestId, status })).status, 200);
  const joinMany = async (eventId: string, n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await join(node, eventId));
    return ids;
  };

  describe('joins and the phase', () => {
    const joinStatus = async (eventId: string) => read(node.post('/assign_queue_num', { event_id: eventId }));

    it('a closed room refuses joins with 403 Waiting room is closed; paused and off rooms accept them', async () => {
      await node.rooms.put(eventSettings('Shut', { state: 'closed' }));
      const res = await joinStatus('Shut');
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, { error: 'Waiting room is closed' });
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      for (const state of ['paused', 'off', 'open'] as const) {
        await node.rooms.put(eventSettings('Shut', { state }));
        assert.equal((await joinStatus('Shut')).status, 200, state);
      }
    });

    it('before prequeue_start_time joins answer 403 Waiting room is not open yet; from it they are accepted', async () => {
      await node.rooms.put(scheduled(eventSettings('Soon'), { prequeue_start_time: iso(10), event_start_time: iso(20) }));
      const res = await joinStatus('Soon');
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, { error: 'Waiting room is not open yet' });
      assert.equal(await node.room.rooms.roomPhase('Soon'), 'before');
      node.clock.advance(10);
      assert.equal((await joinStatus('Soon')).status, 200);
      assert.equal(await node.room.rooms.roomPhase('Soon'), 'prequeue');
    });

    it('after event_end_time the room has ended: joins answer 403 Waiting room is closed', async () => {
      await node.rooms.put(scheduled(eventSettings('Over'), { event_start_time: iso(-20), event_end_time: iso(-1) }));
      assert.deepEqual((await joinStatus('Over')).body, { error: 'Waiting room is closed' });
      assert.equal(await node.room.rooms.roomPhase('Over'), 'ended');
    });
  });

  it('an off room serves every arrival at once: a claim right after the join, and the counter follows at the tick', async () => {
    await node.rooms.put(eventSettings('Free', { state: 'off' }));
    const [a, b] = await joinMany('Free', 2);
    assert.equal((await claim('Free', a!)).status, 200, 'served before any tick');
    assert.equal(await serving('Free'), 0);
    await tick();
    assert.equal(await serving('Free'), 2);
    assert.equal((await claim('Free', b!)).status, 200);
    assert.equal((await read<{ waiting_num: number }>(node.get('/waiting_num?event_id=Free'))).body.waiting_num, 0);
  });

  it('admits at most ⌈n/60⌉ in any second and n in any 60 s, never past the queue', async () => {
    await node.rooms.put(automatic('Rate', { perMinute: 3, active: 1000 }));
    await joinMany('Rate', 5);
    await tick();
    assert.equal(await serving('Rate'), 1);
    await tick(); // the same second again (a late tick): nothing more this second
    assert.equal(await serving('Rate'), 1);
    for (const expected of [2, 3, 3, 3]) {
      node.clock.advance(1);
      await tick();
      assert.equal(await serving('Rate'), expected);
    }
    node.clock.advance(55); // 59 s after the first admission: still inside its minute
    await tick();
    assert.equal(await serving('Rate'), 3);
    node.clock.advance(1); // the first admission's minute is over
    await tick();
    assert.equal(await serving('Rate'), 4);

    await node.rooms.put(automatic('Fast', { perMinute: 6000, active: 1000 }));
    await joinMany('Fast', 30);
    await tick();
    assert.equal(await serving('Fast'), 30, '100 a second allowed, 30 waiting: never past the last position');
  });

  it('closed loop: a completed, abandoned, expired or left place is given to the next visitor at the next tick', async () => {
    await node.rooms.put(
      // These visitors never poll: presence off (rooms with presence: test/domain/presence-admission.test.ts).
      automatic('Loop', { perMinute: 6000, active: 2 }, { validity_period: 120, enable_queue_position_expiry: true, queue_position_expiry_period: 60, presence_timeout: 0 }),
    );
    const ids = await joinMany('Loop', 8);
    const next = async (expected: number, why: string) => {
      node.clock.advance(1);
      await tick();
      assert.equal(await serving('Loop'), expected, why);
    };
    await next(2, 'two places');
    await next(2, 'both admitted, neither claimed yet: full');
    assert.equal((await claim('Loop', ids[0]!)).status, 200);
    await next(2, 'a claimed session still holds its place');

    await endSession('Loop', ids[0]!, 1);
    await next(3, 'a completed session frees its place');

    assert.equal((await read(node.post('/leave_queue', { event_id: 'Loop', request_id: ids[1]! }))).status, 200);
    await next(4, 'an admitted visitor who left frees their place');

    assert.equal((await claim('Loop', ids[2]!)).status, 200);
    await endSession('Loop', ids[2]!, -1);
    await next(5, 'an abandoned session frees its place');

    // Positions 4 and 5 never claim: their claim window (60 s) expires and the expiry job records it.
    node.clock.advance(61);
    await node.room.admission.advanceExpiry('Loop');
    await next(7, 'expired claim windows free their places');

    assert.equal((await claim('Loop', ids[5]!)).status, 200); // position 6, token valid 120 s
    await next(7, 'full: one session, one admitted visitor');
    assert.equal((await read(node.post('/leave_queue', { event_id: 'Loop', request_id: ids[6]! }))).status, 200);
    await next(8, 'the left place goes to the last visitor');
    node.clock.advance(121);
    await tick();
    assert.equal(await serving('Loop'), 8, 'an expired token frees a place, but nobody is left to admit');
    assert.equal(await positionOf(node, ids[7]!, 'Loop'), 8);
  });

  it('nobody is admitted while paused or closed, nor before event_start_time', async () => {
    const room = automatic('Held', { perMinute: 6000, active: 100 }, { state: 'paused' });
    await node.rooms.put(room);
    await joinMany('Held', 3);
    await tick();
    assert.equal(await serving('Held'), 0, 'paused');
    await node.rooms.put({ ...room, state: 'closed' });
    node.clock.advance(1);
    await tick();
    assert.equal(await serving('Held'), 0, 'closed');

    await node.rooms.put(scheduled({ ...room, state: 'open' }, { event_start_time: iso(5) }));
    node.clock.advance(1);
    await tick();
    assert.equal(await serving('Held'), 0, 'before the start');
    assert.equal(await node.room.rooms.roomPhase('Held'), 'prequeue');
    node.clock.advance(4);
    await tick();
    assert.equal(await serving('Held'), 3, 'from the start');
  });

  it('inlets inside the server never move the counter past the last position handed out', async () => {
    await node.rooms.put(eventSettings('Inlet', { inlet: { strategy: 'max_size', max_size: 100 } }));
    await joinMany('Inlet', 3);
    const now = Math.floor(node.clock.now() / 1000);
    const periodic = { eventId: 'Inlet', incrementBy: 10, startTime: 0, endTime: 0 };
    assert.deepEqual(await node.room.admission.admit('Inlet', { kind: 'periodic', inlet: periodic, now }), { kind: 'moved', by: 3, servingNum: 3 });
    await joinMany('Inlet', 2);
    const report = await read<{ serving_num: number; moved_by: number }>(
      node.admin('POST', '/inlet/max_size', { event_id: 'Inlet', exited: 50 }),
    );
    assert.equal(report.status, 200, report.text);
    assert.deepEqual([report.body.serving_num, report.body.moved_by], [5, 2]);
    // The manual increment keeps VWR's behaviour: the operator may let in more than are waiting.
    const manual = await read<{ serving_num: number }>(
      node.admin('POST', '/increment_serving_counter', { event_id: 'Inlet', increment_by: 10 }),
    );
    assert.equal(manual.body.serving_num, 15);
  });
});
