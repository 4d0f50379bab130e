// Secret settings (webhook secrets, the OpenID Connect client secret, the enqueue key secret, the gate's bypass
// header values): marked once, in the room-settings schema, with `Secret(…)` — JSON Schema's `writeOnly` — and
// handled by the two walks below, which follow the schema and so find every secret, present and future:
// - redactSecrets: the settings as any answer, audit entry or log line shows them: each secret's value replaced
//   by REDACTED.
// - restoreSecrets: a body as written back (PUT, PATCH): REDACTED where a secret goes means "the stored value
//   here", so an answer can be edited and sent back as it is; a secret property left out of an object the body
//   has keeps the stored one too (a webhook is the stored webhook with the same non-secret fields — its URL).
//   A map of secrets (gate.bypass.headers) is taken as written: a header left out is removed.
// Rules in docs/rooms.md "Secrets are write-only".

import type { TSchema } from '@sinclair/typebox';
import type { SettingProblem } from './setting-problems.ts';

/** What an answer shows in place of a secret's value; sent back, it keeps the stored value. */
export const REDACTED = '[redacted]';

/** The mark of a secret setting (JSON Schema's `writeOnly` annotation): never answered nor logged. */
export function Secret<T extends TSchema>(schema: T): T {
  return { ...schema, writeOnly: true };
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isSecret = (schema: TSchema): boolean => schema.writeOnly === true;

/** The schema of `value[key]`: a property, or the value schema of a record (patternProperties). */
function childSchema(schema: TSchema, key: string): TSchema | undefined {
  const properties = schema.properties as Record<string, TSchema> | undefined;
  if (properties) return Object.hasOwn(properties, key) ? properties[key] : undefined;
  const patterns = schema.patternProperties as Record<string, TSchema> | undefined;
  if (patterns) {
    for (const [pattern, child] of Object.entries(patterns)) if (new RegExp(pattern).test(key)) return child;
  }
  return isObject(schema.additionalProperties) ? (schema.additionalProperties as TSchema) : undefined;
}

/** The variant of a union the value is: the one whose literal (const) properties it matches. */
function variantOf(schema: TSchema, value: Json): TSchema | undefined {
  return (schema.anyOf as TSchema[]).find((variant) => {
    const properties = (variant.properties ?? {}) as Record<string, TSchema>;
    return Object.entries(properties).every(([key, property]) => property.const === undefined || value[key] === property.const);
  });
}

function walk(schema: TSchema, value: unknown, secret: (value: unknown) => unknown): unknown {
  if (isSecret(schema)) return value === undefined ? undefined : secret(value);
  if (Array.isArray(value)) return schema.items ? value.map((item) => walk(schema.items as TSchema, item, secret)) : value;
  if (!isObject(value)) return value;
  if (Array.isArray(schema.anyOf)) {
    const variant = variantOf(schema, value);
    return variant ? walk(variant, value, secret) : value;
  }
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) {
    const at = childSchema(schema, key);
    const shown = at ? walk(at, child, secret) : child;
    if (shown !== undefined) out[key] = shown;
  }
  return out;
}

/** `value` (settings of `schema`) with every secret's value replaced by REDACTED; `value` is not changed. */
export function redactSecrets<T>(schema: TSchema, value: T): T {
  return walk(schema, value, () => REDACTED) as T;
}

/** `value` without its secrets at all (what identifies a list entry). */
function withoutSecrets(schema: TSchema, value: unknown): unknown {
  return walk(schema, value, () => undefined);
}

/** JSON with object keys sorted: equal for equal values whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

export type Restored = { ok: true; value: Json } | { ok: false; problem: SettingProblem };

/**
 * `input` (a body) with the stored secrets it refers to put back (see the rules at the top); `stored` is what
 * the store holds for the same document (read defensively: it was stored as text). REDACTED where nothing is
 * stored is a problem naming the field. Neither argument is changed.
 */
export function restoreSecrets(schema: TSchema, input: Json, stored: unknown): Restored {
  const problems: SettingProblem[] = [];
  const value = restore(schema, input, stored, [], problems) as Json;
  const [problem] = problems;
  return problem ? { ok: false, problem } : { ok: true, value };
}

function restore(schema: TSchema, input: unknown, stored: unknown, at: string[], problems: SettingProblem[]): unknown {
  if (isSecret(schema)) {
    if (input !== REDACTED) return input;
    if (typeof stored === 'string') return stored;
    problems.push({ path: at, rule: `is "${REDACTED}" (as answered) but no value is stored here: send the secret itself` });
    return input;
  }
  if (Array.isArray(input)) {
    const items = schema.items as TSchema | undefined;
    if (!items) return input;
    const storedItems = Array.isArray(stored) ? (stored as unknown[]) : [];
    const keys = storedItems.map((item) => canonical(withoutSecrets(items, item)));
    return input.map((item, index) => {
      const match = keys.indexOf(canonical(withoutSecrets(items, item)));
      return restore(items, item, match === -1 ? undefined : storedItems[match], [...at, String(index)], problems);
    });
  }
  if (!isObject(input)) return input;
  if (Array.isArray(schema.anyOf)) {
    const variant = variantOf(schema, input);
    return variant ? restore(variant, input, stored, at, problems) : input;
  }
  const storedObject = isObject(stored) ? stored : {};
  const out: Json = { ...input };
  for (const [key, child] of Object.entries(input)) {
    const childAt = childSchema(schema, key);
    if (childAt) out[key] = restore(childAt, child, storedObject[key], [...at, key], problems);
  }
  // A secret property left out of an object the body has keeps the stored one.
  for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, TSchema>)) {
    if (isSecret(property) && !(key in input) && typeof storedObject[key] === 'string') out[key] = storedObject[key];
  }
  return out;
}

/** Where the schema's secrets are, as field names (`webhooks[].secret`, `gate.bypass.headers.*`): docs and tests. */
export function secretFields(schema: TSchema, at = ''): string[] {
  if (isSecret(schema)) return [at];
  const found: string[] = [];
  if (schema.items) found.push(...secretFields(schema.items as TSchema, `${at}[]`));
  for (const variant of (schema.anyOf ?? []) as TSchema[]) found.push(...secretFields(variant, at));
  for (const [key, child] of Object.entries((schema.properties ?? {}) as Record<string, TSchema>)) found.push(...secretFields(child, at ? `${at}.${key}` : key));
  for (const child of Object.values((schema.patternProperties ?? {}) as Record<string, TSchema>)) found.push(...secretFields(child, `${at}.*`));
  return [...new Set(found)];
}
