// The polling fast path must be invisible: same status, body and headers as the routed path, the newest
// counter after this node's own writes, the same refusals, and every poll counted in the metrics.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestNode, type TestNode } from '../support/node.ts';
import { join } from '../support/api-calls.ts';

const ANSWER_HEADERS = ['content-type', 'access-control-allow-origin', 'cache-control'];

async function poll(node: TestNode, path: string, headers: Record<string, string> = {}) {
  const res = await node.get(path, headers);
  return { status: res.status, body: await res.json(), headers: Object.fromEntries(ANSWER_HEADERS.map((h) => [h, res.headers.get(h)])) };
}

function requestsCounted(metrics: string, route: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`anteroom_http_requests_total{route="${route}",method="GET",status="200"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

function routedCount(metrics: string, route: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`anteroom_http_request_duration_seconds_count{route="${route}",method="GET"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('polling fast path', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ pollTtl: 2 });
  });
  after(() => node.stop());

  it('answers exactly as the routed path does, and sees this node\'s writes at once', async () => {
    const first = await poll(node, '/serving_num?event_id=Sample'); // routed: fills the in-memory copy
    const second = await poll(node, '/serving_num?event_id=Sample'); // fast path
    assert.deepEqual(second, first);
    assert.deepEqual(second.body, { serving_counter: 0 });
    assert.equal(second.headers['cache-control'], 'public, max-age=2');
    await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 7 });
    assert.deepEqual((await poll(node, '/serving_num?event_id=Sample')).body, { serving_counter: 7 });
    assert.deepEqual((await poll(node, '/serving_num?event_id=Sample')).body, { serving_counter: 7 });
  });

  it('waiting_num follows joins and token claims', async () => {
    const before = (await poll(node, '/waiting_num?event_id=Sample')).body.waiting_num as number;
    await join(node);
    await join(node);
    assert.equal((await poll(node, '/waiting_num?event_id=Sample')).body.waiting_num, before + 2);
    assert.equal((await poll(node, '/waiting_num?event_id=Sample')).body.waiting_num, before + 2);
  });

  it('leaves every malformed or unknown query to the routed path and its errors', async () => {
    await poll(node, '/serving_num?event_id=Sample');
    const { serving } = await node.room.reports.counters('Sample');
    assert.equal((await poll(node, '/serving_num?event_id=Nope')).status, 400);
    assert.equal((await node.get('/serving_num?event_id=Sample&event_id=Sample')).status, 400);
    assert.deepEqual((await poll(node, '/serving_num?event_id=Sam%70le')).body, { serving_counter: serving });
    assert.equal((await node.get('/serving_num')).status, 400);
  });

  it('answers repeated polls without routing them, and still counts them in anteroom_http_requests_total', async () => {
    await poll(node, '/serving_num?event_id=Sample');
    const metricsBefore = await (await node.get('/metrics')).text();
    for (let i = 0; i < 5; i++) await poll(node, '/serving_num?event_id=Sample');
    const metricsAfter = await (await node.get('/metrics')).text();
    assert.equal(requestsCounted(metricsAfter, '/serving_num') - requestsCounted(metricsBefore, '/serving_num'), 5);
    // Routed requests are timed in the latency histogram; polls taken by the fast path are not.
    assert.equal(routedCount(metricsAfter, '/serving_num'), routedCount(metricsBefore, '/serving_num'));
  });
});

describe('polling fast path with a public API key', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ publicApiKey: 'cdn-origin-key-123' });
  });
  after(() => node.stop());

  it('refuses a missing or wrong key with 403 and answers the right one', async () => {
    const key = { 'x-api-key': 'cdn-origin-key-123' };
    assert.equal((await poll(node, '/serving_num?event_id=Sample', key)).status, 200);
    assert.equal((await poll(node, '/serving_num?event_id=Sample', key)).status, 200);
    assert.equal((await node.get('/serving_num?event_id=Sample')).status, 403);
    assert.equal((await node.get('/serving_num?event_id=Sample', { 'x-api-key': 'wrong' })).status, 403);
  });
});
