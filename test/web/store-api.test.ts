import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT, decodeProtectedHeader, generateKeyPair } from 'jose';
import { TEST_CREDENTIALS, eventSettings } from '../support/node.ts';
import { startWebNode, type WebNode } from './support.ts';

interface TokenSet {
  access_token: string;
  refresh_token: string;
  requestId: string;
}

describe('sample store API (protected by the authorizer)', () => {
  let node: WebNode;
  let sample: TokenSet;

  async function tokensFor(eventId: string): Promise<TokenSet> {
    const join = await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: eventId }) });
    const { api_request_id: requestId } = (await join.json()) as { api_request_id: string };
    await fetch(`${node.privateUrl}/increment_serving_counter`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` },
      body: JSON.stringify({ event_id: eventId, increment_by: 1 }),
    });
    const token = await fetch(`${node.url}/generate_token`, {
      method: 'POST',
      body: JSON.stringify({ event_id: eventId, request_id: requestId }),
    });
    assert.equal(token.status, 200);
    return { ...((await token.json()) as Omit<TokenSet, 'requestId'>), requestId };
  }

  const store = (operation: string, init: RequestInit = {}) => fetch(`${node.url}/store/${operation}`, init);

  before(async () => {
    node = await startWebNode({ events: [eventSettings('Sample'), eventSettings('Launch')] });
    sample = await tokensFor('Sample');
  });
  after(() => node.stop());

  it('refuses a call without a token: 401, open to any origin', async () => {
    for (const operation of ['search', 'checkout', 'layaway']) {
      const response = await store(operation);
      assert.equal(response.status, 401, operation);
      assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      assert.equal(response.headers.get('access-control-allow-origin'), '*');
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.deepEqual(await response.json(), { error: 'Missing token', reason: 'missing_token' });
    }
  });

  it('refuses a forged token: 403', async () => {
    // Same claims and kid as a real token, signed with another key.
    const { privateKey } = await generateKeyPair('RS256');
    const { kid } = decodeProtectedHeader(sample.access_token);
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({ token_use: 'access', queue_position: 1 })
      .setProtectedHeader({ alg: 'RS256', kid: kid!, typ: 'JWT' })
      .setAudience('Sample')
      .setSubject(sample.requestId)
      .setIssuer(node.url)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + 600)
      .sign(privateKey);
    const response = await store('checkout', { headers: { authorization: forged } });
    assert.equal(response.status, 403);
    assert.equal(((await response.json()) as { reason: string }).reason, 'bad_signature');

    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${sample.access_token.split('.')[1]}.`;
    assert.equal((await store('checkout', { headers: { authorization: unsigned } })).status, 403);
    assert.equal((await store('checkout', { headers: { authorization: 'garbage' } })).status, 403);
  });

  it('refuses a token whose claims were edited to another event', async () => {
    const [header, payload, signature] = sample.access_token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const edited = Buffer.from(JSON.stringify({ ...claims, aud: 'Launch' })).toString('base64url');
    const response = await store('checkout', { headers: { authorization: `${header}.${edited}.${signature}` } });
    assert.equal(response.status, 403);
  });

  it('refuses a refresh token (only access tokens buy)', async () => {
    const response = await store('checkout', { headers: { authorization: sample.refresh_token } });
    assert.equal(response.status, 403);
    assert.equal(((await response.json()) as { reason: string }).reason, 'wrong_token_use');
  });

  it('answers {"result": "Success"} to a valid access token, raw (as VWR sends it) or Bearer, GET or POST', async () => {
    for (const [authorization, method] of [
      [sample.access_token, 'GET'],
      [`Bearer ${sample.access_token}`, 'POST'],
    ] as const) {
      for (const operation of ['search', 'checkout', 'layaway']) {
        const response = await store(operation, { method, headers: { authorization }, ...(method === 'POST' ? { body: '{}' } : {}) });
        assert.equal(response.status, 200, `${method} ${operation}`);
        assert.equal(response.headers.get('access-control-allow-origin'), '*');
        assert.deepEqual(await response.json(), {
          result: 'Success',
          event_id: 'Sample',
          request_id: sample.requestId,
          queue_position: 1,
        });
      }
    }
  });

  it("accepts the tokens of each of the server's events", async () => {
    const launch = await tokensFor('Launch');
    const response = await store('checkout', { headers: { authorization: launch.access_token } });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { event_id: string }).event_id, 'Launch');
  });

  it('answers CORS preflights without a token', async () => {
    const response = await store('checkout', {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    assert.match(response.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /Content-Type/);
  });

  it('other methods are 405 (once authorized) and other paths 404', async () => {
    const put = await store('checkout', { method: 'PUT', headers: { authorization: sample.access_token } });
    assert.equal(put.status, 405);
    assert.equal((await store('refund', { headers: { authorization: sample.access_token } })).status, 404);
  });
});
