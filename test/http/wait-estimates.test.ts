// The wait estimate over HTTP (issue 16 item 6): GET /queue_num answers it, the room's figures and /metrics give
// its error once the visitor is let in. The rules themselves: test/domain/wait-estimates.test.ts (out of the
// mutation scope's test files because a node over HTTP takes seconds).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestNode } from '../support/node.ts';

describe('over HTTP', () => {
  it('GET /queue_num answers wait_estimate_s; the figures and /metrics give the error once the visitor is let in', async () => {
    const node = await startTestNode();
    try {
      const join = async () => ((await (await node.post('/assign_queue_num', { event_id: 'Sample' })).json()) as { api_request_id: string }).api_request_id;
      for (let i = 0; i < 10; i++) await join();
      await node.get('/serving_num?event_id=Sample');
      for (let i = 0; i < 5; i++) {
        node.clock.advance(6);
        await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 2 });
        await node.get('/serving_num?event_id=Sample');
      }
      const id = await join();
      const answer = (await (await node.get(`/queue_num?event_id=Sample&request_id=${id}`)).json()) as { wait_estimate_s?: number[] };
      assert.deepEqual(answer.wait_estimate_s, [2, 4], '1 ahead at 1 every 3 s: 3 s, from 0.8× to 1.25×');
      node.clock.advance(5);
      await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 });
      assert.equal((await node.post('/generate_token', { event_id: 'Sample', request_id: id })).status, 200);
      const figures = (await (await node.admin('GET', '/rooms/Sample/figures')).json()) as { estimate_accuracy: unknown };
      assert.deepEqual(figures.estimate_accuracy, { samples: 1, median_abs_error_s: 2 }, 'waited 5 s, told 2–4');
      const metrics = await (await node.get('/metrics')).text();
      assert.match(metrics, /anteroom_wait_estimate_median_abs_error_seconds\{event_id="Sample"\} 2$/m);
    } finally {
      await node.stop();
    }
  });
});
