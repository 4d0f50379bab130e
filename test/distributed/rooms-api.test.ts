// The rooms API with three `anteroom serve` processes on one Redis: a room created, changed or deleted through
// any node is served that way by the other two within 2 s (the spec's bound), without a restart. Each check
// waits on the condition itself, polling with that deadline from the moment the change was acknowledged (for
// a DELETE, which answers only once the room's data is gone, from the moment it was sent).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { ChildNode } from '../support/child-node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { ADMIN, ADMIN_TOKEN, call, freshPrefix, join, json, startNodes, stopNodes, waitFor } from './fleet.ts';

/** The spec's bound: a change takes effect on every node within 2 s. */
const PROPAGATION_MS = 2000;

describe('the rooms API on three nodes sharing one Redis', () => {
  let redis: RedisServer;
  let inspector: Redis;
  let nodes: ChildNode[];
  const prefix = freshPrefix();

  const admin = (node: ChildNode, method: string, path: string, body?: unknown) =>
    json<Record<string, unknown>>(`${node.url}/private${path}`, {
      method,
      headers: { ...ADMIN, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  /** Whether the node serves the room now: serving_num answers 200 (an unknown room is a 400). Changes nothing. */
  const serves = async (node: ChildNode, eventId: string) =>
    (await call(`${node.url}/serving_num?event_id=${eventId}`))?.status === 200;
  /** Whether the node takes a join for the room now (the join, if taken, is a visitor's like any other). */
  const takesJoins = async (node: ChildNode, eventId: string) => (await join(node.url, eventId)) !== null;
  const within = (what: string, check: () => Promise<boolean>) => waitFor(what, check, PROPAGATION_MS, 20);
  /** Each test has a room of its own (no test relies on another having run): created on A, served by all. */
  const roomOfItsOwn = async (eventId: string, settings: Record<string, unknown> = {}) => {
    assert.equal((await admin(nodes[0]!, 'PUT', `/rooms/${eventId}`, settings)).status, 201);
    await Promise.all(nodes.map((node) => within(`${node.url} to serve ${eventId}`, () => serves(node, eventId))));
  };

  before(async () => {
    redis = await startRedisServer();
    inspector = new Redis(redis.url);
    nodes = await startNodes(3, redis.url, ['--redis-key-prefix', prefix, '--admin-token', ADMIN_TOKEN]);
  });
  after(async () => {
    await stopNodes(nodes ?? []);
    inspector?.disconnect();
    await redis?.destroy();
  });

  it('a room created on node A is served by nodes B and C within 2 s', async () => {
    const [a, b, c] = nodes as [ChildNode, ChildNode, ChildNode];
    assert.equal(await serves(b, 'Launch'), false);
    const created = await admin(a, 'PUT', '/rooms/Launch', { enable_queue_position_expiry: true });
    assert.equal(created.status, 201);
    assert.equal(await serves(a, 'Launch'), true, 'the node that made the change serves it at once');
    await Promise.all([
      within('node B to serve the new room', () => serves(b, 'Launch')),
      within('node C to serve the new room', () => serves(c, 'Launch')),
    ]);
    // Listed in the order they were created: the configured room first, the new one last.
    const listed = ((await admin(c, 'GET', '/rooms')).body.rooms as { event_id: string }[]).map((room) => room.event_id);
    assert.deepEqual([listed[0], listed.at(-1)], ['Sample', 'Launch']);
  });

  it('a change patched on node B reaches nodes A and C within 2 s', async () => {
    const [a, b, c] = nodes as [ChildNode, ChildNode, ChildNode];
    await roomOfItsOwn('Patched', { enable_queue_position_expiry: true });
    // The MaxSize inlet endpoint answers from the settings the node serves (nothing in Redis says whether a
    // room has that inlet); a report of nobody leaving lets nobody in, so the probe changes nothing.
    const hasMaxSizeInlet = async (node: ChildNode) =>
      (await admin(node, 'POST', '/inlet/max_size', { event_id: 'Patched', exited: 0 })).status === 200;
    assert.equal(await hasMaxSizeInlet(c), false);
    const patched = await admin(b, 'PATCH', '/rooms/Patched', { inlet: { strategy: 'max_size', max_size: 10 } });
    assert.equal(patched.status, 200);
    await Promise.all([a, c].map((node) => within(`${node.url} to serve the patched settings`, () => hasMaxSizeInlet(node))));
  });

  it('a room deleted on node C stops being served by A and B within 2 s; created again, it starts from nothing', async () => {
    const [a, b, c] = nodes as [ChildNode, ChildNode, ChildNode];
    await roomOfItsOwn('Deleted');
    assert.ok(await join(b.url, 'Deleted'));
    const oldKey = (await json<{ kid: string }>(`${a.url}/public_key?event_id=Deleted`)).body.kid;
    assert.equal(Number(await inspector.hget(`${prefix}{Deleted}:c`, 'q')), 1);

    // A DELETE answers once the data is gone, after every node stopped serving the room: watch the nodes
    // while it runs. Each probe is a join, as a visitor's would be — none of them may outlive the room.
    const deleting = admin(c, 'DELETE', '/rooms/Deleted');
    await Promise.all([
      within('node A to stop serving the deleted room', async () => !(await takesJoins(a, 'Deleted'))),
      within('node B to stop serving the deleted room', async () => !(await takesJoins(b, 'Deleted'))),
    ]);
    assert.equal((await deleting).status, 200);
    assert.deepEqual(await inspector.hgetall(`${prefix}{Deleted}:c`), { g: '1' }, 'only the reset generation is left');
    assert.deepEqual(await inspector.keys(`${prefix}{Deleted}:*`), [`${prefix}{Deleted}:c`]);

    assert.equal((await admin(a, 'PUT', '/rooms/Deleted', {})).status, 201);
    await Promise.all([b, c].map((node) => within(`${node.url} to serve the room created again`, () => serves(node, 'Deleted'))));
    const visitor = await join(c.url, 'Deleted');
    assert.ok(visitor);
    assert.equal((await json<{ queue_number: number }>(`${b.url}/queue_num?event_id=Deleted&request_id=${visitor}`)).body.queue_number, 1,
      'positions start again from 1');
    assert.deepEqual((await json(`${a.url}/serving_num?event_id=Deleted`)).body, { serving_counter: 0 });
    const keys = await Promise.all(nodes.map(async (node) => (await json<{ kid: string }>(`${node.url}/public_key?event_id=Deleted`)).body.kid));
    assert.equal(new Set(keys).size, 1, 'every node signs with the same, new key');
    assert.notEqual(keys[0], oldKey);
  });

  it('unknown keys are a 400 on every node, and a reset keeps the settings', async () => {
    const [a, b] = nodes as [ChildNode, ChildNode, ChildNode];
    await roomOfItsOwn('Reset');
    const refused = await admin(b, 'PUT', '/rooms/Reset', { new_users_per_minutee: 5 });
    assert.deepEqual([refused.status, refused.body], [
      400,
      { error: 'Invalid room settings: new_users_per_minutee: unknown setting', problems: [{ field: 'new_users_per_minutee', rule: 'unknown setting' }] },
    ]);
    await admin(a, 'PATCH', '/rooms/Reset', { validity_period: 42 });
    const reset = await json(`${b.url}/private/reset_initial_state`, {
      method: 'POST',
      headers: ADMIN,
      body: JSON.stringify({ event_id: 'Reset' }),
    });
    assert.equal(reset.status, 200);
    assert.equal((await admin(a, 'GET', '/rooms/Reset')).body.validity_period, 42);
    assert.equal(await serves(b, 'Reset'), true);
  });
});
