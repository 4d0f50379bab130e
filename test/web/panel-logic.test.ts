// The control panel's logic that needs no browser: every setting of the schema has its field in the form, the
// form's body round-trips through the one settings parser, an API message finds its field, the over-admit
// check, and figures and phases said in plain words.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TSchema } from '@sinclair/typebox';
import { roomView } from '../../src/domain/room-edits.ts';
import { defaultSettings, parseRoomSettings, RoomSettingsSchema } from '../../src/domain/room-settings.ts';
import { FIGURES, aheadText, countdown, figureValues, overAdmit, phaseText, type RoomFigures } from '../../web/control-panel/figures.ts';
import { FIELDS, fieldFor, formToBody, newRoomValues, roomToValues } from '../../web/control-panel/settings-fields.ts';

/** Every setting's path in the schema: nested objects by their fields, the list of webhooks as one. */
function schemaPaths(schema: TSchema, at = ''): string[] {
  const variants: TSchema[] = schema.anyOf ?? [schema];
  const paths = new Set<string>();
  for (const variant of variants) {
    for (const [key, child] of Object.entries((variant.properties ?? {}) as Record<string, TSchema>)) {
      const path = at ? `${at}.${key}` : key;
      // An object with named properties is walked; a map (patternProperties, e.g. gate.bypass.headers) is one field.
      const isRecord = (v: TSchema) => v.type === 'object' && v.properties !== undefined;
      const nested = child.anyOf ? child.anyOf.some(isRecord) : isRecord(child);
      for (const p of nested ? schemaPaths(child, path) : [path]) paths.add(p);
    }
  }
  return [...paths];
}

const figures = (over: Partial<RoomFigures>): RoomFigures => ({
  phase: 'open',
  queue: 10,
  serving: 4,
  in_line: 5,
  awaiting_claim: 2,
  active_sessions: 3,
  room_in_queue: 6,
  let_in_ahead: 0,
  admitted_last_minute: 4,
  ...over,
});

describe('control panel: the settings form', () => {
  it('has a field for every setting of the room-settings schema, and none other', () => {
    assert.deepEqual(FIELDS.map((f) => f.name).sort(), schemaPaths(RoomSettingsSchema).sort());
  });

  it("a room's settings, through the form and back, are the same settings", () => {
    const parsed = parseRoomSettings({
      event_id: 'Drop',
      validity_period: 1200,
      enable_queue_position_expiry: false,
      queue_position_expiry_period: 60,
      incr_serving_on_expiry: true,
      enable_events_generation: true,
      admission: 'automatic',
      new_users_per_minute: 600,
      total_active_users: 200,
      session_duration: 120,
      session_renewal: false,
      state: 'paused',
      issuer: 'https://issuer.example',
      webhooks: [{ url: 'https://hooks.example/a', secret: 'sixteen-characters-at-least' }],
      inlet: { strategy: 'periodic', interval: 30, increment_by: 5, start_time: 10, end_time: 0, pause_check: { url: 'https://health.example/', json_path: '$.cpu', threshold: 0.8, timeout: 2 } },
      oidc: { redirect_uris: ['https://app.example/cb', 'https://app.example/cb2'], client_secret: 'client-secret-0123456789' },
      prequeue_start_time: '2026-11-24T17:00:00Z',
      event_start_time: '2026-11-24T18:00:00Z',
      event_end_time: '2026-11-24T20:00:00Z',
      shuffle_at_event_start: false,
      gate: {
        origin: 'http://127.0.0.1:3000',
        routes: [{ path: '/' }, { host: 'shop.example.com', path: '/checkout' }],
        bypass: { paths: ['/static/'], ips: ['10.0.0.0/8'], headers: { 'x-monitor': 'yes' } },
        queueing_status_code: 503,
      },
      allowed_return_origins: ['https://shop.example.com'],
      allowed_api_origins: ['https://api.example.com'],
      bot_defence: { challenge: 'auto', difficulty: 20_000, joins_per_client_per_minute: 5, enqueue_key_secret: 'enqueue-key-secret-0123456789abcdefgh', require_enqueue_key: true },
      // Found saving from a second tab (issue 33): the panel's PUT left branding out, so any save wiped it.
      branding: {
        title: 'Sneaker drop', site_name: 'Kicks & Co', message: 'One pair.', paused_message: 'Back soon.', closed_message: 'Sold out.',
        logo_url: 'https://cdn.kicks.example/logo.svg', logo_alt: 'Kicks', link_url: '/shop', link_text: 'Back',
        colors: { accent: '#7a1f5c', header_background: '#202020' },
      },
      sample_store: false,
    });
    assert.ok(parsed.ok, JSON.stringify(parsed));
    const values = roomToValues(roomView(parsed.settings, 'paused') as unknown as Record<string, unknown>);
    // Secrets are never answered: the operator types them (or leaves them out to keep the stored ones).
    assert.equal(values.webhooks, 'https://hooks.example/a');
    assert.equal(values['oidc.client_secret'], '');
    // A bypass header's value shows as the server's placeholder, which the server maps back to the stored value.
    assert.equal(values['gate.bypass.headers'], 'x-monitor: [redacted]');
    values['gate.bypass.headers'] = 'x-monitor: yes';
    values.webhooks = 'https://hooks.example/a  sixteen-characters-at-least';
    values['oidc.client_secret'] = 'client-secret-0123456789';
    values['bot_defence.enqueue_key_secret'] = 'enqueue-key-secret-0123456789abcdefgh';
    const again = parseRoomSettings(formToBody(values));
    assert.ok(again.ok, JSON.stringify(again));
    assert.deepEqual(again.settings, parsed.settings);
  });

  it("a new room's values are the schema's defaults", () => {
    const body = formToBody({ ...newRoomValues(), event_id: 'New' });
    const parsed = parseRoomSettings(body);
    assert.ok(parsed.ok);
    // Each default as the schema has it (a default changed there and not here fails this test).
    assert.deepEqual(parsed.settings, { ...defaultSettings('New'), shuffle_at_event_start: false, sample_store: false });
  });

  it('sends what was typed, so that the server names the mistake', () => {
    const body = formToBody({ ...newRoomValues(), event_id: 'X', validity_period: 'ten', 'inlet.strategy': 'max_size', 'inlet.max_size': '-1' });
    assert.equal(body.validity_period, 'ten');
    assert.deepEqual(body.inlet, { strategy: 'max_size', max_size: -1 });
    const parsed = parseRoomSettings(body);
    assert.ok(!parsed.ok);
    assert.equal(fieldFor(`Invalid room settings: ${parsed.problem.path.join('.')}: x`).field, 'validity_period');
  });

  it('an API message finds the field it names, or the nearest one', () => {
    const cases: [string, string | undefined][] = [
      ['Invalid room settings: validity_period: must be a whole number from 1 to 31536000', 'validity_period'],
      ['Invalid room settings: webhooks[0].secret: is required', 'webhooks'],
      ['Invalid room settings: inlet.pause_check.timeout: must be shorter than the interval (60 s)', 'inlet.pause_check.timeout'],
      ['Invalid room settings: inlet.pause_check: json_path and threshold go together', 'inlet.pause_check.url'],
      ['Invalid room settings: inlet.strategy: must be "periodic" or "max_size"', 'inlet.strategy'],
      ['Invalid room settings: oidc.redirect_uris[1]: must be an absolute http(s) URL', 'oidc.redirect_uris'],
      ['Invalid room settings: event_end_time: must be after event_start_time', 'event_end_time'],
      ['Invalid room settings', undefined],
    ];
    for (const [message, field] of cases) assert.equal(fieldFor(message).field, field, message);
    assert.equal(fieldFor(cases[0]![0]).rule, 'must be a whole number from 1 to 31536000');
  });
});

describe('control panel: figures', () => {
  it('no increment within the line asks anything; one past it says how many would skip the wait', () => {
    assert.equal(overAdmit(figures({}), 6), undefined);
    assert.equal(overAdmit(figures({}), -3), undefined);
    const warning = overAdmit(figures({}), 9);
    assert.ok(warning);
    assert.equal(warning.extra, 3);
    assert.match(warning.text, /^Only 5 people are waiting \(the serving counter can move 6 places/);
    assert.match(warning.text, /lets the next 3 people to join in at once/);
    assert.match(overAdmit(figures({ in_line: 0, room_in_queue: 0 }), 1)!.text, /^Nobody is waiting .* next 1 person to join/);
  });

  it('every figure has a label and a help text; none is negative; a counter past the line is explained', () => {
    for (const f of FIGURES) assert.ok(f.label && f.help.length > 20, f.id);
    const values = figureValues(figures({}));
    // A room without bot_defence shows no bot figures; one with it shows them all. The pre-queue figure only while
    // it can matter (see below). Presence figures come from a server that has them; present/absent only where
    // presence is on.
    const core = FIGURES.map((f) => f.id).filter((id) => !id.startsWith('b-') && !id.startsWith('p-') && id !== 'c-prequeue');
    assert.deepEqual(Object.keys(values).sort(), [...core].sort());
    const presence = { present_waiting: 3, absent_waiting: 2, no_shows: 1, late_arrivals: 1, overshoot: 0, presence_timeout: 60 };
    assert.deepEqual(Object.keys(figureValues(figures({ bot_defence: {}, prequeue_num: 3, presence }))).sort(), FIGURES.map((f) => f.id).sort());
    const off = Object.keys(figureValues(figures({ presence: { ...presence, presence_timeout: 0 } })));
    assert.deepEqual(off.filter((id) => id.startsWith('p-')).sort(), ['p-late', 'p-noshows', 'p-overshoot']);
    assert.equal(aheadText(figures({})), '');
    assert.match(aheadText(figures({ let_in_ahead: 137 })), /137 places past the last position handed out: the next 137 people to join will be let in at once/);
  });

  it('the pre-queue figure: shown before the start and while anyone is in it, not counted in Waiting', () => {
    assert.equal(figureValues(figures({ phase: 'prequeue', prequeue_num: 120, in_line: 0 }))['c-prequeue'], 120);
    assert.equal(figureValues(figures({ phase: 'before', prequeue_num: 0 }))['c-prequeue'], 0);
    assert.equal(figureValues(figures({ phase: 'open', prequeue_num: 0 }))['c-prequeue'], undefined, 'hidden once it is over');
    assert.equal(figureValues(figures({ phase: 'open', prequeue_num: 4 }))['c-prequeue'], 4, 'the draw still numbering');
    assert.equal(figureValues(figures({ phase: 'prequeue' }))['c-prequeue'], undefined, 'an older server without the figure');
    assert.equal(figureValues(figures({ phase: 'prequeue', prequeue_num: 120, in_line: 0 }))['c-waiting'], 0);
  });

  it("the bot defence's figures: challenges issued, solved and failed (invalid or replayed), joins refused by limits, bot-flagged places", () => {
    const values = figureValues(
      figures({ bot_defence: { challenge_issued: 40, challenge_solved: 30, challenge_invalid: 3, challenge_replayed: 2, challenge_missing: 50, join_limited: 7, parked: 4, flood_detected: 1 } }),
    );
    assert.deepEqual(
      [values['b-issued'], values['b-solved'], values['b-failed'], values['b-missing'], values['b-limited'], values['b-parked'], values['b-floods']],
      [40, 30, 5, 50, 7, 4, 1],
    );
  });

  it('the phase says what it means, with the countdown to the next step', () => {
    const now = Date.parse('2026-11-24T17:00:00Z');
    assert.equal(countdown(90_000), 'in 1 min 30 s');
    assert.equal(countdown(3 * 86_400_000 + 7_200_000), 'in 3 d 2 h');
    assert.match(phaseText('before', { prequeue_start_time: '2026-11-24T18:00:00Z' }, now), /refused until the pre-queue opens in 1 h 00 min/);
    assert.match(
      phaseText('prequeue', { event_start_time: '2026-11-24T17:00:45Z', shuffle_at_event_start: true }, now),
      /nobody is let in before the start in 45 s .* random place in the draw/,
    );
    assert.match(phaseText('prequeue', { event_start_time: '2026-11-24T16:00:00Z' }, now), /the draw is giving/);
    assert.match(phaseText('open', { admission: 'automatic', new_users_per_minute: 60, total_active_users: 10 }, now), /up to 60 people a minute and 10 people in at once/);
    assert.match(phaseText('paused', {}, now), /nobody is let in/);
  });
});
