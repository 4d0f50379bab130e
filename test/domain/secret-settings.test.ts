// The one mark of a secret setting (src/domain/secret-settings.ts): the schema says which settings are secrets,
// and the redaction finds exactly those — a secret added to the schema with Secret(…) is redacted everywhere
// without another line of code, and one added without it shows up here.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { RoomSettingsSchema } from '../../src/domain/room-settings.ts';
import { REDACTED, Secret, redactSecrets, secretFields } from '../../src/domain/secret-settings.ts';

describe('the secret mark', () => {
  it('marks exactly the room settings that are secrets', () => {
    assert.deepEqual(secretFields(RoomSettingsSchema).sort(), [
      'bot_defence.enqueue_key_secret',
      'gate.bypass.headers.*',
      'oidc.client_secret',
      'webhooks[].secret',
    ]);
  });

  it('is an annotation: a marked schema checks values as before', () => {
    const marked = Secret(Type.String({ minLength: 3 }));
    assert.equal(marked.writeOnly, true);
    assert.equal(Value.Check(marked, 'abc'), true);
    assert.equal(Value.Check(marked, 'ab'), false);
  });

  it('redacts through lists, maps and unions, leaving the rest (and the input) as it is', () => {
    const schema = Type.Object({
      list: Type.Array(Type.Object({ name: Type.String(), key: Secret(Type.String()) })),
      map: Type.Record(Type.String(), Secret(Type.String())),
      either: Type.Union([
        Type.Object({ kind: Type.Literal('a'), token: Secret(Type.String()) }),
        Type.Object({ kind: Type.Literal('b'), token: Type.String() }),
      ]),
      plain: Type.String(),
    });
    const value = { list: [{ name: 'n', key: 'k1' }], map: { x: 'm1' }, either: { kind: 'a', token: 't1' }, plain: 'p' };
    assert.deepEqual(redactSecrets(schema, value), { list: [{ name: 'n', key: REDACTED }], map: { x: REDACTED }, either: { kind: 'a', token: REDACTED }, plain: 'p' });
    assert.deepEqual(redactSecrets(schema, { ...value, either: { kind: 'b', token: 'shown' } }).either, { kind: 'b', token: 'shown' });
    assert.equal(value.list[0]?.key, 'k1', 'the input is not changed');
  });
});
