// Failure behaviour on Redis: while Redis is down (stopped, or hung) every public and private call that
// needs it answers 503 with Retry-After and a JSON error within a bounded time — no hang, no 500, no stack
// trace — and /readyz fails; the nodes recover by themselves when Redis returns. With the append-only file
// fsynced on every write (`appendfsync always`), a Redis crash and restart in the middle of a join storm
// loses no acknowledged position.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AwsClient } from 'aws4fetch';
import { Redis } from 'ioredis';
import type { ChildNode } from '../support/child-node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import {
  ADMIN,
  ADMIN_TOKEN,
  call,
  freshPrefix,
  join,
  joinStorm,
  json,
  positionsOf,
  startNodes,
  stopNodes,
  waitFor,
  type Reply,
} from './fleet.ts';

const ACCESS_KEY_ID = 'AKARDISTRIBUTEDTEST1';
const SECRET_ACCESS_KEY = 'distributed-secret-access-key-0123456789';
const CREDENTIAL_ARGS = ['--admin-token', ADMIN_TOKEN, '--access-key-id', ACCESS_KEY_ID, '--secret-access-key', SECRET_ACCESS_KEY];

// "Bounded" without a stopwatch: Redis stays away until every probe has answered, so a 503 can only come from
// the node giving up by itself (its connection wait, 0.5 s, or command timeout, 1 s). A node that waited for
// Redis instead would not answer before the client's 10 s hang guard (fleet.ts), and `call` would return null.

const sigv4 = new AwsClient({
  accessKeyId: ACCESS_KEY_ID,
  secretAccessKey: SECRET_ACCESS_KEY,
  service: 'execute-api',
  region: 'eu-west-1',
  retries: 0,
});

interface Probe {
  name: string;
  send: (url: string) => Promise<Reply | null>;
}

/** Every call of the contract that needs the store, public and private (bearer and SigV4). */
function probes(requestId: string): Probe[] {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => (url: string) =>
    call(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const get = (path: string, headers: Record<string, string> = {}) => (url: string) => call(`${url}${path}`, { headers });
  const signed = (method: 'GET' | 'POST', path: string, body?: unknown) => async (url: string) => {
    const request = await sigv4.sign(`${url}/private${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'text/plain;charset=UTF-8' } }),
    });
    return call(request.url, { method, headers: request.headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  };
  const event = { event_id: 'Sample' };
  const visitor = { event_id: 'Sample', request_id: requestId };
  return [
    { name: 'POST /assign_queue_num', send: post('/assign_queue_num', event) },
    { name: 'GET /queue_num', send: get(`/queue_num?event_id=Sample&request_id=${requestId}`) },
    { name: 'GET /serving_num', send: get('/serving_num?event_id=Sample') },
    { name: 'GET /waiting_num', send: get('/waiting_num?event_id=Sample') },
    { name: 'POST /generate_token', send: post('/generate_token', visitor) },
    { name: 'GET /queue_pos_expiry', send: get(`/queue_pos_expiry?event_id=Sample&request_id=${requestId}`) },
    { name: 'private POST /generate_token', send: post('/private/generate_token', visitor, ADMIN) },
    { name: 'private POST /increment_serving_counter', send: post('/private/increment_serving_counter', { ...event, increment_by: 1 }, ADMIN) },
    { name: 'private GET /num_active_tokens', send: get('/private/num_active_tokens?event_id=Sample', ADMIN) },
    { name: 'private GET /expired_tokens', send: get('/private/expired_tokens?event_id=Sample', ADMIN) },
    { name: 'private POST /update_session', send: post('/private/update_session', { ...visitor, status: 1 }, ADMIN) },
    { name: 'private POST /reset_initial_state', send: post('/private/reset_initial_state', event, ADMIN) },
    { name: 'SigV4 POST /increment_serving_counter', send: signed('POST', '/increment_serving_counter', { ...event, increment_by: 1 }) },
    { name: 'SigV4 GET /num_active_tokens', send: signed('GET', '/num_active_tokens?event_id=Sample') },
  ];
}

function assertUnavailable(name: string, reply: Reply | null): void {
  assert.ok(reply, `${name}: no answer at all`);
  assert.equal(reply.status, 503, `${name}: ${reply.status} ${reply.text}`);
  assert.ok(Number(reply.headers.get('retry-after')) >= 1, `${name}: no Retry-After`);
  assert.match(reply.headers.get('content-type') ?? '', /application\/json/, name);
  const body = JSON.parse(reply.text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['error'], `${name}: ${reply.text}`);
  assert.doesNotMatch(reply.text, /redis|ECONNREFUSED|timed out|at \w+ \(/i, `${name} leaks internals: ${reply.text}`);
}

function assertNotReady(reply: Reply | null): void {
  assert.ok(reply, '/readyz: no answer at all');
  assert.equal(reply.status, 503, `/readyz: ${reply.status} ${reply.text}`);
  assert.equal((JSON.parse(reply.text) as { status: string }).status, 'unavailable');
}

describe('nodes while Redis is away', () => {
  let redis: RedisServer;
  let node: ChildNode;
  let url: string;

  before(async () => {
    redis = await startRedisServer();
    node = (await startNodes(1, redis.url, ['--redis-key-prefix', freshPrefix(), ...CREDENTIAL_ARGS]))[0]!;
    url = node.url;
  });
  after(async () => {
    await stopNodes(node ? [node] : []);
    await redis?.destroy();
  });

  it('Redis stopped: every call answers 503 + Retry-After + a JSON error, fast; /readyz fails; restarted: service resumes by itself', async () => {
    const visitor = (await join(url))!;
    assert.ok(visitor);
    // Its position as read before the crash (the other test on this node joins visitors of its own too).
    const joined = await json<{ queue_number: number }>(`${url}/queue_num?event_id=Sample&request_id=${visitor}`);
    assert.equal(joined.status, 200);
    await json(`${url}/private/increment_serving_counter`, {
      method: 'POST', headers: ADMIN, body: JSON.stringify({ event_id: 'Sample', increment_by: joined.body.queue_number }),
    });
    const token = await json<{ access_token: string }>(`${url}/generate_token`, {
      method: 'POST', body: JSON.stringify({ event_id: 'Sample', request_id: visitor }),
    });
    assert.equal(token.status, 200);

    await redis.kill('SIGKILL');
    // Counters cached in memory (≤ 250 ms) may still be served just after the crash; then 503.
    await waitFor('serving_num to fail', async () => (await call(`${url}/serving_num?event_id=Sample`))?.status === 503, 5000);
    for (const probe of probes(visitor)) assertUnavailable(probe.name, await probe.send(url));
    assertNotReady(await call(`${url}/readyz`));
    assert.equal((await call(`${url}/healthz`))?.status, 200, 'the process itself is fine');
    // The signing key was loaded at start: the public key is still served (from memory).
    assert.equal((await call(`${url}/public_key?event_id=Sample`))?.status, 200);

    await redis.restart();
    await waitFor('/readyz to pass again', async () => (await call(`${url}/readyz`))?.status === 200, 10_000);
    const after = await json<{ queue_number: number }>(`${url}/queue_num?event_id=Sample&request_id=${visitor}`);
    assert.deepEqual([after.status, after.body.queue_number], [200, joined.body.queue_number]);
    const again = await json<{ access_token: string }>(`${url}/generate_token`, {
      method: 'POST', body: JSON.stringify({ event_id: 'Sample', request_id: visitor }),
    });
    assert.equal(again.body.access_token, token.body.access_token, 'the token set survived the restart');
    const next = (await join(url))!;
    const position = await json<{ queue_number: number }>(`${url}/queue_num?event_id=Sample&request_id=${next}`);
    assert.equal(position.body.queue_number, joined.body.queue_number + 1, 'numbering continues after the restart');
    assert.equal(node.process.exitCode, null, 'the node was never restarted');
  });

  it('Redis hung (SIGSTOP): calls answer 503 within the command timeout instead of hanging; SIGCONT: service resumes', async () => {
    const visitor = (await join(url))!;
    await redis.kill('SIGSTOP');
    try {
      await waitFor('serving_num to fail', async () => (await call(`${url}/serving_num?event_id=Sample`))?.status === 503, 5000);
      const checks = probes(visitor).filter((probe) => /assign_queue_num|queue_num|increment_serving|SigV4 GET/.test(probe.name));
      const replies = await Promise.all(checks.map((probe) => probe.send(url)));
      checks.forEach((probe, i) => assertUnavailable(probe.name, replies[i]!));
      assertNotReady(await call(`${url}/readyz`));
    } finally {
      await redis.kill('SIGCONT');
    }
    await waitFor('/readyz to pass again', async () => (await call(`${url}/readyz`))?.status === 200, 10_000);
    assert.ok(await join(url), 'joins work again');
  });
});

describe('a Redis crash during a join storm (appendonly yes, appendfsync always)', () => {
  let redis: RedisServer;
  let nodes: ChildNode[];
  const prefix = freshPrefix();

  before(async () => {
    redis = await startRedisServer({ appendonly: true, appendfsync: 'always' });
    nodes = await startNodes(2, redis.url, ['--redis-key-prefix', prefix, ...CREDENTIAL_ARGS]);
  });
  after(async () => {
    await stopNodes(nodes ?? []);
    await redis?.destroy();
  });

  it('every request ID acknowledged before or after the crash keeps its position; numbering stays gap-free', async () => {
    const urls = nodes.map((node) => node.url);
    const storm = joinStorm(() => urls, 32);
    await waitFor('acknowledged joins before the crash', () => storm.acknowledged.length >= 500, 15_000, 5);
    await redis.kill('SIGKILL');
    // Stay down until the storm has met the outage: a restart faster than the nodes notice it would let every
    // join wait in the client's queue and succeed, and this test would not test a crash at all.
    await waitFor('a join refused while Redis is down', () => storm.failures() > 0, 15_000, 5);
    const beforeCrash = storm.acknowledged.length;
    await redis.restart();
    await waitFor('joins acknowledged after the restart', () => storm.acknowledged.length >= beforeCrash + 300, 15_000, 5);
    await storm.stop();
    assert.ok(storm.failures() > 0, 'some joins failed during the outage (503)');

    const positions = await positionsOf(urls, storm.acknowledged);
    assert.equal(new Set(positions).size, positions.length, 'two acknowledged joins share a position');
    const inspector = new Redis(redis.url);
    try {
      const queue = Number(await inspector.hget(`${prefix}{Sample}:c`, 'q'));
      assert.equal(await inspector.hlen(`${prefix}{Sample}:rq`), queue, 'every position 1..queue belongs to one request ID');
      assert.ok(Math.max(...positions) <= queue);
    } finally {
      inspector.disconnect();
    }
  });
});
