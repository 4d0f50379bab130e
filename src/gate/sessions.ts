// Admission cookies and the sessions behind them (spec rooms.md §2 and §5; docs/gate.md#sessions).
//
// A cookie is valid when its token verifies against the room's own keys (RS256, audience = the room, issuer,
// exp, nbf, token_use) and its session is open. Verifying a JWT costs ~70 µs; a visitor sends many requests
// with the same token, so a verified token is remembered (bounded map) and later requests cost a map lookup
// and a clock comparison.
//
// Whether the session is still open, and when the visitor was last seen, is the store's answer, shared by
// every gate node (store.renewSession): a visitor whose requests alternate between nodes behind a load
// balancer without sticky sessions is one session with one "last seen". A node goes to the store at most once
// per RENEW_EVERY_MS per visitor: that one call checks the session is open, ends it if it was idle on every
// node, and records the request as the shared last seen. Between those calls the node answers from memory, so
// a revocation made on another node is seen within RENEW_EVERY_MS; one made through this node is seen at once.
//
// Session ends (closing the session in the store, so the freed place counts at the next admission tick):
// - idle (session_renewal true, the default): not seen for session_duration on any node. A node records a
//   request at most RENEW_EVERY_MS after its last recording, so the shared value can lag the visitor's last
//   request by up to RENEW_EVERY_MS: a session counts as idle once the shared last seen is older than
//   session_duration + RENEW_EVERY_MS, never early. The sweep (every RENEW_EVERY_MS) asks the store about the
//   sessions this node has not seen for session_duration; a request arriving after the end is refused.
// - fixed (session_renewal false): session_duration after admission (the token's iat), whatever the traffic.

import { verifyAccessTokenWithKeys, type VerifiedClaims } from 'anteroom-authorizer';
import type { SessionRenewal } from '../domain/ports/store.ts';
import type { RoomSettings } from '../domain/room-settings.ts';

/** How often, at most, a visitor's session is checked against the store. */
export const RENEW_EVERY_MS = 5_000;
const MAX_REMEMBERED = 100_000;

/** What the gate needs of the waiting-room service. */
export interface SessionService {
  jwks(eventId: string): Promise<{ status: number; body: unknown }>;
  /** The shared last seen (store.renewSession); an idle session ended here emits session_updated. */
  renewGateSession(eventId: string, requestId: string, nowMs: number, idleBeforeMs: number | null, touch: boolean): Promise<SessionRenewal>;
  /** update_session: closes the session (1 completed, -1 abandoned); throws if it is closed already. */
  updateSession(eventId: string, requestId: string, status: 1 | -1): Promise<unknown>;
}

interface Seen {
  claims: VerifiedClaims;
  /** When this node last recorded the visitor in the store (ms): the next recording is due RENEW_EVERY_MS later. */
  recordedAtMs: number;
  /** Last request seen by this node, or the shared last seen if that is later (ms). */
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
      if (!room.session_renewal && now >= known.claims.iat * 1000 + room.session_duration * 1000) return this.end(room, token, known.claims.sub);
      if (known.claims.exp * 1000 <= now) return { ok: false, reason: 'invalid' };
      // Idle or not is the store's answer (another node may have served the visitor): asked below, as it has
      // been more than RENEW_EVERY_MS since the last look whenever this node saw no request for session_duration.
      if (now - known.recordedAtMs < RENEW_EVERY_MS) {
        known.lastSeenMs = now;
        return { ok: true, claims: known.claims };
      }
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

  /**
   * Ends the sessions this node follows that ended: session_renewal false at session_duration after admission;
   * idle ones when the store's shared last seen says so (a session this node has not seen for
   * session_duration may be busy on another node). Run every RENEW_EVERY_MS. Returns how many it ended.
   */
  async sweep(roomOf: (eventId: string) => RoomSettings | undefined): Promise<number> {
    const now = this.nowMs();
    const ending: Promise<boolean>[] = [];
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
      const durationMs = room.session_duration * 1000;
      if (!room.session_renewal) {
        if (now >= known.claims.iat * 1000 + durationMs) ending.push(this.end(room, token, known.claims.sub).then(() => true));
        continue;
      }
      // Quiet here for session_duration: ask the store (at most once per sweep, every RENEW_EVERY_MS).
      if (now - known.lastSeenMs < durationMs) continue;
      ending.push(this.renew(room, token, known, now, false).then((verdict) => !verdict.ok && verdict.reason === 'ended'));
    }
    const ended = await Promise.all(ending);
    return ended.filter(Boolean).length;
  }

  /** How many sessions this node is following (tests, metrics). */
  get size(): number {
    return this.seen.size;
  }

  /**
   * One look at the store for a session this node knows to be valid: ends it if it was idle on every node,
   * else (with `touch`) records this request as the shared last seen.
   */
  private async renew(room: RoomSettings, token: string, known: Seen, now: number, touch: boolean): Promise<SessionVerdict> {
    const requestId = known.claims.sub;
    const idleBeforeMs = room.session_renewal ? now - room.session_duration * 1000 - RENEW_EVERY_MS : null;
    let result: SessionRenewal;
    try {
      result = await this.service.renewGateSession(room.event_id, requestId, now, idleBeforeMs, touch);
    } catch {
      // The store is unreachable: the visitor is refused this time (the place is kept), nothing is recorded.
      return { ok: false, reason: 'invalid' };
    }
    if (result.outcome === 'open') {
      if (result.lastSeen > known.lastSeenMs) known.lastSeenMs = result.lastSeen;
      if (touch) known.recordedAtMs = known.lastSeenMs = now;
      if (this.seen.size >= MAX_REMEMBERED && !this.seen.has(token)) this.seen.clear();
      this.seen.set(token, known);
      return { ok: true, claims: known.claims };
    }
    this.seen.delete(token);
    remember(this.closed, sessionKey(room.event_id, requestId));
    return { ok: false, reason: result.outcome === 'ended' ? 'ended' : 'closed' };
  }

  /** session_renewal false: the session's time is up; closed as abandoned. */
  private async end(room: RoomSettings, token: string, requestId: string): Promise<SessionVerdict> {
    this.seen.delete(token);
    remember(this.closed, sessionKey(room.event_id, requestId));
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
    if (!room.session_renewal && now >= claims.iat * 1000 + room.session_duration * 1000) return this.end(room, token, claims.sub);
    const entry: Seen = known && known.claims.aud === room.event_id ? known : { claims, recordedAtMs: now, lastSeenMs: now };
    return this.renew(room, token, entry, now, true);
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
