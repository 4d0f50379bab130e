// POST /leave_queue (spec/rooms.md §4), one rule per test, against a real node over HTTP: the place is given up
// at once (no longer waiting, a later generate_token answers 410, a second leave 410), queue_left is emitted,
// and the answers of the contract's shape for everything else.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { collectEvents, join, read, servedVisitor, serveUpTo } from '../support/api-calls.ts';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';

describe('POST /leave_queue', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ events: [eventSettings('Sample'), eventSettings('Expiring')] });
  });
  after(() => node.stop());

  const leave = (requestId: unknown, eventId: unknown = 'Sample') =>
    read<{ error?: string }>(node.post('/leave_queue', { event_id: eventId, request_id: requestId }));
  const waiting = async () => (await read<{ waiting_num: number }>(node.get('/waiting_num?event_id=Sample'))).body.waiting_num;

  it('answers 200 {} and the place no longer counts as waiting', async () => {
    const id = await join(node);
    await join(node);
    const before = await waiting();
    const res = await leave(id);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {});
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(await waiting(), before - 1);
    assert.equal((await node.room.reports.counters('Sample')).left >= 1, true);
  });

  it('a later generate_token answers 410, served or not', async () => {
    const waitingId = await join(node);
    await leave(waitingId);
    const notServed = await read(node.post('/generate_token', { event_id: 'Sample', request_id: waitingId }));
    assert.equal(notServed.status, 410);
    assert.deepEqual(notServed.body, { error: 'Queue position was given up' });

    const servedId = await servedVisitor(node);
    assert.equal((await leave(servedId)).status, 200);
    const served = await read(node.post('/generate_token', { event_id: 'Sample', request_id: servedId }));
    assert.equal(served.status, 410);
    assert.deepEqual(served.body, { error: 'Queue position was given up' });
    const expiry = await read(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${servedId}`));
    assert.equal(expiry.status, 410);
  });

  it('a second leave answers 410', async () => {
    const id = await join(node);
    assert.equal((await leave(id)).status, 200);
    const again = await leave(id);
    assert.equal(again.status, 410);
    assert.deepEqual(again.body, { error: 'Queue position was given up' });
  });

  it('after the token set was issued it answers 410: the session ends with update_session instead', async () => {
    const id = await servedVisitor(node);
    assert.equal((await read(node.post('/generate_token', { event_id: 'Sample', request_id: id }))).status, 200);
    const res = await leave(id);
    assert.equal(res.status, 410);
    assert.deepEqual(res.body, { error: 'A token was already issued for this request ID' });
  });

  it('an unknown request ID answers 404; a bad event or request ID 400; a body without them 400', async () => {
    const unknown = await leave(randomUUID());
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { error: 'Invalid request ID' });
    assert.deepEqual((await leave(randomUUID(), 'Nope')).body, { error: 'Invalid event or request ID' });
    assert.deepEqual((await leave('not-a-uuid')).body, { error: 'Invalid event or request ID' });
    const missing = await read(node.post('/leave_queue', { event_id: 'Sample' }));
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { error: 'Invalid request body' });
  });

  it('emits queue_left with the event and request ID, once', async () => {
    const { events, stop } = collectEvents(node);
    try {
      const id = await join(node);
      await leave(id);
      await leave(id);
      const left = events.filter((e) => e['detail-type'] === 'queue_left');
      assert.equal(left.length, 1);
      assert.deepEqual(left[0]!.detail, { event_id: 'Sample', request_id: id });
    } finally {
      stop();
    }
  });

  it('answers CORS like the other public POSTs (any origin, preflight without credentials)', async () => {
    const id = await join(node);
    const res = await node.post('/leave_queue', { event_id: 'Sample', request_id: id }, { origin: 'https://shop.example' });
    await res.body?.cancel();
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const preflight = await fetch(`${node.url}/leave_queue`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
  });

  it('the expiry job never counts a place given up as expired', async () => {
    const [gone, stays] = [await join(node, 'Expiring'), await join(node, 'Expiring')];
    await serveUpTo(node, 2, 'Expiring');
    assert.equal((await leave(gone, 'Expiring')).status, 200);
    node.clock.advance(901);
    await node.room.admission.advanceExpiry('Expiring');
    const counters = await node.room.reports.counters('Expiring');
    assert.deepEqual([counters.expired, counters.left, counters.waiting], [1, 1, 0], 'position 2 expired, position 1 left');
    assert.equal((await read(node.post('/generate_token', { event_id: 'Expiring', request_id: stays }))).status, 410);
  });
});
