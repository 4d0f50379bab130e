import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { AuthorizerError, createVerifier } from '../../packages/authorizer/src/index.ts';
import type { VerifierOptions } from '../../packages/authorizer/src/index.ts';
import { startKeyServer } from './key-server.ts';
import type { KeyServer } from './key-server.ts';
import { EVENT_ID, ISSUER, NOW, accessClaims, generateEventKey, sign } from './tokens.ts';
import type { EventKey } from './tokens.ts';

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => assert.fail('the token was accepted'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof AuthorizerError);
  return error.reason;
}

describe('event keys: fetching, caching and rotation', () => {
  let server: KeyServer;
  let keyA: EventKey;
  let keyB: EventKey;
  /** The tests' clock, in ms; advancing it replaces sleeping. */
  let nowMs = NOW * 1000;

  before(async () => {
    [keyA, keyB] = await Promise.all([generateEventKey(), generateEventKey()]);
    server = await startKeyServer(EVENT_ID, [keyA.publicJwk]);
  });
  afterEach(() => {
    server.serve([keyA.publicJwk]);
    server.failWith(0);
    nowMs = NOW * 1000;
  });
  after(() => server.close());

  const freshOptions = (): VerifierOptions => ({
    publicKeyUrl: server.publicKeyUrl,
    eventId: EVENT_ID,
    issuer: ISSUER,
    clock: () => nowMs,
  });

  it('fetches the key once and serves later tokens from the cache', async () => {
    const verifier = createVerifier(freshOptions());
    const start = server.requests;
    for (let i = 0; i < 5; i += 1) await verifier.verify(await sign(keyA));
    assert.equal(server.requests - start, 1);
  });

  it('shares one fetch among concurrent first verifications', async () => {
    const verifier = createVerifier(freshOptions());
    const tokens = await Promise.all(Array.from({ length: 20 }, () => sign(keyA)));
    const start = server.requests;
    await Promise.all(tokens.map((token) => verifier.verify(token)));
    assert.equal(server.requests - start, 1);
  });

  it('picks up a rotated key (new kid) without a restart, once the endpoint serves it', async () => {
    const verifier = createVerifier(freshOptions());
    await verifier.verify(await sign(keyA));
    server.serve([keyB.publicJwk]);
    nowMs += 5_000;
    const claims = await verifier.verify(await sign(keyB, accessClaims({}, NOW + 5)));
    assert.equal(claims.token_use, 'access');
  });

  it('refuses a token whose kid the endpoint does not serve, as 403 unknown_key', async () => {
    const verifier = createVerifier(freshOptions());
    await verifier.verify(await sign(keyA));
    nowMs += 5_000;
    assert.equal(await reasonOf(verifier.verify(await sign(keyB))), 'unknown_key');
  });

  it('re-fetches at most once per minRefetchIntervalMs, however many unknown kids arrive', async () => {
    const verifier = createVerifier(freshOptions());
    await verifier.verify(await sign(keyA));
    const forger = await generateEventKey();
    nowMs += 5_000;
    const start = server.requests;
    for (let i = 0; i < 10; i += 1) {
      assert.equal(await reasonOf(verifier.verify(await sign({ ...forger, kid: `forged-${i}` }))), 'unknown_key');
      nowMs += 400;
    }
    assert.equal(server.requests - start, 1, 'one re-fetch in 4 s');
    nowMs += 1_000;
    assert.equal(await reasonOf(verifier.verify(await sign({ ...forger, kid: 'forged-late' }))), 'unknown_key');
    assert.equal(server.requests - start, 2, 'a second one once 5 s have passed');
  });

  it('does not see a rotated key within the re-fetch interval, and does after it', async () => {
    const verifier = createVerifier(freshOptions());
    await verifier.verify(await sign(keyA));
    server.serve([keyB.publicJwk]);
    const token = await sign(keyB);
    nowMs += 1_000;
    assert.equal(await reasonOf(verifier.verify(token)), 'unknown_key');
    nowMs += 4_000;
    await verifier.verify(token);
  });

  it('refreshes keys older than cacheTtlMs, dropping a key the endpoint withdrew', async () => {
    const verifier = createVerifier({ ...freshOptions(), cacheTtlMs: 60_000 });
    const token = await sign(keyA);
    await verifier.verify(token);
    server.serve([keyB.publicJwk]);
    nowMs += 59_000;
    await verifier.verify(token);
    nowMs += 1_000;
    assert.equal(await reasonOf(verifier.verify(token)), 'unknown_key');
  });

  it('keeps using cached keys when a refresh fails (stale-if-error)', async () => {
    const verifier = createVerifier({ ...freshOptions(), cacheTtlMs: 60_000 });
    const token = await sign(keyA);
    await verifier.verify(token);
    server.failWith(500);
    nowMs += 120_000;
    await verifier.verify(token);
  });

  it('answers 503 keys_unavailable while no key could ever be fetched, then recovers', async () => {
    const verifier = createVerifier(freshOptions());
    const token = await sign(keyA);
    server.failWith(503);
    const error = await verifier.verify(token).catch((caught: unknown) => caught);
    assert.ok(error instanceof AuthorizerError);
    assert.equal(error.status, 503);
    assert.equal(error.reason, 'keys_unavailable');
    server.failWith(0);
    nowMs += 5_000;
    await verifier.verify(token);
  });

  it('answers 503 when the endpoint serves no RS256 public key', async () => {
    server.serve([{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: keyA.kid }]);
    assert.equal(await reasonOf(createVerifier(freshOptions()).verify(await sign(keyA))), 'keys_unavailable');
  });

  it('answers 503 when the key endpoint is unreachable', async () => {
    const verifier = createVerifier({ ...freshOptions(), publicKeyUrl: 'http://127.0.0.1:1/public_key' });
    assert.equal(await reasonOf(verifier.verify(await sign(keyA))), 'keys_unavailable');
  });

  it('verifies tokens of every key a JWKS lists, and skips entries that are not RS256 signing keys', async () => {
    server.serve([
      { ...keyA.publicJwk, kid: 'enc', use: 'enc' },
      { ...keyA.publicJwk, kid: 'ps', alg: 'PS256' },
      { kty: 'RSA', kid: 'broken', n: 'AQAB' },
      keyA.publicJwk,
      keyB.publicJwk,
    ]);
    const verifier = createVerifier({ ...freshOptions(), publicKeyUrl: undefined, jwksUrl: server.jwksUrl });
    await verifier.verify(await sign(keyA));
    await verifier.verify(await sign(keyB));
    assert.equal(await reasonOf(verifier.verify(await sign({ ...keyA, kid: 'enc' }))), 'unknown_key');
    assert.equal(await reasonOf(verifier.verify(await sign({ ...keyA, kid: 'ps' }))), 'unknown_key');
  });

  it('verifies a token without kid only while the endpoint serves a single key', async () => {
    const token = await new SignJWT(accessClaims()).setProtectedHeader({ alg: 'RS256' }).sign(keyA.privateKey);
    await createVerifier(freshOptions()).verify(token);
    // A served key without kid verifies it too, but not a token whose kid is empty (that names a key).
    const { kid: _kid, ...keyWithoutKid } = keyA.publicJwk as Record<string, unknown>;
    server.serve([keyWithoutKid]);
    await createVerifier(freshOptions()).verify(token);
    const emptyKid = await new SignJWT(accessClaims()).setProtectedHeader({ alg: 'RS256', kid: '' }).sign(keyA.privateKey);
    assert.equal(await reasonOf(createVerifier(freshOptions()).verify(emptyKid)), 'unknown_key');
    server.serve([keyA.publicJwk, keyB.publicJwk]);
    const jwks = createVerifier({ ...freshOptions(), publicKeyUrl: undefined, jwksUrl: server.jwksUrl });
    assert.equal(await reasonOf(jwks.verify(token)), 'unknown_key');
  });

  it('imports only the public members of a served JWK that wrongly carries private ones', async () => {
    server.serve([{ ...keyA.privateJwk, kid: keyA.kid, alg: 'RS256' }]);
    await createVerifier(freshOptions()).verify(await sign(keyA));
  });
});
