// The MaxSize inlet (spec/integrations.md §3): the site reports {"exited": n, "completed": [ids],
// "abandoned": [ids]}; the listed sessions are closed through update_session, then the serving counter
// moves by min(capacity, exited + sessions closed now) with capacity = max_size − active_tokens, never
// negative. VWR could move the counter backwards when capacity was negative, and summed "exited" in a
// module-level counter that survived across Lambda invocations; here every report stands alone.

import { isRequestId } from '../domain/ids.ts';
import type { PrivateApi } from './private-api.ts';

/** Bounds of one report (the HTTP endpoint's schema says the same). */
export const MAX_REPORT_IDS = 1000;
export const MAX_EXITED = 1_000_000;

export interface MaxSizeInput {
  maxSize: number;
  /** Active tokens after this report's sessions were closed. */
  activeTokens: number;
  /** Visitors the site saw leave without naming their request IDs. */
  exited: number;
  /** Sessions this report closed (IDs already closed or unknown do not count). */
  closedNow: number;
}

export interface MaxSizeDecision {
  /** max_size − active_tokens; negative when more sessions are active than the site wants. */
  capacity: number;
  /** How far the serving counter moves: 0 ≤ moveBy ≤ max(0, capacity). */
  moveBy: number;
}

const isCount = (n: number) => Number.isSafeInteger(n) && n >= 0;

export function decideMaxSize(input: MaxSizeInput): MaxSizeDecision {
  for (const key of ['maxSize', 'activeTokens', 'exited', 'closedNow'] as const) {
    if (!isCount(input[key])) throw new RangeError(`${key} must be a whole number ≥ 0 (got ${input[key]})`);
  }
  const capacity = input.maxSize - input.activeTokens;
  return { capacity, moveBy: Math.max(0, Math.min(capacity, input.exited + input.closedNow)) };
}

export interface MaxSizeReport {
  exited: number;
  completed: readonly string[];
  abandoned: readonly string[];
}

/** What is wrong with a report, or null. Checked in full before anything changes. */
export function maxSizeReportProblem(report: MaxSizeReport): string | null {
  if (!Number.isSafeInteger(report.exited) || report.exited < 0 || report.exited > MAX_EXITED) {
    return `exited must be a whole number from 0 to ${MAX_EXITED}`;
  }
  for (const [name, ids] of [['completed', report.completed], ['abandoned', report.abandoned]] as const) {
    if (ids.length > MAX_REPORT_IDS) return `at most ${MAX_REPORT_IDS} ${name} request IDs per report`;
    const bad = ids.findIndex((id) => !isRequestId(id));
    if (bad !== -1) return `${name}: "${String(ids[bad]).slice(0, 64)}" is not a request ID`;
  }
  return null;
}

export interface MaxSizeResult {
  serving_num: number;
  moved_by: number;
  /** Sessions this report closed. */
  closed: number;
  capacity: number;
}

/** Applies one report through the private API. The caller has checked it with maxSizeReportProblem. */
export async function applyMaxSizeReport(
  api: PrivateApi,
  eventId: string,
  maxSize: number,
  report: MaxSizeReport,
): Promise<MaxSizeResult> {
  let closed = 0;
  for (const id of report.completed) if (await api.updateSession(eventId, id, 1)) closed++;
  for (const id of report.abandoned) if (await api.updateSession(eventId, id, -1)) closed++;
  // Counted after closing, so the sessions just closed no longer take up room.
  const activeTokens = await api.numActiveTokens(eventId);
  const { capacity, moveBy } = decideMaxSize({ maxSize, activeTokens, exited: report.exited, closedNow: closed });
  // An increment of 0 changes nothing and answers the current counter.
  const servingNum = await api.incrementServingCounter(eventId, moveBy);
  return { serving_num: servingNum, moved_by: moveBy, closed, capacity };
}

export function describeMaxSizeResult(eventId: string, maxSize: number, r: MaxSizeResult): string {
  const active = maxSize - r.capacity;
  const move = r.moved_by > 0 ? `serving counter +${r.moved_by} -> ${r.serving_num}` : `serving counter unchanged at ${r.serving_num}`;
  return `${eventId} max-size: closed ${r.closed} session(s), ${active} active of ${maxSize} (capacity ${r.capacity}), ${move}`;
}
