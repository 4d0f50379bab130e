// GET /private/rooms/{event_id}/figures (docs/rooms.md "Control panel"): the counts the control panel shows,
// each one people of one kind, never negative — in line, let in and not arrived, active sessions — and how far
// the serving counter may move before it passes the last position (or how far past it an operator moved it).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join, read, resetEvents } from '../support/api-calls.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

for (const storeKind of ['sqlite (memory)', 'redis'] as const) describe(`room figures (${storeKind} store)`, () => {
  let node: TestNode;
  let redis: RedisServer | undefined;
  before(async () => {
    if (storeKind === 'redis') redis = await startRedisServer();
    node = await startTestNode(redis ? { store: { kind: 'redis', url: redis.url } } : {});
  });
  after(async () => {
    await node?.stop();
    await redis?.destroy();
  });

  const figures = async () => {
    const res = await read<Record<string, unknown>>(node.admin('GET', '/rooms/Sample/figures'));
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const increment = async (by: number) =>
    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: by })).status, 200);

  it('counts the line, the admitted who have not arrived and the active sessions apart', async () => {
    await resetEvents(node);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await join(node));
    await increment(2);
    assert.equal((await node.post('/generate_token', { event_id: 'Sample', request_id: ids[0] })).status, 200);
    assert.equal((await node.post('/leave_queue', { event_id: 'Sample', request_id: ids[4] })).status, 200);
    const body = await figures();
    assert.deepEqual(
      {
        queue: body.queue,
        serving: body.serving,
        in_line: body.in_line,
        awaiting_claim: body.awaiting_claim,
        active_sessions: body.active_sessions,
        room_in_queue: body.room_in_queue,
        let_in_ahead: body.let_in_ahead,
        waiting_num: body.waiting_num,
        tokens_issued: body.tokens_issued,
        left: body.left,
        admitted_last_minute: body.admitted_last_minute,
        phase: body.phase,
      },
      {
        queue: 5,
        serving: 2,
        in_line: 2, // positions 3 and 4; 5 gave up
        awaiting_claim: 1, // position 2
        active_sessions: 1, // position 1
        room_in_queue: 3,
        let_in_ahead: 0,
        waiting_num: 3,
        tokens_issued: 1,
        left: 1,
        admitted_last_minute: 2,
        phase: 'open',
      },
    );
  });

  it('an increment past the queue shows as let in ahead, never as a negative figure', async () => {
    await increment(10);
    const body = await figures();
    assert.equal(body.serving, 12);
    assert.equal(body.in_line, 0);
    assert.equal(body.room_in_queue, 0);
    assert.equal(body.let_in_ahead, 7);
    for (const [key, value] of Object.entries(body)) if (typeof value === 'number') assert.ok(value >= 0, key);
  });

  it('an unknown room is 404 Room not found; without credentials the call is refused', async () => {
    const res = await read(node.admin('GET', '/rooms/Nope/figures'));
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'Room not found' });
    assert.equal((await fetch(`${node.privateUrl}/rooms/Sample/figures`)).status, 401);
  });
});
