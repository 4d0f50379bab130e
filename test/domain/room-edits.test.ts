// The rooms API's document rules (src/domain/room-edits.ts), one rule per test: an answer never holds a secret
// (each shows as "[redacted]"), the read-only fields of an answer are dropped from a body, a PATCH is an RFC 7396
// merge patch, and a body that sends "[redacted]" back or leaves a secret out keeps the stored one.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isJsonObject, mergePatch, roomView, withoutReadOnlyFields, withStoredSecrets as restore } from '../../src/domain/room-edits.ts';
import { REDACTED } from '../../src/domain/secret-settings.ts';
import { defaultSettings, type RoomSettings } from '../../src/domain/room-settings.ts';
import { botDefence } from '../support/bot-defence-settings.ts';

const defence = botDefence({ challenge: 'auto' });

describe('isJsonObject', () => {
  it('a plain object only: not null, an array or a scalar', () => {
    assert.equal(isJsonObject({}), true);
    assert.equal(isJsonObject({ a: 1 }), true);
    assert.equal(isJsonObject(null), false);
    assert.equal(isJsonObject([]), false);
    assert.equal(isJsonObject('x'), false);
    assert.equal(isJsonObject(3), false);
  });
});

describe('roomView: a room as the API answers it', () => {
  it('carries every setting and the phase, each webhook secret shown as "[redacted]"', () => {
    const room: RoomSettings = {
      ...defaultSettings('E'),
      webhooks: [
        { url: 'https://a.example/hook', secret: 's3cret-webhook-0123' },
        { url: 'https://b.example/hook', secret: 's3cret-webhook-4567' },
      ],
    };
    const before = structuredClone(room);
    const view = roomView(room, 'open');
    assert.deepEqual(view, {
      ...room,
      webhooks: [
        { url: 'https://a.example/hook', secret: REDACTED },
        { url: 'https://b.example/hook', secret: REDACTED },
      ],
      phase: 'open',
    });
    assert.deepEqual(room, before, 'the settings are not changed');
    assert.equal('oidc' in view, false, 'no oidc section for a room without one');
    assert.equal('bot_defence' in view, false, 'no bot_defence section for a room without one');
    assert.doesNotMatch(JSON.stringify(view), /s3cret/);
  });

  it('the OpenID Connect client: its settings, the secret redacted (absent when none is set)', () => {
    const withSecret = roomView({ ...defaultSettings('E'), oidc: { client_secret: 'oidc-s3cret-0123456', redirect_uris: ['https://a/cb'] } }, 'open');
    assert.deepEqual(withSecret.oidc, { redirect_uris: ['https://a/cb'], client_secret: REDACTED });
    assert.doesNotMatch(JSON.stringify(withSecret), /s3cret/);
    const without = roomView({ ...defaultSettings('E'), oidc: { redirect_uris: ['https://a/cb'] } }, 'open');
    assert.deepEqual(without.oidc, { redirect_uris: ['https://a/cb'] });
  });

  it('the bot defence: its settings, the enqueue key secret redacted', () => {
    const withSecret = roomView({ ...defaultSettings('E'), bot_defence: { ...defence, enqueue_key_secret: 'key-s3cret-0123456789abcdefghijklmn' } }, 'paused');
    assert.deepEqual(withSecret.bot_defence, { ...defence, enqueue_key_secret: REDACTED });
    assert.equal(withSecret.phase, 'paused');
    assert.doesNotMatch(JSON.stringify(withSecret), /s3cret/);
    const without = roomView({ ...defaultSettings('E'), bot_defence: defence }, 'open');
    assert.deepEqual(without.bot_defence, defence);
  });

  it("the gate: every bypass header's value redacted, its name kept", () => {
    const gate = { origin: 'http://127.0.0.1:3000', routes: [{ path: '/' }], queueing_status_code: 200, bypass: { paths: ['/static/'], headers: { 'x-monitor': 'mon-s3cret', 'x-b': 'b-s3cret' } } };
    const view = roomView({ ...defaultSettings('E'), gate }, 'open');
    assert.deepEqual(view.gate, { ...gate, bypass: { paths: ['/static/'], headers: { 'x-monitor': REDACTED, 'x-b': REDACTED } } });
    assert.doesNotMatch(JSON.stringify(view), /s3cret/);
  });
});

describe('withoutReadOnlyFields: an answer can be PUT back as it is', () => {
  it('drops phase and the *_set flags, keeps everything else, and leaves the body unchanged', () => {
    const body = {
      event_id: 'E',
      phase: 'open',
      validity_period: 60,
      webhooks: [{ url: 'https://a/hook', secret_set: true }, { url: 'https://b/hook', secret: 'new' }, 'not an object'],
      oidc: { redirect_uris: ['https://a/cb'], client_secret_set: true },
      bot_defence: { challenge: 'off', enqueue_key_secret_set: false },
    };
    const before = structuredClone(body);
    assert.deepEqual(withoutReadOnlyFields(body), {
      event_id: 'E',
      validity_period: 60,
      webhooks: [{ url: 'https://a/hook' }, { url: 'https://b/hook', secret: 'new' }, 'not an object'],
      oidc: { redirect_uris: ['https://a/cb'] },
      bot_defence: { challenge: 'off' },
    });
    assert.deepEqual(body, before);
  });

  it('leaves sections that are not objects (or lists) for the schema to refuse', () => {
    assert.deepEqual(withoutReadOnlyFields({ webhooks: 'x', oidc: [1], bot_defence: null }), { webhooks: 'x', oidc: [1], bot_defence: null });
  });
});

describe('mergePatch (RFC 7396)', () => {
  it('objects merge key by key; null removes a key; arrays and scalars are replaced', () => {
    const target = { a: 1, b: { c: 2, d: 3 }, list: [1, 2], gone: true };
    const before = structuredClone(target);
    assert.deepEqual(mergePatch(target, { a: 5, b: { d: null, e: 4 }, list: [3], gone: null, added: { x: 1 } }), {
      a: 5,
      b: { c: 2, e: 4 },
      list: [3],
      added: { x: 1 },
    });
    assert.deepEqual(target, before, 'the target is not changed');
  });

  it('a patch that is not an object replaces the target; an object patch on a scalar starts from {}', () => {
    assert.deepEqual(mergePatch({ a: 1 }, [1]), [1]);
    assert.equal(mergePatch({ a: 1 }, 'x'), 'x');
    assert.deepEqual(mergePatch('x', { a: 1, b: null }), { a: 1 });
    assert.deepEqual(mergePatch([1], { a: 1 }), { a: 1 });
  });
});

describe('withStoredSecrets: "[redacted]" or a secret left out keeps the stored one', () => {
  const stored = {
    webhooks: [{ url: 'https://a/hook', secret: 'stored-a' }, { url: 'https://b/hook', secret: 'stored-b' }, 'junk', { url: 1, secret: 'x' }],
    oidc: { client_secret: 'stored-oidc', redirect_uris: [] },
    bot_defence: { enqueue_key_secret: 'stored-key' },
    gate: { bypass: { headers: { 'x-monitor': 'stored-monitor', 'x-other': 'stored-other' } } },
  };
  const restored = (input: Record<string, unknown>, from: unknown): Record<string, unknown> => {
    const got = restore(input, from);
    assert.ok(got.ok, JSON.stringify(got));
    return got.value;
  };

  it('a webhook without a secret, or with "[redacted]", gets the stored one of the same URL; one with a secret, or a new URL, is left', () => {
    const input = {
      webhooks: [{ url: 'https://a/hook' }, { url: 'https://b/hook', secret: 'new-b' }, { url: 'https://c/hook' }, { url: 5 }, 'junk', { url: 'https://b/hook', secret: REDACTED }],
    };
    const before = structuredClone(input);
    assert.deepEqual(restored(input, stored).webhooks, [
      { url: 'https://a/hook', secret: 'stored-a' },
      { url: 'https://b/hook', secret: 'new-b' },
      { url: 'https://c/hook' },
      { url: 5 },
      'junk',
      { url: 'https://b/hook', secret: 'stored-b' },
    ]);
    assert.deepEqual(input, before, 'the input is not changed');
  });

  it('a stored webhook whose secret is not a string gives nothing', () => {
    assert.deepEqual(restored({ webhooks: [{ url: 'https://a/hook' }] }, { webhooks: [{ url: 'https://a/hook', secret: 7 }] }).webhooks, [{ url: 'https://a/hook' }]);
  });

  it('the client secret, when the body has an oidc section without one or with "[redacted]"', () => {
    assert.deepEqual(restored({ oidc: { redirect_uris: ['x'] } }, stored).oidc, { redirect_uris: ['x'], client_secret: 'stored-oidc' });
    assert.deepEqual(restored({ oidc: { client_secret: REDACTED } }, stored).oidc, { client_secret: 'stored-oidc' });
    assert.deepEqual(restored({ oidc: { client_secret: 'new' } }, stored).oidc, { client_secret: 'new' });
    assert.deepEqual(restored({ oidc: { client_secret: null } }, stored).oidc, { client_secret: null }, 'a merge patch removing it');
    assert.equal('oidc' in restored({}, stored), false, 'no section in the body: none added');
    assert.deepEqual(restored({ oidc: {} }, { oidc: { client_secret: 3 } }).oidc, {}, 'a stored non-string is not copied');
    assert.deepEqual(restored({ oidc: {} }, { oidc: 'x' }).oidc, {});
  });

  it('the enqueue key secret, when the body has a bot_defence section without one', () => {
    assert.deepEqual(restored({ bot_defence: { challenge: 'off' } }, stored).bot_defence, { challenge: 'off', enqueue_key_secret: 'stored-key' });
    assert.deepEqual(restored({ bot_defence: { enqueue_key_secret: 'new' } }, stored).bot_defence, { enqueue_key_secret: 'new' });
    assert.equal('bot_defence' in restored({}, stored), false);
    assert.deepEqual(restored({ bot_defence: {} }, { bot_defence: { enqueue_key_secret: null } }).bot_defence, {});
    assert.deepEqual(restored({ bot_defence: {} }, { bot_defence: [] }).bot_defence, {});
  });

  it('a bypass header: "[redacted]" keeps the stored value of that header; a header left out is removed', () => {
    const body = { gate: { bypass: { headers: { 'x-monitor': REDACTED, 'x-new': 'typed' } } } };
    assert.deepEqual(restored(body, stored).gate, { bypass: { headers: { 'x-monitor': 'stored-monitor', 'x-new': 'typed' } } });
  });

  it('"[redacted]" where nothing is stored is a problem naming the field', () => {
    assert.deepEqual(restore({ gate: { bypass: { headers: { 'x-new': REDACTED } } } }, stored), {
      ok: false,
      problem: { path: ['gate', 'bypass', 'headers', 'x-new'], rule: 'is "[redacted]" (as answered) but no value is stored here: send the secret itself' },
    });
    assert.equal(restore({ webhooks: [{ url: 'https://c/hook', secret: REDACTED }] }, stored).ok, false);
    assert.equal(restore({ bot_defence: { enqueue_key_secret: REDACTED } }, undefined).ok, false, 'a new room');
  });

  it('nothing stored (a new room), or stored lists that are not lists: the input as it is', () => {
    const input = { webhooks: [{ url: 'https://a/hook' }], oidc: {} };
    assert.deepEqual(restored(input, undefined), input);
    assert.deepEqual(restored(input, { webhooks: 'x' }).webhooks, [{ url: 'https://a/hook' }]);
    assert.deepEqual(restored({ webhooks: 'x' }, stored).webhooks, 'x');
  });
});
