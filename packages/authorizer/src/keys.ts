// Fetches an event's public signing keys and caches them by `kid`; also reads a key document a caller already
// holds (a server verifying its own tokens in-process), with the same rules for which keys count.
// VWR's authorizer fetched one key at cold start and kept it forever, so a rotated key locked every visitor
// out until a redeploy. Here an unknown `kid` triggers a re-fetch; to keep forged `kid`s from turning the
// authorizer into a traffic amplifier against the key endpoint, fetches are rate-limited (one per
// `minRefetchIntervalMs`) and concurrent callers share one fetch.
import { importJWK } from 'jose';
import { AuthorizerError } from './errors.ts';

/** Where the keys come from and how eagerly to refresh them. Passed per call: the cache holds only state. */
export interface KeySource {
  url: URL;
  fetch: typeof globalThis.fetch;
  fetchTimeoutMs: number;
  /** Keys older than this are refreshed on next use (so a key withdrawn by the server stops verifying). */
  cacheTtlMs: number;
  minRefetchIntervalMs: number;
  /** Milliseconds since the epoch, like `Date.now`. */
  clock: () => number;
}

/**
 * A key without `kid` is stored under this key, which no token's `kid` (a string) can name: it can only
 * verify a token without `kid` (not even one whose `kid` is empty).
 */
const NO_KID: unique symbol = Symbol();

/** The keys of a key document by `kid` (NO_KID for a key without one). */
export type VerificationKeys = ReadonlyMap<string | typeof NO_KID, CryptoKey>;

export class KeyCache {
  #keys: VerificationKeys = new Map();
  #loadedAt = -Infinity;
  #attemptedAt = -Infinity;
  #lastFailure: unknown = undefined;
  #loading: Promise<void> | undefined;

  async keyFor(kid: string | undefined, source: KeySource): Promise<CryptoKey> {
    const cached = this.#lookup(kid);
    if (cached && source.clock() - this.#loadedAt < source.cacheTtlMs) return cached;
    await this.#refresh(source);
    // After a failed refresh the last keys stay in use: an outage of the waiting room's public API must not
    // take the protected site down with it, and tokens still expire on their own.
    const key = this.#lookup(kid);
    if (key) return key;
    if (this.#lastFailure !== undefined) throw new AuthorizerError('keys_unavailable', { cause: this.#lastFailure });
    throw new AuthorizerError('unknown_key');
  }

  #lookup(kid: string | undefined): CryptoKey | undefined {
    return keyByKid(this.#keys, kid);
  }

  #refresh(source: KeySource): Promise<void> {
    if (this.#loading) return this.#loading;
    const now = source.clock();
    if (now - this.#attemptedAt < source.minRefetchIntervalMs) return Promise.resolve();
    this.#attemptedAt = now;
    this.#loading = this.#load(source).finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  async #load(source: KeySource): Promise<void> {
    try {
      // The served document is authoritative: a key it no longer lists is dropped.
      this.#keys = await fetchKeys(source);
      this.#loadedAt = source.clock();
      this.#lastFailure = undefined;
    } catch (error) {
      this.#lastFailure = error;
    }
  }
}

async function fetchKeys(source: KeySource): Promise<VerificationKeys> {
  const response = await source.fetch(source.url, {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(source.fetchTimeoutMs),
  });
  if (!response.ok) throw new Error(`key endpoint ${source.url.href} answered ${response.status}`);
  const keys = await importVerificationKeys(await response.json());
  if (keys.size === 0) throw new Error(`key endpoint ${source.url.href} served no RS256, ES256 or EdDSA public key`);
  return keys;
}

/**
 * The signing keys of a key document, by `kid`: a bare JWK (what `/public_key` serves) or a JWKS
 * `{"keys": [...]}`; either URL may serve either form. Entries that are not RS256 (RSA), ES256 (EC P-256) or
 * EdDSA (OKP Ed25519) public signing keys are skipped, so the result may be empty. Each key is imported for
 * its one algorithm: a token verifies only with the algorithm of the key its kid names.
 */
export async function importVerificationKeys(document: unknown): Promise<VerificationKeys> {
  const candidates = isRecord(document) && Array.isArray(document.keys) ? document.keys : [document];
  const keys = new Map<string | typeof NO_KID, CryptoKey>();
  for (const jwk of candidates) {
    const publicPart = verificationKey(jwk);
    if (!publicPart) continue;
    try {
      // Only the public members are imported, so a JWK wrongly carrying private members stays a public key.
      const key = await importJWK(publicPart.jwk, publicPart.alg);
      keys.set((jwk as { kid?: string }).kid ?? NO_KID, key as CryptoKey);
    } catch {
      // One malformed entry must not hide the valid keys next to it.
    }
  }
  return keys;
}

/** The key a token's `kid` names; a token without `kid` is only unambiguous when there is a single key. */
export function keyByKid(keys: VerificationKeys, kid: string | undefined): CryptoKey | undefined {
  if (kid !== undefined) return keys.get(kid);
  return keys.size === 1 ? keys.values().next().value : undefined;
}

/** The algorithms a token may be signed with; each key verifies one of them (see verificationKey). */
export const ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;

/** The public members of a signing key and its algorithm, or undefined for anything else. */
function verificationKey(value: unknown): { jwk: Record<string, string>; alg: (typeof ALGORITHMS)[number] } | undefined {
  if (
    !isRecord(value) ||
    (value.kid !== undefined && typeof value.kid !== 'string') ||
    (value.use !== undefined && value.use !== 'sig')
  ) {
    return undefined;
  }
  const text = (name: string) => typeof value[name] === 'string';
  const alg = (expected: string) => value.alg === undefined || value.alg === expected;
  if (value.kty === 'RSA' && text('n') && text('e') && alg('RS256')) {
    return { jwk: { kty: 'RSA', n: value.n as string, e: value.e as string }, alg: 'RS256' };
  }
  if (value.kty === 'EC' && value.crv === 'P-256' && text('x') && text('y') && alg('ES256')) {
    return { jwk: { kty: 'EC', crv: 'P-256', x: value.x as string, y: value.y as string }, alg: 'ES256' };
  }
  if (value.kty === 'OKP' && value.crv === 'Ed25519' && text('x') && alg('EdDSA')) {
    return { jwk: { kty: 'OKP', crv: 'Ed25519', x: value.x as string }, alg: 'EdDSA' };
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
