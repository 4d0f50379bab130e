import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { importJWK, jwtVerify } from 'jose';
import { startTestNode, type TestNode } from '../support/node.ts';

describe('visitor journey (smoke)', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  it('join → position → served → token that verifies against /public_key', async () => {
    const join = await node.post('/assign_queue_num', { event_id: 'Sample' });
    assert.equal(join.status, 200);
    const { api_request_id: id } = (await join.json()) as { api_request_id: string };
    const pos = await node.get(`/queue_num?event_id=Sample&request_id=${id}`);
    assert.equal(pos.status, 200);
    assert.equal(((await pos.json()) as { queue_number: number }).queue_number, 1);
    const early = await node.post('/generate_token', { event_id: 'Sample', request_id: id });
    assert.equal(early.status, 202);
    const inc = await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 });
    assert.deepEqual(await inc.json(), { serving_num: 1 });
    const token = await node.post('/generate_token', { event_id: 'Sample', request_id: id });
    assert.equal(token.status, 200);
    const body = (await token.json()) as { access_token: string; expires_in: number; token_type: string };
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 3600);
    const jwk = await (await node.get('/public_key?event_id=Sample')).json();
    const { payload, protectedHeader } = await jwtVerify(body.access_token, await importJWK(jwk as never, 'RS256'), {
      audience: 'Sample',
      issuer: node.url,
      currentDate: new Date(node.clock.now()),
    });
    assert.equal(protectedHeader.alg, 'RS256');
    assert.equal(payload.sub, id);
    assert.equal(payload.token_use, 'access');
    assert.equal(payload.queue_position, 1);
  });
});
