import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AuthorizerError, createVerifier, verifyAccessToken, verifyAccessTokenWithKeys } from '../../packages/authorizer/src/index.ts';
import type { RefusalReason, Verifier, VerifierOptions } from '../../packages/authorizer/src/index.ts';
import { startKeyServer } from './key-server.ts';
import type { KeyServer } from './key-server.ts';
import {
  EVENT_ID,
  ISSUER,
  NOW,
  VALIDITY,
  accessClaims,
  generateEventKey,
  sign,
  signHs256WithPublicKey,
  signWithOtherAlgorithm,
  unsigned,
  withPayload,
} from './tokens.ts';
import type { EventKey } from './tokens.ts';

async function refusal(promise: Promise<unknown>): Promise<AuthorizerError> {
  const error = await promise.then(
    () => assert.fail('the token was accepted'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof AuthorizerError, `expected an AuthorizerError, got ${String(error)}`);
  return error;
}

describe('verifying an access token', () => {
  let server: KeyServer;
  let key: EventKey;
  let impostor: EventKey;
  let options: VerifierOptions;
  let verifier: Verifier;

  before(async () => {
    key = await generateEventKey();
    // Another RSA key claiming the same kid: only the signature can tell it apart.
    impostor = await generateEventKey(key.kid);
    server = await startKeyServer(EVENT_ID, [key.publicJwk]);
    options = { publicKeyUrl: server.publicKeyUrl, eventId: EVENT_ID, issuer: ISSUER, clock: () => NOW * 1000 };
    verifier = createVerifier(options);
  });
  after(() => server.close());

  it('accepts a valid access token and returns its claims', async () => {
    const claims = accessClaims();
    const verified = await verifier.verify(await sign(key, claims));
    assert.deepEqual(verified, claims);
  });

  it('returns only the documented claims (a nonce or other extra claim is dropped)', async () => {
    const verified = await verifier.verify(await sign(key, accessClaims({ nonce: 'n-1' })));
    assert.equal('nonce' in verified, false);
  });

  const refusals: {
    name: string;
    token: () => Promise<string | undefined> | string | undefined;
    status: number;
    reason: RefusalReason;
  }[] = [
    { name: 'no token', token: () => undefined, status: 401, reason: 'missing_token' },
    { name: 'an empty string', token: () => '', status: 403, reason: 'malformed_token' },
    { name: 'a garbage string', token: () => 'not-a-jwt', status: 403, reason: 'malformed_token' },
    {
      name: 'two segments',
      token: async () => (await sign(key)).split('.').slice(0, 2).join('.'),
      status: 403,
      reason: 'malformed_token',
    },
    { name: 'four segments', token: async () => `${await sign(key)}.AAAA`, status: 403, reason: 'malformed_token' },
    // Decoders ignore padding and the spare bits of the last character: the same bytes, another spelling.
    { name: 'a valid token with base64 padding added', token: async () => `${await sign(key)}==`, status: 403, reason: 'malformed_token' },
    {
      name: 'a valid token with a spare bit of its signature set',
      token: async () => {
        const token = await sign(key);
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
        // An RS256 signature is 256 bytes: 342 characters, the last one carrying 4 spare bits.
        const last = alphabet.indexOf(token.at(-1) as string);
        return `${token.slice(0, -1)}${alphabet[last | 1]}`;
      },
      status: 403,
      reason: 'malformed_token',
    },
    {
      name: 'a header that is not JSON',
      token: async () => `bm90IGpzb24.${(await sign(key)).split('.').slice(1).join('.')}`,
      status: 403,
      reason: 'malformed_token',
    },
    { name: 'an unsigned alg:none token', token: () => unsigned(key), status: 403, reason: 'algorithm_not_allowed' },
    {
      name: 'HS256 signed with the public key as HMAC secret',
      token: () => signHs256WithPublicKey(key),
      status: 403,
      reason: 'algorithm_not_allowed',
    },
    {
      name: 'RS384 signed by the event key',
      token: () => signWithOtherAlgorithm(key, 'RS384'),
      status: 403,
      reason: 'algorithm_not_allowed',
    },
    {
      name: 'PS256 signed by the event key',
      token: () => signWithOtherAlgorithm(key, 'PS256'),
      status: 403,
      reason: 'algorithm_not_allowed',
    },
    {
      name: 'signed by another RSA key with the same kid',
      token: () => sign(impostor),
      status: 403,
      reason: 'bad_signature',
    },
    {
      name: 'a tampered payload (queue_position changed) under the original signature',
      token: async () => withPayload(await sign(key), (claims) => ({ ...claims, queue_position: 1 })),
      status: 403,
      reason: 'bad_signature',
    },
    {
      name: 'an aud of another event',
      token: () => sign(key, accessClaims({ aud: 'OtherEvent' })),
      status: 403,
      reason: 'wrong_audience',
    },
    {
      name: 'an aud given as an array',
      token: () => sign(key, accessClaims({ aud: [EVENT_ID] })),
      status: 403,
      reason: 'invalid_claims',
    },
    {
      name: 'an iss of another issuer',
      token: () => sign(key, accessClaims({ iss: 'https://evil.example.com' })),
      status: 403,
      reason: 'wrong_issuer',
    },
    {
      name: 'a refresh token',
      token: () => sign(key, accessClaims({ token_use: 'refresh' })),
      status: 403,
      reason: 'wrong_token_use',
    },
    {
      name: 'an id token',
      token: () => sign(key, accessClaims({ token_use: 'id' })),
      status: 403,
      reason: 'wrong_token_use',
    },
    {
      name: 'a token without token_use',
      token: () => sign(key, accessClaims({ token_use: undefined })),
      status: 403,
      reason: 'wrong_token_use',
    },
    {
      name: 'an expired token (exp = now)',
      token: () => sign(key, accessClaims({}, NOW - VALIDITY)),
      status: 403,
      reason: 'expired',
    },
    {
      name: 'an expired token (exp < now)',
      token: () => sign(key, accessClaims({}, NOW - VALIDITY - 1)),
      status: 403,
      reason: 'expired',
    },
    {
      name: 'a token not yet valid (nbf > now)',
      token: () => sign(key, accessClaims({ nbf: NOW + 1 })),
      status: 403,
      reason: 'not_yet_valid',
    },
    {
      name: 'a token without exp',
      token: () => sign(key, accessClaims({ exp: undefined })),
      status: 403,
      reason: 'invalid_claims',
    },
    {
      name: 'a token without nbf',
      token: () => sign(key, accessClaims({ nbf: undefined })),
      status: 403,
      reason: 'invalid_claims',
    },
    {
      name: 'a token without iat',
      token: () => sign(key, accessClaims({ iat: undefined })),
      status: 403,
      reason: 'invalid_claims',
    },
    {
      name: 'a token without sub',
      token: () => sign(key, accessClaims({ sub: undefined })),
      status: 403,
      reason: 'invalid_claims',
    },
    {
      name: 'a non-numeric exp',
      token: () => sign(key, accessClaims({ exp: String(NOW + VALIDITY) as unknown as number })),
      status: 403,
      reason: 'invalid_claims',
    },
    {
      name: 'a token without queue_position',
      token: () => sign(key, accessClaims({ queue_position: undefined })),
      status: 403,
      reason: 'invalid_claims',
    },
  ];

  for (const { name, token, status, reason } of refusals) {
    it(`refuses ${name} with ${status} (${reason})`, async () => {
      const error = await refusal(verifier.verify(await token()));
      assert.equal(error.status, status);
      assert.equal(error.reason, reason);
    });
  }

  // A server checking its own tokens (the OIDC adapter's /userInfo) holds the keys in-process: same rules.
  for (const { name, token, status, reason } of refusals) {
    it(`refuses ${name} with ${status} (${reason}) with keys held in-process too`, async () => {
      const error = await refusal(verifyAccessTokenWithKeys(await token(), { keys: [key.publicJwk] }, options));
      assert.equal(error.status, status);
      assert.equal(error.reason, reason);
    });
  }

  it('verifies with keys held in-process: a JWKS or a bare JWK, and an unlisted kid is unknown_key (403)', async () => {
    const claims = accessClaims();
    const token = await sign(key, claims);
    assert.deepEqual(await verifyAccessTokenWithKeys(token, { keys: [key.publicJwk] }, options), claims);
    assert.deepEqual(await verifyAccessTokenWithKeys(token, key.publicJwk, options), claims);
    const other = await generateEventKey();
    for (const keys of [{ keys: [other.publicJwk] }, { keys: [] }, null]) {
      const error = await refusal(verifyAccessTokenWithKeys(token, keys, options));
      assert.deepEqual([error.status, error.reason], [403, 'unknown_key'], JSON.stringify(keys));
    }
  });

  it('never puts the token in the error message', async () => {
    const token = signHs256WithPublicKey(key);
    const error = await refusal(verifier.verify(await token));
    assert.equal(error.message.includes((await token).slice(0, 20)), false);
  });

  describe('clock skew', () => {
    it('refuses a token expired by one second when no skew is allowed (the default)', async () => {
      const error = await refusal(verifier.verify(await sign(key, accessClaims({}, NOW - VALIDITY - 1))));
      assert.equal(error.reason, 'expired');
    });

    it('accepts exp and nbf within clockToleranceSec, and refuses beyond it', async () => {
      const skewed = createVerifier({ ...options, clockToleranceSec: 30 });
      await skewed.verify(await sign(key, accessClaims({}, NOW - VALIDITY - 29)));
      await skewed.verify(await sign(key, accessClaims({ nbf: NOW + 30 })));
      assert.equal((await refusal(skewed.verify(await sign(key, accessClaims({}, NOW - VALIDITY - 30))))).reason, 'expired');
      assert.equal((await refusal(skewed.verify(await sign(key, accessClaims({ nbf: NOW + 31 }))))).reason, 'not_yet_valid');
    });

    it('judges time by the injected clock', async () => {
      let nowMs = NOW * 1000;
      const clocked = createVerifier({ ...options, clock: () => nowMs });
      const token = await sign(key);
      await clocked.verify(token);
      nowMs = (NOW + VALIDITY) * 1000 - 1;
      await clocked.verify(token);
      nowMs = (NOW + VALIDITY) * 1000;
      assert.equal((await refusal(clocked.verify(token))).reason, 'expired');
    });
  });

  it('fetches the bare JWK from /public_key with event_id added, and the JWKS as given', async () => {
    const token = await sign(key);
    const viaJwks = createVerifier({ ...options, publicKeyUrl: undefined, jwksUrl: server.jwksUrl });
    assert.equal((await viaJwks.verify(token)).aud, EVENT_ID);
    const explicitEvent = createVerifier({ ...options, publicKeyUrl: `${server.publicKeyUrl}?event_id=${EVENT_ID}` });
    assert.equal((await explicitEvent.verify(token)).aud, EVENT_ID);
  });

  it('requires exactly one of publicKeyUrl and jwksUrl', () => {
    assert.throws(() => createVerifier({ eventId: EVENT_ID, issuer: ISSUER }), TypeError);
    assert.throws(
      () => createVerifier({ ...options, jwksUrl: server.jwksUrl }),
      /exactly one of publicKeyUrl and jwksUrl/,
    );
  });

  it('verifyAccessToken verifies with per-call options and fetches the keys once per URL', async () => {
    const jwksOptions = { ...options, publicKeyUrl: undefined, jwksUrl: `${server.jwksUrl}?shared` };
    const before = server.requests;
    for (let i = 0; i < 3; i += 1) {
      const claims = await verifyAccessToken(await sign(key), { ...jwksOptions });
      assert.equal(claims.token_use, 'access');
    }
    assert.equal(server.requests - before, 1);
    assert.equal((await refusal(verifyAccessToken(undefined, jwksOptions))).status, 401);
    assert.equal((await refusal(verifyAccessToken(await sign(impostor), jwksOptions))).reason, 'bad_signature');
  });
});
