// The presence settings of a room (issue 34; docs/rooms.md "Presence and the arrival window"): part of the one
// settings model (RoomSettingsSchema spreads PresenceSettingProperties, RoomSettings extends PresenceSettings).
//
//   presence_timeout  seconds without a sign of life after which a waiting visitor counts as absent. Signs of
//                     life: the join, a /queue_num poll with the request ID, an open /stream with the request ID,
//                     a request of the gate's waiting page. 0 = off: everyone waiting counts as present.
//                     Absent from the settings: 0 (off) in every room, so VWR's clients (they poll /serving_num,
//                     which names no visitor, and would all look absent) work unchanged; 60 is the suggested value
//                     for rooms served by Anteroom's page or gate. (Planned default for automatic rooms: 60, held
//                     back because a node merges its marks every 2 s, and on several nodes a visitor numbered by
//                     a draw but not merged yet was skipped and then entered at once: see docs/rooms.md.)
//   arrival_window    seconds an admitted visitor has to claim before they stop counting against
//                     total_active_users (they keep the right to claim until their claim window ends).
//                     0 = off: they count until the claim window ends, as before issue 34.

import { Type } from '@sinclair/typebox';
import type { SettingProblem } from './setting-problems.ts';

export interface PresenceSettings {
  /** Seconds without a sign of life after which a waiting visitor is absent; 0 = off; absent = by admission mode. */
  presence_timeout?: number;
  /** Seconds an admitted visitor counts against total_active_users before claiming; 0 = until the claim window ends. */
  arrival_window: number;
}

/** The suggested presence_timeout (not applied by default yet: see the top of this file). */
export const DEFAULT_AUTOMATIC_PRESENCE_TIMEOUT = 60;
/** The shortest presence timeout: three of the waiting page's presence beats (10 s). */
export const MIN_PRESENCE_TIMEOUT = 30;
export const MAX_PRESENCE_TIMEOUT = 3600;

export const PresenceSettingProperties = {
  presence_timeout: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_PRESENCE_TIMEOUT,
      description:
        'seconds without a poll after which a waiting visitor counts as absent (skipped by admission, keeping their place); 0 or absent = off; 60 suggested with the default page or the gate',
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
  // Off unless the room sets it (see the top of this file: multi-node rooms could skip visitors not yet merged).
  void DEFAULT_AUTOMATIC_PRESENCE_TIMEOUT;
  return room.presence_timeout ?? 0;
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
