// Builds the three JWTs of a token set from a stored TokenRecord, signed with the key its kid names: RS256,
// or ES256 / EdDSA for a room that chose them (src/tokens/keys.ts). RSA PKCS#1 v1.5 and Ed25519 signatures
// are deterministic, so signing the same record again yields byte-identical tokens (ECDSA ones differ, and are
// as valid); we still never sign twice for the same set: results (and in-flight signings) are kept in a bounded
// cache. RS256 signing (~0.2–0.7 ms) runs in libuv's thread pool (crypto.sign with a callback), so it does not
// block the event loop and uses both cores; ES256 and EdDSA sign in tens of microseconds, less than the trip to
// the pool costs, so they sign on the event loop.
//
// ES256 is signed with the bare KeyObject (DER output) and the DER turned into r || s here: node:crypto's own
// `dsaEncoding: 'ieee-p1363'` option (a key *object* argument) costs about as much again as the signature
// itself on Node 24 (~45 µs against ~23 µs per signature, bench/sign-cost.ts).

import { sign } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { buildClaims, TOKEN_USES, type TokenRecord } from '../domain/claims.ts';
import type { TokenSet, TokenSigning } from '../domain/ports/tokens.ts';
import type { KeyRing, SigningKey } from './keys.ts';

const signAsync = promisify(sign);

export type { TokenSet };

function encodeSegment(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The JWS header segment of a key, encoded once per key (it is the same in every token the key signs). */
const headers = new WeakMap<SigningKey, string>();
function headerSegment(key: SigningKey): string {
  let header = headers.get(key);
  if (header === undefined) headers.set(key, (header = encodeSegment({ alg: key.algorithm, kid: key.kid, typ: 'JWT' })));
  return header;
}

/**
 * An ECDSA signature in DER (SEQUENCE { INTEGER r, INTEGER s }) as JWS wants it (RFC 7518 §3.4): r and s as
 * unsigned big-endian integers of `size` bytes each, concatenated. Throws on anything that is not such a DER.
 */
export function derToJoseSignature(der: Buffer, size = 32): Buffer {
  const out = Buffer.alloc(size * 2);
  // A P-256 signature's SEQUENCE is at most 72 bytes: its length is always in the short form.
  if (der[0] !== 0x30 || (der[1] as number) !== der.length - 2) throw new Error('not a DER ECDSA signature');
  let offset = 2;
  for (let i = 0; i < 2; i++) {
    const length = der[offset + 1] as number;
    if (der[offset] !== 0x02 || length === 0 || length > size + 1 || offset + 2 + length > der.length) {
      throw new Error('not a DER ECDSA signature');
    }
    let start = offset + 2;
    let bytes = length;
    // A leading zero byte only keeps the INTEGER positive.
    if (bytes === size + 1) {
      if (der[start] !== 0) throw new Error('not a DER ECDSA signature');
      start++;
      bytes--;
    }
    der.copy(out, i * size + (size - bytes), start, start + bytes);
    offset += 2 + length;
  }
  if (offset !== der.length) throw new Error('not a DER ECDSA signature');
  return out;
}

/**
 * At most this many signatures run at once. Signing happens in libuv's thread pool (4 threads); on a busy
 * machine with few cores, four CPU-bound signers would take the event loop's share of the CPU and every other
 * request would wait behind them. Leaving one core to the event loop keeps joins and polls answered while
 * tokens are being issued.
 */
const MAX_CONCURRENT_SIGNATURES = Math.max(1, Math.min(4, availableParallelism() - 1));
let signing = 0;
const waiting: (() => void)[] = [];

async function withSigningSlot<T>(work: () => Promise<T>): Promise<T> {
  // A finishing signature hands its slot straight to the next waiter, so the bound is never exceeded.
  if (signing < MAX_CONCURRENT_SIGNATURES) signing++;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else signing--;
  }
}

/** The signing input of a token: header and claims, base64url, joined by ".". */
function signingInput(key: SigningKey, claims: object): string {
  return `${headerSegment(key)}.${encodeSegment(claims)}`;
}

/** An ES256 or EdDSA signature: tens of microseconds, on the event loop. */
function signHere(key: SigningKey, input: string): string {
  // JWS wants r || s for ES256 (RFC 7518 §3.4), not DER.
  const signature =
    key.algorithm === 'ES256' ? derToJoseSignature(sign('sha256', Buffer.from(input), key.privateKey)) : sign(null, Buffer.from(input), key.privateKey);
  return `${input}.${signature.toString('base64url')}`;
}

async function signJwt(key: SigningKey, claims: object): Promise<string> {
  const input = signingInput(key, claims);
  if (key.algorithm !== 'RS256') return signHere(key, input);
  const signature = await withSigningSlot(() => signAsync('sha256', Buffer.from(input), key.privateKey));
  return `${input}.${signature.toString('base64url')}`;
}

export class TokenSigner implements TokenSigning {
  private readonly keys: KeyRing;
  private readonly cache = new Map<string, Promise<TokenSet>>();
  private readonly maxCached: number;

  constructor(keys: KeyRing, maxCached = 20_000) {
    this.keys = keys;
    this.maxCached = maxCached;
  }

  sign(eventId: string, record: TokenRecord): Promise<TokenSet> {
    if (record.signatures !== undefined) return this.assemble(eventId, record, record.signatures);
    // The key names everything the tokens are built from: a reset makes new records with new iat.
    const cacheKey = `${eventId}\u0000${record.requestId}\u0000${record.iat}\u0000${record.exp}\u0000${record.iss}\u0000${record.kid}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return cached;
    const signing = this.signFresh(eventId, record);
    this.cache.set(cacheKey, signing);
    signing.catch(() => this.cache.delete(cacheKey));
    if (this.cache.size > this.maxCached) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    return signing;
  }

  /**
   * A first claim's record, signed now and not cached (its signatures are stored with it, so nothing asks for it
   * here again). ES256 and EdDSA sign the three tokens in one synchronous stretch, without the cache's key, entry
   * and promises (docs/benchmarks.md, session 6).
   */
  async signNew(eventId: string, record: TokenRecord): Promise<TokenSet> {
    const key = await this.keyOf(eventId, record.kid);
    if (key.algorithm === 'RS256') return this.signFresh(eventId, record, key);
    const [access, refresh, id] = TOKEN_USES.map((use) => signHere(key, signingInput(key, buildClaims(eventId, record, use))));
    return { access_token: access as string, refresh_token: refresh as string, id_token: id as string };
  }

  private async keyOf(eventId: string, kid: string): Promise<SigningKey> {
    const key = await this.keys.byKid(eventId, kid);
    if (!key) throw new Error(`signing key ${kid} of event ${eventId} is missing from the store`);
    return key;
  }

  /** The token set of a record whose signatures were stored: header and claims rebuilt, nothing signed. */
  private async assemble(eventId: string, record: TokenRecord, signatures: string): Promise<TokenSet> {
    const parts = signatures.split('.');
    if (parts.length !== TOKEN_USES.length) return this.sign(eventId, { ...record, signatures: undefined });
    const header = headerSegment(await this.keyOf(eventId, record.kid));
    const [access, refresh, id] = TOKEN_USES.map(
      (use, i) => `${header}.${encodeSegment(buildClaims(eventId, record, use))}.${parts[i] as string}`,
    );
    return { access_token: access as string, refresh_token: refresh as string, id_token: id as string };
  }

  private async signFresh(eventId: string, record: TokenRecord, known?: SigningKey): Promise<TokenSet> {
    const key = known ?? (await this.keyOf(eventId, record.kid));
    const [access, refresh, id] = await Promise.all(
      TOKEN_USES.map((use) => signJwt(key, buildClaims(eventId, record, use))),
    );
    return { access_token: access as string, refresh_token: refresh as string, id_token: id as string };
  }
}
