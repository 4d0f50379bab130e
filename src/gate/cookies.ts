// The gate's cookies (docs/gate.md#cookies). All are HttpOnly, SameSite=Lax, Path=/, and Secure when the
// visitor came over https (as Fastify reads it with --trust-proxy).
// - anteroom_place: the visitor's place in line: event, request ID, position once known and the URL first asked
//   for, encrypted and authenticated with AES-256-GCM (random 96-bit IV) under a key derived by HKDF-SHA256 from
//   the secret shared through the store (so any node, and a restarted one, accepts it). Opaque: the request ID
//   is a capability (leave_queue takes it), so nobody who sees the cookie — the visitor's extensions, a log on
//   the way — learns it; tamper-proof: a changed bit fails the GCM tag. The format before this one (readable
//   base64url JSON + HMAC-SHA256 under the raw secret) is still read, so an upgrade costs no visitor their
//   place, and is re-sent encrypted at the visitor's next request; nothing writes it any more.
// - anteroom_token: the access token of the claimed token set (an RS256 JWT whose audience is the room), as the
//   authorizer and the protected site read it.
// - anteroom_join: while a visitor has no place yet, the Idempotency-Key of their join (22 random base64url
//   characters), set on the answer before the join is tried — a 503 included — and cleared once the place cookie
//   holds the place: the visitor's next request after a refused join sends the same key and gets the place the
//   refused join may have taken (docs/distributed.md, "What a 5xx means"). A secret like the place (the key names
//   its request ID), so HttpOnly too and never passed to the origin.

import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

export const PLACE_COOKIE = 'anteroom_place';
export const TOKEN_COOKIE = 'anteroom_token';
export const JOIN_COOKIE = 'anteroom_join';
/** How long a visitor's retry after a refused join finds that join again (after that, a new join). */
export const JOIN_COOKIE_MAX_AGE_SEC = 3600;
/** A place cookie lives as long as a place can (a long sale); the token cookie as long as its token. */
export const PLACE_COOKIE_MAX_AGE_SEC = 7 * 24 * 3600;

export interface CookieAttributes {
  httpOnly: true;
  sameSite: 'lax';
  path: '/';
  secure: boolean;
  maxAge?: number;
}

export function cookieAttributes(secure: boolean, maxAgeSec?: number): CookieAttributes {
  return { httpOnly: true, sameSite: 'lax', path: '/', secure, ...(maxAgeSec !== undefined ? { maxAge: maxAgeSec } : {}) };
}

export interface Place {
  eventId: string;
  requestId: string;
  /** The position, once the store gave one (a drawn room's comes at the start). */
  position?: number;
  /** Path and query first asked for: where the visitor is sent once served. */
  returnTo: string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** HKDF's info: the AES key is for place cookies only, whatever else the shared secret is used for. */
const KEY_INFO = 'anteroom place cookie AES-256-GCM v2';

/** Encrypts and reads place cookies under one shared secret. */
export class PlaceCookies {
  private readonly aesKey: Buffer;
  /** The secret as the old format's HMAC key (read only). */
  private readonly legacyKey: Buffer;
  /** Cookies verified already: a waiting visitor polls with the same one every few seconds. */
  private readonly verified = new Map<string, Place>();
  /** Places read from a cookie of the old, readable format: re-sent encrypted. */
  private readonly legacy = new WeakSet<Place>();

  constructor(secret: Buffer) {
    this.aesKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), KEY_INFO, 32));
    this.legacyKey = secret;
  }

  /** base64url(IV ‖ ciphertext ‖ GCM tag) of the place as JSON: no '.', unlike the old format. */
  encode(place: Place): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.aesKey, iv);
    const plain = Buffer.from(JSON.stringify([place.eventId, place.requestId, place.position ?? null, place.returnTo]));
    return Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]).toString('base64url');
  }

  decode(value: string | undefined): Place | undefined {
    if (!value) return undefined;
    const known = this.verified.get(value);
    if (known) return known;
    const place = value.includes('.') ? this.verifyLegacy(value) : this.decrypt(value);
    if (place) {
      if (this.verified.size >= 100_000) this.verified.clear();
      this.verified.set(value, place);
    }
    return place;
  }

  /** Whether the place came from a cookie of the old format (it should be sent again, encrypted). */
  isLegacy(place: Place): boolean {
    return this.legacy.has(place);
  }

  private decrypt(value: string): Place | undefined {
    const bytes = Buffer.from(value, 'base64url');
    if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.aesKey, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
      return placeOf(plain.toString());
    } catch {
      return undefined;
    }
  }

  /** The old format, read for an upgrade: base64url JSON, '.', HMAC-SHA256 of it under the raw secret. */
  private verifyLegacy(value: string): Place | undefined {
    const dot = value.indexOf('.');
    if (dot <= 0) return undefined;
    const body = value.slice(0, dot);
    const given = Buffer.from(value.slice(dot + 1), 'base64url');
    const expected = createHmac('sha256', this.legacyKey).update(body).digest();
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const place = placeOf(Buffer.from(body, 'base64url').toString());
    if (place) this.legacy.add(place);
    return place;
  }
}

/** A fresh join key: 128 random bits, 22 base64url characters (a valid Idempotency-Key). */
export function newJoinKey(): string {
  return randomBytes(16).toString('base64url');
}

/** The join key a cookie carries, or undefined when it is absent or not one the gate could have made. */
export function joinKeyOf(value: string | undefined): string | undefined {
  return value !== undefined && /^[A-Za-z0-9_-]{22}$/.test(value) ? value : undefined;
}

function placeOf(json: string): Place | undefined {
  try {
    const [eventId, requestId, position, returnTo] = JSON.parse(json) as unknown[];
    if (typeof eventId !== 'string' || typeof requestId !== 'string' || typeof returnTo !== 'string') return undefined;
    return { eventId, requestId, returnTo, ...(typeof position === 'number' ? { position } : {}) };
  } catch {
    return undefined;
  }
}

/** Anteroom's cookies (the gate's three, and the edge's): none of them is the origin's business by default. */
const ANTEROOM_COOKIES = new Set([PLACE_COOKIE, TOKEN_COOKIE, JOIN_COOKIE, 'anteroom_edge']);
const ANTEROOM_BUT_TOKEN = new Set([PLACE_COOKIE, JOIN_COOKIE, 'anteroom_edge']);

/**
 * A `Cookie` header without Anteroom's cookies, for the origin (undefined when nothing is left): the place's
 * request ID would let whoever reads the origin's logs take the visitor out of line, and the token is a
 * credential. `keepToken` (the room's `gate.forward_token_cookie`) leaves `anteroom_token` for a site that checks
 * it itself. No work unless the header names an Anteroom cookie.
 */
export function withoutAnteroomCookies(header: string, keepToken: boolean): string | undefined {
  if (!header.includes('anteroom_')) return header;
  const names = keepToken ? ANTEROOM_BUT_TOKEN : ANTEROOM_COOKIES;
  const pairs = header.split(';');
  const kept = pairs.filter((pair) => {
    const eq = pair.indexOf('=');
    return !names.has((eq === -1 ? pair : pair.slice(0, eq)).trim());
  });
  if (kept.length === pairs.length) return header;
  return kept.length === 0 ? undefined : kept.map((pair) => pair.trim()).join('; ');
}
