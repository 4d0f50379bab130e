// Settings of one event (one waiting room): their types, and the one schema every source of settings goes
// through — the events file, the flags and ANTEROOM_* variables of `anteroom serve`, the environment of the AWS
// functions (and the rooms API to come). The schema states each setting's type, range, default and meaning
// once; unknown keys are refused at every level, so a misspelt setting stops the start instead of being
// silently ignored. Defaults are those of VWR's core stack.
//
// This module is the way in: parsing and defaults, and (re-exported) the types of room-settings-model.ts and the
// schema of room-settings-schema.ts, so that every part imports a room's settings from one place. The rules
// across fields are room-setting-rules.ts.

import { Value } from '@sinclair/typebox/value';
import { DEFAULT_EVENT_ID, type PauseCheckSettings, type RoomDefaults, type RoomSettings, type ScalarSettingName } from './room-settings-model.ts';
import { PauseCheckSchema, RoomSettingsSchema, type RoomSettingsInput } from './room-settings-schema.ts';
import { pauseCheckRuleProblem, roomRuleProblem } from './room-setting-rules.ts';
import { schemaProblem, type Parsed, type SettingProblem } from './setting-problems.ts';

export * from './room-settings-model.ts';
export * from './room-settings-schema.ts';
export { isJsonPath } from './room-setting-rules.ts';

export function defaultSettings(eventId: string = DEFAULT_EVENT_ID): RoomSettings {
  return Value.Default(RoomSettingsSchema, { event_id: eventId }) as RoomSettings;
}

// ---- parsing ----

/**
 * The settings of a room from an input object (a JSON document's entry, or values read from flags or the
 * environment): checked against the schema, with `defaults` then the schema's defaults for what it leaves
 * out (the input wins per field). A problem names the first field at fault, from the room.
 */
export function parseRoomSettings(input: unknown, defaults: RoomDefaults = {}): Parsed<RoomSettings> {
  const problem = schemaProblem(RoomSettingsSchema, input);
  if (problem) return { ok: false, problem };
  const merged = Value.Clone({ ...defaults, ...(input as RoomSettingsInput) });
  const settings = Value.Default(RoomSettingsSchema, merged) as RoomSettings;
  const ruleProblem = roomRuleProblem(settings);
  return ruleProblem ? { ok: false, problem: ruleProblem } : { ok: true, settings };
}

/** One scalar setting (a flag's or an environment variable's value), checked alone: a problem, or undefined. */
export function scalarSettingProblem(name: ScalarSettingName, value: unknown): SettingProblem | undefined {
  return schemaProblem(RoomSettingsSchema.properties[name], value, [name]);
}

/** A pause check on its own (the standalone periodic inlet's flags), with its default timeout. */
export function parsePauseCheck(input: unknown): Parsed<PauseCheckSettings> {
  const problem = schemaProblem(PauseCheckSchema, input);
  if (problem) return { ok: false, problem };
  const settings = Value.Default(PauseCheckSchema, Value.Clone(input)) as PauseCheckSettings;
  const ruleProblem = pauseCheckRuleProblem(settings, []);
  return ruleProblem ? { ok: false, problem: ruleProblem } : { ok: true, settings };
}

