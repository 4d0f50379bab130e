// The presence settings of a room (issue 34; docs/rooms.md "Presence and the arrival window"): part of the one
// settings model (RoomSettingsSchema spreads PresenceSettingProperties, RoomSettings extends PresenceSettings).
//
//   presence_timeout  seconds without a beat after which a waiting visitor counts as absent. Beats: an open
//                     /stream with the request ID, a request of the gate's waiting page, a /queue_num poll with
//                     the request ID and beat=1 (Anteroom's waiting page). A visitor who never beat is never
//                     absent: the rule that makes the default safe. VWR's clients (they poll /serving_num after
//                     their first /queue_num) and inlets-only set-ups never beat, so every visitor of theirs
//                     counts as present and admission is exactly as before; a visitor whose client beats is
//                     absent only once one of their beats was merged and then the timeout passed without
//                     another, so a mark not merged yet on another node never makes anyone absent.
//                     Absent from the settings: DEFAULT_PRESENCE_TIMEOUT (60) in every room. 0 = off: everyone
//                     waiting counts as present.
//   arrival_window    seconds an admitted visitor has to claim before they stop counting against
//                     total_active_users (they keep the right to claim until their claim window ends).
//                     0 = off: they count until the claim window ends, as before issue 34.

import { Type } from '@sinclair/typebox';
import type { SettingProblem } from './setting-problems.ts';

export interface PresenceSettings {
  /** Seconds without a beat after which a waiting visitor who beat is absent; 0 = off; absent = DEFAULT_PRESENCE_TIMEOUT. */
  presence_timeout?: number;
  /** Seconds an admitted visitor counts against total_active_users before claiming; 0 = until the claim window ends. */
  arrival_window: number;
}

/** The presence_timeout of a room that does not set one (see the top of this file for why it is safe). */
export const DEFAULT_PRESENCE_TIMEOUT = 60;
/** The shortest presence timeout: three of the waiting page's presence beats (10 s). */
export const MIN_PRESENCE_TIMEOUT = 30;
export const MAX_PRESENCE_TIMEOUT = 3600;

export const PresenceSettingProperties = {
  presence_timeout: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_PRESENCE_TIMEOUT,
      description:
        'seconds without a beat (the waiting page, the gate, /queue_num with beat=1, an open /stream) after which a waiting visitor who beat counts as absent (skipped by admission, keeping their place); a visitor who never beat is never absent; 0 = off; default 60',
    }),
  ),
  arrival_window: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 31_536_000,
      default: 120,
      description:
        'seconds an admitted visitor counts against total_active_users before claiming; later they may still claim until the claim window ends; 0 = count until then',
    }),
  ),
};

/** The presence timeout in effect for a room (0 = presence off). */
export function presenceTimeoutOf(room: { presence_timeout?: number | undefined; admission: 'manual' | 'automatic' }): number {
  return room.presence_timeout ?? DEFAULT_PRESENCE_TIMEOUT;
}

/** The rule the schema does not express: a timeout, when on, of at least MIN_PRESENCE_TIMEOUT. */
export function presenceRuleProblem(settings: PresenceSettings): SettingProblem | undefined {
  const timeout = settings.presence_timeout;
  if (timeout !== undefined && timeout !== 0 && timeout < MIN_PRESENCE_TIMEOUT) {
    return { path: ['presence_timeout'], rule: `must be 0 (off) or at least ${MIN_PRESENCE_TIMEOUT}` };
  }
  return undefined;
}

/** Whether a room's admission looks at presence or arrival windows (else it is exactly as before issue 34). */
export function presenceApplies(room: { presence_timeout?: number | undefined; admission: 'manual' | 'automatic'; arrival_window: number }): boolean {
  return presenceTimeoutOf(room) > 0 || room.arrival_window > 0;
}
