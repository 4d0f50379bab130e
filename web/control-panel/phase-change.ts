// The warning the settings form shows while a change would take the room to another phase now (paused, closed,
// the schedule moved so the pre-queue or the end is already here…): what the room is in, what saving moves it
// to, and what that means for the people in it. The phase is the server's own rule (src/domain/room-phase.ts).

import { roomPhase, roomScheduleOf } from '../../src/domain/room-phase.ts';
import type { RoomSettings } from '../../src/domain/room-settings.ts';
import { PHASE_LABELS } from './figures.ts';

const MEANS: Record<string, string> = {
  before: 'joins are refused until the pre-queue opens',
  prequeue: 'joins are accepted but nobody is let in before the start',
  open: 'joins are accepted and people are let in',
  paused: 'nobody new is let in until you resume',
  closed: 'new joins are refused and nobody more is let in',
  off: 'no queue: everyone who joins is let in at once',
  ended: 'the schedule is over: joins are refused',
};

/**
 * The warning, or '' when saving keeps the phase (or for a new room). `current`: the room's phase now;
 * `settings`: the form's settings as they would be saved; `drawPending`: whether the room's draw is still to run.
 */
export function phaseChangeText(current: string | undefined, settings: Record<string, unknown>, nowMs: number, drawPending: boolean): string {
  if (current === undefined) return '';
  let next: string;
  try {
    next = roomPhase(roomScheduleOf({ state: 'open', ...settings } as RoomSettings), Math.floor(nowMs / 1000), { pending: drawPending });
  } catch {
    return '';
  }
  if (next === current) return '';
  const label = (phase: string) => PHASE_LABELS[phase] ?? phase;
  return `Saving takes the room from ${label(current)} to ${label(next)} now: ${MEANS[next] ?? ''}.`;
}
