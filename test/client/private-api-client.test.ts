// The one private-API client (src/client/private-api-client.ts): its calls, authenticated with the admin token
// and with SigV4, accepted by a real node, whose private API checks signatures with the server's own verifier
// (src/http/auth/sigv4.ts); signed requests also handed to that verifier directly; and its failures (refusals,
// no answer, answers it cannot read) as the inlets and the load tester rely on them.

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { PrivateApiClient, PrivateApiError, type PrivateApiCredentials } from '../../src/client/private-api-client.ts';
import { verifySigV4 } from '../../src/http/auth/sigv4.ts';
import { join } from '../support/api-calls.ts';
import { startTestNode, TEST_CREDENTIALS, TestClock, type TestNode } from '../support/node.ts';

const ADMIN: PrivateApiCredentials = { adminToken: TEST_CREDENTIALS.adminToken };
const KEYS: PrivateApiCredentials = {
  accessKeyId: TEST_CREDENTIALS.accessKeyId,
  secretAccessKey: TEST_CREDENTIALS.secretAccessKey,
  region: 'eu-west-1',
};

async function rejection(promise: Promise<unknown>): Promise<PrivateApiError> {
  const error = await promise.then(
    () => assert.fail('the call succeeded'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof PrivateApiError, String(error));
  return error;
}

describe('private-API client against a node', () => {
  let node: TestNode;
  before(async () => {
    // The server checks a signature's date against its clock: the node runs on the real time.
    node = await startTestNode({}, { clock: new TestClock(Date.now()) as TestClock & (() => number) });
  });
  after(() => node.stop());

  const client = (credentials: PrivateApiCredentials, extra: { jsonContentType?: boolean } = {}) =>
    new PrivateApiClient({ baseUrl: node.privateUrl, credentials, ...extra });

  const servedVisitorWithTokens = async (api: PrivateApiClient): Promise<string> => {
    const requestId = await join(node);
    await api.incrementServingCounter('Sample', 1);
    assert.equal((await node.post('/generate_token', { event_id: 'Sample', request_id: requestId })).status, 200);
    return requestId;
  };

  const credentialKinds: [string, PrivateApiCredentials][] = [
    ['the admin token', ADMIN],
    ['SigV4', KEYS],
    ['SigV4 with a session token (temporary credentials)', { ...KEYS, sessionToken: 'FwoGZXIvYXdzEXAMPLESESSIONTOKEN' }],
    ['SigV4 in the default region', { accessKeyId: TEST_CREDENTIALS.accessKeyId, secretAccessKey: TEST_CREDENTIALS.secretAccessKey }],
  ];
  for (const [name, credentials] of credentialKinds) {
    it(`moves the counter, reads active tokens and closes sessions with ${name}`, async () => {
      const api = client(credentials);
      const before = (await node.room.reports.counters('Sample')).serving;
      assert.equal(await api.incrementServingCounter('Sample', 3), before + 3);
      assert.equal(await api.incrementServingCounter('Sample', 0), before + 3, 'by 0 reads the counter');
      const requestId = await servedVisitorWithTokens(api);
      const active = await api.numActiveTokens('Sample');
      assert.ok(active >= 1, String(active));
      assert.equal(await api.updateSession('Sample', requestId, 1), true);
      assert.equal(await api.numActiveTokens('Sample'), active - 1);
      assert.equal(await api.updateSession('Sample', requestId, -1), false, 'already closed: 404, not a failure');
    });
  }

  it('sends a body without Content-Type when asked (as VWR\'s control panel), signed and accepted', async () => {
    for (const credentials of [ADMIN, KEYS]) {
      const response = await client(credentials, { jsonContentType: false }).send('POST', '/reset_initial_state', { event_id: 'Sample' });
      assert.equal(response.status, 200, await response.clone().text());
      assert.deepEqual(await response.json(), { message: 'Counters reset. DynamoDB table recreated.' });
    }
  });

  it('send() resolves with any answer, a refusal included; the typed calls turn it into a permanent PrivateApiError', async () => {
    const wrongSecret = client({ ...KEYS, secretAccessKey: 'not-the-secret-access-key-0123456789' });
    assert.equal((await wrongSecret.send('GET', '/num_active_tokens?event_id=Sample')).status, 403);
    for (const refused of [wrongSecret, client({ adminToken: 'not-the-admin-token-0123456789' })]) {
      const error = await rejection(refused.incrementServingCounter('Sample', 1));
      assert.equal(error.status, 403);
      assert.equal(error.permanent, true);
      assert.equal(error.message, 'POST /private/increment_serving_counter answered 403: Forbidden');
    }
    const unknown = await rejection(client(ADMIN).numActiveTokens('NoSuchEvent'));
    assert.equal(unknown.status, 404);
    assert.match(unknown.message, /^GET \/private\/num_active_tokens answered 404: /);
  });

  it('names who is calling without the secret', () => {
    assert.equal(client(ADMIN).identity, 'admin token');
    assert.equal(client(KEYS).identity, `access key ${TEST_CREDENTIALS.accessKeyId}`);
  });
});

/** A private API that records what it receives and answers what the test sets. */
async function recordingServer() {
  const received: { method: string; url: string; headers: IncomingMessage['headers']; body: Buffer }[] = [];
  let answer: (res: ServerResponse) => void = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"serving_num":1}');
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    answerWith(next: (res: ServerResponse) => void) {
      answer = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('private-API client: what goes on the wire', () => {
  let server: Awaited<ReturnType<typeof recordingServer>>;
  before(async () => {
    server = await recordingServer();
  });
  after(() => server.close());

  const lastRequest = () => server.received.at(-1)!;
  const asSigned = (request: ReturnType<typeof lastRequest>) => {
    const [path, query = ''] = request.url.split('?', 2) as [string, string?];
    return { method: request.method, path, query, headers: request.headers, body: request.body };
  };

  it('signs what the server verifier checks: method, full path with the prefix, query, host, date and body', async () => {
    const api = new PrivateApiClient({ baseUrl: `${server.url}/api/private/`, credentials: KEYS });
    await api.send('GET', '/num_active_tokens?event_id=Sample');
    await api.incrementServingCounter('Sample', 2);
    const [get, post] = server.received.slice(-2) as [ReturnType<typeof lastRequest>, ReturnType<typeof lastRequest>];
    assert.equal(get.url, '/api/private/num_active_tokens?event_id=Sample');
    assert.equal(post.url, '/api/private/increment_serving_counter');
    assert.equal(post.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(post.body.toString()), { event_id: 'Sample', increment_by: 2 });
    for (const request of [get, post]) {
      assert.match(String(request.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKARTESTACCESSKEY001\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=host;x-amz-date, Signature=/);
      assert.deepEqual(await verifySigV4(asSigned(request), { ...KEYS, region: 'eu-west-1' }, Date.now()), { ok: true });
      assert.deepEqual(await verifySigV4(asSigned(request), { ...KEYS, secretAccessKey: 'another-secret' }, Date.now()), {
        ok: false,
        reason: 'signature mismatch',
      });
      assert.equal(JSON.stringify(request.headers).includes(TEST_CREDENTIALS.secretAccessKey), false, 'the secret never travels');
    }
    // The signature covers the body: the same headers with another body do not verify.
    const tampered = { ...asSigned(post), body: Buffer.from(JSON.stringify({ event_id: 'Sample', increment_by: 2000 })) };
    assert.equal((await verifySigV4(tampered, KEYS, Date.now())).ok, false);
  });

  it('signs in us-east-1 unless told otherwise, and sends a body as text/plain when asked (as VWR\'s panel)', async () => {
    const credentials = { accessKeyId: TEST_CREDENTIALS.accessKeyId, secretAccessKey: TEST_CREDENTIALS.secretAccessKey };
    const api = new PrivateApiClient({ baseUrl: server.url, credentials, jsonContentType: false });
    await api.send('POST', '/reset_initial_state', { event_id: 'Sample' });
    assert.match(String(lastRequest().headers.authorization), /\/us-east-1\/execute-api\/aws4_request, SignedHeaders=host;x-amz-date,/);
    assert.equal(lastRequest().headers['content-type'], 'text/plain;charset=UTF-8');
    assert.deepEqual(await verifySigV4(asSigned(lastRequest()), credentials, Date.now()), { ok: true });
  });

  it('sends the admin token as a bearer token, and nothing of SigV4', async () => {
    await new PrivateApiClient({ baseUrl: server.url, credentials: ADMIN }).numActiveTokens('Sample').catch(() => undefined);
    assert.equal(lastRequest().headers.authorization, `Bearer ${TEST_CREDENTIALS.adminToken}`);
    assert.equal(lastRequest().headers['x-amz-date'], undefined);
  });

  it('reads numbers sent as strings (VWR), and fails on an answer without the number', async () => {
    const api = new PrivateApiClient({ baseUrl: server.url, credentials: ADMIN });
    server.answerWith((res) => res.writeHead(200).end('{"serving_num":"12","active_tokens":"4"}'));
    assert.equal(await api.incrementServingCounter('Sample', 1), 12);
    assert.equal(await api.numActiveTokens('Sample'), 4);
    server.answerWith((res) => res.writeHead(200).end('<html>a proxy page</html>'));
    const error = await rejection(api.incrementServingCounter('Sample', 1));
    assert.equal(error.status, 200);
    assert.equal(error.permanent, false);
    assert.match(error.message, /no number in "serving_num": <html>a proxy page/);
  });

  it('fails with status 0 when no answer comes within timeoutMs, or when its signal is aborted', async () => {
    // The server holds every request without answering: only the client's own limits end the call.
    server.answerWith(() => {});
    const timed = new PrivateApiClient({ baseUrl: server.url, credentials: ADMIN, timeoutMs: 50 });
    const timeout = await rejection(timed.numActiveTokens('Sample'));
    assert.deepEqual([timeout.status, timeout.message], [0, 'GET /num_active_tokens: no answer within 50 ms']);
    assert.equal(timeout.permanent, false);

    const endOfRun = new AbortController();
    const aborted = new PrivateApiClient({ baseUrl: server.url, credentials: KEYS, timeoutMs: 60_000, signal: endOfRun.signal });
    const pending = rejection(aborted.send('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 }));
    endOfRun.abort();
    assert.equal((await pending).status, 0);
    assert.equal((await rejection(aborted.numActiveTokens('Sample'))).status, 0, 'later calls fail at once');
  });

  it('fails with status 0 when nothing listens, naming the call and the network error', async () => {
    const closed = await recordingServer();
    await closed.close();
    const error = await rejection(new PrivateApiClient({ baseUrl: `${closed.url}/private`, credentials: ADMIN }).numActiveTokens('Sample'));
    assert.deepEqual([error.status, error.message], [0, 'GET /private/num_active_tokens: ECONNREFUSED']);
  });
});
