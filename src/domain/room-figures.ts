// A room's figures as the control panel shows them (GET /private/rooms/{event_id}/figures, docs/rooms.md
// "Control panel"): each one a count of people that says what it counts, never negative. Pure: the counters
// and the admission snapshot are read by the caller.
//
//   in_line           joined, the counter has not reached them, still there (not given up)
//   awaiting_claim    let in (at or below the counter), not arrived yet: no token, not expired, not given up
//   active_sessions   token set issued, session open, not expired
//   room_in_queue     how far the counter can move before it passes the last position handed out (queue − serving)
//   let_in_ahead      how far the counter is past the last position: the next arrivals walk straight in
//   prequeue_num      in the pre-queue of a room that draws: listed, no position yet (./prequeue-figures.ts);
//                     not part of waiting_num, which stays VWR's
//
// in_line comes from the counters without a scan: the positions at or below min(serving, queue) are the token
// holders, the expired, the given up and the awaiting; what remains of waiting_num (queue − tokens − expired −
// left) after the awaiting is the line beyond the counter.

import type { AdmissionSnapshot, Counters } from './ports/store.ts';
import type { RoomPhase } from './room-phase.ts';

export interface RoomFigures {
  event_id: string;
  phase: RoomPhase;
  /** Positions handed out (everyone who ever joined since the last reset, numbered). */
  queue: number;
  serving: number;
  in_line: number;
  awaiting_claim: number;
  active_sessions: number;
  room_in_queue: number;
  let_in_ahead: number;
  /** Positions the counter first reached in the last 60 s. */
  admitted_last_minute: number;
  /** As GET /waiting_num answers it: in line plus let in and not arrived. */
  waiting_num: number;
  /** In the pre-queue, waiting for the draw (no position yet): not in waiting_num. */
  prequeue_num: number;
  tokens_issued: number;
  expired: number;
  left: number;
  completed: number;
  abandoned: number;
}

export function roomFigures(
  eventId: string,
  phase: RoomPhase,
  counters: Counters,
  snapshot: AdmissionSnapshot,
  prequeueNum = 0,
): RoomFigures {
  const waitingNum = Math.max(0, counters.queue - counters.tokens - counters.expired - counters.left);
  const awaitingClaim = Math.max(0, Math.min(snapshot.awaitingClaim, waitingNum));
  return {
    event_id: eventId,
    phase,
    queue: counters.queue,
    serving: counters.serving,
    in_line: Math.min(waitingNum - awaitingClaim, Math.max(0, counters.queue - counters.serving)),
    awaiting_claim: awaitingClaim,
    active_sessions: snapshot.activeSessions,
    room_in_queue: Math.max(0, counters.queue - counters.serving),
    let_in_ahead: Math.max(0, counters.serving - counters.queue),
    admitted_last_minute: snapshot.reachedInWindow,
    waiting_num: waitingNum,
    prequeue_num: prequeueNum,
    tokens_issued: counters.tokens,
    expired: counters.expired,
    left: counters.left,
    completed: counters.completed,
    abandoned: counters.abandoned,
  };
}
