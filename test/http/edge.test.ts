// Bad input anywhere answers the contract's 4xx with a JSON error, changes nothing and is never a 5xx
// (spec/core-api.md "Common rules"); CORS, caching headers, the optional origin key, and the operations
// endpoints (/healthz, /readyz, /metrics).

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { startTestNode, TEST_CREDENTIALS, type TestNode } from '../support/node.ts';
import { type Body, read, resetEvents, servedVisitor } from '../support/api-calls.ts';

const INVALID_BODY = { error: 'Invalid request body' };
const ALLOW_HEADERS = 'Content-Type,X-Amz-Date,Authorization,X-Api-Key,X-Amz-Security-Token,X-Amz-Content-Sha256,Idempotency-Key';
const BEARER = { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` };

/** Every JSON-body endpoint, public and private, with a valid body to start from. */
const POST_ENDPOINTS: { path: string; private: boolean; body: Body }[] = [
  { path: '/assign_queue_num', private: false, body: { event_id: 'Sample' } },
  { path: '/generate_token', private: false, body: { event_id: 'Sample', request_id: randomUUID() } },
  { path: '/generate_token', private: true, body: { event_id: 'Sample', request_id: randomUUID() } },
  { path: '/increment_serving_counter', private: true, body: { event_id: 'Sample', increment_by: 1 } },
  { path: '/update_session', private: true, body: { event_id: 'Sample', request_id: randomUUID(), status: 1 } },
  { path: '/reset_initial_state', private: true, body: { event_id: 'Sample' } },
];

/** Every GET endpoint with its query parameters (the SSE stream is tested in events.test.ts). */
const GET_ENDPOINTS: { path: string; private: boolean; params: string[] }[] = [
  { path: '/queue_num', private: false, params: ['event_id', 'request_id'] },
  { path: '/serving_num', private: false, params: ['event_id'] },
  { path: '/waiting_num', private: false, params: ['event_id'] },
  { path: '/public_key', private: false, params: ['event_id'] },
  { path: '/jwks.json', private: false, params: ['event_id'] },
  { path: '/queue_pos_expiry', private: false, params: ['event_id', 'request_id'] },
  { path: '/num_active_tokens', private: true, params: ['event_id'] },
  { path: '/expired_tokens', private: true, params: ['event_id'] },
];

function postRaw(node: TestNode, endpoint: { path: string; private: boolean }, body: string | undefined, headers: Record<string, string> = {}) {
  const base = endpoint.private ? node.privateUrl : node.url;
  return fetch(`${base}${endpoint.path}`, {
    method: 'POST',
    headers: { ...(endpoint.private ? BEARER : {}), ...headers },
    ...(body === undefined ? {} : { body }),
  });
}

/** Counters of the event plus the queue as the public API shows it: what a bad request must not change. */
async function snapshot(node: TestNode) {
  return {
    counters: await node.room.reports.counters('Sample'),
    serving: (await read(node.get('/serving_num?event_id=Sample'))).text,
    waiting: (await read(node.get('/waiting_num?event_id=Sample'))).text,
  };
}

describe('bad request bodies: 400 "Invalid request body", nothing changes, never a 5xx', () => {
  let node: TestNode;
  let knownId: string;
  before(async () => {
    node = await startTestNode();
    knownId = ((await (await node.post('/assign_queue_num', { event_id: 'Sample' })).json()) as { api_request_id: string }).api_request_id;
    await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 });
    await node.post('/generate_token', { event_id: 'Sample', request_id: knownId });
  });
  after(() => node.stop());

  async function expectRefused(label: string, body: string | undefined, headers: Record<string, string> = {}) {
    for (const endpoint of POST_ENDPOINTS) {
      const before = await snapshot(node);
      const res = await read(postRaw(node, endpoint, body, { 'content-type': 'application/json', ...headers }));
      const where = `${label} → ${endpoint.private ? '/private' : ''}${endpoint.path}`;
      assert.equal(res.status, 400, `${where}: ${res.text}`);
      assert.deepEqual(res.body, INVALID_BODY, where);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/, where);
      assert.deepEqual(await snapshot(node), before, `${where} changed state`);
    }
  }

  it('malformed JSON', async () => {
    for (const body of ['{', '{"event_id": "Sample"', "{'event_id': 'Sample'}", 'event_id=Sample', '\u0000', '{"event_id":"Sample"}}']) {
      await expectRefused(JSON.stringify(body), body);
    }
  });

  it('a JSON value that is not an object: array, number, string, boolean, null', async () => {
    for (const body of ['[]', '[{"event_id":"Sample"}]', '5', '"Sample"', 'true', 'null']) {
      await expectRefused(body, body);
    }
  });

  it('an empty body, or no body at all', async () => {
    await expectRefused('empty', '');
    await expectRefused('absent', undefined);
  });

  it('wrong field types', async () => {
    for (const endpoint of POST_ENDPOINTS) {
      for (const [field, value] of Object.entries(endpoint.body)) {
        for (const wrong of [123, null, true, [value], { value }]) {
          if (field === 'increment_by' || field === 'status') {
            if (typeof wrong === 'number') continue; // integers are the right type
          }
          const before = await snapshot(node);
          const body = JSON.stringify({ ...endpoint.body, [field]: wrong });
          const res = await read(postRaw(node, endpoint, body, { 'content-type': 'application/json' }));
          const where = `${endpoint.path} ${field}=${JSON.stringify(wrong)}`;
          assert.equal(res.status, 400, `${where}: ${res.text}`);
          assert.deepEqual(res.body, INVALID_BODY, where);
          assert.deepEqual(await snapshot(node), before, where);
        }
      }
    }
  });

  it('missing fields', async () => {
    for (const endpoint of POST_ENDPOINTS) {
      for (const field of Object.keys(endpoint.body)) {
        const { [field]: _dropped, ...rest } = endpoint.body;
        const res = await read(postRaw(node, endpoint, JSON.stringify(rest), { 'content-type': 'application/json' }));
        assert.equal(res.status, 400, `${endpoint.path} without ${field}`);
        assert.deepEqual(res.body, INVALID_BODY);
      }
    }
  });

  it('extra-long fields answer 400, never a 5xx', async () => {
    const long = 'x'.repeat(5000);
    for (const endpoint of POST_ENDPOINTS) {
      for (const [field, value] of Object.entries(endpoint.body)) {
        if (typeof value !== 'string') continue;
        const before = await snapshot(node);
        const res = await read(postRaw(node, endpoint, JSON.stringify({ ...endpoint.body, [field]: long }), { 'content-type': 'application/json' }));
        assert.equal(res.status, 400, `${endpoint.path} ${field}: ${res.text}`);
        assert.equal(typeof (res.body as Body).error, 'string');
        assert.deepEqual(await snapshot(node), before);
      }
    }
  });

  it('a body larger than 16 KiB answers 413 with a JSON error, public and private', async () => {
    const huge = JSON.stringify({ event_id: 'Sample', padding: 'x'.repeat(16 * 1024) });
    for (const endpoint of POST_ENDPOINTS) {
      const before = await snapshot(node);
      const res = await read(postRaw(node, endpoint, huge, { 'content-type': 'application/json' }));
      assert.equal(res.status, 413, endpoint.path);
      assert.equal(typeof (res.body as Body).error, 'string');
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.deepEqual(await snapshot(node), before);
    }
  });

  it('a body of exactly 16 KiB is still read', async () => {
    const prefix = '{"event_id":"Sample","padding":"';
    const body = `${prefix}${'x'.repeat(16 * 1024 - prefix.length - 2)}"}`;
    assert.equal(Buffer.byteLength(body), 16 * 1024);
    const res = await read(postRaw(node, POST_ENDPOINTS[0]!, body, { 'content-type': 'application/json' }));
    assert.equal(res.status, 200, res.text);
  });

  it('JSON posted as text/plain (the browser default) is accepted, public and private', async () => {
    const join = await read(postRaw(node, POST_ENDPOINTS[0]!, '{"event_id":"Sample"}', { 'content-type': 'text/plain;charset=UTF-8' }));
    assert.equal(join.status, 200, join.text);
    const inc = await read(postRaw(node, POST_ENDPOINTS[3]!, '{"event_id":"Sample","increment_by":0}', { 'content-type': 'text/plain;charset=UTF-8' }));
    assert.equal(inc.status, 200, inc.text);
  });

  it('JSON without any Content-Type, or with an unrelated one, is accepted', async () => {
    const none = await read(fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: new TextEncoder().encode('{"event_id":"Sample"}') }));
    assert.equal(none.status, 200, none.text);
    const form = await read(postRaw(node, POST_ENDPOINTS[0]!, '{"event_id":"Sample"}', { 'content-type': 'application/x-www-form-urlencoded' }));
    assert.equal(form.status, 200, form.text);
  });

  it('unknown extra fields in a body are ignored', async () => {
    const res = await read(node.post('/assign_queue_num', { event_id: 'Sample', utm_source: 'newsletter' }));
    assert.equal(res.status, 200);
  });
});

describe('bad query strings', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  const get = (endpoint: (typeof GET_ENDPOINTS)[number], query: string) =>
    read(fetch(`${endpoint.private ? node.privateUrl : node.url}${endpoint.path}${query}`, { headers: endpoint.private ? BEARER : {} }));

  it('a missing query parameter answers 400 "Missing required request parameters: [name]"', async () => {
    for (const endpoint of GET_ENDPOINTS) {
      for (const param of endpoint.params) {
        const others = endpoint.params.filter((p) => p !== param);
        const query = others.length === 0 ? '' : `?${others.map((p) => `${p}=${p === 'event_id' ? 'Sample' : randomUUID()}`).join('&')}`;
        const res = await get(endpoint, query);
        assert.equal(res.status, 400, `${endpoint.path}${query}`);
        assert.deepEqual(res.body, { error: `Missing required request parameters: [${param}]` });
      }
    }
  });

  it('both parameters missing are both named: [event_id, request_id]', async () => {
    for (const endpoint of GET_ENDPOINTS.filter((e) => e.params.length === 2)) {
      const res = await get(endpoint, '');
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { error: 'Missing required request parameters: [event_id, request_id]' });
    }
  });

  it('a repeated query parameter answers the 400 of an invalid one, never a 5xx', async () => {
    const expected: Record<string, { status: number; error: string }> = {
      '/queue_num': { status: 400, error: 'Invalid event or request ID' },
      '/queue_pos_expiry': { status: 400, error: 'Invalid event or request ID' },
      '/serving_num': { status: 400, error: 'Invalid event ID' },
      '/waiting_num': { status: 400, error: 'Invalid event ID' },
      '/public_key': { status: 404, error: 'Invalid event ID' },
      '/jwks.json': { status: 404, error: 'Invalid event ID' },
      '/num_active_tokens': { status: 404, error: 'Invalid event ID' },
      '/expired_tokens': { status: 400, error: 'Invalid event ID' },
    };
    const id = randomUUID();
    for (const endpoint of GET_ENDPOINTS) {
      const query = endpoint.params.length === 2
        ? `?event_id=Sample&event_id=Sample&request_id=${id}`
        : '?event_id=Sample&event_id=Sample';
      const res = await get(endpoint, query);
      const { status, error } = expected[endpoint.path]!;
      assert.equal(res.status, status, `${endpoint.path}: ${res.text}`);
      assert.deepEqual(res.body, { error });
    }
    const repeatedId = await get(GET_ENDPOINTS[0]!, `?event_id=Sample&request_id=${id}&request_id=${id}`);
    assert.equal(repeatedId.status, 400);
    assert.deepEqual(repeatedId.body, { error: 'Invalid event or request ID' });
  });

  it('event IDs named like Object.prototype members are unknown events, not crashes', async () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const serving = await get(GET_ENDPOINTS[1]!, `?event_id=${name}`);
      assert.equal(serving.status, 400, name);
      assert.deepEqual(serving.body, { error: 'Invalid event ID' });
      const joined = await read(node.post('/assign_queue_num', { event_id: name }));
      assert.equal(joined.status, 400, name);
      assert.deepEqual(joined.body, { error: 'Invalid event ID' });
      const key = await get(GET_ENDPOINTS[3]!, `?event_id=${name}`);
      assert.equal(key.status, 404, name);
    }
  });

  it('an extra-long or oddly encoded parameter answers 4xx with a JSON error, never a 5xx', async () => {
    for (const endpoint of GET_ENDPOINTS) {
      for (const value of ['x'.repeat(5000), '%00', '%E0%A4%A', '%F0%9F%98%80', '..%2F..%2Fetc%2Fpasswd']) {
        const query = endpoint.params.map((p) => `${p}=${value}`).join('&');
        const res = await get(endpoint, `?${query}`);
        assert.ok(res.status >= 400 && res.status < 500, `${endpoint.path}?${query.slice(0, 40)}: ${res.status}`);
        assert.equal(typeof (res.body as Body).error, 'string');
      }
    }
  });
});

describe('routing: unknown paths and wrong methods', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  it('an unknown path answers 404 {"error": "Not found"}, public and private', async () => {
    for (const url of [`${node.url}/nope`, `${node.url}/assign_queue_num/extra`, `${node.privateUrl}/nope`, `${node.url}/private`]) {
      const res = await read(fetch(url, { headers: BEARER }));
      assert.equal(res.status, 404, url);
      assert.deepEqual(res.body, { error: 'Not found' });
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.equal(res.headers.get('cache-control'), 'no-store');
    }
  });

  it('a wrong method answers 405 with a JSON error and an Allow header, and changes nothing', async () => {
    const before = await node.room.reports.counters('Sample');
    const cases: [string, string, string][] = [
      [`${node.url}/assign_queue_num`, 'GET', 'POST, OPTIONS'],
      [`${node.url}/assign_queue_num`, 'PUT', 'POST, OPTIONS'],
      [`${node.url}/serving_num`, 'POST', 'GET, HEAD, OPTIONS'],
      [`${node.url}/queue_num`, 'DELETE', 'GET, HEAD, OPTIONS'],
      [`${node.url}/generate_token`, 'GET', 'POST, OPTIONS'],
      [`${node.privateUrl}/increment_serving_counter`, 'GET', 'POST, OPTIONS'],
      [`${node.privateUrl}/reset_initial_state`, 'PATCH', 'POST, OPTIONS'],
      [`${node.privateUrl}/num_active_tokens`, 'POST', 'GET, HEAD, OPTIONS'],
    ];
    for (const [url, method, allow] of cases) {
      const res = await read(fetch(url, { method, headers: BEARER, ...(method === 'GET' ? {} : { body: '{"event_id":"Sample"}' }) }));
      assert.equal(res.status, 405, `${method} ${url}`);
      assert.equal(typeof (res.body as Body).error, 'string');
      assert.equal(res.headers.get('allow'), allow);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
    }
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });
});

describe('CORS', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  it('every public response carries Access-Control-Allow-Origin: *, errors included', async () => {
    const responses = [
      node.post('/assign_queue_num', { event_id: 'Sample' }),
      node.post('/assign_queue_num', { event_id: 'Nope' }),
      node.post('/assign_queue_num', '{'),
      node.get('/serving_num?event_id=Sample'),
      node.get('/serving_num'),
      node.get(`/queue_num?event_id=Sample&request_id=${randomUUID()}`),
      node.get('/public_key?event_id=Nope'),
      node.post('/generate_token', { event_id: 'Sample', request_id: randomUUID() }),
      node.get(`/queue_pos_expiry?event_id=Sample&request_id=${randomUUID()}`),
    ];
    for (const res of await Promise.all(responses)) {
      assert.equal(res.headers.get('access-control-allow-origin'), '*', `${res.url} ${res.status}`);
      await res.body?.cancel();
    }
  });

  it('every private response carries Access-Control-Allow-Origin: *, 401 and 403 included', async () => {
    const responses = [
      node.admin('GET', '/num_active_tokens?event_id=Sample'),
      node.admin('GET', '/num_active_tokens?event_id=Nope'),
      node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 'x' }),
      fetch(`${node.privateUrl}/expired_tokens?event_id=Sample`),
      fetch(`${node.privateUrl}/expired_tokens?event_id=Sample`, { headers: { authorization: 'Bearer wrong' } }),
    ];
    for (const res of await Promise.all(responses)) {
      assert.equal(res.headers.get('access-control-allow-origin'), '*', `${res.url} ${res.status}`);
      await res.body?.cancel();
    }
  });

  it('OPTIONS on every path answers 204 with the path\'s methods + OPTIONS and the contract\'s allowed headers', async () => {
    const paths: [string, string][] = [
      ...POST_ENDPOINTS.map((e): [string, string] => [`${e.private ? node.privateUrl : node.url}${e.path}`, 'POST,OPTIONS']),
      ...GET_ENDPOINTS.map((e): [string, string] => [`${e.private ? node.privateUrl : node.url}${e.path}`, 'GET,HEAD,OPTIONS']),
    ];
    for (const [url, methods] of paths) {
      const res = await fetch(url, {
        method: 'OPTIONS',
        headers: { origin: 'https://example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      assert.equal(res.status, 204, url);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.equal(res.headers.get('access-control-allow-methods'), methods, url);
      assert.equal(res.headers.get('access-control-allow-headers'), ALLOW_HEADERS);
    }
  });
});

describe('Cache-Control per path', () => {
  let node: TestNode;
  let id: string;
  before(async () => {
    node = await startTestNode({ pollTtl: 3 });
  });
  // An empty event and a visitor of its own for every test, served just now (another test may have moved
  // the clock or the serving counter).
  beforeEach(async () => {
    await resetEvents(node);
    id = await servedVisitor(node);
  });
  after(() => node.stop());

  async function cacheOf(response: Promise<Response>, status: number): Promise<string | null> {
    const res = await response;
    await res.body?.cancel();
    assert.equal(res.status, status, res.url);
    return res.headers.get('cache-control');
  }

  it('/serving_num, /waiting_num and /queue_pos_expiry are public, max-age=<pollTtl> (configured: 3)', async () => {
    assert.equal(await cacheOf(node.get('/serving_num?event_id=Sample'), 200), 'public, max-age=3');
    assert.equal(await cacheOf(node.get('/waiting_num?event_id=Sample'), 200), 'public, max-age=3');
    assert.equal(await cacheOf(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${id}`), 200), 'public, max-age=3');
  });

  it('a 200 of /queue_num is public, max-age=60', async () => {
    assert.equal(await cacheOf(node.get(`/queue_num?event_id=Sample&request_id=${id}`), 200), 'public, max-age=60');
  });

  it('/public_key and the JWKS are public, max-age=300', async () => {
    assert.equal(await cacheOf(node.get('/public_key?event_id=Sample'), 200), 'public, max-age=300');
    assert.equal(await cacheOf(node.get('/jwks.json?event_id=Sample'), 200), 'public, max-age=300');
  });

  it('every 202 is no-store (a CDN must not cache "not yet")', async () => {
    const later = ((await (await node.post('/assign_queue_num', { event_id: 'Sample' })).json()) as { api_request_id: string }).api_request_id;
    assert.equal(await cacheOf(node.get(`/queue_num?event_id=Sample&request_id=${randomUUID()}`), 202), 'no-store');
    assert.equal(await cacheOf(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${later}`), 202), 'no-store');
    assert.equal(await cacheOf(node.post('/generate_token', { event_id: 'Sample', request_id: later }), 202), 'no-store');
  });

  it('every 4xx is no-store, on cacheable paths too', async () => {
    assert.equal(await cacheOf(node.get('/serving_num?event_id=Nope'), 400), 'no-store');
    assert.equal(await cacheOf(node.get('/serving_num'), 400), 'no-store');
    assert.equal(await cacheOf(node.get('/waiting_num?event_id=Nope'), 400), 'no-store');
    assert.equal(await cacheOf(node.get('/queue_num?event_id=Sample&request_id=bad'), 400), 'no-store');
    assert.equal(await cacheOf(node.get('/public_key?event_id=Nope'), 404), 'no-store');
    assert.equal(await cacheOf(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${randomUUID()}`), 404), 'no-store');
    assert.equal(await cacheOf(node.get('/nope'), 404), 'no-store');
  });

  it('a 410 of /queue_pos_expiry is no-store', async () => {
    node.clock.advance(901);
    assert.equal(await cacheOf(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${id}`), 410), 'no-store');
  });

  it('everything else is no-store: joins, token claims, every private response', async () => {
    assert.equal(await cacheOf(node.post('/assign_queue_num', { event_id: 'Sample' }), 200), 'no-store');
    const fresh = ((await (await node.post('/assign_queue_num', { event_id: 'Sample' })).json()) as { api_request_id: string }).api_request_id;
    await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 10 });
    assert.equal(await cacheOf(node.post('/generate_token', { event_id: 'Sample', request_id: fresh }), 200), 'no-store');
    assert.equal(await cacheOf(node.admin('GET', '/num_active_tokens?event_id=Sample'), 200), 'no-store');
    assert.equal(await cacheOf(node.admin('GET', '/expired_tokens?event_id=Sample'), 200), 'no-store');
    assert.equal(await cacheOf(node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 0 }), 200), 'no-store');
    assert.equal(await cacheOf(fetch(`${node.privateUrl}/num_active_tokens?event_id=Sample`), 401), 'no-store');
    assert.equal(await cacheOf(node.get('/healthz'), 200), 'no-store');
    assert.equal(await cacheOf(node.get('/readyz'), 200), 'no-store');
    assert.equal(await cacheOf(node.get('/metrics'), 200), 'no-store');
  });
});

describe('the default poll TTL', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  it('is 1 second', async () => {
    const res = await node.get('/serving_num?event_id=Sample');
    assert.equal(res.headers.get('cache-control'), 'public, max-age=1');
    await res.body?.cancel();
  });
});

describe('optional origin key (publicApiKey)', () => {
  let node: TestNode;
  const key = 'origin-key-from-the-cdn-0123456789';
  before(async () => {
    node = await startTestNode({ publicApiKey: key });
  });
  after(() => node.stop());

  it('a public request without x-api-key answers 403 {"error": "Forbidden"} and changes nothing', async () => {
    const before = await node.room.reports.counters('Sample');
    for (const res of [await read(node.post('/assign_queue_num', { event_id: 'Sample' })), await read(node.get('/serving_num?event_id=Sample'))]) {
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, { error: 'Forbidden' });
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
    }
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });

  it('a wrong x-api-key answers 403 {"error": "Forbidden"}', async () => {
    for (const wrong of [`${key}x`, key.slice(1), '']) {
      const res = await read(node.post('/assign_queue_num', { event_id: 'Sample' }, { 'x-api-key': wrong }));
      assert.equal(res.status, 403, JSON.stringify(wrong));
      assert.deepEqual(res.body, { error: 'Forbidden' });
    }
  });

  it('the right x-api-key answers 200', async () => {
    const join = await read(node.post('/assign_queue_num', { event_id: 'Sample' }, { 'x-api-key': key }));
    assert.equal(join.status, 200);
    assert.equal((await read(node.get('/serving_num?event_id=Sample', { 'x-api-key': key }))).status, 200);
  });

  it('preflights, the private API and the operations endpoints do not need it', async () => {
    assert.equal((await fetch(`${node.url}/assign_queue_num`, { method: 'OPTIONS' })).status, 204);
    assert.equal((await read(node.admin('GET', '/num_active_tokens?event_id=Sample'))).status, 200);
    assert.equal((await read(node.get('/healthz'))).status, 200);
  });
});

describe('operations endpoints', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  it('/healthz answers 200 while the process is up', async () => {
    const res = await read(node.get('/healthz'));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });

  it('/readyz answers 200 while the store is reachable', async () => {
    const res = await read(node.get('/readyz'));
    assert.equal(res.status, 200);
    assert.equal((res.body as Body).status, 'ready');
  });

  it('/metrics is Prometheus text with requests by route and status, and per-event gauges', async () => {
    await node.post('/assign_queue_num', { event_id: 'Sample' });
    await node.post('/assign_queue_num', { event_id: 'Nope' });
    await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 7 });
    const res = await node.get('/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.match(text, /^# TYPE anteroom_http_requests_total counter$/m);
    assert.match(text, /^anteroom_http_requests_total\{route="\/assign_queue_num",method="POST",status="200"\} 1$/m);
    assert.match(text, /^anteroom_http_requests_total\{route="\/assign_queue_num",method="POST",status="400"\} 1$/m);
    assert.match(text, /^anteroom_serving_counter\{event_id="Sample"\} 7$/m);
    assert.match(text, /^anteroom_queue_positions\{event_id="Sample"\} 1$/m);
    assert.match(text, /^anteroom_waiting\{event_id="Sample"\} 1$/m);
  });
});
