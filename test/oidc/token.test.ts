// POST /oidc/token: client authentication, the code, redirect URI and PKCE checks, and OAuth2 error bodies.

import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { TestNode } from '../support/node.ts';
import {
  CONFIGURED,
  CONFIGURED_SECRET,
  PLAIN,
  REDIRECT_URI,
  SHOP,
  authorizeParams,
  basic,
  clientSecretOf,
  enterWaitingRoom,
  issuerOf,
  servedCode,
  serveUpTo,
  startOidcNode,
  tokenRequest,
} from './support.ts';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

describe('OIDC /token', () => {
  let node: TestNode;
  let secret: string;
  before(async () => {
    node = await startOidcNode();
    secret = await clientSecretOf(node, SHOP);
  });
  after(() => node.stop());

  const exchange = (code: string, extra: Record<string, string> = {}) =>
    tokenRequest(
      node,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...extra },
      { authorization: basic(SHOP, secret) },
    );
  const assertError = (
    answer: { status: number; headers: Headers; body: Record<string, unknown> },
    status: number,
    error: string,
  ) => {
    assert.equal(answer.status, status, JSON.stringify(answer.body));
    assert.equal(answer.body.error, error);
    assert.equal(typeof answer.body.error_description, 'string');
    assert.equal(answer.headers.get('cache-control'), 'no-store');
  };

  it('issues the token set with iss = the OIDC issuer and the nonce in the id token only', async () => {
    const code = await servedCode(node, { nonce: 'nonce-123' });
    const answer = await exchange(code);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    assert.equal(answer.headers.get('pragma'), 'no-cache');
    assert.deepEqual(Object.keys(answer.body), ['access_token', 'id_token', 'refresh_token', 'token_type', 'expires_in']);
    assert.equal(answer.body.token_type, 'Bearer');
    assert.equal(answer.body.expires_in, 3600);
    const id = decodeJwt(String(answer.body.id_token));
    const access = decodeJwt(String(answer.body.access_token));
    assert.equal(id.nonce, 'nonce-123');
    assert.equal(access.nonce, undefined);
    assert.equal(id.iss, issuerOf(node));
    assert.equal(id.sub, code);
    assert.equal(id.aud, SHOP);
  });

  it('client authentication: Basic or form; a wrong secret is invalid_client (401 + challenge with Basic)', async () => {
    const code = await servedCode(node);
    const base = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI };

    const wrongBasic = await tokenRequest(node, base, { authorization: basic(SHOP, `${secret}x`) });
    assertError(wrongBasic, 401, 'invalid_client');
    assert.match(wrongBasic.headers.get('www-authenticate') ?? '', /^Basic /);

    const wrongForm = await tokenRequest(node, { ...base, client_id: SHOP, client_secret: secret.slice(1) });
    assertError(wrongForm, 400, 'invalid_client');
    assert.equal(wrongForm.headers.get('www-authenticate'), null);

    const none = await tokenRequest(node, { ...base, client_id: SHOP });
    assertError(none, 401, 'invalid_client');
    assert.match(none.headers.get('www-authenticate') ?? '', /^Basic /);

    assertError(await tokenRequest(node, base, { authorization: basic('Nope', secret) }), 401, 'invalid_client');
    assertError(await tokenRequest(node, base, { authorization: basic(PLAIN, secret) }), 401, 'invalid_client');
    assertError(await tokenRequest(node, base, { authorization: 'Basic %%%' }), 401, 'invalid_client');
    // Another client's secret does not authenticate this one.
    assertError(await tokenRequest(node, base, { authorization: basic(SHOP, CONFIGURED_SECRET) }), 401, 'invalid_client');

    // Both methods at once, or a form client_id that is not the authenticated one.
    assertError(
      await tokenRequest(node, { ...base, client_secret: secret }, { authorization: basic(SHOP, secret) }),
      400,
      'invalid_request',
    );
    assertError(
      await tokenRequest(node, { ...base, client_id: CONFIGURED }, { authorization: basic(SHOP, secret) }),
      400,
      'invalid_request',
    );

    assert.equal((await tokenRequest(node, { ...base, client_id: SHOP, client_secret: secret })).status, 200);
    assert.equal((await tokenRequest(node, base, { authorization: basic(SHOP, secret) })).status, 200);
  });

  it('malformed requests are invalid_request; other grant types unsupported_grant_type', async () => {
    const code = await servedCode(node);
    const json = await fetch(`${issuerOf(node)}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basic(SHOP, secret) },
      body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }),
    });
    assert.equal(json.status, 400);
    assert.equal(((await json.json()) as { error: string }).error, 'invalid_request');

    const repeated = await fetch(`${issuerOf(node)}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(SHOP, secret) },
      body: `grant_type=authorization_code&code=${code}&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`,
    });
    assert.equal(((await repeated.json()) as { error: string }).error, 'invalid_request');

    const auth = { authorization: basic(SHOP, secret) };
    assertError(await tokenRequest(node, { code, redirect_uri: REDIRECT_URI }, auth), 400, 'invalid_request');
    assertError(await tokenRequest(node, { grant_type: 'refresh_token', refresh_token: 'x' }, auth), 400, 'unsupported_grant_type');
    assertError(await tokenRequest(node, { grant_type: 'client_credentials' }, auth), 400, 'unsupported_grant_type');
    assertError(await tokenRequest(node, { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI }, auth), 400, 'invalid_request');
    assertError(await tokenRequest(node, { grant_type: 'authorization_code', code }, auth), 400, 'invalid_request');

    const get = await fetch(`${issuerOf(node)}/token`);
    assert.equal(get.status, 405);
  });

  it('a code that is unknown, not a request ID, of another client or joined outside OIDC is invalid_grant', async () => {
    assertError(await exchange(randomUUID()), 400, 'invalid_grant');
    assertError(await exchange('not-a-request-id'), 400, 'invalid_grant');

    // A visitor of the same event who joined through the public API never went through /authorize.
    const joined = (await (await node.post('/assign_queue_num', { event_id: SHOP })).json()) as { api_request_id: string };
    const position = (await (await node.get(`/queue_num?event_id=${SHOP}&request_id=${joined.api_request_id}`)).json()) as {
      queue_number: number;
    };
    await serveUpTo(node, SHOP, position.queue_number);
    assertError(await exchange(joined.api_request_id), 400, 'invalid_grant');

    // A code of another client.
    const url = `${issuerOf(node)}/authorize?${new URLSearchParams(authorizeParams({ client_id: CONFIGURED }))}`;
    const other = (await enterWaitingRoom(url)).joined;
    await serveUpTo(node, CONFIGURED, other.queue_number);
    assertError(await exchange(other.request_id), 400, 'invalid_grant');
  });

  it('a code not served yet is invalid_grant, and the same code works once served', async () => {
    const url = `${issuerOf(node)}/authorize?${new URLSearchParams(authorizeParams())}`;
    const { joined } = await enterWaitingRoom(url);
    const early = await exchange(joined.request_id);
    assertError(early, 400, 'invalid_grant');
    assert.match(String(early.body.error_description), /not being served yet/);
    await serveUpTo(node, SHOP, joined.queue_number);
    assert.equal((await exchange(joined.request_id)).status, 200);
  });

  it('redirect_uri must be the one the code was issued for', async () => {
    const code = await servedCode(node);
    assertError(await exchange(code, { redirect_uri: `${REDIRECT_URI}/other` }), 400, 'invalid_grant');
    assertError(await exchange(code, { redirect_uri: 'https://rp.example/callback?tenant=blue' }), 400, 'invalid_grant');
  });

  it('PKCE: the verifier of the bound S256 challenge is required and checked', async () => {
    const code = await servedCode(node, { code_challenge: CHALLENGE, code_challenge_method: 'S256' });
    assertError(await exchange(code), 400, 'invalid_grant');
    assertError(await exchange(code, { code_verifier: `${VERIFIER.slice(0, -1)}A` }), 400, 'invalid_grant');
    assertError(await exchange(code, { code_verifier: 'too-short' }), 400, 'invalid_request');
    assert.equal((await exchange(code, { code_verifier: VERIFIER })).status, 200);
  });

  it('PKCE: a verifier for a code bound without a challenge is refused', async () => {
    const code = await servedCode(node);
    assertError(await exchange(code, { code_verifier: VERIFIER }), 400, 'invalid_grant');
  });

  it('a failed exchange issues nothing: the tokens counter only moves on success', async () => {
    const code = await servedCode(node, { code_challenge: CHALLENGE, code_challenge_method: 'S256' });
    const tokensBefore = ((await (await node.admin('GET', `/num_active_tokens?event_id=${SHOP}`)).json()) as { active_tokens: number })
      .active_tokens;
    await exchange(code, { code_verifier: `${VERIFIER.slice(0, -1)}A` });
    await tokenRequest(node, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(SHOP, 'x') });
    const tokensAfter = ((await (await node.admin('GET', `/num_active_tokens?event_id=${SHOP}`)).json()) as { active_tokens: number })
      .active_tokens;
    assert.equal(tokensAfter, tokensBefore);
  });

  it('a code whose token set was claimed through the public API is refused (other issuer, no nonce)', async () => {
    const code = await servedCode(node, { nonce: 'n' });
    assert.equal((await node.post('/generate_token', { event_id: SHOP, request_id: code })).status, 200);
    const answer = await exchange(code);
    assertError(answer, 400, 'invalid_grant');
    assert.match(String(answer.body.error_description), /outside OpenID Connect/);
  });

  it('a code whose queue position expired unclaimed is invalid_grant', async () => {
    const code = await servedCode(node);
    node.clock.advance(901);
    try {
      assertError(await exchange(code), 400, 'invalid_grant');
    } finally {
      node.clock.advance(-901);
    }
  });

  it('a secret with reserved characters works through Basic, form-encoded as RFC 6749 says', async () => {
    // Printable ASCII only: the room-settings schema refuses any other client secret (rooms are read back
    // through it from the store).
    const special = 'p@ss:w+rd/%&=~-0123456789';
    const { startOidcNode: start, oidcEvents } = await import('./support.ts');
    const other = await start([...oidcEvents(), { ...oidcEvents()[1]!, event_id: 'Special', oidc: { client_secret: special, redirect_uris: [REDIRECT_URI] } }]);
    try {
      const url = `${issuerOf(other)}/authorize?${new URLSearchParams(authorizeParams({ client_id: 'Special' }))}`;
      const { joined } = await enterWaitingRoom(url);
      await serveUpTo(other, 'Special', joined.queue_number);
      const form = { grant_type: 'authorization_code', code: joined.request_id, redirect_uri: REDIRECT_URI };
      assert.equal((await tokenRequest(other, form, { authorization: basic('Special', special) })).status, 200);
      assert.equal((await tokenRequest(other, { ...form, client_id: 'Special', client_secret: special })).status, 200);
    } finally {
      await other.stop();
    }
  });
});

describe('OIDC /token rate limit', () => {
  let node: TestNode;
  before(async () => {
    node = await startOidcNode();
  });
  after(() => node.stop());

  it('a client ID sending far beyond 20 requests a second (burst 40) gets 429 temporarily_unavailable with Retry-After, before its secret is checked', async () => {
    const answers = await Promise.all(
      Array.from({ length: 150 }, () =>
        tokenRequest(node, { grant_type: 'authorization_code', code: randomUUID(), redirect_uri: REDIRECT_URI }, { authorization: basic(SHOP, 'a wrong secret') }),
      ),
    );
    const limited = answers.filter((answer) => answer.status === 429);
    assert.ok(limited.length >= 150 - 40 - 60, `${limited.length} of 150 refused`);
    for (const answer of limited) {
      assert.equal(answer.body.error, 'temporarily_unavailable');
      assert.equal(answer.headers.get('retry-after'), '1');
    }
    assert.ok(answers.filter((answer) => answer.status === 401).length >= 1, 'the first ones are checked (wrong secret)');
  });
});
