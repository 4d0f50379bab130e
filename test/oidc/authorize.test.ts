// Discovery, JWKS, /authorize, the login page and its join/continue calls, over HTTP.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { importJWK, jwtVerify } from 'jose';
import type { TestNode } from '../support/node.ts';
import { startTestNode } from '../support/node.ts';
import {
  CONFIGURED,
  PLAIN,
  REDIRECT_URI,
  SHOP,
  authorize,
  authorizeParams,
  continueLogin,
  enterWaitingRoom,
  issuerOf,
  postJson,
  serveUpTo,
  startOidcNode,
} from './support.ts';

describe('OIDC discovery and keys', () => {
  let node: TestNode;
  before(async () => {
    node = await startOidcNode();
  });
  after(() => node.stop());

  it('the discovery document lists exactly what the spec lists, under the issuer', async () => {
    const response = await fetch(`${issuerOf(node)}/.well-known/openid-configuration`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    const issuer = issuerOf(node);
    assert.deepEqual(await response.json(), {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/userInfo`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      response_types_supported: ['code'],
      scopes_supported: ['openid'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      grant_types_supported: ['authorization_code'],
      code_challenge_methods_supported: ['S256'],
    });
  });

  it('the JWKS holds the public keys of every OIDC client and nothing private', async () => {
    const response = await fetch(`${issuerOf(node)}/.well-known/jwks.json`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'public, max-age=300');
    const { keys } = (await response.json()) as { keys: Record<string, string>[] };
    const expected = await Promise.all([SHOP, CONFIGURED].map(async (e) => (await node.get(`/public_key?event_id=${e}`)).json()));
    for (const key of expected) assert.ok(keys.some((k) => JSON.stringify(k) === JSON.stringify(key)));
    // Each room's RS256 key and the ES256 and EdDSA keys derived from it (signing_algorithm), public members only.
    assert.equal(keys.length, 3 * expected.length);
    const publicMembers: Record<string, string[]> = {
      RSA: ['alg', 'e', 'kid', 'kty', 'n'],
      EC: ['alg', 'crv', 'kid', 'kty', 'x', 'y'],
      OKP: ['alg', 'crv', 'kid', 'kty', 'x'],
    };
    for (const key of keys) assert.deepEqual(Object.keys(key).sort(), publicMembers[key.kty!]);
  });

  it('a token of a client verifies against the JWKS key with its kid', async () => {
    const { payload } = await (async () => {
      const join = (await (await node.post('/assign_queue_num', { event_id: SHOP })).json()) as { api_request_id: string };
      await serveUpTo(node, SHOP, 1_000_000);
      const tokens = (await (await node.post('/generate_token', { event_id: SHOP, request_id: join.api_request_id })).json()) as {
        access_token: string;
      };
      const { keys } = (await (await fetch(`${issuerOf(node)}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
      const kid = JSON.parse(Buffer.from(tokens.access_token.split('.')[0] ?? '', 'base64url').toString()).kid;
      const jwk = keys.find((k) => k.kid === kid);
      assert.ok(jwk);
      return jwtVerify(tokens.access_token, await importJWK(jwk as never, 'RS256'));
    })();
    assert.equal(payload.aud, SHOP);
  });

  it('with no OIDC client at all, the JWKS is an error, never an empty key list', async () => {
    const bare = await startTestNode();
    try {
      const response = await fetch(`${bare.url}/oidc/.well-known/jwks.json`);
      assert.equal(response.status, 404);
      assert.deepEqual(await response.json(), { error: 'OpenID Connect is not enabled for any event' });
    } finally {
      await bare.stop();
    }
  });
});

describe('OIDC /authorize', () => {
  let node: TestNode;
  before(async () => {
    node = await startOidcNode();
  });
  after(() => node.stop());

  it('a valid request is sent to the login page with its parameters URL-encoded', async () => {
    const state = 'a&b=c d/é?#';
    const response = await authorize(node, authorizeParams({ state, nonce: 'n+1', scope: 'openid email' }));
    assert.equal(response.status, 302);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const location = response.headers.get('location') ?? '';
    // Relative to /oidc/authorize: it holds under any path prefix (API Gateway's stage).
    assert.ok(location.startsWith('login?'), location);
    const loginUrl = new URL(location, `${issuerOf(node)}/authorize`);
    assert.equal(loginUrl.pathname, '/oidc/login');
    const query = loginUrl.searchParams;
    assert.equal(query.get('state'), state);
    assert.equal(query.get('nonce'), 'n+1');
    assert.equal(query.get('redirect_uri'), REDIRECT_URI);
    assert.equal(query.get('scope'), 'openid email');
  });

  it('POST with a form body is the same as GET', async () => {
    const response = await fetch(`${issuerOf(node)}/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(authorizeParams()).toString(),
    });
    assert.equal(response.status, 302);
    assert.ok(response.headers.get('location')?.startsWith('login?'));
  });

  it('an unknown client, an event without OIDC or a missing client_id → 400 and never a redirect', async () => {
    for (const clientId of ['Nope', PLAIN, '']) {
      const response = await authorize(node, authorizeParams({ client_id: clientId }));
      assert.equal(response.status, 400, clientId);
      assert.equal(response.headers.get('location'), null);
      const body = (await response.json()) as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_request');
      assert.equal(typeof body.error_description, 'string');
    }
  });

  it('a redirect URI outside the allow-list → 400, never a redirect, even with other errors', async () => {
    for (const uri of [
      'https://evil.example/cb',
      `${REDIRECT_URI}/more`,
      `${REDIRECT_URI}?extra=1`,
      REDIRECT_URI.replace('https:', 'http:'),
      REDIRECT_URI.toUpperCase(),
    ]) {
      const response = await authorize(node, authorizeParams({ redirect_uri: uri, response_type: 'token' }));
      assert.equal(response.status, 400, uri);
      assert.equal(response.headers.get('location'), null);
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_request');
    }
    const missing = authorizeParams();
    delete missing.redirect_uri;
    assert.equal((await authorize(node, missing)).status, 400);
  });

  it('a browser gets an HTML error page instead of JSON, still without a redirect', async () => {
    const response = await authorize(node, authorizeParams({ redirect_uri: 'https://evil.example/' }), { accept: 'text/html' });
    assert.equal(response.status, 400);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(response.headers.get('location'), null);
    assert.match(await response.text(), /redirect_uri is not registered for this client/);
  });

  it('once the redirect URI is checked, other errors go back to it with the state (RFC 6749 §4.1.2.1)', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ scope: 'profile' }, 'invalid_scope'],
      [{ code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'plain' }, 'invalid_request'],
      [{ prompt: 'none' }, 'login_required'],
    ];
    for (const [overrides, error] of cases) {
      const response = await authorize(node, authorizeParams({ ...overrides, state: 'x y' }));
      assert.equal(response.status, 302, JSON.stringify(overrides));
      const location = new URL(response.headers.get('location') ?? '');
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
      assert.equal(location.searchParams.get('error'), error);
      assert.equal(location.searchParams.get('state'), 'x y');
      assert.equal(location.searchParams.has('code'), false);
    }
  });

  it('answers preflights and 405 for other methods', async () => {
    const preflight = await fetch(`${issuerOf(node)}/authorize`, { method: 'OPTIONS' });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-methods'), 'GET,POST,HEAD,OPTIONS');
    const put = await fetch(`${issuerOf(node)}/authorize`, { method: 'PUT' });
    assert.equal(put.status, 405);
  });
});

describe('OIDC login page', () => {
  let node: TestNode;
  before(async () => {
    node = await startOidcNode();
  });
  after(() => node.stop());

  const loginUrl = (params: Record<string, string>) => `${issuerOf(node)}/login?${new URLSearchParams(params)}`;

  it('is one self-contained page: inline script and style allowed by hash, nothing from other hosts', async () => {
    const response = await fetch(loginUrl(authorizeParams()));
    assert.equal(response.status, 200);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/=]+'/);
    assert.match(csp, /connect-src 'self'/);
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const html = await response.text();
    assert.doesNotMatch(html, /(src|href)=/);
    assert.doesNotMatch(html, /https?:\/\//);
    assert.match(html, /data-public-api="\.\.\/"/);
  });

  it('checks its parameters again: an edited URL cannot reach an unregistered redirect URI', async () => {
    const response = await fetch(loginUrl(authorizeParams({ redirect_uri: 'https://evil.example/' })), { redirect: 'manual' });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('location'), null);
  });

  it('join checks the parameters again too, and binds them to a new request ID', async () => {
    const refused = await postJson(`${issuerOf(node)}/join`, authorizeParams({ redirect_uri: 'https://evil.example/' }));
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, { error: 'redirect_uri is not registered for this client' });
    const malformed = await postJson(`${issuerOf(node)}/join`, { client_id: 7 });
    assert.deepEqual(malformed, { status: 400, body: { error: 'Invalid request body' } });
    const joined = await postJson(`${issuerOf(node)}/join`, authorizeParams());
    assert.equal(joined.status, 200);
    const position = await node.get(`/queue_num?event_id=${SHOP}&request_id=${String(joined.body.request_id)}`);
    assert.equal(position.status, 200, 'the position is stored when join answers');
    assert.equal(((await position.json()) as { queue_number: number }).queue_number, joined.body.queue_number);
  });

  it('continue: 202 until served, then the redirect to redirect_uri with code = request ID and the state', async () => {
    const url = `${issuerOf(node)}/authorize?${new URLSearchParams(authorizeParams({ state: 'st&1' }))}`;
    const { joined } = await enterWaitingRoom(url);
    assert.deepEqual(await continueLogin(node, SHOP, joined.request_id), {
      status: 202,
      body: { error: 'Request ID not being served yet' },
    });
    await serveUpTo(node, SHOP, joined.queue_number);
    const served = await continueLogin(node, SHOP, joined.request_id);
    assert.equal(served.status, 200);
    assert.equal(served.body.redirect_to, `${REDIRECT_URI}?code=${joined.request_id}&state=st%261`);
  });

  it('continue refuses request IDs that did not join through /authorize, or of another client', async () => {
    const plain = (await (await node.post('/assign_queue_num', { event_id: SHOP })).json()) as { api_request_id: string };
    assert.deepEqual(await continueLogin(node, SHOP, plain.api_request_id), { status: 404, body: { error: 'Invalid request ID' } });
    const { joined } = await enterWaitingRoom(`${issuerOf(node)}/authorize?${new URLSearchParams(authorizeParams())}`);
    assert.equal((await continueLogin(node, CONFIGURED, joined.request_id)).status, 404);
    assert.deepEqual(await continueLogin(node, SHOP, 'not-a-uuid'), {
      status: 400,
      body: { error: 'Invalid event or request ID' },
    });
    assert.equal((await continueLogin(node, PLAIN, joined.request_id)).status, 400);
  });

  it('continue sends a visitor whose place expired back to the relying party with access_denied', async () => {
    const { joined } = await enterWaitingRoom(`${issuerOf(node)}/authorize?${new URLSearchParams(authorizeParams())}`);
    await serveUpTo(node, SHOP, joined.queue_number);
    node.clock.advance(901);
    const answer = await continueLogin(node, SHOP, joined.request_id);
    node.clock.advance(-901);
    assert.equal(answer.status, 200);
    const location = new URL(String(answer.body.redirect_to));
    assert.equal(location.searchParams.get('error'), 'access_denied');
    assert.equal(location.searchParams.get('error_description'), 'Queue position has expired');
    assert.equal(location.searchParams.get('state'), 'state-1');
    assert.equal(location.searchParams.has('code'), false);
  });

  it('a reset forgets the authorizations with the positions', async () => {
    const { joined } = await enterWaitingRoom(`${issuerOf(node)}/authorize?${new URLSearchParams(authorizeParams())}`);
    assert.equal((await node.admin('POST', '/reset_initial_state', { event_id: SHOP })).status, 200);
    assert.equal((await continueLogin(node, SHOP, joined.request_id)).status, 404);
  });
});
