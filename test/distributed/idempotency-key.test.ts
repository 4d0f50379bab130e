// The contract for refused writes (issue 35, item 3): a join refused with 503 after it took effect — its
// replica wait failed (the replica paused with SIGSTOP) but the primary applied it — and sent again with the
// same Idempotency-Key gets the place the refused call made, not a second one; a malformed key is a 400 that
// changes nothing; the same key in another room is another join.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { keyWindows, requestIdForIdempotencyKey } from '../../src/domain/idempotency-key.ts';
import type { ChildNode } from '../support/child-node.ts';
import { startReplicatedRedis, type ReplicatedRedis } from '../support/redis-replication.ts';
import type { RedisServer } from '../support/redis-server.ts';
import { ADMIN_TOKEN, call, freshPrefix, json, startNodes, stopNodes, waitFor } from './fleet.ts';

const joinWith = (url: string, key: string | undefined, eventId = 'Sample', from?: string) =>
  call(`${url}/assign_queue_num`, {
    method: 'POST',
    headers: { ...(key === undefined ? {} : { 'idempotency-key': key }), ...(from ? { 'x-forwarded-for': from } : {}) },
    body: JSON.stringify({ event_id: eventId }),
  });
const requestIdOf = (reply: { text: string } | null) => (JSON.parse(reply!.text) as { api_request_id: string }).api_request_id;

async function queueLength(url: string): Promise<number> {
  const waiting = await json<{ waiting_num: number }>(`${url}/waiting_num?event_id=Sample`);
  const serving = await json<{ serving_counter: number }>(`${url}/serving_num?event_id=Sample`);
  return waiting.body.waiting_num + serving.body.serving_counter;
}

describe('Idempotency-Key on POST /assign_queue_num (Redis, --redis-min-replicas 1)', () => {
  let redis: ReplicatedRedis | undefined;
  let replica: RedisServer;
  let node: ChildNode;
  const prefix = freshPrefix();

  before(async () => {
    redis = await startReplicatedRedis();
    replica = redis.replica;
    [node] = (await startNodes(1, redis.primary.url, [
      '--redis-key-prefix', prefix, '--admin-token', ADMIN_TOKEN, '--redis-min-replicas', '1', '--redis-replica-timeout-ms', '200',
      // The client's address is part of a key's scope: the attack tests below speak from several addresses.
      '--trust-proxy', 'true',
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
    const unconfirmed = await call(`${node.url}/queue_num?event_id=Sample&request_id=${requestIdForIdempotencyKey('Sample', bare, '127.0.0.1', keyWindows(Date.now() / 1000).current)}`);
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
    const bads = ['short', '"has space inside it 123"', 'x'.repeat(65), 'y'.repeat(8000), '"ünïcödé-ünïcödé-ü"', '""', '"unterminated-key-12345'];
    for (const bad of bads) {
      const reply = await joinWith(node.url, bad);
      assert.equal(reply?.status, 400, `${bad.slice(0, 40)}: ${reply?.text}`);
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

  it('the header twice (two keys) is a 400 and changes nothing', async () => {
    const before = await queueLength(node.url);
    const headers = new Headers();
    headers.append('idempotency-key', randomUUID());
    headers.append('idempotency-key', randomUUID());
    const reply = await call(`${node.url}/assign_queue_num`, { method: 'POST', headers, body: JSON.stringify({ event_id: 'Sample' }) });
    assert.equal(reply?.status, 400, reply?.text);
    assert.equal(await queueLength(node.url), before);
  });

  it('a key reused by another visitor (another address) names another join: never the first visitor\'s request ID', async () => {
    const key = randomUUID();
    const before = await queueLength(node.url);
    const first = await joinWith(node.url, key, 'Sample', '203.0.113.7');
    const again = await joinWith(node.url, key, 'Sample', '203.0.113.7');
    const stranger = await joinWith(node.url, key, 'Sample', '198.51.100.9');
    assert.equal(first?.status, 200);
    assert.equal(stranger?.status, 200);
    assert.equal(requestIdOf(again), requestIdOf(first), 'the same visitor\'s retry: the same request ID');
    assert.notEqual(requestIdOf(stranger), requestIdOf(first), 'another visitor with the same key does not get it');
    assert.equal(await queueLength(node.url), before + 2, 'two visitors, two places');
  });

  it('twenty concurrent calls with one key: one place, one request ID for all', async () => {
    const key = randomUUID();
    const before = await queueLength(node.url);
    // On a loaded machine a replica wait may time out (503): such a call is sent again with its key, as a client would.
    const replies = await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (;;) {
          const reply = await joinWith(node.url, key);
          assert.ok(reply?.status === 200 || reply?.status === 503, reply?.text);
          if (reply.status === 200) return reply;
        }
      }),
    );
    assert.equal(new Set(replies.map(requestIdOf)).size, 1);
    assert.equal(await queueLength(node.url), before + 1);
  });

  /** `call` answered 503 because the replica is paused while it runs (its replica wait fails); then resumed. */
  async function refusedWhileReplicaPaused(call: () => Promise<{ status: number; text: string } | null>): Promise<void> {
    await replica.kill('SIGSTOP');
    try {
      const reply = await call();
      assert.equal(reply?.status, 503, `the replica wait failed: ${reply?.text}`);
    } finally {
      await replica.kill('SIGCONT');
    }
  }

  it('generate_token refused (503), retried: one token set, the same for every retry, counted once', async () => {
    const id = requestIdOf(await joinWith(node.url, randomUUID()));
    const served = await call(`${node.url}/private/increment_serving_counter`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ event_id: 'Sample', increment_by: 100_000 }),
    });
    assert.equal(served?.status, 200, served?.text);
    const inspector = new Redis(redis!.primary.url);
    try {
      const tokens = async () => Number((await inspector.hget(`${prefix}{Sample}:c`, 't')) ?? 0);
      const before = await tokens();
      const claim = () => call(`${node.url}/generate_token`, { method: 'POST', body: JSON.stringify({ event_id: 'Sample', request_id: id }) });
      await refusedWhileReplicaPaused(claim);
      // With the replica paused, the claim's context read waits for it first and is refused before anything is
      // written (observed: the counter does not move); a claim whose write ran but whose answer was lost (a reply
      // lost with its connection) left its set stored. Either way, what follows holds.
      assert.ok((await tokens()) <= before + 1, 'at most the one token set of the refused claim');
      const retried = await waitFor('the retried claim to be answered', async () => {
        const reply = await claim();
        return reply?.status === 200 ? reply : null;
      }, 15_000, 100);
      const again = await claim();
      type Tokens = { access_token: string; refresh_token: string };
      const first = JSON.parse(retried.text) as Tokens;
      const second = JSON.parse(again!.text) as Tokens;
      assert.equal(second.access_token, first.access_token, 'every retry answers the same token set');
      assert.equal(second.refresh_token, first.refresh_token);
      assert.equal(await tokens(), before + 1, 'one token set for the refused claim and its retries');
    } finally {
      inspector.disconnect();
    }
  });

  it('leave_queue refused after it took effect, retried with its key: 200 again (without a key: 410, given up)', async () => {
    const ids = [requestIdOf(await joinWith(node.url, randomUUID())), requestIdOf(await joinWith(node.url, randomUUID()))];
    const leave = (id: string, key?: string) =>
      call(`${node.url}/leave_queue`, {
        method: 'POST',
        headers: key ? { 'idempotency-key': key } : {},
        body: JSON.stringify({ event_id: 'Sample', request_id: id }),
      });
    const key = randomUUID();
    await refusedWhileReplicaPaused(() => leave(ids[0]!, key));
    const retried = await waitFor('the retried leave to be answered', async () => {
      const reply = await leave(ids[0]!, key);
      return reply && reply.status !== 503 ? reply : null;
    }, 15_000, 100);
    assert.equal(retried.status, 200, `the retry of a leave that took effect: ${retried.text}`);
    assert.deepEqual(JSON.parse(retried.text), {});
    await refusedWhileReplicaPaused(() => leave(ids[1]!));
    const unkeyed = await waitFor('the unkeyed retry to be answered', async () => {
      const reply = await leave(ids[1]!);
      return reply && reply.status !== 503 ? reply : null;
    }, 15_000, 100);
    assert.equal(unkeyed.status, 410, unkeyed.text);
    const malformed = await leave(ids[1]!, 'short');
    assert.equal(malformed?.status, 400, 'a malformed key is refused here too');
  });
});
