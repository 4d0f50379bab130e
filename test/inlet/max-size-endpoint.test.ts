// POST /private/inlet/max_size on a real node: the site reports who left; the listed sessions are closed
// through update_session, then the serving counter moves by min(max_size − active_tokens, exited + closed
// now), never backwards. A bad report changes nothing.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Envelope } from '../../src/events/envelope.ts';
import { applyMaxSizeReport } from '../../src/inlet/max-size.ts';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';
import { fakePrivateApi, visitorsWithTokens } from './helpers.ts';

interface Result {
  serving_num: number;
  moved_by: number;
  closed: number;
  capacity: number;
  error?: string;
}

describe('MaxSize inlet: applying a report through the private API', () => {
  it('closes completed then abandoned sessions, counts active tokens after closing, then moves', async () => {
    const api = fakePrivateApi({ serving: 10, active: 5, open: ['a', 'b', 'c'] });
    // active 5 → 3 after closing a and b; capacity 6 − 3 = 3; exited 1 + closed 2 = 3.
    const result = await applyMaxSizeReport(api, 'E', 6, { exited: 1, completed: ['a', 'x'], abandoned: ['b'] });
    assert.deepEqual(result, { serving_num: 13, moved_by: 3, closed: 2, capacity: 3 });
    assert.deepEqual(api.calls, ['update E a 1', 'update E x 1', 'update E b -1', 'active E', 'increment E 3']);
  });

  it('with no capacity the counter is read (increment 0), never moved backwards', async () => {
    const api = fakePrivateApi({ serving: 10, active: 8 });
    assert.deepEqual(await applyMaxSizeReport(api, 'E', 5, { exited: 4, completed: [], abandoned: [] }), {
      serving_num: 10,
      moved_by: 0,
      closed: 0,
      capacity: -3,
    });
    assert.deepEqual(api.calls.at(-1), 'increment E 0');
  });
});

describe('POST /private/inlet/max_size', () => {
  let node: TestNode;
  const events: Envelope[] = [];

  before(async () => {
    node = await startTestNode({
      events: [eventSettings('Sample', { inlet: { strategy: 'max_size', max_size: 3 } }), eventSettings('Manual')],
    });
    node.bus.subscribe({ name: 'test', deliver: (event) => events.push(event) });
  });
  after(() => node.stop());
  beforeEach(async () => {
    assert.equal((await node.admin('POST', '/reset_initial_state', { event_id: 'Sample' })).status, 200);
    events.length = 0;
  });

  const report = async (body: unknown) => {
    const res = await node.admin('POST', '/inlet/max_size', body);
    return { status: res.status, body: (await res.json()) as Result, headers: res.headers };
  };
  const counters = () => node.room.reports.counters('Sample');

  it('closes the listed sessions and moves by what they freed', async () => {
    const ids = await visitorsWithTokens(node, 3);
    for (let i = 0; i < 4; i++) await node.post('/assign_queue_num', { event_id: 'Sample' });
    const res = await report({ event_id: 'Sample', exited: 0, completed: [ids[0]], abandoned: [ids[1]] });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.deepEqual(res.body, { serving_num: 5, moved_by: 2, closed: 2, capacity: 2 });
    const c = await counters();
    assert.equal(c.completed, 1);
    assert.equal(c.abandoned, 1);
    assert.equal(c.activeTokens, 1);
    assert.deepEqual(
      events.filter((e) => e['detail-type'] === 'session_updated').map((e) => e.detail),
      [
        { event_id: 'Sample', request_id: ids[0], status: 'completed' },
        { event_id: 'Sample', request_id: ids[1], status: 'abandoned' },
      ],
    );
  });

  it('exited visitors count like closed sessions, up to the capacity', async () => {
    const ids = await visitorsWithTokens(node, 2);
    for (let i = 0; i < 3; i++) await node.post('/assign_queue_num', { event_id: 'Sample' }); // people wait
    const res = await report({ event_id: 'Sample', exited: 5, completed: [ids[0]] });
    // active 1 of 3 → capacity 2, although 6 left.
    assert.deepEqual(res.body, { serving_num: 4, moved_by: 2, closed: 1, capacity: 2 });
  });

  it('a session already closed is not counted again (VWR kept a running total instead)', async () => {
    const ids = await visitorsWithTokens(node, 3);
    for (let i = 0; i < 2; i++) await node.post('/assign_queue_num', { event_id: 'Sample' }); // people wait
    assert.equal((await report({ event_id: 'Sample', exited: 0, completed: [ids[0]] })).body.moved_by, 1);
    const again = await report({ event_id: 'Sample', exited: 0, completed: [ids[0]] });
    assert.deepEqual(again.body, { serving_num: 4, moved_by: 0, closed: 0, capacity: 1 });
  });

  it('capacity 0: no movement however many left', async () => {
    await visitorsWithTokens(node, 3);
    const res = await report({ event_id: 'Sample', exited: 10 });
    assert.deepEqual(res.body, { serving_num: 3, moved_by: 0, closed: 0, capacity: 0 });
  });

  it('negative capacity: no movement, never backwards', async () => {
    await visitorsWithTokens(node, 5);
    const res = await report({ event_id: 'Sample', exited: 1, completed: [], abandoned: [] });
    assert.deepEqual(res.body, { serving_num: 5, moved_by: 0, closed: 0, capacity: -2 });
    assert.equal((await counters()).serving, 5);
  });

  it('records what it did as a metric', async () => {
    await visitorsWithTokens(node, 1);
    await report({ event_id: 'Sample', exited: 1 }); // capacity 3 − 1: moves
    await visitorsWithTokens(node, 3);
    await report({ event_id: 'Sample', exited: 1 }); // 4 active tokens for a max_size of 3: no capacity
    const text = await (await node.get('/metrics')).text();
    assert.match(text, /anteroom_inlet_admitted_total\{event_id="Sample",strategy="max_size"\} \d+/);
    assert.match(text, /anteroom_inlet_decisions_total\{event_id="Sample",strategy="max_size",outcome="no_capacity"\} \d+/);
  });

  describe('a bad report changes nothing', () => {
    const unchanged = async (body: unknown, status: number, error: string) => {
      const ids = await visitorsWithTokens(node, 2);
      const before = await counters();
      const withId = typeof body === 'function' ? (body as (id: string) => unknown)(ids[0]!) : body;
      const res = await report(withId);
      assert.equal(res.status, status);
      assert.deepEqual(res.body, { error });
      assert.deepEqual(await counters(), before);
    };

    it('negative exited → 400 Invalid request body', () =>
      unchanged({ event_id: 'Sample', exited: -1 }, 400, 'Invalid request body'));
    it('fractional or missing exited → 400 Invalid request body', async () => {
      await unchanged({ event_id: 'Sample', exited: 1.5 }, 400, 'Invalid request body');
      await unchanged({ event_id: 'Sample', completed: [] }, 400, 'Invalid request body');
    });
    it('one malformed ID → 400 and no listed session is closed, not even the valid ones', () =>
      unchanged((id: string) => ({ event_id: 'Sample', exited: 1, completed: [id, 'not-a-uuid'] }), 400, 'Invalid event or request ID'));
    it('more than 1000 IDs in a list → 400', () =>
      unchanged({ event_id: 'Sample', exited: 0, abandoned: Array.from({ length: 1001 }, () => randomUUID()) }, 400, 'Invalid request body'));
    it('unknown event → 400 Invalid event ID', () => unchanged({ event_id: 'Nope', exited: 1 }, 400, 'Invalid event ID'));
    it('an event without the MaxSize inlet → 400', async () => {
      const res = await report({ event_id: 'Manual', exited: 1 });
      assert.deepEqual(res, { ...res, status: 400, body: { error: 'Event has no max_size inlet' } });
    });
    it('a body over the route limit → 413', async () => {
      const res = await report({ event_id: 'Sample', exited: 0, completed: [], padding: 'x'.repeat(100 * 1024) });
      assert.equal(res.status, 413);
    });
  });

  it('two full lists of IDs fit (the core API\'s 16 KiB limit does not apply here)', async () => {
    const completed = Array.from({ length: 1000 }, () => randomUUID());
    const abandoned = Array.from({ length: 1000 }, () => randomUUID());
    const res = await report({ event_id: 'Sample', exited: 0, completed, abandoned });
    assert.equal(res.status, 200);
    assert.equal(res.body.closed, 0);
  });

  it('needs the private API\'s credentials: none → 401, wrong → 403', async () => {
    const url = `${node.privateUrl}/inlet/max_size`;
    const body = JSON.stringify({ event_id: 'Sample', exited: 1 });
    assert.equal((await fetch(url, { method: 'POST', body })).status, 401);
    assert.equal((await fetch(url, { method: 'POST', body, headers: { authorization: 'Bearer wrong-token-0123456789' } })).status, 403);
  });

  it('answers CORS preflights and 405 for other methods, like every private path', async () => {
    const url = `${node.privateUrl}/inlet/max_size`;
    const preflight = await fetch(url, { method: 'OPTIONS' });
    assert.equal(preflight.status, 204);
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.equal((await node.admin('GET', '/inlet/max_size')).status, 405);
  });
});
