// Re-claims on the claim fast path (src/domain/claim-cache.ts, src/http/fast-claim.ts): a token set answered or
// issued once is answered again from memory — same status, body and headers as the routed path, expires_in
// counting down — and never after anything that can change generate_token's decision: a session closed
// (update_session), a reset, the room deleted, the serving counter moved back. Whatever the fast path reads but
// does not answer reaches Fastify with its body (first claims, malformed bodies, unknown rooms). On Redis with two
// nodes, a session closed on A is refused by B at its next re-claim, however fresh B's counters are.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';
import { read, resetEvents, servedVisitor, serveUpTo, type TokenBody } from '../support/api-calls.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

const ANSWER_HEADERS = ['content-type', 'access-control-allow-origin', 'cache-control', 'content-length'];

/** Claims answered by the routed path so far (the fast path's are counted, never timed: request-metrics.ts). */
async function routedClaims(node: TestNode): Promise<number> {
  const metrics = await (await node.get('/metrics')).text();
  const line = metrics.split('\n').find((l) => l.startsWith('anteroom_http_request_duration_seconds_count{route="/generate_token",method="POST"}'));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** One claim, and whether the routed path answered it (false: from memory). */
async function claim(node: TestNode, requestId: string, eventId = 'Sample', body?: string) {
  const before = await routedClaims(node);
  const res = await read<TokenBody & { error?: string }>(node.post('/generate_token', body ?? { event_id: eventId, request_id: requestId }));
  const headers = Object.fromEntries(ANSWER_HEADERS.map((h) => [h, res.headers.get(h)]));
  return { status: res.status, text: res.text, body: res.body, headers, routed: (await routedClaims(node)) > before };
}

describe('re-claims from memory (SQLite)', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ events: [eventSettings('Sample'), eventSettings('Other')] });
  });
  after(() => node.stop());

  it('answers a re-claim exactly as the routed path does, from the first re-claim on', async () => {
    const id = await servedVisitor(node);
    const first = await claim(node, id);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.routed, true);
    const again = await claim(node, id);
    assert.equal(again.routed, false, 'the re-claim was routed');
    assert.deepEqual({ ...again, routed: true }, first);
    // The routed path's re-claim (a request ID in capitals is not taken by the fast path): the same answer.
    const routed = await claim(node, id.toUpperCase());
    assert.equal(routed.routed, true);
    assert.deepEqual({ ...again, routed: true }, routed);
    assert.equal(again.headers['cache-control'], 'no-store');
    assert.deepEqual(Object.keys(again.body), ['access_token', 'refresh_token', 'id_token', 'token_type', 'expires_in']);
  });

  it('counts expires_in down with the clock, as the routed path does', async () => {
    const id = await servedVisitor(node);
    const first = await claim(node, id);
    node.clock.advance(120);
    const fast = await claim(node, id);
    const routed = await claim(node, id.toUpperCase());
    assert.equal(fast.routed, false);
    assert.equal(fast.body.expires_in, first.body.expires_in - 120);
    assert.equal(fast.text, routed.text);
  });

  it("answers each visitor with their own set, never another's", async () => {
    const [a, b] = [await servedVisitor(node), await servedVisitor(node)];
    const [setA, setB] = [await claim(node, a), await claim(node, b)];
    const [againA, againB] = [await claim(node, a), await claim(node, b)];
    assert.equal(againA.routed || againB.routed, false);
    assert.equal(againA.text, setA.text);
    assert.equal(againB.text, setB.text);
    assert.notEqual(setA.body.access_token, setB.body.access_token);
  });

  it('refuses a closed session at once (update_session), as the routed path does', async () => {
    const id = await servedVisitor(node);
    await claim(node, id);
    assert.equal((await claim(node, id)).routed, false);
    const closed = await read(node.admin('POST', '/update_session', { event_id: 'Sample', request_id: id, status: 1 }));
    assert.equal(closed.status, 200, closed.text);
    const after = await claim(node, id);
    assert.equal(after.status, 410, after.text);
    assert.equal(after.routed, true);
    assert.equal(after.headers['cache-control'], 'no-store');
  });

  it('never answers a set after a reset, nor after the room was deleted and made again', async () => {
    const id = await servedVisitor(node);
    await claim(node, id);
    assert.equal((await claim(node, id)).routed, false);
    await resetEvents(node);
    const afterReset = await claim(node, id);
    assert.notEqual(afterReset.status, 200, afterReset.text);

    assert.equal((await node.admin('PUT', '/rooms/Again', {})).status, 201);
    const other = await servedVisitor(node, 'Again');
    await claim(node, other, 'Again');
    assert.equal((await claim(node, other, 'Again')).routed, false);
    assert.equal((await node.admin('DELETE', '/rooms/Again')).status, 200);
    assert.equal((await node.admin('PUT', '/rooms/Again', {})).status, 201);
    const afterDeletion = await claim(node, other, 'Again');
    assert.notEqual(afterDeletion.status, 200, afterDeletion.text);
  });

  it('answers 202 when the serving counter moved back below the position, and from memory again once it is served', async () => {
    await resetEvents(node);
    const id = await servedVisitor(node);
    const set = await claim(node, id);
    await serveUpTo(node, 0);
    const moved = await claim(node, id);
    assert.equal(moved.status, 202, moved.text);
    await serveUpTo(node, 1);
    const back = await claim(node, id);
    assert.equal(back.status, 200);
    assert.equal(back.text, set.text);
  });

  it('hands whatever it does not answer to Fastify with its body: first claims, extra members, bad JSON, unknown rooms', async () => {
    const id = await servedVisitor(node);
    const first = await claim(node, id, 'Sample', JSON.stringify({ event_id: 'Sample', request_id: id, issuer: 'https://other.example' }));
    assert.equal(first.status, 200, first.text);
    assert.equal(first.routed, true);
    const extra = await claim(node, id, 'Sample', JSON.stringify({ event_id: 'Sample', request_id: id, extra: 1 }));
    assert.equal(extra.routed, true);
    assert.equal(extra.text, first.text);
    const bad = await claim(node, id, 'Sample', '{"event_id": "Sample", "request_id": ');
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { error: 'Invalid request body' });
    const unknown = await claim(node, id, 'Nowhere');
    assert.equal(unknown.status, 400, unknown.text);
    assert.equal(unknown.routed, true);
    const elsewhere = await claim(node, id, 'Other');
    assert.notEqual(elsewhere.status, 200, 'a set of one room answered for another');
  });
});

describe('re-claims from memory on Redis, two nodes', () => {
  // Counters held for 5 s: a change on A is not in B's counters during these tests; B must not need them.
  const TTL_MS = 5000;
  let redis: RedisServer;
  let a: TestNode;
  let b: TestNode;
  before(async () => {
    redis = await startRedisServer({ appendfsync: 'everysec' });
    const config = { store: { kind: 'redis' as const, url: redis.url }, hotReadTtlMs: TTL_MS };
    a = await startTestNode(config);
    b = await startTestNode(config);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await redis?.destroy();
  });

  /** Re-claims on `node` until one is answered from memory (its counters must be in memory first). */
  async function claimUntilFromMemory(node: TestNode, id: string) {
    for (let i = 0; i < 50; i++) {
      const answer = await claim(node, id);
      if (!answer.routed) return answer;
      await node.get('/serving_num?event_id=Sample');
    }
    assert.fail('the re-claim was never answered from memory');
  }

  it('node B answers a set issued on A from memory, as A does', async () => {
    const id = await servedVisitor(a);
    const issued = await claim(a, id);
    assert.equal(issued.status, 200, issued.text);
    const fromB = await claimUntilFromMemory(b, id);
    const fromA = await claimUntilFromMemory(a, id);
    assert.equal(fromB.text, issued.text);
    assert.deepEqual(fromA, fromB);
  });

  it("a session closed on node A: node B's next re-claim is refused (410), without waiting for B's counters", async () => {
    const id = await servedVisitor(b); // served through B: B's counters show it (its own write)
    await claim(a, id);
    await claimUntilFromMemory(b, id);
    const closed = await read(a.admin('POST', '/update_session', { event_id: 'Sample', request_id: id, status: -1 }));
    assert.equal(closed.status, 200, closed.text);
    const after = await claim(b, id);
    assert.equal(after.status, 410, after.text);
  });

  it("a reset on node A: node B's next re-claim is not answered with the old set", async () => {
    const id = await servedVisitor(b); // served through B: B's counters show it (its own write)
    await claim(a, id);
    await claimUntilFromMemory(b, id);
    await resetEvents(a);
    const after = await claim(b, id);
    assert.notEqual(after.status, 200, after.text);
  });
});
