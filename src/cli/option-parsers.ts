import { InvalidArgumentError } from 'commander';
import { scalarSettingProblem, type ScalarSettingName } from '../domain/room-settings.ts';

export function integerIn(min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}.`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}.`);
    return n;
  };
}

export function booleanValue(value: string | undefined): boolean {
  // A bare flag (no value) means true.
  if (value === undefined) return true;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new InvalidArgumentError('must be true or false.');
}

export function nonEmpty(what: string, min = 1) {
  return (value: string): string => {
    if (value.length < min) throw new InvalidArgumentError(`${what} must be at least ${min} characters.`);
    return value;
  };
}

export function oneOf<T extends string>(...allowed: T[]) {
  return (value: string): T => {
    if (!(allowed as string[]).includes(value)) throw new InvalidArgumentError(`must be one of ${allowed.join(', ')}.`);
    return value as T;
  };
}

/**
 * A whole-number room setting given as a flag or ANTEROOM_* variable: read as text like any flag, then judged
 * by the room-settings schema, whose rule is the message (the range is stated there only).
 */
export function wholeNumberSetting(name: ScalarSettingName) {
  return (text: string): number => {
    // Text that is no whole number goes to the schema as it is, which refuses it with the setting's rule.
    const value: unknown = /^-?\d+$/.test(text.trim()) ? Number(text) : text;
    const problem = scalarSettingProblem(name, value);
    if (problem) throw new InvalidArgumentError(`${problem.rule}.`);
    return value as number;
  };
}

