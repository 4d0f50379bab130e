// Authentication of the private API (spec/core-api.md "Private API (authenticated)"): missing credentials
// → 401, wrong ones → 403; AWS SigV4 as VWR's own clients send it — the control panel's aws4fetch (no
// X-Amz-Content-Sha256 header, JSON posted as text/plain) and botocore-style callers (with that header,
// here AWS's own @smithy/signature-v4 as the client) — or the admin bearer token. Signatures are made by
// these independent signers, never by the server's own code.

import assert from 'node:assert/strict';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { SignatureV4 } from '@smithy/signature-v4';
import { AwsClient } from 'aws4fetch';
import { startTestNode, TEST_CREDENTIALS, type TestNode } from '../support/node.ts';
import { type Body, read } from '../support/api-calls.ts';

const FORBIDDEN = { error: 'Forbidden' };
const MISSING = { error: 'Missing Authentication Token' };
const MINUTE = 60_000;

/** SigV4's timestamp format, YYYYMMDDTHHMMSSZ. */
function amzDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/** The control panel's client: aws4fetch, service execute-api. */
function panelClient(overrides: Partial<{ accessKeyId: string; secretAccessKey: string; service: string; region: string; sessionToken: string }> = {}) {
  return new AwsClient({
    accessKeyId: TEST_CREDENTIALS.accessKeyId,
    secretAccessKey: TEST_CREDENTIALS.secretAccessKey,
    service: 'execute-api',
    region: 'eu-west-1',
    retries: 0,
    ...overrides,
  });
}

/** Signs like the control panel does: POST with JSON as text/plain, or a GET. */
async function panelSign(
  node: TestNode,
  path: string,
  body: Body | undefined,
  options: { client?: AwsClient; dateMs?: number } = {},
): Promise<Request> {
  const client = options.client ?? panelClient();
  return client.sign(`${node.privateUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'text/plain;charset=UTF-8' } }),
    aws: { datetime: amzDate(options.dateMs ?? node.clock.now()) },
  });
}

/** Sends a request signed by aws4fetch, optionally with another body than the one signed. */
function sendSigned(request: Request, body?: string): Promise<Response> {
  if (body === undefined) return fetch(request);
  return fetch(request.url, { method: request.method, headers: request.headers, body });
}

/** node:crypto behind the hash interface @smithy/signature-v4 expects (HMAC when given a secret). */
type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: SourceData): Buffer | string =>
  typeof data === 'string'
    ? data
    : data instanceof ArrayBuffer
      ? Buffer.from(data)
      : Buffer.from(data.buffer, data.byteOffset, data.byteLength);

class Sha256 {
  private readonly secret: Buffer | string | undefined;
  private hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.secret = secret === undefined ? undefined : bytes(secret);
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret);
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

/**
 * Signs like botocore does for an inlet strategy: every header signed, X-Amz-Content-Sha256 sent.
 * `claimedHash` replaces the payload hash header (and what is signed) to forge a mismatch.
 */
async function botoFetch(
  node: TestNode,
  method: 'GET' | 'POST',
  pathAndQuery: string,
  body?: Body,
  options: { claimedHash?: string; region?: string } = {},
): Promise<Response> {
  const url = new URL(`${node.privateUrl}${pathAndQuery}`);
  const signer = new SignatureV4({
    service: 'execute-api',
    region: options.region ?? 'us-east-1',
    credentials: { accessKeyId: TEST_CREDENTIALS.accessKeyId, secretAccessKey: TEST_CREDENTIALS.secretAccessKey },
    sha256: Sha256,
    applyChecksum: true,
  });
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { host: url.host };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  if (options.claimedHash) headers['x-amz-content-sha256'] = options.claimedHash;
  const signed = await signer.sign(
    {
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body: payload,
    },
    { signingDate: new Date(node.clock.now()) },
  );
  const sent = { ...(signed.headers as Record<string, string>) };
  assert.ok(sent['x-amz-content-sha256'], 'the botocore-style client sends X-Amz-Content-Sha256');
  delete sent.host; // fetch sends the same Host itself
  return fetch(url, { method, headers: sent, ...(payload === undefined ? {} : { body: payload }) });
}

const PRIVATE_CALLS: { method: 'GET' | 'POST'; path: string; body?: Body }[] = [
  { method: 'POST', path: '/generate_token', body: { event_id: 'Sample', request_id: '00000000-0000-4000-8000-000000000000' } },
  { method: 'POST', path: '/increment_serving_counter', body: { event_id: 'Sample', increment_by: 1 } },
  { method: 'GET', path: '/num_active_tokens?event_id=Sample' },
  { method: 'GET', path: '/expired_tokens?event_id=Sample' },
  { method: 'POST', path: '/update_session', body: { event_id: 'Sample', request_id: '00000000-0000-4000-8000-000000000000', status: 1 } },
  { method: 'POST', path: '/reset_initial_state', body: { event_id: 'Sample' } },
  { method: 'GET', path: '/events?event_id=Sample' },
];

function privateCall(node: TestNode, call: (typeof PRIVATE_CALLS)[number], headers: Record<string, string>) {
  return fetch(`${node.privateUrl}${call.path}`, {
    method: call.method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(call.body ? { body: JSON.stringify(call.body) } : {}),
  });
}

describe('private API: missing and wrong credentials', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
    // Some state, so that a call that should have been refused would visibly change it.
    await node.post('/assign_queue_num', { event_id: 'Sample' });
    await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 });
  });
  after(() => node.stop());

  it('every private endpoint answers 401 {"error": "Missing Authentication Token"} without an Authorization header', async () => {
    const before = await node.room.reports.counters('Sample');
    for (const call of PRIVATE_CALLS) {
      const res = await read(privateCall(node, call, {}));
      assert.equal(res.status, 401, `${call.method} ${call.path}`);
      assert.deepEqual(res.body, MISSING, `${call.method} ${call.path}`);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
    }
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });

  it('an empty Authorization header counts as missing: 401', async () => {
    const res = await read(privateCall(node, PRIVATE_CALLS[1]!, { authorization: '' }));
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, MISSING);
  });

  it('every private endpoint answers 403 {"error": "Forbidden"} for a wrong bearer token, and changes nothing', async () => {
    const before = await node.room.reports.counters('Sample');
    for (const call of PRIVATE_CALLS) {
      const res = await read(privateCall(node, call, { authorization: 'Bearer not-the-admin-token' }));
      assert.equal(res.status, 403, `${call.method} ${call.path}`);
      assert.deepEqual(res.body, FORBIDDEN);
    }
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });

  it('a bearer token that only starts like the admin token is refused: 403', async () => {
    for (const token of [TEST_CREDENTIALS.adminToken.slice(0, -1), `${TEST_CREDENTIALS.adminToken}x`, '']) {
      const res = await read(privateCall(node, PRIVATE_CALLS[2]!, { authorization: `Bearer ${token}` }));
      assert.equal(res.status, 403, JSON.stringify(token));
    }
  });

  it('an Authorization scheme that is neither Bearer nor SigV4 answers 403', async () => {
    const basic = `Basic ${Buffer.from(`admin:${TEST_CREDENTIALS.adminToken}`).toString('base64')}`;
    for (const authorization of [basic, TEST_CREDENTIALS.adminToken, 'AWS4-HMAC-SHA256 garbage']) {
      const res = await read(privateCall(node, PRIVATE_CALLS[2]!, { authorization }));
      assert.equal(res.status, 403, authorization);
      assert.deepEqual(res.body, FORBIDDEN);
    }
  });

  it('the admin bearer token is accepted', async () => {
    const { activeTokens } = await node.room.reports.counters('Sample');
    const res = await read(node.admin('GET', '/num_active_tokens?event_id=Sample'));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { active_tokens: activeTokens });
  });

  it('an unauthenticated request is refused before its body is read: malformed JSON still answers 401', async () => {
    const res = await read(
      fetch(`${node.privateUrl}/increment_serving_counter`, { method: 'POST', body: '{not json' }),
    );
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, MISSING);
  });

  it('OPTIONS preflights are never authenticated: 204 with the CORS headers on every private path', async () => {
    for (const call of PRIVATE_CALLS) {
      const path = call.path.split('?')[0]!;
      for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
        const res = await fetch(`${node.privateUrl}${path}`, {
          method: 'OPTIONS',
          headers: { origin: 'https://panel.example', 'access-control-request-method': call.method, ...headers },
        });
        assert.equal(res.status, 204, path);
        assert.equal(res.headers.get('access-control-allow-origin'), '*');
        assert.equal(res.headers.get('access-control-allow-methods'), `${call.method === 'GET' ? 'GET,HEAD' : 'POST'},OPTIONS`);
        assert.equal(
          res.headers.get('access-control-allow-headers'),
          'Content-Type,X-Amz-Date,Authorization,X-Api-Key,X-Amz-Security-Token,X-Amz-Content-Sha256,Idempotency-Key',
        );
      }
    }
  });
});

describe('private API: SigV4 from the control panel (aws4fetch)', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  const serving = async () => (await node.room.reports.counters('Sample')).serving;

  it('a POST signed by aws4fetch — host + x-amz-date, JSON as text/plain, no X-Amz-Content-Sha256 — is accepted', async () => {
    const before = await serving();
    const request = await panelSign(node, '/increment_serving_counter', { event_id: 'Sample', increment_by: 2 });
    const signedHeaders = /SignedHeaders=([^,]+)/.exec(request.headers.get('authorization') ?? '')?.[1];
    assert.equal(signedHeaders, 'host;x-amz-date', 'what the control panel signs');
    assert.equal(request.headers.get('x-amz-content-sha256'), null, 'the control panel sends no payload hash header');
    assert.equal(request.headers.get('content-type'), 'text/plain;charset=UTF-8');
    const res = await read(sendSigned(request));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { serving_num: before + 2 });
  });

  it('AwsClient.fetch, exactly as the control panel calls it, is accepted', async () => {
    const client = panelClient();
    const res = await client.fetch(`${node.privateUrl}/reset_initial_state`, {
      method: 'POST',
      body: JSON.stringify({ event_id: 'Sample' }),
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
      aws: { datetime: amzDate(node.clock.now()) },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { message: 'Counters reset. DynamoDB table recreated.' });
  });

  it('a GET with a query string signed by aws4fetch is accepted', async () => {
    for (const path of ['/num_active_tokens?event_id=Sample', '/expired_tokens?event_id=Sample']) {
      const res = await read(sendSigned(await panelSign(node, path, undefined)));
      assert.equal(res.status, 200, `${path}: ${res.text}`);
    }
  });

  it('a session token (temporary credentials) is signed as x-amz-security-token and accepted', async () => {
    const client = panelClient({ sessionToken: 'FwoGZXIvYXdzEXAMPLESESSIONTOKEN' });
    const request = await panelSign(node, '/num_active_tokens?event_id=Sample', undefined, { client });
    assert.match(request.headers.get('authorization') ?? '', /SignedHeaders=host;x-amz-date;x-amz-security-token/);
    const res = await read(sendSigned(request));
    assert.equal(res.status, 200, res.text);
  });

  it('any region is accepted when none is configured', async () => {
    for (const region of ['us-east-1', 'ap-southeast-2']) {
      const request = await panelSign(node, '/num_active_tokens?event_id=Sample', undefined, { client: panelClient({ region }) });
      assert.equal((await fetch(request)).status, 200, region);
    }
  });

  it('the wrong secret answers 403 and changes nothing', async () => {
    const before = await serving();
    const client = panelClient({ secretAccessKey: `${TEST_CREDENTIALS.secretAccessKey}-wrong` });
    const request = await panelSign(node, '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 }, { client });
    const res = await read(sendSigned(request));
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, FORBIDDEN);
    assert.equal(await serving(), before);
  });

  it('an unknown access key id answers 403', async () => {
    const client = panelClient({ accessKeyId: 'AKIAUNKNOWNKEY000000' });
    const res = await read(sendSigned(await panelSign(node, '/num_active_tokens?event_id=Sample', undefined, { client })));
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, FORBIDDEN);
  });

  it('a signature for another service than execute-api answers 403', async () => {
    const client = panelClient({ service: 'lambda' });
    const res = await read(sendSigned(await panelSign(node, '/num_active_tokens?event_id=Sample', undefined, { client })));
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, FORBIDDEN);
  });

  it('a body changed after signing answers 403 and changes nothing', async () => {
    const before = await serving();
    const request = await panelSign(node, '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 });
    const res = await read(sendSigned(request, JSON.stringify({ event_id: 'Sample', increment_by: 1000 })));
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, FORBIDDEN);
    assert.equal(await serving(), before);
  });

  it('a query string or path changed after signing answers 403', async () => {
    const signed = await panelSign(node, '/num_active_tokens?event_id=Sample', undefined);
    const otherQuery = await fetch(`${signed.url}&extra=1`, { headers: signed.headers });
    assert.equal(otherQuery.status, 403);
    const otherPath = await fetch(signed.url.replace('/num_active_tokens', '/expired_tokens'), { headers: signed.headers });
    assert.equal(otherPath.status, 403);
  });

  it('a date 16 minutes old or 16 minutes ahead answers 403; within 15 minutes is accepted', async () => {
    const path = '/num_active_tokens?event_id=Sample';
    for (const offset of [-16 * MINUTE, 16 * MINUTE]) {
      const res = await read(sendSigned(await panelSign(node, path, undefined, { dateMs: node.clock.now() + offset })));
      assert.equal(res.status, 403, `offset ${offset / MINUTE} min`);
      assert.deepEqual(res.body, FORBIDDEN);
    }
    for (const offset of [-14 * MINUTE, 14 * MINUTE]) {
      const res = await read(sendSigned(await panelSign(node, path, undefined, { dateMs: node.clock.now() + offset })));
      assert.equal(res.status, 200, `offset ${offset / MINUTE} min`);
    }
  });

  it('a signed request replayed 16 minutes later answers 403', async () => {
    const request = await panelSign(node, '/num_active_tokens?event_id=Sample', undefined);
    const replay = { url: request.url, headers: new Headers(request.headers) };
    assert.equal((await fetch(request)).status, 200);
    node.clock.advance(16 * 60);
    const res = await read(fetch(replay.url, { headers: replay.headers }));
    assert.equal(res.status, 403);
  });
});

describe('private API: SigV4 from a botocore-style client (@smithy/signature-v4, with X-Amz-Content-Sha256)', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  it('a GET with a query string is accepted', async () => {
    const { activeTokens } = await node.room.reports.counters('Sample');
    const res = await read(botoFetch(node, 'GET', '/num_active_tokens?event_id=Sample'));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { active_tokens: activeTokens });
  });

  it('a POST with a JSON body is accepted', async () => {
    const { serving } = await node.room.reports.counters('Sample');
    const res = await read(botoFetch(node, 'POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 4 }));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { serving_num: serving + 4 });
  });

  it('an X-Amz-Content-Sha256 that is not the hash of the body answers 403 and changes nothing', async () => {
    const before = await node.room.reports.counters('Sample');
    const hashOfOther = createHash('sha256').update('{"event_id":"Sample","increment_by":1}').digest('hex');
    const res = await read(
      botoFetch(node, 'POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 500 }, { claimedHash: hashOfOther }),
    );
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, FORBIDDEN);
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });

  it('UNSIGNED-PAYLOAD is not accepted in place of the body hash', async () => {
    const res = await read(
      botoFetch(node, 'POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 }, { claimedHash: 'UNSIGNED-PAYLOAD' }),
    );
    assert.equal(res.status, 403);
  });
});

describe('private API: a configured region', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ region: 'eu-west-1' });
  });
  after(() => node.stop());

  it('only signatures scoped to that region are accepted', async () => {
    assert.equal((await botoFetch(node, 'GET', '/num_active_tokens?event_id=Sample', undefined, { region: 'eu-west-1' })).status, 200);
    const res = await read(botoFetch(node, 'GET', '/num_active_tokens?event_id=Sample', undefined, { region: 'us-east-1' }));
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, FORBIDDEN);
  });
});
