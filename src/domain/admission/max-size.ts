// The MaxSize inlet's rule (spec/integrations.md §3): the site reports {"exited": n, "completed": [ids],
// "abandoned": [ids]}; the listed sessions are closed as update_session closes them, then the serving counter
// moves by min(capacity, exited + sessions closed now) with capacity = max_size − active_tokens, never
// negative. VWR could move the counter backwards when capacity was negative, and summed "exited" in a
// module-level counter that survived across Lambda invocations; here every report stands alone.
//
// One report, in the spec's order (maxSizeAdmission):
//   1. maxSizeReportProblem — the whole report is checked before anything changes (the caller does this, so
//                             that each transport answers a bad report in its own way);
//   2. close the completed, then the abandoned sessions, counting those this report closed;
//   3. count the active tokens — after closing, so the sessions just closed no longer take up room;
//   4. decideMaxSize        — how far the counter moves;
//   5. the move             — always made, an increment of 0 reads the counter unchanged.
// No I/O here: the closes, the count and the move are handed in (MaxSizeSteps), by the service inside the
// server (Admission) or over the private API by the CLI and the Lambda handler (src/inlet/max-size.ts).

import type { SessionStatus } from '../claims.ts';
import { isRequestId } from '../ids.ts';
import type { ServingMove } from '../ports/store.ts';

/** Bounds of one report (the HTTP endpoint's schema says the same). */
export const MAX_REPORT_IDS = 1000;
export const MAX_EXITED = 1_000_000;

export interface MaxSizeReport {
  exited: number;
  completed: readonly string[];
  abandoned: readonly string[];
}

/** Step 1: what is wrong with a report, or null. */
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

/** Step 4. */
export function decideMaxSize(input: MaxSizeInput): MaxSizeDecision {
  for (const key of ['maxSize', 'activeTokens', 'exited', 'closedNow'] as const) {
    if (!isCount(input[key])) throw new RangeError(`${key} must be a whole number ≥ 0 (got ${input[key]})`);
  }
  const capacity = input.maxSize - input.activeTokens;
  return { capacity, moveBy: Math.max(0, Math.min(capacity, input.exited + input.closedNow)) };
}

/** What a report did; also the answer of POST /private/inlet/max_size. */
export interface MaxSizeResult {
  serving_num: number;
  /** How far the counter moved (inside the server: never past the queue, nothing while the room holds admission). */
  moved_by: number;
  /** Sessions this report closed. */
  closed: number;
  capacity: number;
}

/** The room operations one report needs, on the room the report is about. */
export interface MaxSizeSteps {
  /** update_session: true when this call closed the session; false when it was closed already or has no token. */
  closeSession(requestId: string, status: Exclude<SessionStatus, 0>): Promise<boolean>;
  /** num_active_tokens. */
  activeTokens(): Promise<number>;
  /** Adds `by` to the serving counter and answers where it was and where it is. */
  move(by: number): Promise<ServingMove>;
}

/** One report, steps 2–5. The caller has checked it with maxSizeReportProblem (step 1). */
export async function maxSizeAdmission(steps: MaxSizeSteps, maxSize: number, report: MaxSizeReport): Promise<MaxSizeResult> {
  let closed = 0;
  for (const id of report.completed) if (await steps.closeSession(id, 1)) closed++;
  for (const id of report.abandoned) if (await steps.closeSession(id, -1)) closed++;
  const activeTokens = await steps.activeTokens();
  const { capacity, moveBy } = decideMaxSize({ maxSize, activeTokens, exited: report.exited, closedNow: closed });
  const moved = await steps.move(moveBy);
  return { serving_num: moved.serving, moved_by: moved.serving - moved.previousServing, closed, capacity };
}
