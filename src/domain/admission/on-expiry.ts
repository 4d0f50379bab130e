// Admission on expiry (spec: incr_serving_on_expiry): the places of served visitors who never claimed their
// token go to the next in line. Each step of the expiry job records newly expired unclaimed positions; with the
// switch on, the serving counter moves forward by their number and automatic_serving_counter_incr is emitted.
//
// The split between domain and store: this module decides WHETHER the step moves the counter (the rule, from
// the room's settings) and what to announce afterwards. HOW FAR is only known inside the store's atomic
// advanceExpiry (it counts the positions as it records them), so the store applies the move in that same
// atomic unit (one SQLite transaction, one Lua script). Reading the count and then calling incrementServing
// would be a read-modify-write across two store calls: a reset, a second node or a manual increment could
// come in between.

import type { EventDetails } from '../ports/events.ts';
import type { ExpiryAdvance } from '../ports/store.ts';
import { admitsInPhase, type RoomPhase } from '../room-phase.ts';
import type { RoomSettings } from '../room-settings.ts';

type ExpiryRoom = Pick<RoomSettings, 'event_id' | 'incr_serving_on_expiry' | 'admission'>;

/**
 * Whether an expiry step of this room moves the serving counter (the store's `incrServing`): with the switch
 * on, in a phase that admits (nobody is let in while the room is paused, closed or not started), and not in a
 * room that admits automatically — there the admission tick gives the freed places within the room's rate, which
 * a move of the expiry step would bypass.
 */
export function expiryMovesCounter(room: ExpiryRoom, phase: RoomPhase): boolean {
  return room.incr_serving_on_expiry && room.admission !== 'automatic' && admitsInPhase(phase);
}

/** The automatic_serving_counter_incr event of one expiry step, or null when the step did not move the counter. */
export function expiryIncrementEvent(
  room: ExpiryRoom,
  step: Pick<ExpiryAdvance, 'previousServing' | 'serving'>,
): EventDetails['automatic_serving_counter_incr'] | null {
  if (!room.incr_serving_on_expiry || step.serving === step.previousServing) return null;
  return {
    event_id: room.event_id,
    previous_serving_counter_position: step.previousServing,
    increment_by: step.serving - step.previousServing,
    current_serving_counter_position: step.serving,
  };
}
