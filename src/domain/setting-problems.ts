// What is wrong with a settings document, said the way an operator reads it: the first problem TypeBox finds,
// turned into a field path and a rule ("validity_period: must be a whole number from 1 to 31536000",
// "webhooks[0].secrett: unknown setting"). The rule comes from the field's schema (its range, its
// `errorMessage` for patterns), so a limit is stated once, in the schema. Values are never echoed: a field
// may hold a secret.

import { Kind, type TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';

export interface SettingProblem {
  /** Where, from the document's root, as JSON Pointer segments: ['inlet', 'pause_check', 'timeout']. */
  path: readonly string[];
  /** What is wrong, phrased to follow the field's name: "must be ...", "unknown setting", "is required". */
  rule: string;
}

export type Parsed<T> = { ok: true; settings: T } | { ok: false; problem: SettingProblem };

/** The field as operators write it: inlet.pause_check.timeout, webhooks[0].url ('' for the document itself). */
export function fieldName(path: readonly string[]): string {
  return path.reduce((name, segment) => (/^\d+$/.test(segment) ? `${name}[${segment}]` : name ? `${name}.${segment}` : segment), '');
}

/** JSON Pointer of the path (RFC 6901), e.g. for a location inside a file. */
export function jsonPointer(path: readonly string[]): string {
  return path.map((segment) => `/${segment.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/** "field: rule", or the rule alone for the document itself. */
export function describeProblem(problem: SettingProblem): string {
  const field = fieldName(problem.path);
  return field ? `${field}: ${problem.rule}` : problem.rule;
}

/**
 * The first problem of `value` against `schema`, or undefined when it conforms. A union carrying a
 * `discriminator` option (the name of a literal property every variant has) is checked against the variant
 * the value names, so that the problem names a field of that variant rather than "no variant matched".
 */
export function schemaProblem(schema: TSchema, value: unknown, at: readonly string[] = []): SettingProblem | undefined {
  const first: ValueError | undefined = Value.Errors(schema, value).First();
  if (!first) return undefined;
  const path = [...at, ...pointerSegments(first.path)];
  if (first.type === ValueErrorType.Union && typeof first.schema.discriminator === 'string') {
    return unionProblem(first.schema, first.value, path);
  }
  return { path, rule: ruleOf(first) };
}

function unionProblem(union: TSchema, value: unknown, path: string[]): SettingProblem | undefined {
  const key = union.discriminator as string;
  const variants = union.anyOf as TSchema[];
  const named = (value as Record<string, unknown> | null)?.[key];
  const variant = variants.find((v) => v.properties[key].const === named);
  if (!variant) {
    const names = variants.map((v) => JSON.stringify(v.properties[key].const));
    return { path: [...path, key], rule: `must be ${names.join(' or ')}` };
  }
  return schemaProblem(variant, value, path);
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer.slice(1).split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

export function ruleOf(error: ValueError): string {
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return 'unknown setting';
  if (error.type === ValueErrorType.ObjectRequiredProperty) return 'is required';
  return expectation(error.schema);
}

/** What a value of the schema must be, from its constraints (a pattern says it in `errorMessage`). */
export function expectation(schema: TSchema): string {
  if (typeof schema.errorMessage === 'string') return schema.errorMessage;
  switch (schema[Kind]) {
    case 'Integer':
      return `must be a whole number from ${schema.minimum} to ${schema.maximum}`;
    case 'Number':
      if (schema.exclusiveMinimum !== undefined && schema.maximum !== undefined) {
        return `must be more than ${schema.exclusiveMinimum} and at most ${schema.maximum}`;
      }
      return 'must be a number';
    case 'Boolean':
      return 'must be true or false';
    case 'String':
      return `must be ${schema.minLength ?? 0} to ${schema.maxLength} characters`;
    case 'Array':
      return schema.minItems
        ? `must be a list of ${schema.minItems} to ${schema.maxItems} entries`
        : `must be a list of at most ${schema.maxItems} entries`;
    case 'Literal':
      return `must be ${JSON.stringify(schema.const)}`;
    case 'Object':
      return 'must be an object';
    default:
      return 'has an unexpected value';
  }
}

/** The range of an integer schema, for flags and stack parameters that state the same limits. */
export function integerRange(schema: TSchema): { min: number; max: number } {
  if (schema[Kind] !== 'Integer' || typeof schema.minimum !== 'number' || typeof schema.maximum !== 'number') {
    throw new Error('integerRange: not a bounded integer schema');
  }
  return { min: schema.minimum, max: schema.maximum };
}
