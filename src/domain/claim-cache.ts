// Token sets kept in memory, so that a re-claim — POST /generate_token for a visitor whose set was issued, which
// pages and VWR's clients send again and again — is answered without reading the store and without rebuilding
// the three JWTs (issue 37), on the claim fast path (src/http/fast-claim.ts).
//
// A re-claim's answer is the stored set, once issued, for as long as the decision of generate_token stays
// "reissue" (./claim-decision.ts): the position was not left, it is served, and the set's session is open. An
// entry is kept when the ordinary path answers a re-claim or issues a set, and answered only while nothing that
// can change that decision may have happened since:
//   - the set's session closed (update_session, the gate's revoke, an idle session ended: `completed` or
//     `abandoned` of the room's counters moved; any close in the room drops all its entries);
//   - a reset or the room's deletion (the generation; a room removed from the registry is forgotten by the
//     service);
//   - a leave (`left`: a position with a set cannot be left, but a leave is a change we do not reason about);
//   - the serving counter moved back below the position (checked at every answer: 202 then, on the ordinary
//     path).
// Each entry is stamped with the room's counters as this process held them *before* the store read or write that
// made it, so a change between that instant and the entry only makes it look older (dropped), never newer.
//
// How far the counters in memory can be trusted is the store's (Store.confirmTokenSet): on SQLite this process is
// the only writer and its counters change in the same synchronous stretch as each commit, so the stamp is exact
// and a re-claim is answered from memory alone. On Redis other nodes close sessions too, and the counters here
// are up to the hot-read TTL old: every answer is first confirmed by one read of the set's own field (the set,
// its session still open), with the replica wait of issue 35 when --redis-min-replicas is set. A store that
// cannot confirm (the AWS composite store) keeps no entries.
//
// The answer's `expires_in` is made at each answer from the clock (it counts down); the rest of the body is kept
// as the ordinary path serialised it. Memory: at most `limit` entries per room (two halves, as the positions
// cache), about 1.2 kB each with three ES256 JWTs (60 MB for a room's 50,000; RS256 sets are larger): the sets
// issued or re-claimed most recently, which are those visitors re-claim; an older one takes the ordinary path.

import type { TokenRecord } from './claims.ts';
import type { Counters } from './ports/store.ts';
import type { TokenSet } from './ports/tokens.ts';

export const CLAIM_CACHE_LIMIT = 50_000;

/** The counters' parts an entry is stamped with. */
export interface ClaimStamp {
  readonly generation: number;
  readonly left: number;
  readonly closed: number;
}

export interface KeptClaim extends ClaimStamp {
  readonly record: TokenRecord;
  /**
   * The 200 body up to the value of its last member, expires_in: `{"access_token":…,"expires_in":`, as
   * JSON.stringify writes the ordinary path's answer (ClaimService's tokenAnswer: the three JWTs, token_type,
   * expires_in); a JWT is base64url segments and dots, nothing to escape.
   */
  readonly bodyOpen: string;
}

interface RoomEntries {
  newer: Map<string, KeptClaim>;
  older: Map<string, KeptClaim>;
}

export class ClaimCache {
  private readonly rooms = new Map<string, RoomEntries>();
  private readonly half: number;

  constructor(limit = CLAIM_CACHE_LIMIT) {
    this.half = Math.max(1, Math.floor(limit / 2));
  }

  /** The stamp to give a set read or written from now on, or undefined when none may be kept. */
  stamp(counters: Counters | undefined): ClaimStamp | undefined {
    if (counters?.generation === undefined) return undefined;
    return { generation: counters.generation, left: counters.left, closed: counters.completed + counters.abandoned };
  }

  /** Keeps the JWTs `tokens` of the open set `record`, read or written after `stamp` was taken. */
  remember(eventId: string, record: TokenRecord, tokens: TokenSet, stamp: ClaimStamp | undefined): void {
    if (stamp === undefined || record.status !== 0) return;
    const bodyOpen =
      `{"access_token":"${tokens.access_token}","refresh_token":"${tokens.refresh_token}","id_token":"${tokens.id_token}",` +
      '"token_type":"Bearer","expires_in":';
    let room = this.rooms.get(eventId);
    if (!room) this.rooms.set(eventId, (room = { newer: new Map(), older: new Map() }));
    if (room.newer.size >= this.half) {
      room.older = room.newer;
      room.newer = new Map();
    }
    room.newer.set(record.requestId, { ...stamp, record, bodyOpen });
  }

  /**
   * The kept set of `requestId` if the room's counters held now still carry its stamp and serve its position;
   * undefined otherwise (a stale entry is dropped).
   */
  entry(eventId: string, requestId: string, counters: Counters): KeptClaim | undefined {
    const room = this.rooms.get(eventId);
    if (!room) return undefined;
    let entry = room.newer.get(requestId);
    if (entry === undefined) {
      entry = room.older.get(requestId);
      if (entry === undefined) return undefined;
      room.older.delete(requestId);
      if (room.newer.size < this.half) room.newer.set(requestId, entry);
    }
    if (
      entry.generation === counters.generation &&
      entry.left === counters.left &&
      entry.closed === counters.completed + counters.abandoned
    ) {
      // Served no more (the counter moved back): the ordinary path answers 202; the entry may serve again later.
      return entry.record.position <= counters.serving ? entry : undefined;
    }
    this.drop(eventId, requestId);
    return undefined;
  }

  /** Forgets one set (its confirmation failed: the store no longer holds it open). */
  drop(eventId: string, requestId: string): void {
    const room = this.rooms.get(eventId);
    room?.newer.delete(requestId);
    room?.older.delete(requestId);
  }

  /** Forgets a room's entries (its deletion). */
  forgetRoom(eventId: string): void {
    this.rooms.delete(eventId);
  }

  /** Entries kept, all rooms (tests). */
  get size(): number {
    let n = 0;
    for (const room of this.rooms.values()) n += room.newer.size + room.older.size;
    return n;
  }
}

/** The 200 body of a kept set at `now` (epoch seconds): its expires_in as the ordinary path counts it. */
export function keptClaimBody(kept: KeptClaim, now: number): string {
  const { exp, iat } = kept.record;
  return `${kept.bodyOpen}${Math.min(exp - iat, Math.max(0, exp - now))}}`;
}
