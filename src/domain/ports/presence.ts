// The presence port (issue 34): which waiting visitors are still there, which admitted ones never came, and
// the few counts automatic admission and the figures need about them. Every store has one (Store.presence):
//   SQLite     in the process (src/store/sqlite/presence.ts): the store's process is the only node;
//   Redis      a bitmap per presence window, merged with SETBIT in one script per room per flush and combined
//              with BITOP OR when read (src/store/redis/presence.ts, lua/presence*.lua); every key carries the
//              room's hash tag, so a Cluster keeps the room in one slot;
//   composite  Redis's (the AWS store forwards it).
// Marks never sit on the polling hot path: a node collects the positions it saw in memory (PresenceTracker,
// src/domain/presence.ts) and merges them into the store every few seconds with markSeen.

/** What the admission tick and the figures ask about a room's presence, at one instant. */
export interface PresenceQuery {
  /** Epoch seconds. */
  now: number;
  /** The room's presence timeout in seconds; 0 = presence off (every waiting visitor counts as present). */
  timeout: number;
  /** The presence window's length in seconds (presenceWindowSeconds). */
  windowSeconds: number;
  /**
   * Admitted visitors the counter first reached before this (epoch seconds) no longer count against the
   * room's capacity (their arrival window passed); null = arrival window off.
   */
  arrivalCutoff: number | null;
  /** The first second of the rate window: positions skipped from then on are reported in skippedInWindow. */
  rateWindowStart: number;
  /** How many of the next present waiting positions to list (nextPresent); 0 lists none. */
  limit: number;
}

export interface PresenceView {
  serving: number;
  queue: number;
  /** Waiting (after the counter, not left) and seen within the timeout, or never beaten. */
  presentWaiting: number;
  /** Waiting, beaten once, and not seen within the timeout. */
  absentWaiting: number;
  /**
   * Admitted, not claimed, not expired, not left, within their arrival window and present: the visitors who
   * count against total_active_users besides the active sessions.
   */
  countedAwaiting: number;
  /** Admitted, not claimed, not expired, not left, whose arrival window passed: no-shows (they may still claim). */
  noShows: number;
  /** The highest position whose arrival window passed (the no-shows lie at or below it); 0 if none. */
  arrivalBoundary: number;
  /** The first `limit` present waiting positions after the counter, ascending (left positions excluded). */
  nextPresent: number[];
  /** Positions passed while absent (skipped) since rateWindowStart, and in this second. */
  skippedInWindow: number;
  skippedThisSecond: number;
  /** Visitors who claimed after they had stopped counting (skipped while absent, or past their arrival window). */
  lateArrivals: number;
}

/** What recordTick did. */
export interface TickRecord {
  /** Positions that became no-shows with this tick (unclaimed, not left, not expired), ascending, at most 1000. */
  newNoShows: number[];
}

export interface PresenceStore {
  /**
   * Marks are immediate and cost no I/O (the SQLite store's process holds them): the tracker writes through
   * instead of batching.
   */
  readonly inProcess: boolean;
  /**
   * Merges the positions whose beats a node saw during one presence window (`now`'s) into the room's presence:
   * they have beaten (a position that never beat is never absent) and were seen at `now`. One atomic unit.
   */
  markSeen(eventId: string, positions: readonly number[], now: number, windowSeconds: number): Promise<void>;
  /** See PresenceView. Read at one instant. */
  presenceView(eventId: string, query: PresenceQuery): Promise<PresenceView>;
  /**
   * After a tick's move: records the positions passed while absent (`skipped`, inclusive ranges, ascending) at
   * `now` — they count in skippedInWindow, and claimSkipped tells them from visitors passed while present — and
   * moves the no-show boundary to `noShowsThrough`, answering the positions that crossed it unclaimed (once
   * across nodes: the boundary is kept in the store). One atomic unit.
   */
  recordTick(eventId: string, skipped: readonly (readonly [number, number])[], now: number, noShowsThrough: number): Promise<TickRecord>;
  /**
   * A first claim of `position`: counts it as a late arrival when `late` (past its arrival window) or when the
   * position was passed while absent; answers whether it counted it. One atomic unit.
   */
  recordClaim(eventId: string, position: number, late: boolean): Promise<boolean>;
}
