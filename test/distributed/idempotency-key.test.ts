// The contract for refused writes (issue 35, item 3): a join refused with 503 after it took effect — its
// replica wait failed (the replica paused with SIGSTOP) but the primary applied it — and sent again with the
// same Idempotency-Key gets the place the refused call made, not a second one; a malformed key is a 400 that
// changes nothing; the same key in another room is another join.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { requestIdForIdempotencyKey } from '../../src/domain/idempotency-key.ts';
import type { ChildNode } from '../support/child-node.ts';
import { startReplicatedRedis, type ReplicatedRedis } from '../support/redis-replication.ts';
import type { RedisServer } from '../support/redis-server.ts';
import { ADMIN_TOKEN, call, freshPrefix, json, startNodes, stopNodes, waitFor } from './fleet.ts';

const joinWith = (url: string, key: string | undefined, eventId = 'Sample') =>
  call(`${url}/assign_queue_num`, {
    method: 'POST',
    headers: key === undefined ? {} : { 'idempotency-key': key },
    body: JSON.stringify({ event_id: eventId }),
  });

async function queueLength(url: string): Promise<number> {
  const waiting = await json<{ waiting_num: number }>(`${url}/waiting_num?event_id=Sample`);
  const serving = await json<{ serving_counter: number }>(`${url}/serving_num?event_id=Sample`);
  return waiting.body.waiting_num + serving.body.serving_counter;
}

describe('Idempotency-Key on POST /assign_queue_num (Redis, --redis-min-replicas 1)', () => {
  let redis: ReplicatedRedis | undefined;
  let replica: RedisServer;
  let node: ChildNode;

  before(async () => {
    redis = await startReplicatedRedis();
    replica = redis.replica;
    [node] = (await startNodes(1, redis.primary.url, [
      '--redis-key-prefix', freshPrefix(), '--admin-token', ADMIN_TOKEN, '--redis-min-replicas', '1', '--redis-replica-timeout-ms', '200',
    ])) as [ChildNode];
  });
  after(async () => {
    await stopNodes(node ? [node] : []);
    await redis?.destroy();
  });

  it('a join refused after it was applied, retried with its key, gets that place: one place, not two', async () => {
    const bare = randomUUID();
    const key = `"${bare}"`;
    const before = await queueLength(node.url);
    await replica.kill('SIGSTOP');
    const refused = await joinWith(node.url, key);
    assert.equal(refused?.status, 503, `the replica wait failed: ${refused?.text}`);
    // The place exists on the primary only: a read of it waits for the replica like a write, and fails.
    const unconfirmed = await call(`${node.url}/queue_num?event_id=Sample&request_id=${requestIdForIdempotencyKey('Sample', bare)}`);
    assert.equal(unconfirmed?.status, 503, `a place only the primary holds is not answered: ${unconfirmed?.text}`);
    await replica.kill('SIGCONT');
    const retried = await waitFor('the retry to be answered', async () => {
      const reply = await joinWith(node.url, key);
      return reply?.status === 200 ? reply : null;
    }, 15_000, 100);
    const again = await joinWith(node.url, key);
    assert.equal(again?.status, 200);
    const id = (JSON.parse(retried.text) as { api_request_id: string }).api_request_id;
    assert.equal((JSON.parse(again!.text) as { api_request_id: string }).api_request_id, id, 'the same key, the same request ID');
    assert.equal(await queueLength(node.url), before + 1, 'the refused join and its two retries hold one place');
    const place = await json<{ queue_number: number }>(`${node.url}/queue_num?event_id=Sample&request_id=${id}`);
    assert.equal(place.body.queue_number, before + 1);
  });

  it('a malformed key is a 400 in the one error shape and changes nothing', async () => {
    const before = await queueLength(node.url);
    for (const bad of ['short', '"has space inside it 123"', 'x'.repeat(65), '"ünïcödé-ünïcödé-ü"', '""']) {
      const reply = await joinWith(node.url, bad);
      assert.equal(reply?.status, 400, `${bad}: ${reply?.text}`);
      assert.deepEqual(JSON.parse(reply!.text), { error: 'Invalid Idempotency-Key header' });
    }
    assert.equal(await queueLength(node.url), before);
  });

  it('a bare (unquoted) key works too, and without a key two joins are two places', async () => {
    const key = randomUUID();
    const a = await joinWith(node.url, key);
    const b = await joinWith(node.url, `"${key}"`);
    assert.equal(a?.status, 200);
    assert.equal(JSON.parse(a!.text).api_request_id, JSON.parse(b!.text).api_request_id);
    const c = await joinWith(node.url, undefined);
    const d = await joinWith(node.url, undefined);
    assert.notEqual(JSON.parse(c!.text).api_request_id, JSON.parse(d!.text).api_request_id);
  });
});
