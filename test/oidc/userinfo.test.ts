// GET|POST /oidc/userInfo: only a verified, unexpired access token of an OIDC client issued by this issuer.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestNode } from '../support/node.ts';
import { PLAIN, REDIRECT_URI, SHOP, basic, clientSecretOf, issuerOf, servedCode, startOidcNode, tokenRequest } from './support.ts';

describe('OIDC /userInfo', () => {
  let node: TestNode;
  let tokens: { access_token: string; id_token: string; refresh_token: string };
  let code: string;
  before(async () => {
    node = await startOidcNode();
    code = await servedCode(node);
    const answer = await tokenRequest(
      node,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI },
      { authorization: basic(SHOP, await clientSecretOf(node, SHOP)) },
    );
    tokens = answer.body as typeof tokens;
  });
  after(() => node.stop());

  const userInfo = (authorization?: string, method: 'GET' | 'POST' = 'GET') =>
    fetch(`${issuerOf(node)}/userInfo`, { method, headers: authorization === undefined ? {} : { authorization } });

  const assertInvalid = async (response: Response, description?: RegExp) => {
    assert.equal(response.status, 401);
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="anteroom", error="invalid_token"/);
    const body = (await response.json()) as { error: string; error_description: string };
    assert.equal(body.error, 'invalid_token');
    if (description) assert.match(body.error_description, description);
  };

  it('answers the claims of a valid access token, by GET and by POST', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const response = await userInfo(`Bearer ${tokens.access_token}`, method);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      const claims = (await response.json()) as Record<string, unknown>;
      assert.equal(claims.sub, code);
      assert.equal(claims.aud, SHOP);
      assert.equal(claims.token_use, 'access');
      assert.equal(claims.iss, issuerOf(node));
      assert.equal(typeof claims.queue_position, 'number');
    }
  });

  it('no token → 401 with a bare Bearer challenge (VWR answered 500)', async () => {
    for (const authorization of [undefined, '', 'Basic dXNlcjpwYXNz']) {
      const response = await userInfo(authorization);
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="anteroom"');
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_token');
    }
  });

  it('refuses what does not verify: garbage, a forged signature, alg none, id and refresh tokens', async () => {
    await assertInvalid(await userInfo('Bearer not-a-jwt'), /malformed/);
    const [header, payload] = tokens.access_token.split('.');
    const forgedPayload = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()), queue_position: 999_999 }),
    ).toString('base64url');
    await assertInvalid(await userInfo(`Bearer ${header}.${forgedPayload}.${tokens.access_token.split('.')[2]}`));
    const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    await assertInvalid(await userInfo(`Bearer ${none}.${payload}.`));
    await assertInvalid(await userInfo(`Bearer ${tokens.id_token}`), /not an access token/);
    await assertInvalid(await userInfo(`Bearer ${tokens.refresh_token}`), /not an access token/);
  });

  it('refuses tokens of another issuer or of an event that is no OIDC client', async () => {
    // The public API issues with the server's public URL as iss, not the OIDC issuer.
    const join = (await (await node.post('/assign_queue_num', { event_id: PLAIN })).json()) as { api_request_id: string };
    await node.admin('POST', '/increment_serving_counter', { event_id: PLAIN, increment_by: 1 });
    const plain = (await (await node.post('/generate_token', { event_id: PLAIN, request_id: join.api_request_id })).json()) as {
      access_token: string;
    };
    await assertInvalid(await userInfo(`Bearer ${plain.access_token}`));
    const shopJoin = (await (await node.post('/assign_queue_num', { event_id: SHOP })).json()) as { api_request_id: string };
    await node.admin('POST', '/increment_serving_counter', { event_id: SHOP, increment_by: 100 });
    const publicShop = (await (await node.post('/generate_token', { event_id: SHOP, request_id: shopJoin.api_request_id })).json()) as {
      access_token: string;
    };
    await assertInvalid(await userInfo(`Bearer ${publicShop.access_token}`));
  });

  it('refuses an expired access token', async () => {
    node.clock.advance(3601);
    try {
      await assertInvalid(await userInfo(`Bearer ${tokens.access_token}`), /expired/);
    } finally {
      node.clock.advance(-3601);
    }
  });
});
