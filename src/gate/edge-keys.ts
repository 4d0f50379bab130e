// The keys of edge admission cookies (docs/edge.md): ES256 (P-256) key pairs shared by every node through the
// secret store, newest last, each with an HMAC-SHA256 key derived from it (HKDF). The newest signs; the edge
// (nginx, deploy/nginx/anteroom-edge.js) accepts every key listed in the file exported from
// GET /private/edge_config. A rotation adds a key and keeps the previous one (the overlap lasts until the next
// rotation); keys older than that are dropped. Private keys never leave the store and this process; the HMAC
// keys go to the edge only when exported for it (the fast check).

import { createHmac, createPrivateKey, createPublicKey, createSecretKey, generateKeyPairSync, hkdfSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { SecretStore } from '../domain/ports/store.ts';

const EDGE_KEYS_SECRET = 'gate-edge-keys';
/** A node re-reads the keys this often, so a rotation made through another node is used within it. */
const RELOAD_EVERY_MS = 30_000;

interface StoredEdgeKey {
  kid: string;
  /** PKCS#8 DER, base64url. */
  pkcs8: string;
  /** Seconds since the epoch. */
  created: number;
}

export interface EdgeKey {
  kid: string;
  alg: 'ES256';
  privateKey: KeyObject;
  /** SubjectPublicKeyInfo DER, base64: what WebCrypto's importKey('spki') takes. */
  spki: string;
  /** HMAC-SHA256 key: 64 hex characters, used as they are (their ASCII bytes) by every runtime. */
  hmac: string;
  /** The same key imported once (each renewal MACs with it). */
  hmacKey: KeyObject;
  /** The JWS header of the cookies this key signs, base64url: their first part (the edge finds the key by it). */
  header: string;
  created: number;
}

export class EdgeKeys {
  private readonly secrets: SecretStore;
  private readonly nowMs: () => number;
  private loaded: { at: number; raw: string; keys: EdgeKey[] } | undefined;

  constructor(secrets: SecretStore, nowMs: () => number) {
    this.secrets = secrets;
    this.nowMs = nowMs;
  }

  /** The key new cookies are signed with. */
  async current(): Promise<EdgeKey> {
    const keys = await this.all();
    return keys[keys.length - 1] as EdgeKey;
  }

  /** Every key the edge accepts, oldest first. */
  async all(): Promise<EdgeKey[]> {
    const now = this.nowMs();
    if (this.loaded && now - this.loaded.at < RELOAD_EVERY_MS) return this.loaded.keys;
    const raw = await this.secrets.claimSecret(EDGE_KEYS_SECRET, JSON.stringify([newKey(now)]));
    return this.remember(raw, now);
  }

  /** Adds a new signing key and keeps the one before it (the overlap); returns the keys now valid. */
  async rotate(): Promise<EdgeKey[]> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = this.nowMs();
      const raw = await this.secrets.claimSecret(EDGE_KEYS_SECRET, JSON.stringify([newKey(now)]));
      const stored = JSON.parse(raw) as StoredEdgeKey[];
      const next = JSON.stringify([...stored.slice(-1), newKey(now)]);
      const after = await this.secrets.replaceSecret(EDGE_KEYS_SECRET, raw, next);
      if (after === next) return this.remember(next, now);
    }
    throw new Error('the edge keys changed during five rotations in a row');
  }

  private remember(raw: string, now: number): EdgeKey[] {
    if (this.loaded?.raw === raw) {
      this.loaded.at = now;
      return this.loaded.keys;
    }
    const keys = (JSON.parse(raw) as StoredEdgeKey[]).map(toEdgeKey);
    this.loaded = { at: now, raw, keys };
    return keys;
  }
}

function newKey(nowMs: number): StoredEdgeKey {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    kid: `edge-${randomBytes(8).toString('hex')}`,
    pkcs8: privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64url'),
    created: Math.floor(nowMs / 1000),
  };
}

function toEdgeKey(stored: StoredEdgeKey): EdgeKey {
  const privateKey = createPrivateKey({ key: Buffer.from(stored.pkcs8, 'base64url'), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64');
  const hmac = Buffer.from(hkdfSync('sha256', Buffer.from(stored.pkcs8, 'base64url'), 'anteroom edge hmac', stored.kid, 32)).toString('hex');
  return { kid: stored.kid, alg: 'ES256', privateKey, spki, hmac, hmacKey: createSecretKey(Buffer.from(hmac)), header: edgeCookieHeader(stored.kid), created: stored.created };
}

/** The headers of the few keys in use, made once each (every renewal signs with one). */
const HEADERS = new Map<string, string>();

/** The JWS header of the edge cookies key `kid` signs, base64url: their first part. */
export function edgeCookieHeader(kid: string): string {
  let header = HEADERS.get(kid);
  if (header === undefined) {
    header = Buffer.from(JSON.stringify({ alg: 'ES256', kid })).toString('base64url');
    if (HEADERS.size >= 64) HEADERS.clear();
    HEADERS.set(kid, header);
  }
  return header;
}

/** An edge cookie's claims: the room (aud), the session (sub), and when the edge must ask Anteroom again (exp). */
export interface EdgeClaims {
  aud: string;
  sub: string;
  iat: number;
  exp: number;
}

/**
 * A compact JWS (ES256, r || s) of `claims`, followed by a fourth part: the HMAC-SHA256 of the same signing input
 * ("header.payload") under the key's HMAC key. An edge holding the HMAC key checks the fourth part (cheap, no
 * WebCrypto); one holding only public keys checks the third. `macOnly`: the third part is left empty (no ES256
 * signature, several times the CPU of the rest of a renewal) for an edge that said it checks only the HMAC.
 */
export function signEdgeCookie(key: EdgeKey, claims: EdgeClaims, macOnly = false): string {
  const input = `${edgeCookieHeader(key.kid)}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = macOnly ? '' : sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
  const mac = createHmac('sha256', key.hmacKey).update(input).digest('base64url');
  return `${input}.${signature}.${mac}`;
}
