// /oidc/userInfo and the authorizer library (`anteroom-authorizer`) apply one set of rules to an access
// token: tokens signed with the event's real key but with one claim wrong or missing are accepted or refused
// by both alike. Before they shared the verifier, /userInfo required only exp and sub, so a token without
// iat, nbf or queue_position passed there and failed at a protected site.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { importJWK, SignJWT, type JWTPayload } from 'jose';
import { AuthorizerError, createVerifier, type Verifier } from '../../packages/authorizer/src/index.ts';
import type { TestNode } from '../support/node.ts';
import { SHOP, issuerOf, startOidcNode } from './support.ts';

describe('/oidc/userInfo and the authorizer library agree on access tokens', () => {
  let node: TestNode;
  let authorizer: Verifier;
  let signWithShopKey: (claims: JWTPayload) => Promise<string>;

  before(async () => {
    node = await startOidcNode();
    const [stored] = await node.store.getSigningKeys(SHOP);
    assert.ok(stored, 'the event has a signing key once the node started');
    const privateKey = await importJWK(JSON.parse(stored.privateJwk) as Record<string, unknown>, 'RS256');
    signWithShopKey = (claims) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: stored.kid, typ: 'JWT' }).sign(privateKey);
    // What a relying party protecting its API would configure: the OIDC JWKS, the issuer, the event.
    authorizer = createVerifier({
      jwksUrl: `${issuerOf(node)}/.well-known/jwks.json`,
      eventId: SHOP,
      issuer: issuerOf(node),
      clock: node.clock.now,
    });
  });
  after(() => node.stop());

  /** The claims the server issues, at the node's current time. */
  const issued = (): JWTPayload => {
    const now = Math.floor(node.clock.now() / 1000);
    return { aud: SHOP, sub: randomUUID(), queue_position: 7, token_use: 'access', iat: now, nbf: now, exp: now + 3600, iss: issuerOf(node) };
  };
  const without = (claim: string) => (claims: JWTPayload) => {
    const copy = { ...claims };
    delete copy[claim];
    return copy;
  };
  const setting = (changes: JWTPayload) => (claims: JWTPayload) => ({ ...claims, ...changes });

  /** What /userInfo answers: the claims, or the refusal's error_description. */
  async function userInfo(token: string): Promise<{ accepted: true; claims: unknown } | { accepted: false; why: string }> {
    const response = await fetch(`${issuerOf(node)}/userInfo`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await response.json()) as Record<string, unknown>;
    if (response.status === 200) return { accepted: true, claims: body };
    assert.equal(response.status, 401);
    assert.equal(body.error, 'invalid_token');
    return { accepted: false, why: String(body.error_description) };
  }

  /** What the authorizer library decides: the claims, or the refusal's reason. */
  async function authorizerVerdict(token: string): Promise<{ accepted: true; claims: unknown } | { accepted: false; why: string }> {
    try {
      return { accepted: true, claims: await authorizer.verify(token) };
    } catch (error) {
      assert.ok(error instanceof AuthorizerError, String(error));
      assert.equal(error.status, 403);
      return { accepted: false, why: error.reason };
    }
  }

  it('both accept the token as issued, with the same claims', async () => {
    const claims = issued();
    const token = await signWithShopKey(claims);
    const [there, here] = await Promise.all([userInfo(token), authorizerVerdict(token)]);
    assert.deepEqual(there, { accepted: true, claims });
    assert.deepEqual(here, { accepted: true, claims });
  });

  const refused: [string, (claims: JWTPayload) => JWTPayload, string][] = [
    ['no iat', without('iat'), 'invalid_claims'],
    ['no nbf', without('nbf'), 'invalid_claims'],
    ['no exp', without('exp'), 'invalid_claims'],
    ['no sub', without('sub'), 'invalid_claims'],
    ['no queue_position', without('queue_position'), 'invalid_claims'],
    ['a queue_position that is not a number', setting({ queue_position: '7' }), 'invalid_claims'],
    ['token_use refresh', setting({ token_use: 'refresh' }), 'wrong_token_use'],
    ['token_use id', setting({ token_use: 'id' }), 'wrong_token_use'],
    ['no token_use', without('token_use'), 'wrong_token_use'],
    ['nbf one second ahead', (c) => ({ ...c, nbf: (c.iat as number) + 1 }), 'not_yet_valid'],
    ['exp reached', (c) => ({ ...c, exp: c.iat }), 'expired'],
    ['another issuer', setting({ iss: 'https://elsewhere.example/oidc' }), 'wrong_issuer'],
  ];
  for (const [name, change, reason] of refused) {
    it(`both refuse a token with ${name}`, async () => {
      const token = await signWithShopKey(change(issued()));
      const [there, here] = await Promise.all([userInfo(token), authorizerVerdict(token)]);
      assert.equal(there.accepted, false, `/userInfo accepted a token with ${name}`);
      assert.deepEqual(here, { accepted: false, why: reason });
    });
  }

  it('/userInfo still describes an expired token and a token of another use as such', async () => {
    assert.deepEqual(await userInfo(await signWithShopKey(setting({ token_use: 'refresh' })(issued()))), {
      accepted: false,
      why: 'The token is not an access token',
    });
    const expired = await signWithShopKey(issued());
    node.clock.advance(3601);
    try {
      assert.deepEqual(await userInfo(expired), { accepted: false, why: 'The access token has expired' });
    } finally {
      node.clock.advance(-3601);
    }
  });
});
