// What visitors who close the tab cost the others (--abandon; docs/loadtest.md "Visitors who leave"), from the
// visitors' records after the run. Pure: unit-tested in test/loadtest/no-show-figures.test.ts.
//
//   stayers          visitors who never closed the tab
//   stayer wait      a stayer's join answered → its token set (p50, p90)
//   capacity used    over the time at least one stayer is waiting in line (placed, and no /serving_num answer
//                    has yet shown the counter at its position), the mean of min(in session, T) / T, where
//                    "in session" counts visitors holding a token whose session has not ended (their first
//                    claim answered, their update_session not yet sent) and T is the room's total_active_users.
//                    Visitors let in but not yet claimed hold a place on the server but are not in session: the
//                    half poll between admission and claim is part of what is not used.
//   overshoot        the most visitors in session at once minus T (never below 0), beside the visitors who came
//                    back and claimed (the client's count of late arrivals; the server's own is in
//                    server_late_arrivals, from the room's figures).

import { percentilesOf, round } from './stats.ts';
import type { Visitor } from './records.ts';

export interface NoShowFigures {
  /** Visitors who closed the tab: in all, while waiting in line, after the counter reached them (before claiming). */
  abandoned: number;
  left_waiting: number;
  left_admitted: number;
  /** Of those, visitors who came back, and of these, those who claimed a token set. */
  came_back: number;
  came_back_claimed: number;
  stayers: number;
  stayers_served: number;
  /** Join answered → token set of the stayers served (seconds). */
  stayer_wait_s: { count: number; p50: number; p90: number; max: number };
  /** Automatic rooms: the share of total_active_users in session while stayers waited (0–1); null otherwise. */
  capacity_used: number | null;
  /** Seconds during which at least one stayer was waiting in line (what capacity_used averages over). */
  waited_over_s: number;
  /** Most visitors in session at once, and how far that was over total_active_users (0 without a limit). */
  max_in_session: number;
  overshoot: number;
  /** The room's own count of late arrivals after the run (GET /private/rooms/{id}/figures); null when not read. */
  server_late_arrivals: number | null;
}

/** One point a second, for the report's charts. */
export interface NoShowSample {
  t: number;
  inSession: number;
  stayersWaiting: number;
}

export interface NoShowInput {
  visitors: readonly Visitor[];
  /** The room's total_active_users; null when a driver admits (no capacity to use). */
  totalActiveUsers: number | null;
  /** The end of the run (ms): sessions and waits still open are closed there. */
  endedAt: number;
  serverLateArrivals: number | null;
}

export interface NoShowResult {
  figures: NoShowFigures;
  series: NoShowSample[];
  /** The served stayers' waits (join answered → token set), in seconds, ascending. */
  stayerWaits: number[];
}

function p90(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)]!;
}

/** [time, Δ in session, Δ stayers waiting] */
type Change = [number, number, number];

export function noShowFigures(input: NoShowInput): NoShowResult {
  const { visitors, endedAt } = input;
  const abandoned = visitors.filter((v) => !Number.isNaN(v.leftAt));
  const cameBack = abandoned.filter((v) => !Number.isNaN(v.cameBackAt));
  const stayers = visitors.filter((v) => v.abandon === null && v.requestId !== null);
  const served = stayers.filter((v) => v.tokens !== null);
  const waits = served.map((v) => (v.tokenAt - v.joinedAt) / 1000);
  const w = percentilesOf(waits);

  const changes: Change[] = [];
  for (const v of visitors) {
    if (v.tokens === null) continue;
    const until = Math.min(endedAt, v.sessionEndSentAt);
    if (until > v.tokenAt) changes.push([v.tokenAt, 1, 0], [until, -1, 0]);
  }
  for (const v of stayers) {
    if (Number.isNaN(v.placedAt) || v.state === 'failed') continue;
    const until = Number.isNaN(v.servedSeenAt) ? endedAt : Math.min(endedAt, v.servedSeenAt);
    if (until > v.placedAt) changes.push([v.placedAt, 0, 1], [until, 0, -1]);
  }
  // At equal times an end comes before a start.
  changes.sort((a, b) => a[0] - b[0] || a[1] + a[2] - (b[1] + b[2]));

  const T = input.totalActiveUsers;
  const series: NoShowSample[] = [];
  let inSession = 0;
  let waiting = 0;
  let maxIn = 0;
  let waitedMs = 0;
  let usedMs = 0;
  let previous = 0;
  let nextSample = 0;
  for (const [t, dIn, dWait] of changes) {
    // The state between `previous` and `t` is constant: integrate it, and sample it on the whole seconds before t.
    while (nextSample < t && nextSample <= endedAt) {
      series.push({ t: nextSample / 1000, inSession, stayersWaiting: waiting });
      nextSample += 1000;
    }
    if (waiting > 0 && t > previous) {
      waitedMs += t - previous;
      if (T !== null && T > 0) usedMs += (t - previous) * Math.min(inSession, T);
    }
    previous = t;
    inSession += dIn;
    waiting += dWait;
    maxIn = Math.max(maxIn, inSession);
  }
  while (nextSample <= endedAt) {
    series.push({ t: nextSample / 1000, inSession, stayersWaiting: waiting });
    nextSample += 1000;
  }

  return {
    figures: {
      abandoned: abandoned.length,
      left_waiting: abandoned.filter((v) => !(v.servedSeenAt <= v.leftAt)).length,
      left_admitted: abandoned.filter((v) => v.servedSeenAt <= v.leftAt).length,
      came_back: cameBack.length,
      came_back_claimed: cameBack.filter((v) => v.tokens !== null).length,
      stayers: stayers.length,
      stayers_served: served.length,
      stayer_wait_s: { count: w.count, p50: w.p50, p90: round(p90(waits), 3), max: w.max },
      capacity_used: T !== null && T > 0 && waitedMs > 0 ? round(usedMs / (T * waitedMs), 4) : null,
      waited_over_s: round(waitedMs / 1000, 1),
      max_in_session: maxIn,
      overshoot: T === null ? 0 : Math.max(0, maxIn - T),
      server_late_arrivals: input.serverLateArrivals,
    },
    series,
    stayerWaits: [...waits].sort((a, b) => a - b),
  };
}
