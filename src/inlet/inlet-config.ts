// The "inlet" member of an event in the events config file (spec/integrations.md §3): its JSON schema per
// strategy, the checks a schema cannot express, and the defaults. config.ts hands the member over as it
// is; the schema is picked by "strategy" so that an error names the field at fault.

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { InletSettings, PauseCheckSettings } from '../domain/room-settings.ts';
import { jsonPathProblem } from './pause-check.ts';

export const DEFAULT_PERIODIC_INTERVAL = 60;
export const DEFAULT_PAUSE_TIMEOUT = 5;

const EpochSeconds = Type.Integer({ minimum: 0, maximum: 253_402_300_799 });

const PauseCheckFileSchema = Type.Object(
  {
    url: Type.String({ pattern: '^https?://', maxLength: 2048 }),
    json_path: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    threshold: Type.Optional(Type.Number()),
    timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 60 })),
  },
  { additionalProperties: false },
);

const PeriodicFileSchema = Type.Object(
  {
    strategy: Type.Literal('periodic'),
    interval: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
    increment_by: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    start_time: Type.Optional(EpochSeconds),
    end_time: Type.Optional(EpochSeconds),
    pause_check: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const MaxSizeFileSchema = Type.Object(
  {
    strategy: Type.Literal('max_size'),
    max_size: Type.Integer({ minimum: 0, maximum: 1_000_000_000 }),
  },
  { additionalProperties: false },
);

/**
 * A pause check with its defaults, or a problem message. `where` prefixes the field names in messages
 * ("inlet.pause_check" in the config file; the CLI passes its own).
 */
export function pauseCheckSettings(value: unknown, where = 'inlet.pause_check'): PauseCheckSettings | string {
  const problem = schemaProblem(PauseCheckFileSchema, value, where);
  if (problem) return problem;
  const entry = value as Static<typeof PauseCheckFileSchema>;
  if ((entry.json_path === undefined) !== (entry.threshold === undefined)) {
    return `${where}: json_path and threshold go together`;
  }
  if (entry.json_path !== undefined) {
    const pathProblem = jsonPathProblem(entry.json_path);
    if (pathProblem) return `${where}.json_path: ${pathProblem}`;
  }
  return {
    url: entry.url,
    timeout: entry.timeout ?? DEFAULT_PAUSE_TIMEOUT,
    ...(entry.json_path !== undefined ? { json_path: entry.json_path, threshold: entry.threshold as number } : {}),
  };
}

function schemaProblem(schema: TSchema, value: unknown, where = 'inlet'): string | null {
  if (Value.Check(schema, value)) return null;
  const first = [...Value.Errors(schema, value)][0];
  return first ? `${where}${first.path.replaceAll('/', '.')}: ${first.message}` : `${where}: unexpected shape`;
}

/** The settings of an event's "inlet" member with defaults filled in, or a message saying what is wrong. */
export function inletSettings(value: unknown): InletSettings | string {
  const strategy = (value as { strategy?: unknown } | null)?.strategy;
  if (strategy === 'max_size') {
    const problem = schemaProblem(MaxSizeFileSchema, value);
    if (problem) return problem;
    return { strategy: 'max_size', max_size: (value as Static<typeof MaxSizeFileSchema>).max_size };
  }
  if (strategy !== 'periodic') return 'inlet.strategy: must be "periodic" or "max_size"';
  const problem = schemaProblem(PeriodicFileSchema, value);
  if (problem) return problem;
  const entry = value as Static<typeof PeriodicFileSchema>;
  const start = entry.start_time ?? 0;
  const end = entry.end_time ?? 0;
  if (end !== 0 && end <= start) return 'inlet.end_time: must be after start_time (or 0 for no end)';
  const interval = entry.interval ?? DEFAULT_PERIODIC_INTERVAL;
  let pauseCheck: PauseCheckSettings | undefined;
  if (entry.pause_check !== undefined) {
    const checked = pauseCheckSettings(entry.pause_check);
    if (typeof checked === 'string') return checked;
    // A check still waiting when the next tick starts would let two ticks overlap.
    if (checked.timeout >= interval) return `inlet.pause_check.timeout: must be shorter than the interval (${interval} s)`;
    pauseCheck = checked;
  }
  return {
    strategy: 'periodic',
    interval,
    increment_by: entry.increment_by,
    start_time: start,
    end_time: end,
    ...(pauseCheck ? { pause_check: pauseCheck } : {}),
  };
}
