// POST /token's checks alone (src/oidc/token-checks.ts): exchangeCode over the real waiting-room service on
// an in-memory store, with a signer that makes unsigned JWTs (the exchange reads the id token's claims, it
// does not verify them). Each step's refusal, in order, with its OAuth error code and status.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { buildClaims, TOKEN_USES, type TokenRecord } from '../../src/domain/claims.ts';
import { ContractError, OAuthError } from '../../src/domain/errors.ts';
import type { PublicJwk, SigningKeys, TokenSigning } from '../../src/domain/ports/tokens.ts';
import { RoomRegistry } from '../../src/domain/room-registry.ts';
import { defaultSettings } from '../../src/domain/room-settings.ts';
import type { ClaimService } from '../../src/domain/services/claim-service.ts';
import { buildWaitingRoom } from '../../src/domain/services/waiting-room.ts';
import { bindAuthorization } from '../../src/oidc/bound-authorization.ts';
import { ClientSecrets } from '../../src/oidc/client-secrets.ts';
import { OidcClients } from '../../src/oidc/clients.ts';
import { exchangeCode, type TokenRequest } from '../../src/oidc/token-checks.ts';
import { TOKEN_BURST, TokenRateLimit } from '../../src/oidc/token-rate-limit.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const REDIRECT = 'https://rp.example/cb';
const SECRET = 'configured-secret-0123456789-abcdef';
const ISSUER = 'https://waiting.example/oidc';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** JWTs with the real claims and no real signature. */
const signWith: TokenSigning['sign'] = async (eventId: string, record: TokenRecord) => {
  const [access, refresh, id] = TOKEN_USES.map((use) => `${segment({ alg: 'none' })}.${segment(buildClaims(eventId, record, use))}.x`);
  return { access_token: access!, refresh_token: refresh!, id_token: id! };
};
const signer: TokenSigning = { sign: signWith, signNew: signWith };
const jwk: PublicJwk = { kty: 'RSA', alg: 'RS256', kid: 'k', n: 'n', e: 'AQAB' };
const keys: SigningKeys = { forget: () => {}, current: async () => ({ kid: 'k', publicJwk: jwk }), all: async () => [{ kid: 'k', publicJwk: jwk }] };

function setup() {
  const store = new SqliteStore({ path: ':memory:' });
  const rooms = new RoomRegistry([
    { ...defaultSettings('Shop'), oidc: { client_secret: SECRET, redirect_uris: [REDIRECT] } },
    { ...defaultSettings('Other'), oidc: { client_secret: 'other-secret-0123456789-abcdefgh', redirect_uris: [REDIRECT] } },
    defaultSettings('Plain'),
  ]);
  const clock = { ms: Date.UTC(2026, 10, 22, 12) };
  const room = buildWaitingRoom({
    store, rooms, keys, signer, events: { publish: () => {} }, clock: () => clock.ms, defaultIssuer: () => 'https://node.example',
  });
  const deps = { room, clients: new OidcClients(rooms), secrets: new ClientSecrets(store), issuer: () => ISSUER };
  /** A visitor of Shop who joined through /authorize (with the given challenge and nonce) and is served. */
  const code = async (bound: { challenge?: string; nonce?: string; served?: boolean } = {}) => {
    const joined = await room.queue.assignQueueNum('Shop', {});
    const id = joined.status === 200 ? joined.body.api_request_id : assert.fail('join');
    const client = deps.clients.get('Shop')!;
    await room.claims.bindAuthorization('Shop', id, bindAuthorization({
      client, redirectUri: REDIRECT, scope: 'openid', state: 's', nonce: bound.nonce ?? 'n-1',
      codeChallenge: bound.challenge, codeChallengeMethod: bound.challenge ? 'S256' : undefined,
    }));
    if (bound.served !== false) {
      const position = await room.queue.queueNum('Shop', id);
      const serving = await room.queue.servingNum('Shop');
      if (position.status === 200 && serving.status === 200) {
        await room.admission.incrementServingCounter('Shop', position.body.queue_number - serving.body.serving_counter);
      }
    }
    return id;
  };
  return { store, room, deps, code, clock };
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

function request(form: Record<string, string> | string, headers: Record<string, string> = {}): TokenRequest {
  const body = typeof form === 'string' ? form : new URLSearchParams(form).toString();
  return { headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: Buffer.from(body) };
}

/** The OAuth error of a refused exchange, as "status code: description". */
async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof OAuthError, String(error));
    const challenge = error.headers['www-authenticate'] ? ' (challenge)' : '';
    return `${error.status} ${error.oauthError}: ${error.message}${challenge}`;
  }
  return 'exchanged';
}

describe('token exchange checks, in order', () => {
  it('exchanges a served visitor\'s code for tokens with the OIDC issuer and the bound nonce', async () => {
    const { deps, code, store } = setup();
    const id = await code({ nonce: 'n-42' });
    const tokens = await exchangeCode(request({ grant_type: 'authorization_code', code: id.toUpperCase(), redirect_uri: REDIRECT }, { authorization: basic('Shop', SECRET) }), deps);
    const claims = JSON.parse(Buffer.from(tokens.id_token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    assert.deepEqual([claims.iss, claims.nonce, claims.sub, claims.aud], [ISSUER, 'n-42', id, 'Shop']);
    assert.equal(tokens.token_type, 'Bearer');
    const again = await exchangeCode(request({ grant_type: 'authorization_code', code: id, redirect_uri: REDIRECT, client_id: 'Shop', client_secret: SECRET }), deps);
    assert.equal(again.id_token, tokens.id_token, 'a second exchange returns the same set');
    await store.close();
  });

  it('1. the body must be a form, each parameter at most once', async () => {
    const { deps, store } = setup();
    const json = { headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') };
    assert.equal(await refusal(exchangeCode(json, deps)), '400 invalid_request: the body must be application/x-www-form-urlencoded');
    assert.equal(await refusal(exchangeCode({ headers: {}, body: undefined }, deps)), '400 invalid_request: the body must be application/x-www-form-urlencoded');
    const noBody = { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: undefined };
    assert.equal(await refusal(exchangeCode(noBody, deps)), '401 invalid_client: client authentication is required (challenge)', 'no body is an empty form');
    assert.equal(
      await refusal(exchangeCode(request('grant_type=authorization_code&grant_type=authorization_code'), deps)),
      '400 invalid_request: grant_type must not be repeated',
    );
    await store.close();
  });

  it('2. the client authenticates once, by Basic or by the form, with its own secret', async () => {
    const { deps, store } = setup();
    const form = { grant_type: 'authorization_code', code: 'c', redirect_uri: REDIRECT };
    assert.equal(await refusal(exchangeCode(request(form), deps)), '401 invalid_client: client authentication is required (challenge)');
    assert.equal(await refusal(exchangeCode(request({ ...form, client_id: 'Shop' }), deps)), '401 invalid_client: client authentication is required (challenge)');
    assert.equal(await refusal(exchangeCode(request({ ...form, client_secret: SECRET }), deps)), '401 invalid_client: client authentication is required (challenge)');
    assert.equal(await refusal(exchangeCode(request(form, { authorization: 'Basic !!' }), deps)), '401 invalid_client: malformed Basic credentials (challenge)');
    assert.equal(
      await refusal(exchangeCode(request({ ...form, client_secret: SECRET }, { authorization: basic('Shop', SECRET) }), deps)),
      '400 invalid_request: use one client authentication method, not both',
    );
    assert.equal(
      await refusal(exchangeCode(request({ ...form, client_id: 'Other' }, { authorization: basic('Shop', SECRET) }), deps)),
      '400 invalid_request: client_id differs from the authenticated client',
    );
    assert.equal(await refusal(exchangeCode(request(form, { authorization: basic('Shop', 'wrong') }), deps)), '401 invalid_client: client authentication failed (challenge)');
    assert.equal(await refusal(exchangeCode(request({ ...form, client_id: 'Shop', client_secret: 'wrong' }), deps)), '400 invalid_client: client authentication failed');
    assert.equal(await refusal(exchangeCode(request({ ...form, client_id: 'Plain', client_secret: SECRET }), deps)), '400 invalid_client: client authentication failed');
    assert.equal(await refusal(exchangeCode(request({ ...form, client_id: 'Other', client_secret: SECRET }), deps)), '400 invalid_client: client authentication failed');
    // The same client named in both places is fine: the next step decides.
    assert.equal(
      await refusal(exchangeCode(request({ ...form, client_id: 'Shop' }, { authorization: basic('Shop', SECRET) }), deps)),
      '400 invalid_grant: the code is not valid for this client',
    );
    await store.close();
  });

  it('2. the rate limit per client comes before the secret; IDs of no client share one bucket', async () => {
    const { deps, store } = setup();
    const clock = { ms: 0 };
    const limited = { ...deps, rateLimit: new TokenRateLimit(() => clock.ms) };
    const form = { grant_type: 'authorization_code', code: 'c', redirect_uri: REDIRECT };
    const tooMany = '429 temporarily_unavailable: too many token requests for this client, retry later';
    const as = (id: string, secret: string) => refusal(exchangeCode(request({ ...form, client_id: id, client_secret: secret }), limited));
    // A client's burst of guesses, then its right secret: refused by the limit, not checked.
    for (let i = 0; i < TOKEN_BURST; i++) assert.equal(await as('Shop', `guess-${i}`), '400 invalid_client: client authentication failed');
    assert.equal(await as('Shop', SECRET), tooMany);
    try {
      await exchangeCode(request({ ...form, client_id: 'Shop', client_secret: SECRET }), limited);
      assert.fail('exchanged');
    } catch (error) {
      assert.ok(error instanceof OAuthError);
      assert.equal(error.headers['retry-after'], '1');
    }
    // Another client has its own bucket; IDs that name no client share one, apart from every client's.
    assert.equal(await as('Other', 'wrong'), '400 invalid_client: client authentication failed');
    for (let i = 0; i < TOKEN_BURST; i++) assert.equal(await as(`nobody-${i}`, SECRET), '400 invalid_client: client authentication failed');
    assert.equal(await as('nobody-else', SECRET), tooMany);
    assert.equal(await as('Other', 'wrong'), '400 invalid_client: client authentication failed');
    // 20 a second: 50 ms later Shop may try once more, and then not.
    clock.ms += 50;
    assert.equal(await as('Shop', 'wrong'), '400 invalid_client: client authentication failed');
    assert.equal(await as('Shop', 'wrong'), tooMany);
    // Without a limit (deps.rateLimit absent) nothing is refused for it.
    assert.equal(await refusal(exchangeCode(request({ ...form, client_id: 'Shop', client_secret: 'wrong' }), deps)), '400 invalid_client: client authentication failed');
    await store.close();
  });

  it('3. grant_type must be authorization_code', async () => {
    const { deps, store } = setup();
    const auth = { client_id: 'Shop', client_secret: SECRET };
    assert.equal(await refusal(exchangeCode(request({ ...auth, code: 'c' }), deps)), '400 invalid_request: grant_type is required');
    assert.equal(await refusal(exchangeCode(request({ ...auth, grant_type: '', code: 'c' }), deps)), '400 invalid_request: grant_type is required');
    assert.equal(await refusal(exchangeCode(request({ ...auth, grant_type: 'refresh_token' }), deps)), '400 unsupported_grant_type: grant_type must be authorization_code');
    await store.close();
  });

  it('4.–5. the code is a request ID of this client\'s, bound at /authorize, with the same redirect_uri', async () => {
    const { deps, code, room, store } = setup();
    const form = { grant_type: 'authorization_code', client_id: 'Shop', client_secret: SECRET };
    assert.equal(await refusal(exchangeCode(request({ ...form, redirect_uri: REDIRECT }), deps)), '400 invalid_request: code is required');
    assert.equal(await refusal(exchangeCode(request({ ...form, code: 'not-a-uuid', redirect_uri: REDIRECT }), deps)), '400 invalid_grant: the code is not valid for this client');
    const plainJoin = await room.queue.assignQueueNum('Shop', {});
    const unbound = plainJoin.status === 200 ? plainJoin.body.api_request_id : '';
    assert.equal(await refusal(exchangeCode(request({ ...form, code: unbound, redirect_uri: REDIRECT }), deps)), '400 invalid_grant: the code is not valid for this client');
    const id = await code();
    const other = { grant_type: 'authorization_code', client_id: 'Other', client_secret: 'other-secret-0123456789-abcdefgh', code: id, redirect_uri: REDIRECT };
    assert.equal(await refusal(exchangeCode(request(other), deps)), '400 invalid_grant: the code is not valid for this client');
    assert.equal(await refusal(exchangeCode(request({ ...form, code: id }), deps)), '400 invalid_request: redirect_uri is required');
    assert.equal(
      await refusal(exchangeCode(request({ ...form, code: id, redirect_uri: `${REDIRECT}/` }), deps)),
      '400 invalid_grant: redirect_uri differs from the one of the authorization request',
    );
    await store.close();
  });

  it('6. PKCE: a verifier exactly when a challenge was bound, well-formed, hashing to it', async () => {
    const { deps, code, store } = setup();
    const form = (id: string, extra: Record<string, string> = {}) =>
      request({ grant_type: 'authorization_code', client_id: 'Shop', client_secret: SECRET, code: id, redirect_uri: REDIRECT, ...extra });
    const withChallenge = await code({ challenge: CHALLENGE });
    assert.equal(await refusal(exchangeCode(form(withChallenge), deps)), '400 invalid_grant: code_verifier is required');
    assert.equal(await refusal(exchangeCode(form(withChallenge, { code_verifier: 'short' }), deps)), '400 invalid_request: code_verifier is malformed');
    assert.equal(await refusal(exchangeCode(form(withChallenge, { code_verifier: `${VERIFIER}!` }), deps)), '400 invalid_request: code_verifier is malformed');
    assert.equal(await refusal(exchangeCode(form(withChallenge, { code_verifier: VERIFIER.replace('d', 'e') }), deps)), '400 invalid_grant: code_verifier does not match the code_challenge');
    assert.equal(await refusal(exchangeCode(form(withChallenge, { code_verifier: 'a'.repeat(129) }), deps)), '400 invalid_request: code_verifier is malformed');
    assert.equal(await refusal(exchangeCode(form(withChallenge, { code_verifier: VERIFIER }), deps)), 'exchanged');
    const without = await code();
    assert.equal(await refusal(exchangeCode(form(without, { code_verifier: VERIFIER }), deps)), '400 invalid_grant: no code_challenge was sent for this code');
    assert.equal(await refusal(exchangeCode(form(without), deps)), 'exchanged');
    await store.close();
  });

  it('7. the waiting room decides: not served yet, expired, closed, or redeemed outside OIDC cannot be exchanged', async () => {
    const { deps, code, room, clock, store } = setup();
    const form = (id: string) => request({ grant_type: 'authorization_code', client_id: 'Shop', client_secret: SECRET, code: id, redirect_uri: REDIRECT });
    const waiting = await code({ served: false });
    assert.equal(await refusal(exchangeCode(form(waiting), deps)), '400 invalid_grant: the visitor is not being served yet');
    const outside = await code();
    assert.equal((await room.claims.generateToken('Shop', outside)).status, 200, 'claimed through the public API');
    assert.equal(await refusal(exchangeCode(form(outside), deps)), '400 invalid_grant: the code was already redeemed outside OpenID Connect');
    const closed = await code();
    await exchangeCode(form(closed), deps);
    await room.sessions.updateSession('Shop', closed, 1);
    assert.equal(
      await refusal(exchangeCode(form(closed), deps)),
      '400 invalid_grant: the code cannot be exchanged: Token corresponding to request id has expired',
    );
    await room.start();
    const late = await code();
    clock.ms += 901_000;
    assert.equal(await refusal(exchangeCode(form(late), deps)), '400 invalid_grant: the code cannot be exchanged: Queue position has expired');
    await store.close();
  });

  /** The exchange of a bound, served code, with generateToken answered by `generateToken`. */
  async function exchangeWith(generateToken: ClaimService['generateToken']): Promise<unknown> {
    const { deps, code, store } = setup();
    const id = await code({ nonce: 'n-1' });
    const room = { claims: Object.assign(Object.create(deps.room.claims) as ClaimService, { generateToken }) };
    try {
      return await exchangeCode(
        request({ grant_type: 'authorization_code', client_id: 'Shop', client_secret: SECRET, code: id, redirect_uri: REDIRECT }),
        { ...deps, room },
      );
    } finally {
      await store.close();
    }
  }

  it('7. a refusal of the waiting room (4xx) is invalid_grant; its own failure (5xx, or any other) passes through', async () => {
    for (const status of [400, 404, 410, 499]) {
      const refused = new ContractError('ANTEROOM_ERR_INTERNAL', status, `refused ${status}`, {});
      assert.equal(await refusal(exchangeWith(async () => { throw refused; })), `400 invalid_grant: the code cannot be exchanged: refused ${status}`);
    }
    const notOurs = Object.assign(new Error('an error of something else, with a status'), { status: 404 });
    for (const failure of [new ContractError('ANTEROOM_ERR_INTERNAL', 500, 'broken', {}), new ContractError('ANTEROOM_ERR_STORE_UNAVAILABLE', 503, 'Service temporarily unavailable', {}), new Error('store down'), notOurs]) {
      await assert.rejects(exchangeWith(async () => { throw failure; }), (e) => e === failure);
    }
  });

  it('7. tokens issued with another issuer or another nonce were redeemed outside OpenID Connect', async () => {
    const tokensWith = (claims: Record<string, unknown>) => async () => ({
      status: 200 as const,
      body: { access_token: 'a', refresh_token: 'r', id_token: `${segment({ alg: 'none' })}.${segment(claims)}.x`, token_type: 'Bearer' as const, expires_in: 1 },
    });
    const outside = '400 invalid_grant: the code was already redeemed outside OpenID Connect';
    assert.equal(await refusal(exchangeWith(tokensWith({ iss: ISSUER, nonce: 'n-2' }))), outside);
    assert.equal(await refusal(exchangeWith(tokensWith({ iss: 'https://node.example', nonce: 'n-1' }))), outside);
    assert.equal(await refusal(exchangeWith(tokensWith({ iss: ISSUER }))), outside);
    assert.equal(await refusal(exchangeWith(tokensWith({ iss: ISSUER, nonce: 'n-1' }))), 'exchanged');
  });
});
