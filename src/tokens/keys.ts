// Signing keys: RSA-2048 per event, generated on first use and kept in the store so every node signs with
// the same key. The private JWK is turned into a KeyObject here and never leaves the process.
//
// Rooms may sign with ES256 or EdDSA instead (the `signing_algorithm` setting, issue 15): the P-256 and
// Ed25519 keys are derived from the stored RSA key with HKDF-SHA256 (its private exponent as the input key
// material, the algorithm and kid as info), so every node derives the same keys, every store backend keeps
// working unchanged, and deleting or rotating the stored key deletes or rotates them too. Their kids are the
// stored kid with "-es256" / "-eddsa" appended.

import { createECDH, createPrivateKey, createPublicKey, generateKeyPair, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { SigningKeyStore, StoredSigningKey } from '../domain/ports/store.ts';
import type { PublicJwk, SigningAlgorithm, SigningKeys } from '../domain/ports/tokens.ts';

const generateRsa = promisify(generateKeyPair);

export type { PublicJwk, SigningAlgorithm };

export interface SigningKey {
  kid: string;
  algorithm: SigningAlgorithm;
  privateKey: KeyObject;
  publicJwk: PublicJwk;
}

export async function generateSigningKey(nowSeconds: number): Promise<StoredSigningKey> {
  const { publicKey, privateKey } = await generateRsa('rsa', { modulusLength: 2048, publicExponent: 0x10001 });
  const kid = randomBytes(16).toString('hex');
  const pub = publicKey.export({ format: 'jwk' });
  const publicJwk: PublicJwk = { kty: 'RSA', alg: 'RS256', kid, n: String(pub.n), e: String(pub.e) };
  return {
    kid,
    privateJwk: JSON.stringify(privateKey.export({ format: 'jwk' })),
    publicJwk: JSON.stringify(publicJwk),
    createdAt: nowSeconds,
  };
}

const KID_SUFFIX: Record<Exclude<SigningAlgorithm, 'RS256'>, string> = { ES256: '-es256', EdDSA: '-eddsa' };

/** The order of the group of P-256: a private scalar must be in [1, n). */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');
/** PKCS#8 header of an Ed25519 private key, followed by its 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** 32 bytes of key material for `algorithm`, from the RSA key's private exponent. */
function derive(secret: Buffer, kid: string, algorithm: string, attempt: number): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'anteroom signing key', `${algorithm} ${kid} ${attempt}`, 32));
}

function deriveEs256(secret: Buffer, kid: string): SigningKey {
  let d: Buffer;
  for (let attempt = 0; ; attempt++) {
    d = derive(secret, kid, 'ES256', attempt);
    const value = BigInt(`0x${d.toString('hex')}`);
    if (value > 0n && value < P256_ORDER) break; // fails with probability ~2^-32
  }
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey(); // 0x04 || x || y
  const x = point.subarray(1, 33).toString('base64url');
  const y = point.subarray(33, 65).toString('base64url');
  const derivedKid = kid + KID_SUFFIX.ES256;
  return {
    kid: derivedKid,
    algorithm: 'ES256',
    privateKey: createPrivateKey({ key: { kty: 'EC', crv: 'P-256', x, y, d: d.toString('base64url') }, format: 'jwk' }),
    publicJwk: { kty: 'EC', crv: 'P-256', alg: 'ES256', kid: derivedKid, x, y },
  };
}

function deriveEdDsa(secret: Buffer, kid: string): SigningKey {
  const seed = derive(secret, kid, 'EdDSA', 0);
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const x = String(createPublicKey(privateKey).export({ format: 'jwk' }).x);
  const derivedKid = kid + KID_SUFFIX.EdDSA;
  return { kid: derivedKid, algorithm: 'EdDSA', privateKey, publicJwk: { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', kid: derivedKid, x } };
}

/** The stored key's three signing keys: RS256 (itself), ES256 and EdDSA (derived). */
function toSigningKeys(stored: StoredSigningKey): Record<SigningAlgorithm, SigningKey> {
  const privateJwk = JSON.parse(stored.privateJwk) as { d: string };
  const secret = Buffer.from(privateJwk.d, 'base64url');
  return {
    RS256: {
      kid: stored.kid,
      algorithm: 'RS256',
      privateKey: createPrivateKey({ key: privateJwk, format: 'jwk' }),
      publicJwk: JSON.parse(stored.publicJwk) as PublicJwk,
    },
    ES256: deriveEs256(secret, stored.kid),
    EdDSA: deriveEdDsa(secret, stored.kid),
  };
}

/** The process's view of every event's keys: loaded from the store once, created there on first use. */
/** The key named `kid`, searched without building the list of every key (once per token set signed or rebuilt). */
function findKid(stored: Record<SigningAlgorithm, SigningKey>[], kid: string): SigningKey | undefined {
  for (const keys of stored) {
    if (keys.RS256.kid === kid) return keys.RS256;
    if (keys.ES256.kid === kid) return keys.ES256;
    if (keys.EdDSA.kid === kid) return keys.EdDSA;
  }
  return undefined;
}

export class KeyRing implements SigningKeys {
  private readonly store: SigningKeyStore;
  private readonly now: () => number;
  private readonly byEvent = new Map<string, Promise<Record<SigningAlgorithm, SigningKey>[]>>();

  constructor(store: SigningKeyStore, nowSeconds: () => number) {
    this.store = store;
    this.now = nowSeconds;
  }

  /** The key new tokens of the event are signed with, for the room's algorithm. */
  async current(eventId: string, algorithm: SigningAlgorithm = 'RS256'): Promise<SigningKey> {
    const keys = await this.stored(eventId);
    return (keys[keys.length - 1] as Record<SigningAlgorithm, SigningKey>)[algorithm];
  }

  async byKid(eventId: string, kid: string): Promise<SigningKey | undefined> {
    let found = findKid(await this.stored(eventId), kid);
    if (!found) {
      // Another node may have added a key since we loaded them.
      this.byEvent.delete(eventId);
      found = findKid(await this.stored(eventId), kid);
    }
    return found;
  }

  /** Every key of the event, oldest first, each stored key's RS256, ES256 and EdDSA keys (a JWKS publishes them all). */
  async all(eventId: string): Promise<SigningKey[]> {
    return (await this.stored(eventId)).flatMap((keys) => [keys.RS256, keys.ES256, keys.EdDSA]);
  }

  forget(eventId: string): void {
    this.byEvent.delete(eventId);
  }

  private stored(eventId: string): Promise<Record<SigningAlgorithm, SigningKey>[]> {
    let keys = this.byEvent.get(eventId);
    if (!keys) {
      keys = this.load(eventId);
      this.byEvent.set(eventId, keys);
      keys.catch(() => this.byEvent.delete(eventId));
    }
    return keys;
  }

  private async load(eventId: string): Promise<Record<SigningAlgorithm, SigningKey>[]> {
    const stored = await this.store.getSigningKeys(eventId);
    if (stored.length > 0) return stored.map(toSigningKeys);
    const winner = await this.store.addSigningKeyIfNone(eventId, await generateSigningKey(this.now()));
    return [toSigningKeys(winner)];
  }
}
