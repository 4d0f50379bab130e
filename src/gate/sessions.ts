// Admission cookies and the sessions behind them (spec rooms.md §2 and §5; docs/gate.md#sessions).
//
// A cookie is valid when its token verifies against the room's own keys (RS256, audience = the room, issuer,
// exp, nbf, token_use) and its session is open. Verifying a JWT costs ~70 µs; a visitor sends many requests
// with the same token, so a verified token is remembered (bounded map) and later requests cost a map lookup
// and a clock comparison.
//
// Whether the session is still open is the store's answer (the existing token accounting: update_session and
// `Anteroom-Command: revoke` close it there, and a closed session is what frees a place for automatic
// admission). The gate asks the store at most once per RENEW_EVERY_MS per visitor — that is also when a
// visitor's activity is recorded — so a revocation made on another node is seen within that time; one made
// through this node is seen at once.
//
// Session ends the gate enforces itself, by closing the session in the store through the service (so the
// freed place counts at the next admission tick):
// - idle: no request for session_duration (session_renewal true, the default);
// - fixed: session_duration after admission (session_renewal false), whatever the traffic.
// A sweep closes sessions that went quiet; a request arriving after its session's end is refused and closes it.

import { verifyAccessTokenWithKeys, type VerifiedClaims } from '../authorizer/index.ts';
import type { RoomSettings } from '../domain/room-settings.ts';

/** How often, at most, a visitor's session is checked against the store. */
export const RENEW_EVERY_MS = 5_000;
const MAX_REMEMBERED = 100_000;

/** What the gate needs of the waiting-room service. */
export interface SessionService {
  jwks(eventId: string): Promise<{ status: number; body: unknown }>;
  claimReadiness(eventId: string, requestId: string): Promise<string>;
  /** update_session: closes the session (1 completed, -1 abandoned); throws if it is closed already. */
  updateSession(eventId: string, requestId: string, status: 1 | -1): Promise<unknown>;
}

interface Seen {
  claims: VerifiedClaims;
  /** When the store last said the session is open (ms). */
  checkedAtMs: number;
  /** Last request (ms). */
  lastSeenMs: number;
}

export type SessionVerdict = { ok: true; claims: VerifiedClaims } | { ok: false; reason: 'invalid' | 'closed' | 'ended' };

export class GateSessions {
  /** token → what we know of it; a revoked token is dropped and its request ID kept in `closed`. */
  private readonly seen = new Map<string, Seen>();
  private readonly closed = new Set<string>();
  private readonly inFlight = new Map<string, Promise<SessionVerdict>>();

  private readonly service: SessionService;
  private readonly issuerOf: (room: RoomSettings) => string;
  private readonly nowMs: () => number;

  constructor(service: SessionService, issuerOf: (room: RoomSettings) => string, nowMs: () => number) {
    this.service = service;
    this.issuerOf = issuerOf;
    this.nowMs = nowMs;
  }

  /** Whether `token` admits to `room` now; records the visit. */
  check(room: RoomSettings, token: string | undefined): SessionVerdict | Promise<SessionVerdict> {
    if (!token) return { ok: false, reason: 'invalid' };
    const now = this.nowMs();
    const known = this.seen.get(token);
    if (known && known.claims.aud === room.event_id) {
      const ended = this.sessionEnded(room, known, now);
      if (ended) return this.end(room, token, known.claims.sub, ended);
      if (known.claims.exp * 1000 <= now) return { ok: false, reason: 'invalid' };
      known.lastSeenMs = now;
      if (now - known.checkedAtMs < RENEW_EVERY_MS) return { ok: true, claims: known.claims };
    }
    const key = `${room.event_id}\n${token}`;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.verify(room, token, now).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /** The origin answered `Anteroom-Command: revoke`: refused here at once, closed in the store. */
  revoke(room: RoomSettings, token: string, requestId: string): Promise<void> {
    this.seen.delete(token);
    remember(this.closed, sessionKey(room.event_id, requestId));
    return this.close(room.event_id, requestId, 1);
  }

  /** Closes the sessions of this node that ended (idle or fixed duration); run every few seconds. */
  async sweep(roomOf: (eventId: string) => RoomSettings | undefined): Promise<number> {
    const now = this.nowMs();
    const ending: Promise<unknown>[] = [];
    for (const [token, known] of this.seen) {
      const room = roomOf(known.claims.aud);
      if (!room) {
        this.seen.delete(token);
        continue;
      }
      if (known.claims.exp * 1000 <= now) {
        // The token expired: the expiry job accounts for it; nothing to close.
        this.seen.delete(token);
        continue;
      }
      const ended = this.sessionEnded(room, known, now);
      if (ended) ending.push(this.end(room, token, known.claims.sub, ended));
    }
    await Promise.all(ending);
    return ending.length;
  }

  /** How many sessions this node is following (tests, metrics). */
  get size(): number {
    return this.seen.size;
  }

  private sessionEnded(room: RoomSettings, known: Seen, now: number): 'idle' | 'fixed' | undefined {
    const durationMs = room.session_duration * 1000;
    if (!room.session_renewal) return now >= known.claims.iat * 1000 + durationMs ? 'fixed' : undefined;
    return now - known.lastSeenMs >= durationMs ? 'idle' : undefined;
  }

  private async end(room: RoomSettings, token: string, requestId: string, _why: 'idle' | 'fixed'): Promise<SessionVerdict> {
    this.seen.delete(token);
    remember(this.closed, sessionKey(room.event_id, requestId));
    // An idle or timed-out visitor did not finish: abandoned.
    await this.close(room.event_id, requestId, -1);
    return { ok: false, reason: 'ended' };
  }

  private async close(eventId: string, requestId: string, status: 1 | -1): Promise<void> {
    try {
      await this.service.updateSession(eventId, requestId, status);
    } catch {
      // Closed already (by update_session, another node or a reset): what we wanted.
    }
  }

  private async verify(room: RoomSettings, token: string, now: number): Promise<SessionVerdict> {
    let claims: VerifiedClaims;
    const known = this.seen.get(token);
    if (known && known.claims.aud === room.event_id) {
      claims = known.claims;
    } else {
      try {
        const keys = await this.service.jwks(room.event_id);
        claims = await verifyAccessTokenWithKeys(token, keys.body, {
          eventId: room.event_id,
          issuer: this.issuerOf(room),
          clock: this.nowMs,
        });
      } catch {
        return { ok: false, reason: 'invalid' };
      }
    }
    if (this.closed.has(sessionKey(room.event_id, claims.sub))) return { ok: false, reason: 'closed' };
    let readiness: string;
    try {
      readiness = await this.service.claimReadiness(room.event_id, claims.sub);
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    // 'reissue': a token set exists and its session is open. Anything else: closed, or gone (a reset).
    if (readiness !== 'reissue') {
      this.seen.delete(token);
      remember(this.closed, sessionKey(room.event_id, claims.sub));
      return { ok: false, reason: 'closed' };
    }
    if (this.seen.size >= MAX_REMEMBERED && !this.seen.has(token)) this.seen.clear();
    const entry: Seen = known && known.claims.aud === room.event_id ? known : { claims, checkedAtMs: now, lastSeenMs: now };
    entry.checkedAtMs = now;
    entry.lastSeenMs = now;
    this.seen.set(token, entry);
    const ended = this.sessionEnded(room, entry, now);
    if (ended) return this.end(room, token, claims.sub, ended);
    return { ok: true, claims };
  }
}

/** Adds to a set that is emptied when it grows past the bound (a closed session is also refused by the store). */
function remember(set: Set<string>, key: string): void {
  if (set.size >= MAX_REMEMBERED) set.clear();
  set.add(key);
}

function sessionKey(eventId: string, requestId: string): string {
  return `${eventId}\n${requestId}`;
}
