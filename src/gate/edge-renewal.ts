// Verify at the edge (docs/edge.md): the one call the edge (deploy/nginx/anteroom-edge.js) makes to Anteroom,
// at most once per visitor per renewal interval. GET /_anteroom/renew?event_id=… with the visitor's admission
// cookie (anteroom_token) checks the session as the gate does (GateSessions.check: signature, audience,
// expiry, open session, and records the visit as the session's last seen), and answers a fresh edge cookie
// (anteroom_edge) that admits until the next renewal time. X-Accel-Expires tells nginx's cache until when the
// answer may be reused for the same cookie (the second before its renewal time), so a burst of requests makes one call. With mac_only=1 (sent by an
// edge that checks only the HMAC) the cookie carries no ES256 signature (most of a renewal's CPU otherwise; one
// costs 1.5–2 forward-auth checks without it, about 1.4 since fast-renewal.ts answers it before Fastify:
// docs/benchmarks.md). The 200 has no body. With `to` (a local path:
// the CloudFront function sends the browser here, as it cannot call out) the answer is a 303: back to `to` with
// the fresh cookie, or to the waiting page.

import type { FastifyInstance } from 'fastify';
import type { RoomSettings } from '../domain/room-settings.ts';
import { TOKEN_COOKIE, cookieAttributes } from './cookies.ts';
import { safeLocalPath } from './normalise-path.ts';
import { signEdgeCookie, type EdgeKeys } from './edge-keys.ts';
import type { GateSessions } from './sessions.ts';

/** The edge admission cookie: a compact JWS (ES256) of { aud: room, sub: request ID, iat, exp: renewal time }. */
export const EDGE_COOKIE = 'anteroom_edge';

/** Seconds an edge cookie admits: the room's gate.edge_renewal_interval, else session_duration / 10, at least 5. */
export function edgeRenewalSeconds(room: RoomSettings): number {
  return room.gate?.edge_renewal_interval ?? Math.max(5, Math.floor(room.session_duration / 10));
}

export interface EdgeRenewalDeps {
  sessions: GateSessions;
  keys: EdgeKeys;
  roomOf: (eventId: string) => RoomSettings | undefined;
  nowMs: () => number;
}

/** A valid renewal's cookie: its value, its Max-Age, and until when the answer may be reused (X-Accel-Expires). */
export interface FreshEdgeCookie {
  cookie: string;
  maxAge: number;
  /**
   * nginx keeps the answer up to and including the second before exp (its cache serves an entry through its
   * second): from exp on the cookie is due, and the edge asks again instead of handing it out once more.
   * Absolute (`@<unix seconds>`), as the edge judges the cookie's exp by its own clock.
   */
  accelExpires: string;
}

/** The edge cookie for an open session (the claims GateSessions.check gave): admits until the next renewal. */
export async function freshEdgeCookie(deps: EdgeRenewalDeps, room: RoomSettings, claims: { sub: string; exp: number }, macOnly: boolean): Promise<FreshEdgeCookie> {
  const now = Math.floor(deps.nowMs() / 1000);
  const exp = Math.min(now + edgeRenewalSeconds(room), claims.exp);
  const cookie = signEdgeCookie(await deps.keys.current(), { aud: room.event_id, sub: claims.sub, iat: now, exp }, macOnly);
  // The cookie lives as long as the admission; the edge asks again once its exp (inside) has passed.
  return { cookie, maxAge: Math.max(0, claims.exp - now), accelExpires: `@${exp - 1}` };
}

/** The audience a token names, unverified: only to pick the room whose keys then verify it. */
function audienceOf(token: string | undefined): string | undefined {
  if (!token || token.length > 8192) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { aud?: unknown };
    return typeof claims.aud === 'string' ? claims.aud : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Registers GET /renew, and POST /revoke in the gate's /_anteroom scope. POST /revoke is what nginx calls (after
 * the response) when the origin answered `Anteroom-Command: revoke`: it closes the session of the admission
 * cookie it is given, as the gate does (a visitor can only end their own session; SameSite=Lax keeps other
 * sites' forms from sending the cookie).
 */
export function edgeRenewalRoute(scope: FastifyInstance, deps: EdgeRenewalDeps): void {
  scope.get('/renew', async (request, reply) => {
    reply.header('cache-control', 'no-store').header('x-accel-expires', '0');
    const eventId = (request.query as Record<string, unknown>).event_id;
    const room = typeof eventId === 'string' && eventId.length <= 256 ? deps.roomOf(eventId) : undefined;
    if (!room?.gate) return reply.code(404).send({ error: 'No waiting room protects this URL' });
    const given = (request.query as Record<string, unknown>).to;
    const to = given === undefined ? undefined : (safeLocalPath(given) ?? '/');
    const verdict = await deps.sessions.check(room, request.cookies[TOKEN_COOKIE]);
    if (!verdict.ok) {
      if (to !== undefined) return reply.redirect(`/_anteroom/wait?to=${encodeURIComponent(to)}`, 303);
      return reply.code(401).send({ error: 'No valid admission to this room' });
    }
    // mac_only=1: the edge checks the HMAC only (nginx holding HMAC keys, CloudFront), so no ES256 signature.
    const fresh = await freshEdgeCookie(deps, room, verdict.claims, (request.query as Record<string, unknown>).mac_only === '1');
    reply.setCookie(EDGE_COOKIE, fresh.cookie, cookieAttributes(request.protocol === 'https', fresh.maxAge));
    if (to !== undefined) return reply.redirect(to, 303);
    reply.header('x-accel-expires', fresh.accelExpires);
    // No body: the edge reads the status and the cookie only (a body was most of the answer's bytes).
    return reply.send();
  });

  scope.post('/revoke', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const token = request.cookies[TOKEN_COOKIE];
    const eventId = audienceOf(token);
    const room = eventId === undefined ? undefined : deps.roomOf(eventId);
    const verdict = room?.gate && token ? await deps.sessions.check(room, token) : undefined;
    if (!room || !token || !verdict?.ok) return reply.code(401).send({ error: 'No valid admission to this room' });
    await deps.sessions.revoke(room, token, verdict.claims.sub);
    return reply.code(204).send();
  });
}
