// Signing keys: RSA-2048 per event, generated on first use and kept in the store so every node signs with
// the same key. The private JWK is turned into a KeyObject here and never leaves the process.

import { createPrivateKey, generateKeyPair, randomBytes, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { SigningKeyStore, StoredSigningKey } from '../domain/ports/store.ts';
import type { PublicJwk, SigningKeys } from '../domain/ports/tokens.ts';

const generateRsa = promisify(generateKeyPair);

export type { PublicJwk };

export interface SigningKey {
  kid: string;
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

function toSigningKey(stored: StoredSigningKey): SigningKey {
  return {
    kid: stored.kid,
    privateKey: createPrivateKey({ key: JSON.parse(stored.privateJwk), format: 'jwk' }),
    publicJwk: JSON.parse(stored.publicJwk) as PublicJwk,
  };
}

/** The process's view of every event's keys: loaded from the store once, created there on first use. */
export class KeyRing implements SigningKeys {
  private readonly store: SigningKeyStore;
  private readonly now: () => number;
  private readonly byEvent = new Map<string, Promise<SigningKey[]>>();

  constructor(store: SigningKeyStore, nowSeconds: () => number) {
    this.store = store;
    this.now = nowSeconds;
  }

  /** The key new tokens of the event are signed with. */
  async current(eventId: string): Promise<SigningKey> {
    const keys = await this.all(eventId);
    return keys[keys.length - 1] as SigningKey;
  }

  async byKid(eventId: string, kid: string): Promise<SigningKey | undefined> {
    let keys = await this.all(eventId);
    let found = keys.find((k) => k.kid === kid);
    if (!found) {
      // Another node may have added a key since we loaded them.
      this.byEvent.delete(eventId);
      keys = await this.all(eventId);
      found = keys.find((k) => k.kid === kid);
    }
    return found;
  }

  /** Every key of the event, oldest first (a JWKS publishes them all). */
  all(eventId: string): Promise<SigningKey[]> {
    let keys = this.byEvent.get(eventId);
    if (!keys) {
      keys = this.load(eventId);
      this.byEvent.set(eventId, keys);
      keys.catch(() => this.byEvent.delete(eventId));
    }
    return keys;
  }

  forget(eventId: string): void {
    this.byEvent.delete(eventId);
  }

  private async load(eventId: string): Promise<SigningKey[]> {
    const stored = await this.store.getSigningKeys(eventId);
    if (stored.length > 0) return stored.map(toSigningKey);
    const winner = await this.store.addSigningKeyIfNone(eventId, await generateSigningKey(this.now()));
    return [toSigningKey(winner)];
  }
}
