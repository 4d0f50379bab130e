// How often the gate's waiting page asks again by itself in a browser without script (its <noscript> meta
// refresh, src/web/gate-page.ts; docs/gate.md "Without JavaScript"). Each refresh is one ordinary request to the
// gate, answered from the place cookie (no join, and no store call while the visitor is not yet served).
//
//   seconds = a quarter of the expected wait (people ahead ÷ the room's admission rate), between 5 and 30 s;
//   30 s when nobody is being let in (paused, not started, no rate known) or the place is not numbered yet;
//   never later than the room's start (a pre-queue), never more than a third of queue_position_expiry_period
//   (an admitted visitor comes back well before their turn expires); 5 s while the protected site is down.
//
// The rate is the pace the node has measured from the serving counter over the last minutes (admissions, as
// the page's estimate uses it), or else, under automatic admission, new_users_per_minute.

import { roomPhase, roomScheduleOf } from '../domain/room-phase.ts';
import type { RoomSettings } from '../domain/room-settings.ts';

/** No page asks more often than this: what keeps polling without script cheap. */
export const REFRESH_FLOOR_SEC = 5;
/** Far back in the line, or while nobody is let in. */
export const REFRESH_CEILING_SEC = 30;
/** The page saying the protected site is down reloads as the scripted page does. */
export const ORIGIN_DOWN_REFRESH_SEC = 5;

export interface RefreshInput {
  /** People ahead of the visitor (position − serving counter), when the place is numbered. */
  ahead?: number | undefined;
  /** Visitors let in per second lately (measured), when known. */
  measuredPerSecond?: number | undefined;
  nowMs: number;
}

export function refreshSeconds(room: RoomSettings, input: RefreshInput): number {
  const phase = roomPhase(roomScheduleOf(room), Math.floor(input.nowMs / 1000));
  let ceiling = REFRESH_CEILING_SEC;
  if (room.enable_queue_position_expiry !== false) ceiling = Math.min(ceiling, Math.max(REFRESH_FLOOR_SEC, Math.floor(room.queue_position_expiry_period / 3)));
  const startMs = room.event_start_time === undefined ? undefined : Date.parse(room.event_start_time);
  if (startMs !== undefined && startMs > input.nowMs) ceiling = Math.min(ceiling, Math.max(REFRESH_FLOOR_SEC, Math.ceil((startMs - input.nowMs) / 1000)));
  const moving = phase === 'open' || phase === 'off';
  const perSecond = input.measuredPerSecond ?? (room.admission === 'automatic' && room.new_users_per_minute ? room.new_users_per_minute / 60 : undefined);
  if (!moving || input.ahead === undefined || perSecond === undefined || !(perSecond > 0)) return ceiling;
  return Math.min(ceiling, Math.max(REFRESH_FLOOR_SEC, Math.ceil(input.ahead / perSecond / 4)));
}
