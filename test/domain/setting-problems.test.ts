// How a settings problem is told (src/domain/setting-problems.ts), one rule per test: the field as operators
// write it, the JSON Pointer of a place in a file, the rule from the field's schema, the variant a union's
// discriminator names, and the range of an integer setting.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import {
  describeProblem,
  expectation,
  fieldName,
  integerRange,
  jsonPointer,
  schemaProblem,
} from '../../src/domain/setting-problems.ts';

describe('fieldName and jsonPointer', () => {
  it('names a field with dots, list entries with brackets; the document itself is ""', () => {
    assert.equal(fieldName(['inlet', 'pause_check', 'timeout']), 'inlet.pause_check.timeout');
    assert.equal(fieldName(['webhooks', '0', 'url']), 'webhooks[0].url');
    assert.equal(fieldName(['0']), '[0]');
    assert.equal(fieldName(['a1', '12b']), 'a1.12b', 'a segment is an index only when it is all digits');
    assert.equal(fieldName([]), '');
  });

  it('a JSON Pointer escapes ~ and / (RFC 6901)', () => {
    assert.equal(jsonPointer(['events', '0', 'a/b~c']), '/events/0/a~1b~0c');
    assert.equal(jsonPointer(['~/~/']), '/~0~1~0~1');
    assert.equal(jsonPointer([]), '');
  });

  it('describeProblem: "field: rule", or the rule alone for the document', () => {
    assert.equal(describeProblem({ path: ['a', '0'], rule: 'is required' }), 'a[0]: is required');
    assert.equal(describeProblem({ path: [], rule: 'must be an object' }), 'must be an object');
  });
});

describe('expectation: the rule from the schema', () => {
  it('states the range, the length, the entries, the literal, in words', () => {
    assert.equal(expectation(Type.Integer({ minimum: 1, maximum: 9 })), 'must be a whole number from 1 to 9');
    assert.equal(expectation(Type.Number({ exclusiveMinimum: 0, maximum: 1 })), 'must be more than 0 and at most 1');
    assert.equal(expectation(Type.Number({ exclusiveMinimum: 0 })), 'must be a number');
    assert.equal(expectation(Type.Number({ maximum: 1 })), 'must be a number');
    assert.equal(expectation(Type.Boolean()), 'must be true or false');
    assert.equal(expectation(Type.String({ minLength: 2, maxLength: 5 })), 'must be 2 to 5 characters');
    assert.equal(expectation(Type.String({ maxLength: 5 })), 'must be 0 to 5 characters');
    assert.equal(expectation(Type.Array(Type.String(), { minItems: 1, maxItems: 3 })), 'must be a list of 1 to 3 entries');
    assert.equal(expectation(Type.Array(Type.String(), { maxItems: 3 })), 'must be a list of at most 3 entries');
    assert.equal(expectation(Type.Literal('off')), 'must be "off"');
    assert.equal(expectation(Type.Object({})), 'must be an object');
    assert.equal(expectation(Type.Null()), 'has an unexpected value');
  });

  it('a field\'s own errorMessage wins (patterns say what they want in words)', () => {
    assert.equal(expectation(Type.String({ pattern: '^/', errorMessage: 'must start with /' })), 'must start with /');
  });
});

describe('schemaProblem', () => {
  const schema = Type.Object(
    {
      name: Type.String({ maxLength: 3 }),
      list: Type.Optional(Type.Array(Type.Object({ n: Type.Integer({ minimum: 0, maximum: 5 }) }, { additionalProperties: false }))),
      kind: Type.Optional(
        Type.Union(
          [
            Type.Object({ type: Type.Literal('a'), size: Type.Integer({ minimum: 1, maximum: 2 }) }, { additionalProperties: false }),
            Type.Object({ type: Type.Literal('b') }, { additionalProperties: false }),
          ],
          { discriminator: 'type' },
        ),
      ),
    },
    { additionalProperties: false },
  );

  it('undefined for a conforming value', () => {
    assert.equal(schemaProblem(schema, { name: 'abc', list: [{ n: 5 }], kind: { type: 'b' } }), undefined);
  });

  it('the first problem, its path from the root (after `at`), and its rule', () => {
    assert.deepEqual(schemaProblem(schema, { name: 'abcd' }), { path: ['name'], rule: 'must be 0 to 3 characters' });
    assert.deepEqual(schemaProblem(schema, { name: 'a', list: [{ n: 1 }, { n: 9 }] }, ['events', '2']), {
      path: ['events', '2', 'list', '1', 'n'],
      rule: 'must be a whole number from 0 to 5',
    });
    assert.deepEqual(schemaProblem(schema, { name: 'a', extra: 1 }), { path: ['extra'], rule: 'unknown setting' });
    assert.deepEqual(schemaProblem(schema, {}), { path: ['name'], rule: 'is required' });
    assert.deepEqual(schemaProblem(schema, 'x'), { path: [], rule: 'must be an object' });
  });

  it('a union with a discriminator is checked against the variant the value names', () => {
    assert.deepEqual(schemaProblem(schema, { name: 'a', kind: { type: 'a', size: 3 } }), {
      path: ['kind', 'size'],
      rule: 'must be a whole number from 1 to 2',
    });
    assert.deepEqual(schemaProblem(schema, { name: 'a', kind: { type: 'b', size: 1 } }), { path: ['kind', 'size'], rule: 'unknown setting' });
    assert.deepEqual(schemaProblem(schema, { name: 'a', kind: { type: 'c' } }), { path: ['kind', 'type'], rule: 'must be "a" or "b"' });
    assert.deepEqual(schemaProblem(schema, { name: 'a', kind: null }), { path: ['kind', 'type'], rule: 'must be "a" or "b"' });
  });

  it('a JSON Pointer path is read back with its escapes', () => {
    const odd = Type.Object({ 'a/b~c': Type.Integer({ minimum: 0, maximum: 1 }) });
    assert.deepEqual(schemaProblem(odd, { 'a/b~c': 7 }), { path: ['a/b~c'], rule: 'must be a whole number from 0 to 1' });
  });
});

describe('integerRange', () => {
  it('the bounds of a bounded integer schema; anything else is a programming error', () => {
    assert.deepEqual(integerRange(Type.Integer({ minimum: 1, maximum: 60 })), { min: 1, max: 60 });
    assert.throws(() => integerRange(Type.Integer({ minimum: 1 })), /not a bounded integer schema/);
    assert.throws(() => integerRange(Type.Integer({ maximum: 1 })), /not a bounded integer schema/);
    assert.throws(() => integerRange(Type.Number({ minimum: 1, maximum: 2 })), /not a bounded integer schema/);
  });
});
