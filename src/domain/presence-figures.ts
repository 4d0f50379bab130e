// A room's presence figures (issue 34): in the control panel's figures, /metrics, the history and the
// after-event report. Pure: the presence view and the admission snapshot are read by the caller.
//
//   present_waiting   in line (the counter has not reached them) and seen within presence_timeout
//   absent_waiting    in line and not seen within it (with presence off: 0, everyone counts as present)
//   counted_awaiting  let in, not claimed, present and within their arrival window: what holds capacity
//   no_shows          let in, not claimed, past their arrival window (they may still claim until their claim
//                     window ends)
//   late_arrivals     claims made after the visitor had stopped counting (passed while absent, or past the
//                     arrival window), since the last reset
//   overshoot         automatic rooms: how far the room is over total_active_users now (counted_awaiting +
//                     active sessions − total_active_users, never below 0); at most late_arrivals

import type { PresenceView } from './ports/presence.ts';
import type { AdmissionSnapshot } from './ports/store.ts';
import { presenceTimeoutOf } from './presence-settings.ts';
import type { RoomSettings } from './room-settings.ts';

export interface PresenceFigures {
  presence_timeout: number;
  arrival_window: number;
  present_waiting: number;
  absent_waiting: number;
  counted_awaiting: number;
  no_shows: number;
  late_arrivals: number;
  overshoot: number;
}

export function presenceFigures(room: RoomSettings, view: PresenceView, snapshot: Pick<AdmissionSnapshot, 'activeSessions'>): PresenceFigures {
  const capacity = room.admission === 'automatic' ? room.total_active_users : undefined;
  return {
    presence_timeout: presenceTimeoutOf(room),
    arrival_window: room.arrival_window,
    present_waiting: view.presentWaiting,
    absent_waiting: view.absentWaiting,
    counted_awaiting: view.countedAwaiting,
    no_shows: view.noShows,
    late_arrivals: view.lateArrivals,
    overshoot: capacity === undefined ? 0 : Math.max(0, view.countedAwaiting + snapshot.activeSessions - capacity),
  };
}
