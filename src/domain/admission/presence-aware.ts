// Admission that does not wait for people who left (issue 34; docs/rooms.md "Presence and the arrival window").
// Part of the one admission path: the Admission (admission.ts) calls these for an automatic room with presence
// or an arrival window, and for a manual increment with present_only.
//
// The rules:
//   - Capacity. An admitted visitor who has not claimed counts against total_active_users only while present
//     and within their arrival window (admitted less than arrival_window ago). Active sessions count as before.
//   - Rate. new_users_per_minute counts the present visitors the counter passes; positions passed while absent
//     (skipped) are not counted.
//   - The move. A tick that may admit n visitors moves the counter just past the n-th PRESENT waiting visitor
//     (passPresent): the absent ones in between are passed too — admitted, their claim window starting, but
//     counting neither against the rate nor against capacity. Nobody absent is passed unless a present visitor
//     behind them is admitted, so a room where nobody is present stays where it is.
//   - Coming back. A visitor passed while absent who is seen again is admitted at once: the counter is already
//     past them, so their next poll sees it and they claim (within their claim window,
//     queue_position_expiry_period, from when they were passed). That is "next to be admitted": nobody still
//     waiting goes before them. FIFO holds among present visitors; a visitor who was away is admitted after the
//     present visitors behind them who were admitted while they were away, and before everyone else.
//   - Overshoot. A late arrival (a visitor who claims after they had stopped counting: passed while absent, or
//     past their arrival window) enters though the room may be full, so the room may be over total_active_users
//     by at most the number of late arrivals; the ticks admit nobody new until it is back under.
// No I/O in the decisions; presentTick does the reads and the move, like Admission.admitAutomatically.

import type { EventPublisher } from '../ports/events.ts';
import type { PresenceStore, PresenceView } from '../ports/presence.ts';
import type { AdmissionSnapshot, QueueStore, ServingMove } from '../ports/store.ts';
import { presenceWindowSeconds } from '../presence.ts';
import { presenceApplies, presenceTimeoutOf } from '../presence-settings.ts';

export { presenceApplies };
import type { RoomSettings } from '../room-settings.ts';
import {
  capacityAllowance,
  rateAllowance,
  rateWindowStart,
  RATE_WINDOW_SECONDS,
  waitingAllowance,
  type AdmissionDecision,
  type AutomaticLimits,
} from './automatic.ts';

/** Inclusive ranges of positions passed while absent (or left). */
export type SkippedRanges = [number, number][];

export interface PresentMove {
  /** How far the counter moves. */
  moveBy: number;
  skipped: SkippedRanges;
}

/** The move that passes the first `count` of `nextPresent` (ascending, all after `serving`) and what it skips. */
export function passPresent(serving: number, nextPresent: readonly number[], count: number): PresentMove {
  const n = Math.max(0, Math.min(count, nextPresent.length));
  if (n === 0) return { moveBy: 0, skipped: [] };
  const skipped: SkippedRanges = [];
  let previous = serving;
  for (const position of nextPresent.slice(0, n)) {
    if (position > previous + 1) skipped.push([previous + 1, position - 1]);
    previous = position;
  }
  return { moveBy: previous - serving, skipped };
}

/** How many present positions a tick may pass at most (the view lists that many). */
export function presenceLimit(limits: AutomaticLimits, waiting: number): number {
  return Math.max(0, Math.min(Math.ceil(limits.newUsersPerMinute / RATE_WINDOW_SECONDS), limits.totalActiveUsers, waiting));
}

export interface PresentAdmissionDecision extends AdmissionDecision, PresentMove {
  /** Present visitors this tick admits. */
  present: number;
}

/** The tick's decision with presence and arrival windows (see the rules above). */
export function decidePresentAdmission(
  limits: AutomaticLimits,
  snapshot: AdmissionSnapshot,
  view: PresenceView,
): PresentAdmissionDecision {
  const waiting = waitingAllowance(snapshot);
  const rate = rateAllowance(limits.newUsersPerMinute, {
    reachedInWindow: Math.max(0, snapshot.reachedInWindow - view.skippedInWindow),
    reachedThisSecond: Math.max(0, snapshot.reachedThisSecond - view.skippedThisSecond),
  });
  const capacity = capacityAllowance(limits.totalActiveUsers, {
    awaitingClaim: view.countedAwaiting,
    activeSessions: snapshot.activeSessions,
  });
  // The two reads are not one instant: when the counter moved in between, this tick leaves it to the next.
  const present = view.serving === snapshot.serving ? Math.min(rate, capacity, waiting, view.nextPresent.length) : 0;
  const move = passPresent(view.serving, view.nextPresent, present);
  return { by: move.moveBy, waiting, rate, capacity, present, ...move };
}

export interface PresentTickDeps {
  store: Pick<QueueStore, 'incrementServingWithinQueue'>;
  presence: PresenceStore;
  events: EventPublisher;
  /** Merges this node's marks of the room first. */
  flush: (eventId: string) => Promise<void>;
}

/** The arguments of a presence view of the room now. */
export function viewQuery(room: RoomSettings, now: number, limit: number) {
  const timeout = presenceTimeoutOf(room);
  return {
    now,
    timeout,
    windowSeconds: presenceWindowSeconds(timeout),
    arrivalCutoff: room.arrival_window > 0 ? now - room.arrival_window : null,
    rateWindowStart: rateWindowStart(now),
    limit,
  };
}

export type PresentTickOutcome = { kind: 'admitted'; previousServing: number; serving: number; present: number; skipped: number } & AdmissionDecision;

/** One automatic tick of a room with presence or an arrival window, after its snapshot was read. */
export async function presentTick(
  deps: PresentTickDeps,
  room: RoomSettings,
  limits: AutomaticLimits,
  snapshot: AdmissionSnapshot,
  now: number,
): Promise<PresentTickOutcome> {
  const eventId = room.event_id;
  await deps.flush(eventId);
  const view = await deps.presence.presenceView(eventId, viewQuery(room, now, presenceLimit(limits, waitingAllowance(snapshot))));
  const decision = decidePresentAdmission(limits, snapshot, view);
  const moved: ServingMove =
    decision.moveBy > 0
      ? await deps.store.incrementServingWithinQueue(eventId, decision.moveBy, now, snapshot.serving)
      : { previousServing: snapshot.serving, serving: snapshot.serving };
  const didMove = moved.serving === moved.previousServing + decision.moveBy && decision.moveBy > 0;
  const record = await deps.presence.recordTick(eventId, didMove ? decision.skipped : [], now, view.arrivalBoundary);
  publishNoShows(deps.events, room, record.newNoShows);
  if (moved.serving !== moved.previousServing) {
    deps.events.publish('automatic_serving_counter_incr', {
      event_id: eventId,
      previous_serving_counter_position: moved.previousServing,
      increment_by: moved.serving - moved.previousServing,
      current_serving_counter_position: moved.serving,
    });
  }
  const skipped = didMove ? decision.skipped.reduce((n, [lo, hi]) => n + hi - lo + 1, 0) : 0;
  return { kind: 'admitted', by: decision.by, waiting: decision.waiting, rate: decision.rate, capacity: decision.capacity, ...moved, present: didMove ? decision.present : 0, skipped };
}

/**
 * A manual increment with present_only: moves the counter past the next `by` present waiting visitors (and
 * the absent ones among them), never past the queue; with fewer present, past the present ones only. From the
 * counter the view read (a compare-and-set): a move of the counter in between leaves this one without effect
 * and it is tried once more.
 */
export async function presentIncrement(deps: PresentTickDeps, room: RoomSettings, by: number, now: number): Promise<ServingMove> {
  const eventId = room.event_id;
  await deps.flush(eventId);
  for (let attempt = 0; ; attempt++) {
    const view = await deps.presence.presenceView(eventId, viewQuery(room, now, by));
    const move = passPresent(view.serving, view.nextPresent, by);
    if (move.moveBy === 0) return { previousServing: view.serving, serving: view.serving };
    const moved = await deps.store.incrementServingWithinQueue(eventId, move.moveBy, now, view.serving);
    if (moved.serving !== moved.previousServing || attempt >= 1) {
      const done = moved.serving === moved.previousServing + move.moveBy;
      const record = await deps.presence.recordTick(eventId, done ? move.skipped : [], now, view.arrivalBoundary);
      publishNoShows(deps.events, room, record.newNoShows);
      return moved;
    }
  }
}

/** One visitor_no_show per visitor whose arrival window passed unclaimed. */
function publishNoShows(events: EventPublisher, room: RoomSettings, positions: readonly number[]): void {
  if (room.arrival_window === 0) return;
  for (const position of positions) {
    events.publish('visitor_no_show', { event_id: room.event_id, queue_number: position, arrival_window: room.arrival_window });
  }
}
