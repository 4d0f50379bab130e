// Presence on SQLite (issue 34; the port: src/domain/ports/presence.ts), in the process: the SQLite store's
// process is the only node, so the positions seen are kept in memory (a last-seen second per position, 4 bytes
// each) and a mark costs no I/O. The positions, tokens, left positions and serving history are read from the
// database (short indexed range reads on the event loop, like the admission snapshot's).
//
// Not kept across a restart: marks, skips, late arrivals and the no-show boundary. A restart makes nobody look
// absent: a position that never beat is never absent (src/domain/presence-settings.ts), and after a restart no
// position has beaten until its next beat; the no-show boundary starts where it stands at the first tick (no
// announcement of older no-shows); the late-arrival count starts at 0.

import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { PresenceQuery, PresenceStore, PresenceView, TickRecord } from '../../domain/ports/presence.ts';
import type { Counters } from '../../domain/ports/store.ts';

interface RoomPresence {
  generation: number;
  /** Position → the last second it beat (0 = never: never absent). */
  lastSeen: Uint32Array;
  /** Positions passed while absent. */
  skipped: Set<number>;
  /** [second, skipped that second], oldest first (last 120 s). */
  skips: [number, number][];
  noShowsThrough: number | null;
  lateArrivals: number;
}

const MAX_NEW_NO_SHOWS = 1000;
const MAX_NO_SHOW_SCAN = 20_000;

export interface SqlitePresenceOptions {
  db: DatabaseSync;
  /** The room's counters (the store's in-memory copy). */
  counters: (eventId: string) => Promise<Counters>;
}

export class SqlitePresence implements PresenceStore {
  readonly inProcess = true;
  private readonly rooms = new Map<string, RoomPresence>();
  private readonly counters: (eventId: string) => Promise<Counters>;
  private readonly sql: Record<'reachedBefore' | 'tokensIn' | 'leftIn', StatementSync>;

  constructor(options: SqlitePresenceOptions) {
    this.counters = options.counters;
    this.sql = {
      reachedBefore: options.db.prepare(
        'SELECT value FROM serving_history WHERE event_id = ? AND reached_at < ? ORDER BY value DESC LIMIT 1',
      ),
      tokensIn: options.db.prepare('SELECT position FROM tokens WHERE event_id = ? AND position BETWEEN ? AND ?'),
      leftIn: options.db.prepare('SELECT position FROM left_positions WHERE event_id = ? AND position BETWEEN ? AND ?'),
    };
  }

  /** The event's data is gone (a reset, deleteRoomData): its presence with it. */
  forget(eventId: string): void {
    this.rooms.delete(eventId);
  }

  /** The room's presence for the counters' generation: a reset starts it afresh. */
  private room(eventId: string, generation: number): RoomPresence {
    let room = this.rooms.get(eventId);
    if (!room || room.generation !== generation) {
      room = { generation, lastSeen: new Uint32Array(1024), skipped: new Set(), skips: [], noShowsThrough: null, lateArrivals: 0 };
      this.rooms.set(eventId, room);
    }
    return room;
  }

  async markSeen(eventId: string, positions: readonly number[], now: number): Promise<void> {
    const counters = await this.counters(eventId);
    const room = this.room(eventId, counters.generation ?? 0);
    for (const position of positions) {
      if (!Number.isSafeInteger(position) || position < 1 || position > counters.queue) continue;
      if (position >= room.lastSeen.length) {
        const grown = new Uint32Array(Math.max(position + 1, room.lastSeen.length * 2));
        grown.set(room.lastSeen);
        room.lastSeen = grown;
      }
      if (room.lastSeen[position]! < now) room.lastSeen[position] = now;
    }
  }

  private positionsIn(statement: StatementSync, eventId: string, lo: number, hi: number): number[] {
    if (hi < lo) return [];
    return (statement.all(eventId, lo, hi) as { position: number }[]).map((row) => row.position);
  }

  async presenceView(eventId: string, q: PresenceQuery): Promise<PresenceView> {
    const counters = await this.counters(eventId);
    const room = this.room(eventId, counters.generation ?? 0);
    const { queue, serving, maxExpired } = counters;
    // Presence off: everyone counts as present; on: absent only a position that beat, and not since seenSince.
    const watching = q.timeout > 0;
    const seenSince = q.now - q.timeout;
    const present = (p: number) => !watching || (room.lastSeen[p] ?? 0) === 0 || room.lastSeen[p]! >= seenSince;
    const countPresent = (lo: number, hi: number, except: readonly number[]) => {
      let n = 0;
      if (!watching) n = Math.max(0, hi - lo + 1);
      else for (let p = lo; p <= hi; p++) if (present(p)) n++;
      for (const p of except) if (present(p)) n--;
      return n;
    };

    const leftWaiting = this.positionsIn(this.sql.leftIn, eventId, serving + 1, queue);
    const presentWaiting = queue > serving ? countPresent(serving + 1, queue, leftWaiting) : 0;
    const absentWaiting = queue > serving ? queue - serving - leftWaiting.length - presentWaiting : 0;

    const admitted = Math.min(serving, queue);
    let boundary = maxExpired;
    if (q.arrivalCutoff !== null) {
      const row = this.sql.reachedBefore.get(eventId, q.arrivalCutoff) as { value: number } | undefined;
      boundary = Math.max(maxExpired, Math.min(row?.value ?? 0, admitted));
    }
    let countedAwaiting = 0;
    if (admitted > boundary) {
      const except = [
        ...this.positionsIn(this.sql.tokensIn, eventId, boundary + 1, admitted),
        ...this.positionsIn(this.sql.leftIn, eventId, boundary + 1, admitted),
      ];
      countedAwaiting = countPresent(boundary + 1, admitted, except);
    }
    let noShows = 0;
    if (boundary > maxExpired) {
      noShows =
        boundary -
        maxExpired -
        this.positionsIn(this.sql.tokensIn, eventId, maxExpired + 1, boundary).length -
        this.positionsIn(this.sql.leftIn, eventId, maxExpired + 1, boundary).length;
    }

    const left = new Set(leftWaiting);
    const nextPresent: number[] = [];
    for (let p = serving + 1; p <= queue && nextPresent.length < q.limit; p++) {
      if (present(p) && !left.has(p)) nextPresent.push(p);
    }

    let skippedInWindow = 0;
    let skippedThisSecond = 0;
    for (const [at, n] of room.skips) {
      if (at >= q.rateWindowStart) skippedInWindow += n;
      if (at >= q.now) skippedThisSecond += n;
    }
    return {
      serving,
      queue,
      presentWaiting,
      absentWaiting,
      countedAwaiting,
      noShows,
      arrivalBoundary: boundary,
      nextPresent,
      skippedInWindow,
      skippedThisSecond,
      lateArrivals: room.lateArrivals,
    };
  }

  async recordTick(eventId: string, skipped: readonly (readonly [number, number])[], now: number, noShowsThrough: number): Promise<TickRecord> {
    const counters = await this.counters(eventId);
    const room = this.room(eventId, counters.generation ?? 0);
    let count = 0;
    for (const [lo, hi] of skipped) {
      for (let p = lo; p <= hi; p++) room.skipped.add(p);
      count += Math.max(0, hi - lo + 1);
    }
    if (count > 0) {
      const last = room.skips.at(-1);
      if (last && last[0] === now) last[1] += count;
      else room.skips.push([now, count]);
      while (room.skips.length > 0 && room.skips[0]![0] < now - 120) room.skips.shift();
    }
    const newNoShows: number[] = [];
    if (room.noShowsThrough === null) {
      room.noShowsThrough = noShowsThrough;
    } else if (noShowsThrough > room.noShowsThrough) {
      const lo = Math.max(room.noShowsThrough, counters.maxExpired) + 1;
      const hi = Math.min(noShowsThrough, lo + MAX_NO_SHOW_SCAN - 1);
      const taken = new Set([
        ...this.positionsIn(this.sql.tokensIn, eventId, lo, hi),
        ...this.positionsIn(this.sql.leftIn, eventId, lo, hi),
      ]);
      for (let p = lo; p <= hi && newNoShows.length < MAX_NEW_NO_SHOWS; p++) if (!taken.has(p)) newNoShows.push(p);
      room.noShowsThrough = noShowsThrough;
    }
    return { newNoShows };
  }

  async recordClaim(eventId: string, position: number, late: boolean): Promise<boolean> {
    const counters = await this.counters(eventId);
    const room = this.room(eventId, counters.generation ?? 0);
    if (!late && !room.skipped.has(position)) return false;
    room.lateArrivals++;
    return true;
  }
}
