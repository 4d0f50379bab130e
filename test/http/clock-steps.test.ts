// A wall clock stepped back after a token was issued (issue 14): `expires_in` never exceeds the validity.
// (Transient steps do not reach the service at all: see test/domain/clock.test.ts for the clock's rule.)

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestNode, type TestNode } from '../support/node.ts';

describe('expires_in after a step of the clock', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(async () => {
    await node?.stop();
  });

  it('a re-claim after the clock went back 2 h answers expires_in ≤ the validity (3600 s)', async () => {
    const joined = (await (await node.post('/assign_queue_num', { event_id: 'Sample' })).json()) as { api_request_id: string };
    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 })).status, 200);
    const first = (await (await node.post('/generate_token', { event_id: 'Sample', request_id: joined.api_request_id })).json()) as {
      expires_in: number;
      access_token: string;
    };
    assert.equal(first.expires_in, 3600);
    node.clock.advance(-7200);
    const again = (await (await node.post('/generate_token', { event_id: 'Sample', request_id: joined.api_request_id })).json()) as {
      expires_in: number;
      access_token: string;
    };
    assert.equal(again.access_token, first.access_token, 'the same token set');
    assert.equal(again.expires_in, 3600);
  });
});
