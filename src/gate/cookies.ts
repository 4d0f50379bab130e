// The gate's two cookies (docs/gate.md#cookies). Both are HttpOnly, SameSite=Lax, Path=/, and Secure when the
// visitor came over https (as Fastify reads it with --trust-proxy).
// - anteroom_place: the visitor's place in line: event, request ID, position once known and the URL first asked
//   for, signed with HMAC-SHA256 under a key shared through the store (so any node, and a restarted one,
//   accepts it). It carries no secret: forging one would only name someone else's request ID, which the HMAC
//   refuses.
// - anteroom_token: the access token of the claimed token set (an RS256 JWT whose audience is the room), as the
//   authorizer and the protected site read it.

import { createHmac, timingSafeEqual } from 'node:crypto';

export const PLACE_COOKIE = 'anteroom_place';
export const TOKEN_COOKIE = 'anteroom_token';
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

/** Signs and reads place cookies with one key. */
export class PlaceCookies {
  private readonly key: Buffer;
  /** Cookies verified already: a waiting visitor polls with the same one every few seconds. */
  private readonly verified = new Map<string, Place>();

  constructor(key: Buffer) {
    this.key = key;
  }

  encode(place: Place): string {
    const body = Buffer.from(
      JSON.stringify([place.eventId, place.requestId, place.position ?? null, place.returnTo]),
    ).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  decode(value: string | undefined): Place | undefined {
    if (!value) return undefined;
    const known = this.verified.get(value);
    if (known) return known;
    const place = this.verify(value);
    if (place) {
      if (this.verified.size >= 100_000) this.verified.clear();
      this.verified.set(value, place);
    }
    return place;
  }

  private verify(value: string): Place | undefined {
    const dot = value.indexOf('.');
    if (dot <= 0) return undefined;
    const body = value.slice(0, dot);
    const given = Buffer.from(value.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.sign(body), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const [eventId, requestId, position, returnTo] = JSON.parse(Buffer.from(body, 'base64url').toString()) as unknown[];
      if (typeof eventId !== 'string' || typeof requestId !== 'string' || typeof returnTo !== 'string') return undefined;
      return { eventId, requestId, returnTo, ...(typeof position === 'number' ? { position } : {}) };
    } catch {
      return undefined;
    }
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

