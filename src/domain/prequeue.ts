// A room's schedule as the pre-queue and the draw read it (spec rooms.md §3). The settings hold ISO 8601 UTC
// strings as the operator wrote them; everything here works in epoch seconds.
//
// A room draws when it has shuffle_at_event_start and an event_start_time (the settings refuse the first
// without the second). Its joins go to the pre-queue until its draw is done — during the pre-queue, and after
// the start for as long as the draw is running; joins before prequeue_start_time are refused earlier, by the
// room's phase. A room without a draw numbers every join at once, as VWR does (a pre-queue without shuffle
// only means nobody is admitted before the start).

import type { RoomSettings } from './room-settings.ts';

export interface RoomSchedule {
  /** Epoch seconds, or null when the setting is absent. */
  prequeueStart: number | null;
  eventStart: number | null;
  eventEnd: number | null;
  shuffle: boolean;
}

// Rounded up to whole seconds (every time of the contract is whole epoch seconds): nothing a schedule time
// starts happens before the instant written.
const epochSecondsOf = (iso: string | undefined): number | null => (iso === undefined ? null : Math.ceil(Date.parse(iso) / 1000));

export function roomSchedule(room: RoomSettings): RoomSchedule {
  return {
    prequeueStart: epochSecondsOf(room.prequeue_start_time),
    eventStart: epochSecondsOf(room.event_start_time),
    eventEnd: epochSecondsOf(room.event_end_time),
    shuffle: room.shuffle_at_event_start === true,
  };
}

/** Whether the room gives its pre-queue random places at the start (and so publishes a draw). */
export function roomDraws(room: RoomSettings): boolean {
  return room.shuffle_at_event_start === true && room.event_start_time !== undefined;
}

/** Whether the room's draw should run now: it draws and its start has come. */
export function drawIsDue(room: RoomSettings, now: number): boolean {
  const start = roomSchedule(room).eventStart;
  return roomDraws(room) && start !== null && now >= start;
}
