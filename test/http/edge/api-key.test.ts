// The API key step alone, in front of a bare node:http handler: it refuses a request for a route of its
// scope without the right key with the contract's 403, and passes everything else on untouched.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiKeyStep } from '../../../src/http/edge/api-key.ts';
import { edgeChain } from '../../../src/http/edge/edge-chain.ts';
import { RouteScope } from '../../../src/http/edge/route-scope.ts';
import { rawRequest, serveRaw, type RawServer } from '../../support/raw-http.ts';

const KEY = 'origin-key-0123456789abcdef';

describe('API key step', () => {
  let server: RawServer;
  const passed: string[] = [];

  before(async () => {
    const scope = new RouteScope({});
    for (const method of ['GET', 'HEAD']) scope.add(method, '/serving_num');
    scope.add('POST', '/assign_queue_num');
    server = await serveRaw(
      edgeChain([new ApiKeyStep(KEY, scope)], (req, res) => {
        passed.push(`${req.method} ${req.url}`);
        res.end('passed');
      }),
    );
  });
  after(() => server.close());

  const call = (method: string, target: string, headers: Record<string, string> = {}) => rawRequest(server.port, method, target, headers);

  it('refuses a missing or wrong key with 403 {"error":"Forbidden"}, CORS and no-store, and passes nothing on', async () => {
    passed.length = 0;
    const wrongKeys: Record<string, string>[] = [{}, { 'x-api-key': 'wrong' }, { 'x-api-key': '' }, { 'x-api-key': `${KEY}x` }, { 'x-api-key': KEY.slice(1) }];
    for (const headers of wrongKeys) {
      const answer = await call('GET', '/serving_num?event_id=Sample', headers);
      assert.equal(answer.status, 403, JSON.stringify(headers));
      assert.equal(answer.body, '{"error":"Forbidden"}');
      assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(answer.headers['access-control-allow-origin'], '*');
      assert.equal(answer.headers['cache-control'], 'no-store');
    }
    const post = await call('POST', '/assign_queue_num');
    assert.equal(post.status, 403);
    const head = await call('HEAD', '/serving_num?event_id=Sample');
    assert.equal(head.status, 403);
    assert.equal(head.body, '');
    assert.deepEqual(passed, []);
  });

  it('passes a request with the right key on', async () => {
    passed.length = 0;
    assert.equal((await call('GET', '/serving_num?event_id=Sample', { 'x-api-key': KEY })).body, 'passed');
    assert.equal((await call('POST', '/assign_queue_num', { 'x-api-key': KEY })).body, 'passed');
    assert.deepEqual(passed, ['GET /serving_num?event_id=Sample', 'POST /assign_queue_num']);
  });

  it('passes on, without a key, every request outside its scope: preflights, other paths and methods', async () => {
    passed.length = 0;
    const outside = [
      ['OPTIONS', '/serving_num'],
      ['GET', '/healthz'],
      ['GET', '/private/num_active_tokens?event_id=Sample'],
      ['GET', '/serving_num/'],
      ['PUT', '/serving_num'],
      ['GET', '/assign_queue_num'],
    ] as const;
    for (const [method, target] of outside) assert.equal((await call(method, target)).body, 'passed', `${method} ${target}`);
    assert.deepEqual(passed, outside.map(([method, target]) => `${method} ${target}`));
  });

  it('guards the route however its path is spelt', async () => {
    assert.equal((await call('GET', '/serving%5Fnum?event_id=Sample')).status, 403);
    assert.equal((await call('GET', 'http://example.com/serving_num?event_id=Sample')).status, 403);
  });
});
