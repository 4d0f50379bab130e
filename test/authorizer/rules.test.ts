// The authorizer's rules that need no key server: the key endpoint's answers through an injected `fetch`
// (status, body shapes, entries that are not RS256 signing keys), option checks, claim types, token
// extraction edge cases, and the shapes of refusals (causes, names, headers).

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { AuthorizerError, createVerifier, extractToken } from '../../packages/authorizer/src/index.ts';
import { tokenFromAuthorization } from '../../packages/authorizer/src/extract.ts';
import { EVENT_ID, ISSUER, NOW, accessClaims, generateEventKey, sign, type EventKey } from './tokens.ts';

/** A fetch that answers every call with `status` and `body`, and records what it was asked. */
function endpoint(status: number, body: unknown) {
  const calls: { url: string; init: RequestInit | undefined }[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    calls.push({ url: String(input), init });
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  };
  return { fetch: fetch as typeof globalThis.fetch, calls };
}

async function refusalOf(promise: Promise<unknown>): Promise<AuthorizerError> {
  const error = await promise.then(() => assert.fail('accepted'), (caught: unknown) => caught);
  assert.ok(error instanceof AuthorizerError, String(error));
  return error;
}

describe('the key endpoint, through an injected fetch', () => {
  let keyA: EventKey;
  let keyB: EventKey;
  before(async () => {
    [keyA, keyB] = await Promise.all([generateEventKey(), generateEventKey()]);
  });
  const verifierWith = (fetch: typeof globalThis.fetch, url: { publicKeyUrl?: string; jwksUrl?: string } = { jwksUrl: 'https://rooms.example/jwks.json' }) =>
    createVerifier({ ...url, eventId: EVENT_ID, issuer: ISSUER, clock: () => NOW * 1000, fetch });

  it('asks for JSON, with a timeout, at the public_key URL with event_id added (kept when the URL names one)', async () => {
    const served = endpoint(200, keyA.publicJwk);
    await verifierWith(served.fetch, { publicKeyUrl: 'https://rooms.example/public_key' }).verify(await sign(keyA));
    assert.equal(served.calls[0]!.url, `https://rooms.example/public_key?event_id=${EVENT_ID}`);
    assert.deepEqual(served.calls[0]!.init?.headers, { accept: 'application/json' });
    assert.ok(served.calls[0]!.init?.signal instanceof AbortSignal);
    const named = endpoint(200, keyA.publicJwk);
    await verifierWith(named.fetch, { publicKeyUrl: 'https://rooms.example/public_key?event_id=Other' }).verify(await sign(keyA)).catch(() => {});
    assert.equal(named.calls[0]!.url, 'https://rooms.example/public_key?event_id=Other');
  });

  it('a key endpoint answering an error status is unavailable, whatever its body says (503, with the cause)', async () => {
    const error = await refusalOf(verifierWith(endpoint(500, { keys: [keyA.publicJwk] }).fetch).verify(await sign(keyA)));
    assert.deepEqual([error.status, error.reason], [503, 'keys_unavailable']);
    assert.match(String((error.cause as Error).message), /answered 500/);
  });

  it('skips every entry that is not an RS256 signing key, even one whose n and e are a real key', async () => {
    const { kty: _kty, ...withoutKty } = keyA.publicJwk as Record<string, unknown>;
    const served = endpoint(200, {
      keys: [
        null,
        'text',
        [keyA.publicJwk],
        { ...keyA.publicJwk, kid: 'ec', kty: 'EC' },
        { ...withoutKty, kid: 'nokty' },
        { ...keyA.publicJwk, kid: 'rs512', alg: 'RS512' },
        { ...keyA.publicJwk, kid: 'enc', use: 'enc' },
        { ...keyA.publicJwk, kid: 'n', n: 7 },
        { ...keyA.publicJwk, kid: 'e', e: 7 },
        { kty: 'RSA', n: (keyB.publicJwk as { n: string }).n, e: (keyB.publicJwk as { e: string }).e, kid: keyB.kid }, // no alg, no use: fine
        { ...keyA.publicJwk, use: 'sig' },
      ],
    });
    const verifier = verifierWith(served.fetch);
    await verifier.verify(await sign(keyA));
    await verifier.verify(await sign(keyB));
    for (const kid of ['ec', 'nokty', 'rs512', 'enc', 'n', 'e']) {
      assert.equal((await refusalOf(verifier.verify(await sign({ ...keyA, kid })))).reason, 'unknown_key', kid);
    }
    // A kid that is not a string makes the entry no key either (it must not pass for a key without kid).
    const numericKid = verifierWith(endpoint(200, { ...keyA.publicJwk, kid: 5 }).fetch);
    const withoutKid = await new SignJWT(accessClaims()).setProtectedHeader({ alg: 'RS256' }).sign(keyA.privateKey);
    assert.equal((await refusalOf(numericKid.verify(withoutKid))).reason, 'keys_unavailable');
  });

  it('an endpoint serving no usable key is unavailable, and says so in the cause', async () => {
    const error = await refusalOf(verifierWith(endpoint(200, { keys: [{ ...keyA.publicJwk, alg: 'HS256' }] }).fetch).verify(await sign(keyA)));
    assert.equal(error.reason, 'keys_unavailable');
    assert.match(String((error.cause as Error).message), /served no RS256, ES256 or EdDSA public key/);
  });
});

describe('verifier options and claims', () => {
  let key: EventKey;
  before(async () => {
    key = await generateEventKey();
  });

  it('requires exactly one of publicKeyUrl and jwksUrl', () => {
    const message = /Give exactly one of publicKeyUrl and jwksUrl/;
    assert.throws(() => createVerifier({ eventId: EVENT_ID, issuer: ISSUER }), message);
    assert.throws(() => createVerifier({ eventId: EVENT_ID, issuer: ISSUER, publicKeyUrl: 'https://a/pk', jwksUrl: 'https://a/jwks' }), message);
  });

  it('no token (undefined or null) is 401 missing_token, before any key is fetched', async () => {
    const served = endpoint(200, key.publicJwk);
    const verifier = createVerifier({ jwksUrl: 'https://a/jwks', eventId: EVENT_ID, issuer: ISSUER, fetch: served.fetch });
    for (const token of [undefined, null]) {
      const error = await refusalOf(verifier.verify(token));
      assert.deepEqual([error.status, error.reason, error.name], [401, 'missing_token', 'AuthorizerError']);
    }
    assert.equal(served.calls.length, 0);
  });

  it('a sub that is not a string is invalid_claims; a refusal keeps what caused it', async () => {
    const served = endpoint(200, key.publicJwk);
    const verifier = createVerifier({ jwksUrl: 'https://a/jwks', eventId: EVENT_ID, issuer: ISSUER, fetch: served.fetch, clock: () => NOW * 1000 });
    const numericSub = await new SignJWT({ ...accessClaims(), sub: 42 as unknown as string })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .sign(key.privateKey);
    assert.equal((await refusalOf(verifier.verify(numericSub))).reason, 'invalid_claims');
    const expired = await refusalOf(verifier.verify(await sign(key, accessClaims({}, NOW - 7200))));
    assert.equal(expired.reason, 'expired');
    assert.ok(expired.cause instanceof Error, 'the jose error is kept as the cause');
  });
});

describe('token extraction edge cases', () => {
  it('reads the Authorization header when no cookie is configured, and prefers it to the cookie', () => {
    assert.equal(extractToken({ authorization: 'Bearer a.b.c' }), 'a.b.c');
    assert.equal(extractToken({ authorization: 'Bearer a.b.c', cookie: 'tok=x.y.z' }, { cookieName: 'tok' }), 'a.b.c');
    assert.equal(extractToken({ cookie: 'tok=x.y.z' }), undefined, 'no cookie name: cookies are not read');
  });

  it('no header at all is no token (never the word "undefined")', () => {
    assert.equal(tokenFromAuthorization(undefined), undefined);
    assert.equal(tokenFromAuthorization(null), undefined);
  });

  it('a cookie is found by its whole name only: a pair without "=" or without a name is none', () => {
    assert.equal(extractToken({ cookie: 'tokx; other=1' }, { cookieName: 'tok' }), undefined);
    assert.equal(extractToken({ cookie: 'other=1; tokx' }, { cookieName: 'tok' }), undefined);
    assert.equal(extractToken({ cookie: '=x.y.z' }, { cookieName: '' }), undefined);
    assert.equal(extractToken({ cookie: 'tokx=1; tok=x.y.z' }, { cookieName: 'tok' }), 'x.y.z');
  });

  it('prefers the header spelt as Node spells it (lower case) when a bag holds two spellings', () => {
    assert.equal(extractToken({ Authorization: 'Bearer upper', authorization: 'Bearer lower' }), 'lower');
    // A header literally named "undefined" is not the Authorization header.
    assert.equal(extractToken({ undefined: 'Bearer x.y.z' }), undefined);
  });

  it('a cookie value is trimmed; an empty one is no token', () => {
    assert.equal(extractToken({ cookie: 'other=1; tok= x.y.z ' }, { cookieName: 'tok' }), 'x.y.z');
    assert.equal(extractToken({ cookie: 'tok=  ' }, { cookieName: 'tok' }), undefined);
  });
});
