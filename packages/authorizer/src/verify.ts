// Verifies an Anteroom access token (spec/integrations.md §1): RS256, ES256 or EdDSA, signed by the event's key (each key
// verifies its own algorithm only), then
// exp > now, nbf ≤ now (with a configurable skew, default 0), aud == eventId, iss == issuer,
// token_use == "access". Every failure becomes an AuthorizerError; nothing is logged, tokens least of all.
// The keys come from the event's key URL (createVerifier, verifyAccessToken) or, for a server checking its
// own tokens in-process, from a key document the caller holds (verifyAccessTokenWithKeys): the rules are
// the same either way.
import { errors, jwtVerify } from 'jose';
import type { JWTPayload } from 'jose';
import { AuthorizerError } from './errors.ts';
import { ALGORITHMS, KeyCache, importVerificationKeys, keyByKid } from './keys.ts';
import type { KeySource } from './keys.ts';

/** What a token must satisfy, wherever its keys come from. */
export interface AccessTokenRules {
  eventId: string;
  issuer: string;
  /** Seconds of clock skew allowed on `exp` and `nbf`. Default 0. */
  clockToleranceSec?: number;
  /** Milliseconds since the epoch, like `Date.now` (the default). */
  clock?: () => number;
}

export interface VerifierOptions extends AccessTokenRules {
  /** The event's `GET /public_key` URL; `event_id=<eventId>` is added when the URL has none. */
  publicKeyUrl?: string | URL;
  /** A JWKS URL, used as given. Give exactly one of `publicKeyUrl` and `jwksUrl`. */
  jwksUrl?: string | URL;
  /** How long fetched keys are used before being refreshed. Default 300 000 (the endpoint's max-age). */
  cacheTtlMs?: number;
  /** At most one key fetch per this interval, whatever unknown `kid`s arrive. Default 5 000. */
  minRefetchIntervalMs?: number;
  /** Default 5 000. */
  fetchTimeoutMs?: number;
  fetch?: typeof globalThis.fetch;
}

/** The claims of a verified access token. */
export interface VerifiedClaims {
  /** The event ID. */
  aud: string;
  /** The visitor's request ID. */
  sub: string;
  queue_position: number;
  token_use: 'access';
  iat: number;
  nbf: number;
  exp: number;
  iss: string;
}

export interface Verifier {
  /** Resolves with the claims, or rejects with an AuthorizerError (401 no token, 403 invalid, 503 no keys). */
  verify(token: string | null | undefined): Promise<VerifiedClaims>;
}

export function createVerifier(options: VerifierOptions): Verifier {
  const source = keySourceOf(options);
  const cache = new KeyCache();
  return { verify: (token) => verifyWith(token, options, (kid) => cache.keyFor(kid, source)) };
}

// verifyAccessToken() takes its options on every call, so it cannot hold a cache of its own; its keys are
// cached per key URL for the life of the process instead, so calling it on every request stays cheap.
const sharedCaches = new Map<string, KeyCache>();

export function verifyAccessToken(
  token: string | null | undefined,
  options: VerifierOptions,
): Promise<VerifiedClaims> {
  const source = keySourceOf(options);
  let cache = sharedCaches.get(source.url.href);
  if (!cache) sharedCaches.set(source.url.href, (cache = new KeyCache()));
  return verifyWith(token, options, (kid) => cache.keyFor(kid, source));
}

/**
 * Verifies with keys the caller already holds: `keys` is a key document as the endpoints serve it (a JWKS
 * `{"keys": [...]}` or a bare JWK). For a server checking tokens it issued itself, without an HTTP call to
 * its own key endpoint; nothing is cached, so a key the document no longer lists stops verifying at once.
 * A token whose key is not in the document is refused as 403 unknown_key (never 503: nothing was fetched).
 */
export async function verifyAccessTokenWithKeys(
  token: string | null | undefined,
  keys: unknown,
  rules: AccessTokenRules,
): Promise<VerifiedClaims> {
  return verifyWith(token, rules, async (kid) => {
    const key = keyByKid(await importVerificationKeys(keys), kid);
    if (key === undefined) throw new AuthorizerError('unknown_key');
    return key;
  });
}

function keySourceOf(options: VerifierOptions): KeySource {
  const { publicKeyUrl, jwksUrl } = options;
  let url: URL;
  if (jwksUrl !== undefined && publicKeyUrl === undefined) {
    url = new URL(jwksUrl);
  } else if (publicKeyUrl !== undefined && jwksUrl === undefined) {
    url = new URL(publicKeyUrl);
    if (!url.searchParams.has('event_id')) url.searchParams.set('event_id', options.eventId);
  } else {
    throw new TypeError('Give exactly one of publicKeyUrl and jwksUrl');
  }
  return {
    url,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    fetchTimeoutMs: options.fetchTimeoutMs ?? 5_000,
    cacheTtlMs: options.cacheTtlMs ?? 300_000,
    minRefetchIntervalMs: options.minRefetchIntervalMs ?? 5_000,
    clock: options.clock ?? Date.now,
  };
}

async function verifyWith(
  token: string | null | undefined,
  rules: AccessTokenRules,
  keyFor: (kid: string | undefined) => Promise<CryptoKey>,
): Promise<VerifiedClaims> {
  if (token === undefined || token === null) throw new AuthorizerError('missing_token');
  if (!isCanonicalCompactJws(token)) throw new AuthorizerError('malformed_token');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, (header) => keyFor(header.kid), {
      // The allow-list is checked before any key is looked up: this is what refuses `none` and HS256
      // signed with the public key as an HMAC secret.
      // Each key is bound to its own algorithm when imported (keys.ts), so a token's alg must match its key's.
      algorithms: [...ALGORITHMS],
      audience: rules.eventId,
      issuer: rules.issuer,
      // No requiredClaims: accessClaims() below refuses a token that lacks any claim of an access token
      // (jose checks exp and nbf when they are there; a token without them is refused there).
      clockTolerance: rules.clockToleranceSec ?? 0,
      currentDate: new Date((rules.clock ?? Date.now)()),
    }));
  } catch (error) {
    throw refusalFor(error);
  }
  return accessClaims(payload);
}

/**
 * Three base64url segments in their one canonical spelling: no padding, no character outside the alphabet,
 * and no set bit among the spare bits of the last character (a decoder ignores them, so `<token>==` or a
 * changed last character would otherwise verify as the same token: a token is accepted only as issued).
 */
export function isCanonicalCompactJws(token: string): boolean {
  const segments = token.split('.');
  if (segments.length !== 3) return false;
  return segments.every(isCanonicalBase64url);
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function isCanonicalBase64url(segment: string): boolean {
  if (!/^[A-Za-z0-9_-]*$/.test(segment)) return false;
  const rest = segment.length % 4;
  if (rest === 0) return true;
  if (rest === 1) return false; // 6 bits cannot end a byte
  // 2 characters carry 1 byte (4 spare bits), 3 carry 2 bytes (2 spare bits): the spare bits must be 0.
  const last = BASE64URL.indexOf(segment[segment.length - 1] as string);
  return (last & (rest === 2 ? 0b1111 : 0b11)) === 0;
}

function accessClaims(payload: JWTPayload): VerifiedClaims {
  const { aud, sub, queue_position, token_use, iat, nbf, exp, iss } = payload;
  // Refresh and id tokens carry the same claims and the same signature key: only token_use tells them apart.
  if (token_use !== 'access') throw new AuthorizerError('wrong_token_use');
  if (
    typeof aud !== 'string' ||
    typeof sub !== 'string' ||
    typeof queue_position !== 'number' ||
    typeof iat !== 'number' ||
    typeof nbf !== 'number' ||
    typeof exp !== 'number' ||
    typeof iss !== 'string'
  ) {
    throw new AuthorizerError('invalid_claims');
  }
  return { aud, sub, queue_position, token_use, iat, nbf, exp, iss };
}

function refusalFor(error: unknown): AuthorizerError {
  if (error instanceof AuthorizerError) return error;
  const cause = { cause: error };
  if (error instanceof errors.JWTExpired) return new AuthorizerError('expired', cause);
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'check_failed') {
      if (error.claim === 'nbf') return new AuthorizerError('not_yet_valid', cause);
      if (error.claim === 'aud') return new AuthorizerError('wrong_audience', cause);
      if (error.claim === 'iss') return new AuthorizerError('wrong_issuer', cause);
    }
    return new AuthorizerError('invalid_claims', cause);
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return new AuthorizerError('algorithm_not_allowed', cause);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return new AuthorizerError('bad_signature', cause);
  // Anything else (bad segments, bad base64, bad JSON, a key too short) fails closed.
  return new AuthorizerError('malformed_token', cause);
}
