// Wait-time percentiles for after-event reports, cheaply: each admitted visitor's wait (join → admission) and,
// when the node gave them a turn estimate, that estimate's error (|actual − middle of the estimated range|) are
// counted in a small fixed-bucket histogram per room and minute. A node tallies in memory (one Map update per
// token set issued) and adds its tallies to the store every few seconds (ReportService.flushWaits), so N
// nodes' counts sum in the store. A percentile is read back by interpolating inside its bucket: the bounds are
// about 25 % apart, so a percentile is off by at most a quarter of its value (exact below 6 s).

import type { MinuteWaits } from './ports/store.ts';

/** Upper bounds (seconds, inclusive) of the buckets; one more bucket holds everything above the last. */
export const WAIT_BUCKET_BOUNDS: readonly number[] = [
  0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 75, 90, 120, 150, 180, 240, 300, 360, 480, 600, 750,
  900, 1200, 1500, 1800, 2400, 3000, 3600, 4800, 6000, 7200, 9000, 10_800, 14_400, 18_000, 21_600, 28_800, 36_000,
  43_200, 64_800, 86_400,
];

/** The bucket of a value in seconds: the first whose bound is at or above it. */
export function bucketOf(seconds: number): number {
  const value = Math.max(0, seconds);
  let low = 0;
  let high = WAIT_BUCKET_BOUNDS.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (WAIT_BUCKET_BOUNDS[mid]! >= value) high = mid;
    else low = mid + 1;
  }
  return low;
}

/** Field names of a minute's counts: `w<bucket>` for waits, `e<bucket>` for estimate errors. */
export const waitField = (seconds: number) => `w${bucketOf(seconds)}`;
export const errorField = (seconds: number) => `e${bucketOf(seconds)}`;

/**
 * The `p`-th percentile (0–100) of the counts with the given field prefix, in whole seconds, interpolated
 * linearly inside its bucket; null when there are none.
 */
export function percentile(counts: Readonly<Record<string, number>>, prefix: 'w' | 'e', p: number): number | null {
  const buckets: number[] = [];
  let total = 0;
  for (const [field, count] of Object.entries(counts)) {
    if (field[0] !== prefix || !(count > 0)) continue;
    const bucket = Number(field.slice(1));
    if (!Number.isInteger(bucket) || bucket < 0 || bucket > WAIT_BUCKET_BOUNDS.length) continue;
    buckets[bucket] = (buckets[bucket] ?? 0) + count;
    total += count;
  }
  if (total === 0) return null;
  const rank = (p / 100) * total;
  let below = 0;
  for (let bucket = 0; bucket < buckets.length; bucket++) {
    const count = buckets[bucket] ?? 0;
    if (count === 0) continue;
    if (below + count >= rank) {
      const high = WAIT_BUCKET_BOUNDS[bucket] ?? WAIT_BUCKET_BOUNDS[WAIT_BUCKET_BOUNDS.length - 1]!;
      const low = bucket === 0 ? 0 : WAIT_BUCKET_BOUNDS[bucket - 1]!;
      if (bucket === WAIT_BUCKET_BOUNDS.length) return low; // above the last bound: its lower bound
      const within = Math.max(0, Math.min(1, (rank - below) / count));
      return Math.round(low + (high - low) * within);
    }
    below += count;
  }
  return WAIT_BUCKET_BOUNDS[WAIT_BUCKET_BOUNDS.length - 1]!;
}

/** How many values with the prefix a minute's counts hold. */
export function countOf(counts: Readonly<Record<string, number>>, prefix: 'w' | 'e'): number {
  let total = 0;
  for (const [field, count] of Object.entries(counts)) if (field[0] === prefix && count > 0) total += count;
  return total;
}

/** A node's tallies not yet in the store: room → minute → field → count. */
export class WaitTally {
  private rooms = new Map<string, Map<number, Record<string, number>>>();

  /** One admitted visitor: admitted at `admittedAt` (epoch s) after `waitSec`; `errorSec` when an estimate was judged. */
  add(eventId: string, admittedAt: number, waitSec: number, errorSec: number | undefined): void {
    let minutes = this.rooms.get(eventId);
    if (!minutes) this.rooms.set(eventId, (minutes = new Map()));
    const minute = admittedAt - (admittedAt % 60);
    let counts = minutes.get(minute);
    if (!counts) minutes.set(minute, (counts = {}));
    const w = waitField(waitSec);
    counts[w] = (counts[w] ?? 0) + 1;
    if (errorSec !== undefined) {
      const e = errorField(errorSec);
      counts[e] = (counts[e] ?? 0) + 1;
    }
  }

  /** Everything tallied since the last drain, and forgets it. */
  drain(): { eventId: string; waits: MinuteWaits }[] {
    const out: { eventId: string; waits: MinuteWaits }[] = [];
    for (const [eventId, minutes] of this.rooms) for (const [minute, counts] of minutes) out.push({ eventId, waits: { minute, counts } });
    this.rooms = new Map();
    return out;
  }

  /** Puts back tallies the store could not take (they are added at the next flush). */
  restore(entries: readonly { eventId: string; waits: MinuteWaits }[]): void {
    for (const { eventId, waits } of entries) {
      let minutes = this.rooms.get(eventId);
      if (!minutes) this.rooms.set(eventId, (minutes = new Map()));
      const counts = minutes.get(waits.minute) ?? {};
      for (const [field, count] of Object.entries(waits.counts)) counts[field] = (counts[field] ?? 0) + count;
      minutes.set(waits.minute, counts);
    }
  }

  /** Forgets a room's tallies (reset or removed). */
  forget(eventId: string): void {
    this.rooms.delete(eventId);
  }
}
