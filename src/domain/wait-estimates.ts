// The accuracy of the wait estimate, on record (issue 16 item 6). When a visitor's place is first looked up
// (GET /queue_num), the server estimates the wait from the admission pace it has seen lately and the people
// ahead, answers it (`wait_estimate_s`, which the page shows until it has measured the pace itself) and keeps
// it; when the visitor claims a token, the actual wait (join → the counter reaching the place) is compared with
// it. The median absolute error of the last ERRORS_KEPT admitted visitors is in the room's figures and /metrics.
//
// Per node and in memory: each node judges the estimates it gave. Bounded: at most ESTIMATES_KEPT open
// estimates per room (the oldest forgotten first) and ERRORS_KEPT errors.

/** Serving-counter observations kept per room, and how far back they count for the pace. */
const PACE_WINDOW_MS = 5 * 60_000;
const MIN_PACE_SPAN_MS = 20_000;
export const ESTIMATES_KEPT = 100_000;
export const ERRORS_KEPT = 1_000;

export interface WaitEstimate {
  lowSec: number;
  highSec: number;
}

export interface EstimateAccuracy {
  /** Admitted visitors whose estimate and actual wait were compared (the last ERRORS_KEPT at most). */
  samples: number;
  /** Median of |actual wait − middle of the estimated range|, seconds; null before the first sample. */
  median_abs_error_s: number | null;
}

interface Room {
  /** (time ms, serving counter) each time the counter was seen to change, oldest first. */
  seen: { atMs: number; serving: number }[];
  open: Map<string, { entryTimeMs: number; estimate: WaitEstimate }>;
  errors: number[];
}

export class WaitEstimates {
  private readonly rooms = new Map<string, Room>();

  private room(eventId: string): Room {
    let room = this.rooms.get(eventId);
    if (!room) {
      room = { seen: [], open: new Map(), errors: [] };
      this.rooms.set(eventId, room);
    }
    return room;
  }

  /** The serving counter as read now (any read: polls, the stream, a lookup). */
  observe(eventId: string, serving: number, nowMs: number): void {
    const seen = this.room(eventId).seen;
    const last = seen[seen.length - 1];
    if (last && serving < last.serving) seen.length = 0; // a reset: the pace starts again
    if (!last || serving !== last.serving || seen.length === 1) seen.push({ atMs: nowMs, serving });
    while (seen.length > 2 && seen[0]!.atMs < nowMs - PACE_WINDOW_MS) seen.shift();
    if (seen.length > 1_000) seen.splice(0, seen.length - 1_000);
  }

  /** Visitors let in per second lately, or undefined when not measured over long enough. */
  pace(eventId: string, nowMs: number): number | undefined {
    const seen = this.rooms.get(eventId)?.seen ?? [];
    const first = seen[0];
    const last = seen[seen.length - 1];
    if (!first || !last || last.serving <= first.serving) return undefined;
    const span = Math.max(nowMs, last.atMs) - first.atMs;
    return span < MIN_PACE_SPAN_MS ? undefined : (last.serving - first.serving) / (span / 1000);
  }

  /** The estimate for a place, or undefined while the pace is unknown. */
  estimate(eventId: string, position: number, serving: number, nowMs: number): WaitEstimate | undefined {
    const pace = this.pace(eventId, nowMs);
    if (pace === undefined) return undefined;
    const seconds = Math.max(0, position - serving) / pace;
    return { lowSec: Math.floor(seconds * 0.8), highSec: Math.ceil(seconds * 1.25) };
  }

  /** The estimate given to a visitor the first time (later lookups keep the first one). */
  given(eventId: string, requestId: string, entryTimeMs: number, estimate: WaitEstimate): void {
    const open = this.room(eventId).open;
    if (open.has(requestId)) return;
    if (open.size >= ESTIMATES_KEPT) open.delete(open.keys().next().value!);
    open.set(requestId, { entryTimeMs, estimate });
  }

  /** The estimate on record for a visitor not admitted yet. */
  of(eventId: string, requestId: string): WaitEstimate | undefined {
    return this.rooms.get(eventId)?.open.get(requestId)?.estimate;
  }

  /** The visitor was let in at `servedAtMs`: their estimate is judged. Answers its error (s), if one was given. */
  admitted(eventId: string, requestId: string, servedAtMs: number): number | undefined {
    const room = this.rooms.get(eventId);
    const shown = room?.open.get(requestId);
    if (!room || !shown) return undefined;
    room.open.delete(requestId);
    const actual = Math.max(0, servedAtMs - shown.entryTimeMs) / 1000;
    const error = Math.abs(actual - (shown.estimate.lowSec + shown.estimate.highSec) / 2);
    room.errors.push(error);
    if (room.errors.length > ERRORS_KEPT) room.errors.shift();
    return error;
  }

  accuracy(eventId: string): EstimateAccuracy {
    const errors = [...(this.rooms.get(eventId)?.errors ?? [])].sort((a, b) => a - b);
    if (errors.length === 0) return { samples: 0, median_abs_error_s: null };
    const mid = Math.floor(errors.length / 2);
    const median = errors.length % 2 === 1 ? errors[mid]! : (errors[mid - 1]! + errors[mid]!) / 2;
    return { samples: errors.length, median_abs_error_s: Math.round(median * 10) / 10 };
  }

  /** Forgets a room (reset or removed): its estimates were for places that no longer exist. */
  forget(eventId: string): void {
    const room = this.rooms.get(eventId);
    if (!room) return;
    room.open.clear();
    room.seen.length = 0;
  }
}
