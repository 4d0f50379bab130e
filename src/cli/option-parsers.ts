import { InvalidArgumentError } from 'commander';

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
