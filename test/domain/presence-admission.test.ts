// Admission that does not wait for people who left (issue 34), through a real node (SQLite store, HTTP API,
// the admission job's tick): absent visitors are skipped without losing their place, the arrival window frees
// capacity held by visitors who never come, late arrivals may overshoot the capacity by at most their number,
// a manual increment can count only present visitors, and a client that never beats (VWR's) is never skipped
// with the default presence_timeout. No sleeps: time moves when the test advances the clock.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admissionJob } from '../../src/app.ts';
import type { RoomSettings } from '../../src/domain/room-settings.ts';
import { collectEvents, join, read } from '../support/api-calls.ts';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';

const room = (eventId: string, extra: Partial<RoomSettings> = {}) =>
  eventSettings(eventId, {
    admission: 'automatic',
    new_users_per_minute: 6000,
    total_active_users: 2,
    presence_timeout: 30,
    arrival_window: 30,
    queue_position_expiry_period: 600,
    ...extra,
  });

describe('presence: admission that skips absent visitors', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ events: [eventSettings('Sample')] });
  });
  after(() => node.stop());

  async function tick(): Promise<void> {
    node.clock.advance(1);
    assert.equal(await node.scheduler.runTick(admissionJob(node.room), Math.floor(node.clock.now() / 1000)), true);
  }
  const serving = async (eventId: string) => (await node.room.reports.counters(eventId)).serving;
  /** A beat of Anteroom's waiting page: GET /queue_num with the request ID and beat=1. */
  const poll = async (eventId: string, requestId: string) =>
    assert.equal((await node.get(`/queue_num?event_id=${eventId}&request_id=${requestId}&beat=1`)).status, 200);
  const pollAll = async (eventId: string, ids: readonly string[]) => {
    for (const id of ids) await poll(eventId, id);
  };
  const claim = (eventId: string, requestId: string) => read(node.post('/generate_token', { event_id: eventId, request_id: requestId }));
  const joinMany = async (eventId: string, n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await join(node, eventId));
    return ids;
  };
  const figures = async (eventId: string) => {
    const res = await read<Record<string, unknown>>(node.admin('GET', `/rooms/${eventId}/figures`));
    assert.equal(res.status, 200, res.text);
    return res.body.presence as Record<string, number>;
  };

  it('passes absent visitors, keeps their place, and lets them in at once when they come back (a late arrival)', async () => {
    await node.rooms.put(room('Skip'));
    const ids = await joinMany('Skip', 6);
    await pollAll('Skip', ids);
    node.clock.advance(31); // everyone's last beat is older than the timeout: all absent
    await tick();
    assert.equal(await serving('Skip'), 0, 'nobody present: the counter stays where it is');
    for (const i of [2, 4, 5]) await poll('Skip', ids[i]!); // positions 3, 5 and 6 are there
    await tick();
    assert.equal(await serving('Skip'), 5, 'two places: the counter passes 1, 2 (absent), 3, 4 (absent) and 5');
    await tick();
    assert.equal(await serving('Skip'), 5, 'full: 3 and 5 are present and have not claimed');
    const seen = await figures('Skip');
    assert.equal(seen.present_waiting, 1);
    assert.equal(seen.absent_waiting, 0);
    assert.equal(seen.counted_awaiting, 2);

    // Position 1 comes back: the counter is past it, it claims at once — over capacity by one late arrival.
    await poll('Skip', ids[0]!);
    assert.equal((await claim('Skip', ids[0]!)).status, 200);
    await tick();
    assert.equal(await serving('Skip'), 5, 'over capacity: nobody new');
    const back = await figures('Skip');
    assert.equal(back.late_arrivals, 1);
    assert.ok(back.overshoot! <= back.late_arrivals!, 'overshoot ≤ late arrivals');
    assert.equal(back.overshoot, 1);
    const metrics = await (await node.get('/metrics')).text();
    assert.match(metrics, /anteroom_late_arrivals\{event_id="Skip"\} 1\n/);
    assert.match(metrics, /anteroom_overshoot\{event_id="Skip"\} 1\n/);
    assert.match(metrics, /anteroom_present_waiting\{event_id="Skip"\} 1\n/);
  });

  it('an admitted visitor who does not claim within the arrival window stops counting, may still claim, and is announced as a no-show', async () => {
    await node.rooms.put(room('Window', { total_active_users: 1, presence_timeout: 0 }));
    const { events, stop } = collectEvents(node);
    const ids = await joinMany('Window', 3);
    await tick();
    assert.equal(await serving('Window'), 1);
    await tick();
    assert.equal(await serving('Window'), 1, 'position 1 holds the only place while its arrival window runs');
    node.clock.advance(30);
    await tick();
    assert.equal(await serving('Window'), 2, 'its window passed: the place goes to the next visitor');
    const noShows = events.filter((e) => e['detail-type'] === 'visitor_no_show' && (e.detail as { event_id: string }).event_id === 'Window');
    stop();
    assert.deepEqual(noShows.map((e) => (e.detail as { queue_number: number }).queue_number), [1]);
    assert.equal((await figures('Window')).no_shows, 1);
    assert.equal((await claim('Window', ids[0]!)).status, 200, 'a slow visitor keeps the right to claim');
    assert.equal((await figures('Window')).late_arrivals, 1);
  });

  it('a manual increment with present_only counts present visitors only', async () => {
    await node.rooms.put(eventSettings('Manual', { presence_timeout: 30 }));
    const ids = await joinMany('Manual', 5);
    await pollAll('Manual', ids);
    node.clock.advance(31);
    await poll('Manual', ids[1]!);
    await poll('Manual', ids[3]!);
    const res = await read<{ serving_num: number }>(
      node.admin('POST', '/increment_serving_counter', { event_id: 'Manual', increment_by: 1, present_only: true }),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.serving_num, 2, 'past 1 (absent) to 2, the first present visitor');
    const plain = await read<{ serving_num: number }>(node.admin('POST', '/increment_serving_counter', { event_id: 'Manual', increment_by: 1 }));
    assert.equal(plain.body.serving_num, 3, 'without present_only: VWR\'s increment, whoever is there');
    const more = await read<{ serving_num: number }>(
      node.admin('POST', '/increment_serving_counter', { event_id: 'Manual', increment_by: 5, present_only: true }),
    );
    assert.equal(more.body.serving_num, 4, 'only one more present visitor: the counter stops after them');
    assert.equal((await figures('Manual')).present_waiting, 0);
  });

  it('an open /stream that names the request ID is a sign of life', async () => {
    await node.rooms.put(eventSettings('Streamed', { presence_timeout: 30 }));
    const ids = await joinMany('Streamed', 3);
    await pollAll('Streamed', ids);
    node.clock.advance(31);
    assert.equal((await figures('Streamed')).present_waiting, 0);
    const res = await node.get(`/stream?event_id=Streamed&request_id=${ids[1]!}`).catch(() => undefined);
    assert.equal(res?.status, 200);
    const reader = res!.body!.getReader();
    await reader.read(); // the first frame: the stream is attached
    const seen = await figures('Streamed');
    assert.equal(seen.present_waiting, 1);
    assert.equal(seen.absent_waiting, 2);
    await reader.cancel();
  });

  it('with the default presence_timeout, a client that never beats (VWR\'s: join, /queue_num once, then /serving_num) is never skipped; one that beat and stopped is', async () => {
    const { presence_timeout: _unset, ...defaults } = room('Vwr', { total_active_users: 2, arrival_window: 120 });
    await node.rooms.put(defaults);
    const [vwr, stopped, page, vwrLater] = await joinMany('Vwr', 4);
    // VWR's client learns its number once (no beat), then polls the serving counter only.
    for (const id of [vwr!, vwrLater!]) assert.equal((await node.get(`/queue_num?event_id=Vwr&request_id=${id}`)).status, 200);
    await poll('Vwr', stopped!); // Anteroom's page, closed after its first beat
    for (let step = 0; step < 10; step++) {
      node.clock.advance(10);
      await poll('Vwr', page!); // Anteroom's page, open
      assert.equal((await node.get('/serving_num?event_id=Vwr')).status, 200);
    }
    const seen = await figures('Vwr');
    assert.equal(seen.absent_waiting, 1, 'only the page that beat and stopped is absent after 100 s');
    assert.equal(seen.present_waiting, 3);
    await tick();
    assert.equal(await serving('Vwr'), 3, 'two places: 1 (never beat) and 3 (beating); 2 passed');
    assert.equal((await claim('Vwr', vwr!)).status, 200, 'the VWR client is admitted in its turn');
    assert.equal((await claim('Vwr', vwrLater!)).status, 202);
  });
});
