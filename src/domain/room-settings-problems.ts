// Every problem of a room's settings at once, for the rooms API's 400 (`problems`, beside the one-line `error`)
// and the control panel, which shows each one beside its field: every field the schema refuses (the first
// problem of each field), or — when the schema accepts them all — the rule across fields that does not hold
// (parseRoomSettings, which states the first). Values are never echoed: a field may hold a secret.

import { Value, ValueErrorType } from '@sinclair/typebox/value';
import { ContractError } from './errors.ts';
import { parseRoomSettings, RoomSettingsSchema, type RoomDefaults } from './room-settings.ts';
import { fieldName, ruleOf, schemaProblem, type SettingProblem } from './setting-problems.ts';

/** At most this many problems are listed (a document of garbage would otherwise list thousands). */
const MAX_PROBLEMS = 50;

export interface ListedProblem {
  /** As operators write it: inlet.pause_check.timeout, webhooks[0].url ('' for the document itself). */
  field: string;
  rule: string;
}

export function roomSettingsProblems(input: unknown, defaults: RoomDefaults = {}): ListedProblem[] {
  const byField = new Map<string, ListedProblem>();
  for (const error of Value.Errors(RoomSettingsSchema, input)) {
    const segments = error.path === '' ? [] : error.path.slice(1).split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
    // A union that names its variant (inlet.strategy, …) is checked against that variant, as schemaProblem does.
    const problem: SettingProblem | undefined =
      error.type === ValueErrorType.Union && typeof error.schema.discriminator === 'string'
        ? schemaProblem(error.schema, error.value, segments)
        : { path: segments, rule: ruleOf(error) };
    if (!problem) continue;
    const field = fieldName(problem.path);
    // A field's first problem; the document's own ("must be an object") only when nothing more precise.
    if (!byField.has(field)) byField.set(field, { field, rule: problem.rule });
    if (byField.size >= MAX_PROBLEMS) break;
  }
  if (byField.size > 1) byField.delete('');
  if (byField.size > 0) return [...byField.values()];
  const parsed = parseRoomSettings(input, defaults);
  return parsed.ok ? [] : [{ field: fieldName(parsed.problem.path), rule: parsed.problem.rule }];
}

/** The 400 of a room's settings with every problem listed (src/http/server.ts sends `problems` with `error`). */
export class RoomSettingsError extends ContractError {
  readonly problems: readonly ListedProblem[];
  constructor(error: ContractError, problems: readonly ListedProblem[]) {
    super(error.code, error.status, error.message, error.headers);
    this.problems = problems;
  }
}
