// The verdicts of a run against a room that runs its sale by itself (docs/rooms.md): automatic admission within
// its rate and its capacity, nobody admitted while the room was paused, and the draw of a pre-queue. Like the
// core verdicts (verdicts.ts) they are functions over what the run recorded, computed after it, and they only
// fail on what the recordings prove: the serving counter's bounds come from every /serving_num answer
// (counter-log.ts), occupancy counts a visitor only while it certainly held a place.

import { checkPublishedDraw, drawEntry, type PublishedDraw } from '../domain/draw.ts';
import { GRID_MS, type CounterBounds } from './counter-log.ts';
import type { Visitor } from './records.ts';
import { MAX_EXAMPLES, verdict, type Verdict } from './verdicts.ts';

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/**
 * The server counts admissions per whole second of its clock and allows n in the 60 seconds now−59 … now
 * (src/domain/admission/automatic.ts). Two ticks less than 59 s apart always fall in one such window, so that is
 * the span over which "n in any minute" can be checked without a false alarm at a second's edge.
 */
export const RATE_CHECK_SPAN_MS = 59_000;

/**
 * Admissions never exceeded `new_users_per_minute`: for every t, the counter's certain rise between t and
 * t + 59 s (lowest possible value at t, highest certain value at the end) is at most n.
 */
export function admissionRate(bounds: CounterBounds, endsAt: number, newUsersPerMinute: number): Verdict {
  const examples: string[] = [];
  let failures = 0;
  let most = 0;
  let mostAt = 0;
  for (let t = 0; t + GRID_MS <= endsAt; t += GRID_MS) {
    const end = Math.min(endsAt, t + RATE_CHECK_SPAN_MS - GRID_MS);
    const rise = bounds.lowerAt(end) - bounds.upperAt(t);
    if (rise > most) {
      most = rise;
      mostAt = t;
    }
    if (rise > newUsersPerMinute) {
      failures++;
      if (examples.length < MAX_EXAMPLES && (examples.length === 0 || failures % 500 === 1)) {
        examples.push(`between ${seconds(t)} and ${seconds(end)} the counter rose by at least ${rise} (limit ${newUsersPerMinute})`);
      }
    }
  }
  return verdict(
    'admission_rate',
    `Automatic admission let in at most new_users_per_minute (${newUsersPerMinute}) in any minute.`,
    failures,
    examples,
    `The most admissions seen in any ${RATE_CHECK_SPAN_MS / 1000} s: ${most} (from ${seconds(mostAt)}), limit ${newUsersPerMinute}.`,
    `In ${failures} windows of ${RATE_CHECK_SPAN_MS / 1000} s (10 ms apart) more than ${newUsersPerMinute} were let in.`,
  );
}

export interface CapacityInput {
  visitors: readonly Visitor[];
  bounds: CounterBounds;
  totalActiveUsers: number;
  /** The room's claim window (queue_position_expiry_period) in ms, or null when positions do not expire. */
  claimWindowMs: number | null;
  /** Wall-clock ms (Date.now) at the run's time 0, to place the tokens' exp on the run's clock. */
  wallClockAtZero: number;
  /** When the run ended (ms since its start). */
  endedAt: number;
  /** The room's arrival_window and presence_timeout in ms during the run (issue 34); null or 0 = off. */
  arrivalWindowMs?: number | null;
  presenceTimeoutMs?: number | null;
}

/** The token's exp on the run's clock, or Infinity when it cannot be read. */
function tokenEnd(v: Visitor, wallClockAtZero: number): number {
  const payload = v.tokens?.access_token.split('.')[1];
  if (!payload) return Infinity;
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp * 1000 - wallClockAtZero : Infinity;
  } catch {
    return Infinity;
  }
}

/** First grid time at which `bound(t) ≥ position`, or Infinity (bound is non-decreasing in t). */
function firstTimeReaching(bound: (t: number) => number, position: number, endsAt: number): number {
  let lo = 0;
  let hi = Math.ceil(endsAt / GRID_MS);
  if (bound(hi * GRID_MS) < position) return Infinity;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (bound(mid * GRID_MS) >= position) hi = mid;
    else lo = mid + 1;
  }
  return lo * GRID_MS;
}

/**
 * Visitors in at once never exceeded `total_active_users`. A visitor certainly holds a place from the moment
 * the counter had certainly reached its position until the first of: its update_session was sent, its token
 * set expired, its claim window could have run out before it claimed, the end of the run. Visitors whose
 * journey failed are not counted (their place may have ended any time).
 *
 * With an arrival window or presence (docs/rooms.md "Presence and the arrival window"), a visitor who has not
 * claimed also stops counting once its arrival window could have passed or once it could have been absent (its
 * last sign of life + presence_timeout). A visitor who may have claimed as a late arrival (it had left and came
 * back, or claimed after its arrival window could have passed) counts from its token set on, and each such claim
 * raises the limit by one: the room may be over total_active_users by at most the late arrivals.
 */
export function admissionCapacity(input: CapacityInput): Verdict {
  const { bounds, endedAt } = input;
  const lower = (t: number) => bounds.lowerAt(t);
  const upper = (t: number) => bounds.upperAt(t);
  const arrivalWindowMs = input.arrivalWindowMs || null;
  const presenceTimeoutMs = input.presenceTimeoutMs || null;
  // [time, kind]: -1 a place ends, 0 a late arrival raises the limit, 1 a place starts (the order at equal times).
  const changes: Array<[number, -1 | 0 | 1]> = [];
  for (const v of input.visitors) {
    if (v.position === null || v.state === 'failed') continue;
    let from = firstTimeReaching(lower, v.position, endedAt);
    if (from === Infinity) continue;
    const reachedAtEarliest = firstTimeReaching(upper, v.position, endedAt);
    let until = Math.min(endedAt, v.sessionEndSentAt, tokenEnd(v, input.wallClockAtZero));
    if (v.tokens === null) {
      // Not claimed: the place ends with the claim window, which began when the counter reached the position.
      if (input.claimWindowMs !== null) until = Math.min(until, reachedAtEarliest + input.claimWindowMs);
      if (arrivalWindowMs !== null) until = Math.min(until, reachedAtEarliest + arrivalWindowMs);
      if (presenceTimeoutMs !== null && !Number.isNaN(v.lastSeenAt)) until = Math.min(until, v.lastSeenAt + presenceTimeoutMs);
    } else {
      const wasAway = !Number.isNaN(v.leftAt);
      const claimedLate = arrivalWindowMs !== null && v.tokenAt - reachedAtEarliest > arrivalWindowMs;
      if ((wasAway && (presenceTimeoutMs !== null || arrivalWindowMs !== null)) || claimedLate) {
        from = Math.max(from, v.tokenAt);
        changes.push([v.tokenAt, 0]);
      }
    }
    if (until > from) changes.push([from, 1], [until, -1]);
  }
  // At equal times an end comes before a start: the two places were not held at once.
  changes.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let inside = 0;
  let late = 0;
  let most = 0;
  let mostAt = 0;
  let failures = 0;
  const examples: string[] = [];
  for (const [t, change] of changes) {
    if (change === 0) {
      late++;
      continue;
    }
    inside += change;
    if (inside > most) {
      most = inside;
      mostAt = t;
    }
    const limit = input.totalActiveUsers + late;
    if (change > 0 && inside > limit) {
      failures++;
      if (examples.length < MAX_EXAMPLES) {
        examples.push(`at ${seconds(t)} at least ${inside} visitors were in (limit ${input.totalActiveUsers}${late > 0 ? ` + ${late} late arrivals` : ''})`);
      }
    }
  }
  return verdict(
    'admission_capacity',
    `Automatic admission kept at most total_active_users (${input.totalActiveUsers}) visitors in at once.`,
    failures,
    examples,
    `At most ${most} visitors were certainly in at once (at ${seconds(mostAt)}), limit ${input.totalActiveUsers}` +
      `${late > 0 ? `, plus up to ${late} possible late arrivals` : ''}.`,
    `${failures} admissions took the visitors in above ${input.totalActiveUsers}.`,
  );
}

export interface PauseRecord {
  /** When the pause was answered 200. */
  ackedAt: number;
  /** When the resume was sent (or the run's end, if it ended paused). */
  resumeSentAt: number;
}

/**
 * Nobody was admitted while the room was paused: the counter did not move between the pause taking effect on
 * every node (its answer + `propagationMs`, the rooms' documented bound) and the resume.
 */
export function pausedHolds(bounds: CounterBounds, pause: PauseRecord, propagationMs: number): Verdict {
  const from = pause.ackedAt + propagationMs;
  const rule = 'Nobody was admitted while the room was paused (from the pause reaching every node to the resume).';
  if (from >= pause.resumeSentAt) {
    return verdict('paused_holds', rule, 1, [], '', `The pause lasted less than the ${seconds(propagationMs)} it takes to reach every node: nothing checked.`);
  }
  const before = bounds.upperAt(from);
  const after = bounds.lowerAt(pause.resumeSentAt);
  const moved = after > before ? after - before : 0;
  return verdict(
    'paused_holds',
    rule,
    moved,
    moved > 0 ? [`the counter was at most ${before} at ${seconds(from)} and at least ${after} at ${seconds(pause.resumeSentAt)}`] : [],
    `The counter stayed at ${before === after ? before : `${after}–${before}`} from ${seconds(from)} to ${seconds(pause.resumeSentAt)} (paused at ${seconds(pause.ackedAt)}).`,
    `${moved} positions were admitted while the room was paused.`,
  );
}

/** GET /draw after the draw, as published. */
export interface DrawAnswer extends PublishedDraw {
  first_position: number;
}

/**
 * The draw of the pre-queue: what /draw published checks (seed ↔ commitment, order recomputed from the seed),
 * every visitor whose join was answered before event_start_time is an entry, every entry is a visitor of the
 * run holding exactly the position the published draw gives it, and everyone not drawn is behind the drawn
 * places and placed first come, first served (a join answered before another was sent has the lower position).
 */
export async function drawOrder(visitors: readonly Visitor[], startsAt: number, draw: DrawAnswer | string): Promise<Verdict> {
  const rule = 'The pre-queue was drawn as published (a permutation reproducible from the seed), later arrivals FIFO behind it.';
  if (typeof draw === 'string') return verdict('draw_order', rule, 1, [draw], '', `The draw could not be read: ${draw}`);
  const check = await checkPublishedDraw(draw);
  if (!check.ok) return verdict('draw_order', rule, 1, [check.problem], '', `The published draw does not verify: ${check.problem}`);
  const examples: string[] = [];
  let failures = 0;
  const fail = (example: string) => {
    failures++;
    if (examples.length < MAX_EXAMPLES) examples.push(example);
  };
  const who = (v: Visitor) => `visitor #${v.index + 1}`;
  const byEntry = new Map<string, Visitor>();
  for (const v of visitors) if (v.requestId !== null) byEntry.set(drawEntry(v.requestId), v);
  const drawn = new Set<Visitor>();
  const lastDrawn = draw.first_position + draw.entries.length - 1;
  draw.entries.forEach((entry, i) => {
    const v = byEntry.get(entry);
    if (!v) return fail(`entry ${entry.slice(0, 12)}… is no visitor of this run`);
    drawn.add(v);
    const expected = draw.first_position + check.places[i]! - 1;
    if (v.position !== null && v.position !== expected) fail(`${who(v)} holds position ${v.position}, the draw gives ${expected}`);
  });
  let before = 0;
  for (const v of visitors) {
    if (v.requestId === null) continue;
    if (v.joinedAt < startsAt) {
      before++;
      if (!drawn.has(v)) fail(`${who(v)} joined before the start (${seconds(v.joinedAt)}) but is not in the draw`);
    } else if (!drawn.has(v) && v.position !== null && v.position <= lastDrawn) {
      fail(`${who(v)} was not drawn but holds position ${v.position}, among the drawn places ${draw.first_position}–${lastDrawn}`);
    }
  }
  // FIFO behind the draw: sweep the visitors not drawn by the time their join was sent, against the highest
  // position of those whose join had been answered by then.
  const later = visitors.filter((v) => !drawn.has(v) && v.position !== null && !Number.isNaN(v.joinedAt));
  const bySent = [...later].sort((a, b) => a.joinSentAt - b.joinSentAt);
  const byAnswered = [...later].sort((a, b) => a.joinedAt - b.joinedAt);
  let j = 0;
  let highest: Visitor | null = null;
  for (const v of bySent) {
    while (j < byAnswered.length && byAnswered[j]!.joinedAt < v.joinSentAt) {
      const u = byAnswered[j++]!;
      if (highest === null || u.position! > highest.position!) highest = u;
    }
    if (highest !== null && highest.position! > v.position!) {
      fail(`${who(v)} joined after ${who(highest)} was answered but holds an earlier position (${v.position} < ${highest.position})`);
    }
  }
  return verdict(
    'draw_order',
    rule,
    failures,
    examples,
    `${draw.entries.length} entries drawn (${before} joined before the start) into positions ${draw.first_position}–${lastDrawn}, ` +
      `each as the seed orders it; ${later.length} later arrivals behind them, first come, first served.`,
    `${failures} visitors were not placed as the published draw and FIFO say.`,
  );
}
