// Known positions kept in memory, so that GET /queue_num — which every waiting page polls until it knows its
// place, and VWR's clients poll throughout — is answered on the polling fast path (src/http/fast-poll.ts)
// without reading the store, as /serving_num is.
//
// What a position answer holds (queue number and entry time of a request ID) is written once, at the join or
// at the draw, and changes only when the room's state is taken away: a reset or the room's deletion (the
// position is gone: 202 "Request ID not found"). A leave or an expiry keeps the position today (the contract
// answers it still), but both are treated as changes too, so that an answer they may come to change is never
// served from here. Only positions found are kept: a 202 (no position yet, waiting for the draw, unknown ID)
// is never kept, so a draw or an asynchronous intake numbering an ID shows at its next poll.
//
// Freshness is the counters' own (src/store/hot-read-cache.ts): each entry is stamped with the room's counters
// as this process held them in memory *before* the store read that found the position, and is answered only
// while the counters this process holds now, fresh as the poll rules want them, carry the same stamp:
//   - the reset generation (a reset, a deletion);
//   - the count of positions left (any leave, on any node: the whole room's entries go, they are read again);
//   - the highest expired position, unless the entry's position is above it (an expiry that did not reach it
//     changed nothing for it; one that did, drops it).
// On SQLite the counters in memory are the store's own, changed in the same synchronous stretch as the commit,
// so an entry is exact. On Redis they are at most the hot-read TTL old, so a leave or a reset on another node is
// seen here within that TTL, as a counter's move is. A room removed from the registry has its entries forgotten
// (QueueService): one made again under the same ID may start again at generation 0. Stamping with counters read before the position can only
// make an entry look older than it is (dropped sooner), never newer. A store whose counters carry no
// generation gets no entries.
//
// Memory: at most `limit` entries per room (two halves: when the newer is full, the older one is dropped), about
// 150 bytes each; a poll that misses takes the ordinary path and refills.

import type { Counters, PositionRecord } from './ports/store.ts';
import type { PeopleAhead } from './people-ahead.ts';
import type { WaitEstimates } from './wait-estimates.ts';

export const POSITION_CACHE_LIMIT = 200_000;

/** The counters' parts an entry is stamped with. */
export interface PositionStamp {
  readonly generation: number;
  readonly left: number;
  readonly maxExpired: number;
}

interface Entry extends PositionStamp {
  readonly position: number;
  /** The 200 body without its closing brace: `{"queue_number":P,"entry_time":T,"event_id":"E","status":1`. */
  readonly bodyOpen: string;
}

interface RoomEntries {
  newer: Map<string, Entry>;
  older: Map<string, Entry>;
}

export class PositionCache {
  private readonly rooms = new Map<string, RoomEntries>();
  private readonly half: number;

  constructor(limit = POSITION_CACHE_LIMIT) {
    this.half = Math.max(1, Math.floor(limit / 2));
  }

  /** The stamp to give a position read from the store now, or undefined when it must not be kept. */
  stamp(counters: Counters | undefined): PositionStamp | undefined {
    if (counters?.generation === undefined) return undefined;
    return { generation: counters.generation, left: counters.left, maxExpired: counters.maxExpired };
  }

  /** Keeps the position found for `requestId` (normalised) by a read that began after `stamp` was taken. */
  remember(eventId: string, requestId: string, found: PositionRecord, stamp: PositionStamp | undefined): void {
    if (stamp === undefined) return;
    let room = this.rooms.get(eventId);
    if (!room) this.rooms.set(eventId, (room = { newer: new Map(), older: new Map() }));
    if (room.newer.size >= this.half) {
      room.older = room.newer;
      room.newer = new Map();
    }
    room.newer.set(requestId, {
      generation: stamp.generation,
      left: stamp.left,
      maxExpired: stamp.maxExpired,
      position: found.position,
      bodyOpen: `{"queue_number":${found.position},"entry_time":${found.entryTime},"event_id":${JSON.stringify(eventId)},"status":1`,
    });
  }

  /**
   * The kept answer for `requestId` (lowercase) if the room's counters held now (`counters`, fresh) still carry
   * its stamp; undefined otherwise (the entry is dropped).
   */
  entry(eventId: string, requestId: string, counters: Counters): { readonly position: number; readonly bodyOpen: string } | undefined {
    const room = this.rooms.get(eventId);
    if (!room) return undefined;
    let entry = room.newer.get(requestId);
    if (entry === undefined) {
      entry = room.older.get(requestId);
      if (entry === undefined) return undefined;
      // Still asked for: kept in the newer half, so the next turn of the halves does not drop it.
      room.older.delete(requestId);
      if (room.newer.size < this.half) room.newer.set(requestId, entry);
    }
    if (
      entry.generation === counters.generation &&
      entry.left === counters.left &&
      (entry.maxExpired === counters.maxExpired || entry.position > counters.maxExpired)
    ) {
      return entry;
    }
    room.newer.delete(requestId);
    room.older.delete(requestId);
    return undefined;
  }

  /** Forgets a room's entries (its reset or deletion by this process: they could never be answered again). */
  forgetRoom(eventId: string): void {
    this.rooms.delete(eventId);
  }

  /** Entries kept, all rooms (tests, metrics). */
  get size(): number {
    let n = 0;
    for (const room of this.rooms.values()) n += room.newer.size + room.older.size;
    return n;
  }
}

/**
 * GET /queue_num's 200 body from memory, as the ordinary path (QueueService.queueNum) would answer it now,
 * or undefined when it cannot be told here: no kept entry, or a wait estimate to be made for a place still
 * waiting (the ordinary path makes it and keeps it; later polls find it among the estimates given).
 */
export function positionAnswer(
  cache: PositionCache,
  estimates: WaitEstimates,
  eventId: string,
  requestId: string,
  counters: Counters,
  nowMs: number,
  peopleAhead: Pick<PeopleAhead, 'known'>,
  seen: (position: number) => void = () => {},
): string | undefined {
  const entry = cache.entry(eventId, requestId, counters);
  if (entry === undefined) return undefined;
  // A beat answered from memory counts too (presence, issue 34): marked in memory, never a store write.
  seen(entry.position);
  // The people still waiting ahead (issue 33) move with every admission and leave: told from the counters held
  // now and the list of places left, when that list is already in memory; otherwise the ordinary path reads it.
  const ahead = peopleAhead.known(eventId, entry.position, counters);
  if (ahead === undefined) return undefined;
  const close = `,"people_ahead":${ahead}}`;
  const given = estimates.of(eventId, requestId);
  if (given !== undefined) return `${entry.bodyOpen},"wait_estimate_s":[${given.lowSec},${given.highSec}]${close}`;
  if (estimates.pace(eventId, nowMs) === undefined) return `${entry.bodyOpen}${close}`;
  // A place the counter has reached: no wait left, an estimate of [0, 0] that is not kept (WaitEstimates.estimate).
  if (entry.position <= counters.serving) return `${entry.bodyOpen},"wait_estimate_s":[0,0]${close}`;
  return undefined;
}
