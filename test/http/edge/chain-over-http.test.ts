// The edge chain in a whole node with a public API key: a poll the fast path answers and a request Fastify
// answers are refused alike without the key, and every answer, refused or not, is counted once in /metrics.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestNode, type TestNode } from '../../support/node.ts';
import { rawRequest } from '../../support/raw-http.ts';

const KEY = 'origin-key-from-the-cdn-0123456789';
const WITH_KEY = { 'x-api-key': KEY };

function metricValue(text: string, line: string): number {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found ? Number(found.split(' ').pop()) : 0;
}

const requests = (route: string, method: string, status: number) =>
  `anteroom_http_requests_total{route="${route}",method="${method}",status="${status}"}`;
const timed = (route: string, method: string) => `anteroom_http_request_duration_seconds_count{route="${route}",method="${method}"}`;

describe('edge chain over HTTP, with a public API key', () => {
  let node: TestNode;
  let port: number;
  before(async () => {
    node = await startTestNode({ publicApiKey: KEY });
    port = Number(new URL(node.url).port);
    // The first poll is routed and fills the in-memory counters; from then on the fast path answers polls.
    assert.equal((await node.get('/serving_num?event_id=Sample', WITH_KEY)).status, 200);
  });
  after(() => node.stop());

  /** The change of each metric line over `action`. */
  async function change(lines: string[], action: () => Promise<void>): Promise<number[]> {
    const before = await (await node.get('/metrics')).text();
    await action();
    const after = await (await node.get('/metrics')).text();
    return lines.map((line) => metricValue(after, line) - metricValue(before, line));
  }

  it('refuses both a fast-path poll and a Fastify request without the key, and counts both refusals', async () => {
    const lines = [requests('/serving_num', 'GET', 403), requests('/assign_queue_num', 'POST', 403)];
    const counts = await change(lines, async () => {
      for (const headers of [{}, { 'x-api-key': 'wrong' }] as Record<string, string>[]) {
        const poll = await node.get('/serving_num?event_id=Sample', headers);
        assert.equal(poll.status, 403);
        assert.deepEqual(await poll.json(), { error: 'Forbidden' });
        const join = await node.post('/assign_queue_num', { event_id: 'Sample' }, headers);
        assert.equal(join.status, 403);
        assert.deepEqual(await join.json(), { error: 'Forbidden' });
      }
      // However the path is spelt: this one reaches /serving_num through Fastify's router, not the fast path.
      assert.equal((await rawRequest(port, 'GET', '/serving%5Fnum?event_id=Sample')).status, 403);
    });
    assert.deepEqual(counts, [3, 2]);
  });

  it('counts a poll answered by the fast path and a request answered by Fastify once each', async () => {
    const lines = [
      requests('/serving_num', 'GET', 200),
      timed('/serving_num', 'GET'),
      requests('/assign_queue_num', 'POST', 200),
      timed('/assign_queue_num', 'POST'),
    ];
    const counts = await change(lines, async () => {
      for (let i = 0; i < 3; i++) assert.equal((await node.get('/serving_num?event_id=Sample', WITH_KEY)).status, 200);
      assert.equal((await node.post('/assign_queue_num', { event_id: 'Sample' }, WITH_KEY)).status, 200);
    });
    // Three polls counted, none timed: the fast path answered them (a routed poll would be timed).
    assert.deepEqual(counts, [3, 0, 1, 1]);
  });

  it('leaves preflights and the operations endpoints outside the key, and counts them too', async () => {
    const lines = [requests('/serving_num', 'OPTIONS', 204), requests('/healthz', 'GET', 200)];
    const counts = await change(lines, async () => {
      assert.equal((await fetch(`${node.url}/serving_num`, { method: 'OPTIONS' })).status, 204);
      assert.equal((await node.get('/healthz')).status, 200);
    });
    assert.deepEqual(counts, [1, 1]);
  });
});
