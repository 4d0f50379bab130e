// What the load test remembers about each visitor and each admission step: the raw material of the
// verdicts (src/loadtest/verdicts.ts) and the report. Times are milliseconds since the start of the run.

import type { AbandonPlan } from './abandon-plan.ts';

export interface TokenStrings {
  access_token: string;
  refresh_token: string;
  id_token: string;
}

export type VisitorState = 'joining' | 'placing' | 'waiting' | 'claiming' | 'reclaiming' | 'confirming' | 'in session' | 'done' | 'failed' | 'away' | 'left';

export interface Visitor {
  index: number;
  state: VisitorState;
  requestId: string | null;
  /** First queue_number answered by /queue_num. */
  position: number | null;
  /** Later /queue_num answers that differed from `position` (must stay empty). */
  otherPositions: number[] | null;
  joinSentAt: number;
  /** When the join was answered 200 (NaN until then). */
  joinedAt: number;
  placedAt: number;
  /** When a /serving_num answer first showed the counter at or past the position. */
  servedSeenAt: number;
  /** When the successful first claim was sent and answered. */
  claimSentAt: number;
  tokenAt: number;
  tokens: TokenStrings | null;
  /** Send times of claims answered 202 "not being served yet" (FIFO verdict). */
  refusedClaimsSentAt: number[] | null;
  /** 200 answers to concurrent first claims that differed from the first token set. */
  claimMismatches: number;
  reclaimsDone: number;
  /** Re-claims answered 200 with different tokens. */
  reclaimMismatches: number;
  /** Re-claims answered with something other than 200, e.g. "410". */
  reclaimFailures: string[] | null;
  /** When update_session (completed) was sent at the end of the visitor's session (Infinity: never). */
  sessionEndSentAt: number;
  polls: number;
  /** --abandon: when and how this visitor closes the tab (abandon-plan.ts); null = stays. */
  abandon: AbandonPlan | null;
  /** Position − counter at the first poll (what the visitor's way through the line was). */
  firstDistance: number;
  /** When the visitor closed the tab (NaN: never) and when it came back (NaN: not). */
  leftAt: number;
  cameBackAt: number;
  /** Send time of the latest answered request naming the visitor (join, /queue_num): a sign of life the server saw. */
  lastSeenAt: number;
  /** When the latest /queue_num sign of life was sent while waiting (--presence-beat). */
  beatSentAt: number;
  /** Consecutive retries of the current step. */
  attempts: number;
  failure: string | null;
}

export function newVisitor(index: number, now: number): Visitor {
  return {
    index,
    state: 'joining',
    requestId: null,
    position: null,
    otherPositions: null,
    joinSentAt: now,
    joinedAt: NaN,
    placedAt: NaN,
    servedSeenAt: NaN,
    claimSentAt: NaN,
    tokenAt: NaN,
    tokens: null,
    refusedClaimsSentAt: null,
    claimMismatches: 0,
    reclaimsDone: 0,
    reclaimMismatches: 0,
    reclaimFailures: null,
    sessionEndSentAt: Infinity,
    polls: 0,
    abandon: null,
    firstDistance: NaN,
    leftAt: NaN,
    cameBackAt: NaN,
    lastSeenAt: NaN,
    beatSentAt: NaN,
    attempts: 0,
    failure: null,
  };
}

export function sameTokens(a: TokenStrings, b: TokenStrings): boolean {
  return a.access_token === b.access_token && a.refresh_token === b.refresh_token && a.id_token === b.id_token;
}

/** One increment_serving_counter call of the admission driver. */
export interface IncrementRecord {
  sentAt: number;
  /** NaN when no answer came (network error). */
  receivedAt: number;
  by: number;
  status: number;
  /** serving_num answered by the server; null when the call failed (it may or may not have been applied). */
  servingAfter: number | null;
}
