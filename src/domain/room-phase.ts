// Where a room is in its sale (spec/rooms.md §2–3): its phase, from the schedule, the `state` an operator set,
// the clock and whether the room's draw is still to run. Pure: no I/O, every input handed in.
//
// One step per rule, in this order (the first that applies decides):
//   1. scheduleEnded   now ≥ event_end_time                          → "ended" (reported instead of "closed")
//   2. stateClosed     state "closed"                                 → "closed"
//   3. beforePrequeue  now < prequeue_start_time                      → "before"
//   4. beforeStart     now < event_start_time, or at/after it while a
//                      shuffle_at_event_start draw has not run yet    → "prequeue"
//   5. the state       "open" | "paused" | "off"
// A room with none of the schedule settings and state "open" is always "open": VWR's behaviour.
//
// What the phase means elsewhere: joins are refused in "before" (403 Waiting room is not open yet) and in
// "closed"/"ended" (403 Waiting room is closed) — joinRefusal; nobody is admitted by inlets, expiry or
// automatic admission outside "open" and "off" — admitsInPhase (the manual increment_serving_counter keeps
// VWR's behaviour and is never held).

import type { RoomSettings, RoomState } from './room-settings.ts';
import { roomSchedule } from './prequeue.ts';

export type RoomPhase = 'before' | 'prequeue' | 'open' | 'paused' | 'closed' | 'off' | 'ended';

/** The settings the phase depends on, times in epoch seconds (absent = not scheduled). */
export interface RoomSchedule {
  state: RoomState;
  prequeueStart?: number | undefined;
  eventStart?: number | undefined;
  eventEnd?: number | undefined;
  shuffleAtEventStart: boolean;
}

/** What the phase needs to know about the room's draw (src/domain/draw.ts; run by the admission tick). */
export interface DrawProgress {
  /** A shuffle_at_event_start draw has not finished yet. */
  pending: boolean;
}

const NO_DRAW_PENDING: DrawProgress = { pending: false };

type PhaseStep = (room: RoomSchedule, now: number, draw: DrawProgress) => RoomPhase | undefined;

const scheduleEnded: PhaseStep = (room, now) =>
  room.eventEnd !== undefined && now >= room.eventEnd ? 'ended' : undefined;

const stateClosed: PhaseStep = (room) => (room.state === 'closed' ? 'closed' : undefined);

const beforePrequeue: PhaseStep = (room, now) =>
  room.prequeueStart !== undefined && now < room.prequeueStart ? 'before' : undefined;

// Joins before the start queue up (and, with a shuffle, wait for the draw); nobody is admitted yet.
const beforeStart: PhaseStep = (room, now, draw) => {
  if (room.eventStart === undefined) return undefined;
  if (now < room.eventStart) return 'prequeue';
  return room.shuffleAtEventStart && draw.pending ? 'prequeue' : undefined;
};

const PHASE_STEPS: readonly PhaseStep[] = [scheduleEnded, stateClosed, beforePrequeue, beforeStart];

/** The room's phase at `now` (epoch seconds). */
export function roomPhase(room: RoomSchedule, now: number, draw: DrawProgress = NO_DRAW_PENDING): RoomPhase {
  for (const step of PHASE_STEPS) {
    const phase = step(room, now, draw);
    if (phase) return phase;
  }
  return room.state;
}

/** Why a join is refused in this phase, or null when joins are accepted. */
export function joinRefusal(phase: RoomPhase): 'not-open-yet' | 'closed' | null {
  if (phase === 'before') return 'not-open-yet';
  if (phase === 'closed' || phase === 'ended') return 'closed';
  return null;
}

/** Whether inlets, the expiry job and automatic admission may move the counter in this phase. */
export function admitsInPhase(phase: RoomPhase): boolean {
  return phase === 'open' || phase === 'off';
}

// ---- reading the settings ----

/** The room's schedule and state, as roomPhase reads them. */
export function roomScheduleOf(room: RoomSettings): RoomSchedule {
  // The times as the pre-queue reads them (src/domain/prequeue.ts): one reading of the schedule settings.
  const schedule = roomSchedule(room);
  return {
    state: room.state,
    prequeueStart: schedule.prequeueStart ?? undefined,
    eventStart: schedule.eventStart ?? undefined,
    eventEnd: schedule.eventEnd ?? undefined,
    shuffleAtEventStart: schedule.shuffle,
  };
}
