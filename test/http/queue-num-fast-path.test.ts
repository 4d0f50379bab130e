// GET /queue_num on the polling fast path (src/domain/position-cache.ts, src/http/fast-poll.ts): a position
// found once is answered from memory — same status, body and headers as the routed path — and never after the
// room's state moved under it: a reset or a deletion (the position is gone), a leave, an expiry that reached it.
// A 202 is never kept (a draw numbers the ID at its next poll). On Redis with two nodes, a reset or a leave on
// one is seen by the other's /queue_num no later than by its counters (the hot-read TTL).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventSettings, startTestNode, TestClock, type TestNode } from '../support/node.ts';
import { join, read, resetEvents, serveUpTo } from '../support/api-calls.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

const ANSWER_HEADERS = ['content-type', 'access-control-allow-origin', 'cache-control', 'content-length'];

/** Routed /queue_num answers so far (the fast path's are counted, never timed: request-metrics.ts). */
async function routedQueueNums(node: TestNode): Promise<number> {
  const metrics = await (await node.get('/metrics')).text();
  const line = metrics.split('\n').find((l) => l.startsWith('anteroom_http_request_duration_seconds_count{route="/queue_num",method="GET"}'));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** One /queue_num poll, and whether the routed path answered it (false: from memory). */
async function poll(node: TestNode, requestId: string, eventId = 'Sample', suffix = '') {
  const routedBefore = await routedQueueNums(node);
  const res = await node.get(`/queue_num?event_id=${eventId}&request_id=${requestId}${suffix}`);
  const answer = {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    headers: Object.fromEntries(ANSWER_HEADERS.map((h) => [h, res.headers.get(h)])),
  };
  return { ...answer, routed: (await routedQueueNums(node)) > routedBefore };
}

/** Polls until an answer comes from memory (the counters must be in memory first); that answer. */
async function pollUntilFromMemory(node: TestNode, requestId: string, eventId = 'Sample', suffix = '') {
  for (let i = 0; i < 50; i++) {
    const answer = await poll(node, requestId, eventId, suffix);
    if (!answer.routed) return answer;
    await node.get(`/serving_num?event_id=${eventId}`);
  }
  assert.fail('/queue_num was never answered from memory');
}

describe('GET /queue_num from memory (SQLite)', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({
      events: [eventSettings('Sample'), eventSettings('Expiring', { enable_queue_position_expiry: true, queue_position_expiry_period: 900 })],
    });
  });
  after(() => node.stop());

  it('answers exactly as the routed path did, once the position was found', async () => {
    const id = await join(node);
    const routed = await poll(node, id);
    assert.equal(routed.routed, true);
    const fast = await pollUntilFromMemory(node, id);
    assert.deepEqual({ ...fast, routed: true }, routed);
    assert.equal(fast.status, 200);
    assert.equal(fast.headers['cache-control'], 'public, max-age=60');
    assert.deepEqual(Object.keys(fast.body), ['queue_number', 'entry_time', 'event_id', 'status', 'people_ahead']);
  });

  it('a beat (beat=1, presence) is answered from memory too, the same answer but never cacheable; it marks the visitor, a poll without it does not', async () => {
    await node.rooms.put(eventSettings('Beats'));
    const [beating, plain] = [await join(node, 'Beats'), await join(node, 'Beats')];
    const routedBeat = await poll(node, beating, 'Beats', '&beat=1');
    assert.equal(routedBeat.routed, true);
    assert.equal(routedBeat.headers['cache-control'], 'no-store', 'a beat is never cached: a cache in front would swallow it');
    const fast = await pollUntilFromMemory(node, beating, 'Beats', '&beat=1');
    assert.deepEqual({ ...fast, routed: true }, routedBeat);
    const plainPoll = await poll(node, beating, 'Beats');
    assert.deepEqual({ ...plainPoll.body }, routedBeat.body, 'the same answer without beat=1, cacheable as ever');
    assert.equal(plainPoll.headers['cache-control'], 'public, max-age=60');
    await pollUntilFromMemory(node, plain, 'Beats');
    node.clock.advance(61);
    const presence = async () =>
      (await read<{ presence: { present_waiting: number; absent_waiting: number } }>(node.admin('GET', '/rooms/Beats/figures'))).body.presence;
    assert.deepEqual(await presence(), { ...(await presence()), absent_waiting: 1, present_waiting: 1 }, 'beat 61 s ago (presence_timeout 60 by default); the other never beat');
    const again = await poll(node, beating, 'Beats', '&beat=1');
    assert.equal(again.routed, false, 'answered from memory');
    assert.deepEqual(await presence(), { ...(await presence()), absent_waiting: 0, present_waiting: 2 }, 'the beat from memory marked the visitor');
  });

  it('answers from memory from the second poll on, even right after a write (no other poll in between)', async () => {
    const id = await join(node);
    await join(node); // a write after it: the counters in memory are read again at the next read
    const before = await routedQueueNums(node);
    await join(node);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await (await node.get(`/queue_num?event_id=Sample&request_id=${id}`)).json());
    assert.equal((await routedQueueNums(node)) - before, 1);
    assert.deepEqual(answers[2], answers[0]);
  });

  it('never answers a position after a reset (202 at once), nor for an unknown or removed ID', async () => {
    const id = await join(node);
    await pollUntilFromMemory(node, id);
    await resetEvents(node);
    const after = await poll(node, id);
    assert.equal(after.status, 202);
    assert.deepEqual(after.body, { error: 'Request ID not found' });
    assert.equal(after.headers['cache-control'], 'no-store');
    const unknown = await poll(node, '00000000-0000-4000-8000-000000000000');
    assert.equal(unknown.status, 202);
    assert.equal((await poll(node, '00000000-0000-4000-8000-000000000000')).routed, true, 'a 202 is never kept');
  });

  it('never answers a position of a room deleted and made again under the same ID', async () => {
    assert.equal((await node.admin('PUT', '/rooms/Again', {})).status, 201);
    const id = await join(node, 'Again');
    await pollUntilFromMemory(node, id, 'Again');
    assert.equal((await node.admin('DELETE', '/rooms/Again')).status, 200);
    assert.equal((await node.admin('PUT', '/rooms/Again', {})).status, 201);
    const after = await poll(node, id, 'Again');
    assert.equal(after.status, 202);
    assert.deepEqual(after.body, { error: 'Request ID not found' });
  });

  it('a leave drops the kept position: the next poll is routed, and answers what the store says', async () => {
    const [id, other] = [await join(node), await join(node)];
    const kept = await pollUntilFromMemory(node, id);
    await pollUntilFromMemory(node, other);
    assert.equal((await read(node.post('/leave_queue', { event_id: 'Sample', request_id: other }))).status, 200);
    const after = await poll(node, id);
    assert.equal(after.routed, true, 'answered from memory after a leave');
    assert.deepEqual(after.body, kept.body);
    assert.equal((await poll(node, id)).routed, false, 'kept again');
  });

  it('an expiry drops the positions it reached, not those above it', async () => {
    const [expires, waits] = [await join(node, 'Expiring'), await join(node, 'Expiring')];
    await pollUntilFromMemory(node, expires, 'Expiring');
    await pollUntilFromMemory(node, waits, 'Expiring');
    const { queue } = await node.room.reports.counters('Expiring');
    await serveUpTo(node, queue - 1, 'Expiring'); // `expires` is served, `waits` is not
    node.clock.advance(901);
    await node.room.admission.advanceExpiry('Expiring');
    assert.equal((await node.room.reports.counters('Expiring')).maxExpired, queue - 1);
    assert.equal((await poll(node, expires, 'Expiring')).routed, true, 'an expired position answered from memory');
    assert.equal((await poll(node, waits, 'Expiring')).routed, false);
  });

  it('a request ID in capitals takes the routed path and gets the same answer', async () => {
    const id = await join(node);
    const fast = await pollUntilFromMemory(node, id);
    const upper = await poll(node, id.toUpperCase());
    assert.equal(upper.routed, true);
    assert.deepEqual(upper.body, fast.body);
  });

  it('answers the wait estimate given, as the routed path does', async () => {
    const id = await join(node);
    await join(node);
    // A pace: the counter seen moving over more than 20 s.
    const { queue } = await node.room.reports.counters('Sample');
    await serveUpTo(node, queue - 3);
    await node.get('/serving_num?event_id=Sample');
    node.clock.advance(30);
    await serveUpTo(node, queue - 2);
    await node.get('/serving_num?event_id=Sample');
    const routed = await poll(node, id);
    assert.equal(routed.routed, true);
    assert.ok(Array.isArray(routed.body.wait_estimate_s), JSON.stringify(routed.body));
    const fast = await poll(node, id);
    assert.equal(fast.routed, false);
    assert.deepEqual(fast.body, routed.body);
    // A place the counter reached before its first lookup: no wait left, answered from memory as the ordinary
    // path answers it.
    const served = await join(node);
    await serveUpTo(node, (await node.room.reports.counters('Sample')).queue);
    const first = await poll(node, served);
    assert.deepEqual(first.body.wait_estimate_s, [0, 0]);
    const again = await poll(node, served);
    assert.equal(again.routed, false);
    assert.deepEqual(again.body, first.body);
  });
});

describe('GET /queue_num from memory: the draw', () => {
  const START_MS = Date.UTC(2026, 10, 22, 12, 0, 0);
  let node: TestNode;
  before(async () => {
    node = await startTestNode(
      {
        events: [
          eventSettings('drop', {
            prequeue_start_time: new Date(START_MS - 3_600_000).toISOString(),
            event_start_time: new Date(START_MS).toISOString(),
            shuffle_at_event_start: true,
          }),
        ],
      },
      { clock: new TestClock(START_MS - 600_000) },
    );
  });
  after(() => node.stop());

  it('waits with 202 before the draw and answers the drawn position right after it', async () => {
    const id = await join(node, 'drop');
    await node.get('/serving_num?event_id=drop');
    for (let i = 0; i < 3; i++) assert.equal((await poll(node, id, 'drop')).status, 202);
    node.clock.ms = START_MS;
    await node.room.draws.runDraws();
    const drawn = await poll(node, id, 'drop');
    assert.equal(drawn.status, 200);
    assert.equal(drawn.body.queue_number, 1);
  });
});

describe('GET /queue_num from memory on Redis, two nodes', () => {
  const TTL_MS = 300;
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

  /**
   * Polls b's counters, then its /queue_num, until the counters show `seen`: the last /queue_num answer, whether
   * any of them was routed, and when.
   */
  async function pollUntilCountersShow(id: string, seen: (serving: number, waiting: number) => boolean) {
    const startedAt = performance.now();
    let routed = false;
    for (;;) {
      const serving = ((await (await b.get('/serving_num?event_id=Sample')).json()) as { serving_counter: number }).serving_counter;
      const waiting = ((await (await b.get('/waiting_num?event_id=Sample')).json()) as { waiting_num: number }).waiting_num;
      const seenNow = seen(serving, waiting);
      const answer = await poll(b, id);
      routed ||= answer.routed;
      if (seenNow) return { answer, routed, ms: performance.now() - startedAt };
      assert.ok(performance.now() - startedAt < 10_000, 'b never saw the change');
    }
  }

  it("a reset on node A: node B's /queue_num answers 202 as soon as B's counters show it", async () => {
    const id = await join(a);
    await serveUpTo(a, 1);
    await pollUntilFromMemory(b, id);
    await resetEvents(a);
    const { answer, ms } = await pollUntilCountersShow(id, (serving) => serving === 0);
    assert.equal(answer.status, 202);
    assert.deepEqual(answer.body, { error: 'Request ID not found' });
    assert.ok(ms < TTL_MS + 2_000, `seen after ${ms} ms`);
  });

  it("a leave on node A: node B stops answering the kept position from memory once B's counters show it", async () => {
    await resetEvents(a);
    const [id, leaver] = [await join(a), await join(a)];
    const kept = await pollUntilFromMemory(b, id);
    assert.equal((await read(a.post('/leave_queue', { event_id: 'Sample', request_id: leaver }))).status, 200);
    const { waiting: waitingAfter, left } = await a.room.reports.counters('Sample');
    assert.equal(left, 1);
    // B may drop the entry before this loop sees its counters move (its /metrics scrape refreshes them too), but
    // no later: some poll up to the first one after the counters show the leave went to the store.
    const { answer, routed } = await pollUntilCountersShow(id, (_serving, waiting) => waiting === waitingAfter);
    assert.equal(routed, true, 'B kept answering from memory after it saw the leave');
    assert.deepEqual(answer.body, kept.body);
  });

  it('node B answers a position it found from memory, like node A', async () => {
    const id = await join(a);
    const fromA = await pollUntilFromMemory(a, id);
    const fromB = await pollUntilFromMemory(b, id);
    assert.deepEqual(fromB, fromA);
  });
});
