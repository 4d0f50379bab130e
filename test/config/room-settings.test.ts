// The one room-settings schema: every source of a room's settings (the events file, the flags, the AWS
// environment) goes through parseRoomSettings, which fills defaults and refuses unknown keys at every level
// with a message naming the field.

import assert from 'node:assert/strict';
import { Kind, type TSchema } from '@sinclair/typebox';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { awsConfigFromEnv, SECONDS_RANGE } from '../../src/aws/environment.ts';
import { defaultEventDefaults, readEventsFile } from '../../src/config/config.ts';
import { ConfigError } from '../../src/domain/errors.ts';
import { configFromOptions } from '../../src/cli/serve-command.ts';
import {
  DEFAULT_PAUSE_TIMEOUT,
  DEFAULT_PERIODIC_INTERVAL,
  defaultSettings,
  isJsonPath,
  parsePauseCheck,
  parseRoomSettings,
  RoomSettingsSchema,
  type RoomSettings,
  scalarSettingProblem,
} from '../../src/domain/room-settings.ts';
import { describeProblem } from '../../src/domain/setting-problems.ts';
import { presenceTimeoutOf } from '../../src/domain/presence-settings.ts';

const problemOf = (input: unknown) => {
  const result = parseRoomSettings(input);
  assert.equal(result.ok, false, 'refused');
  return result.ok ? '' : describeProblem(result.problem);
};

const WEBHOOK = { url: 'https://hooks.example.com/x', secret: '0123456789abcdef' };

describe('room settings: one schema', () => {
  it('describes every setting it holds (the OpenAPI document and `anteroom serve --help` show the text)', () => {
    const undescribed: string[] = [];
    const walk = (schema: TSchema, at: string) => {
      for (const variant of (schema.anyOf as TSchema[] | undefined) ?? []) walk(variant, at);
      if (schema.items) walk(schema.items as TSchema, `${at}[]`);
      for (const [name, member] of Object.entries((schema.properties as Record<string, TSchema> | undefined) ?? {})) {
        const path = at ? `${at}.${name}` : name;
        // A section (an object, or a choice of objects) is described by its members.
        const section = member[Kind] === 'Object' || (member.anyOf as TSchema[] | undefined)?.every((v) => v[Kind] === 'Object');
        if (!section && !(typeof member.description === 'string' && member.description.length > 0)) undescribed.push(path);
        walk(member, path);
      }
    };
    walk(RoomSettingsSchema, '');
    assert.deepEqual(undescribed, []);
  });

  it('fills every default from the schema', () => {
    const result = parseRoomSettings({ event_id: 'A' });
    assert.ok(result.ok);
    assert.deepEqual(result.settings, {
      event_id: 'A',
      validity_period: 3600,
      enable_queue_position_expiry: true,
      queue_position_expiry_period: 900,
      incr_serving_on_expiry: false,
      enable_events_generation: false,
      admission: 'manual',
      arrival_window: 120,
      session_duration: 300,
      session_renewal: true,
      state: 'open',
      signing_algorithm: 'RS256',
      webhooks: [],
    });
    assert.deepEqual(defaultSettings('A'), result.settings);
  });

  it('presence_timeout: absent means 60 in every room (safe: a visitor who never beat is never absent); 0 is off; 1–29 is refused', () => {
    const manual = parseRoomSettings({ event_id: 'A' });
    const automatic = parseRoomSettings({ event_id: 'A', admission: 'automatic', new_users_per_minute: 60, total_active_users: 5 });
    assert.ok(manual.ok && automatic.ok);
    assert.equal(presenceTimeoutOf(manual.settings), 60);
    assert.equal(presenceTimeoutOf(automatic.settings), 60);
    assert.equal(presenceTimeoutOf({ ...automatic.settings, presence_timeout: 60 }), 60);
    assert.equal(presenceTimeoutOf({ ...automatic.settings, presence_timeout: 0 }), 0);
    assert.equal(problemOf({ event_id: 'A', presence_timeout: 20 }), 'presence_timeout: must be 0 (off) or at least 30');
    assert.equal(problemOf({ event_id: 'A', arrival_window: -1 }), 'arrival_window: must be a whole number from 0 to 31536000');
    assert.ok(parseRoomSettings({ event_id: 'A', presence_timeout: 30, arrival_window: 0 }).ok);
  });

  it('refuses an unknown key at every level, naming it', () => {
    assert.equal(problemOf({ event_id: 'A', validity_periodd: 60 }), 'validity_periodd: unknown setting');
    assert.equal(problemOf({ event_id: 'A', webhooks: [WEBHOOK, { ...WEBHOOK, secrett: 'x' }] }), 'webhooks[1].secrett: unknown setting');
    assert.equal(problemOf({ event_id: 'A', inlet: { strategy: 'max_size', max_size: 5, maxsize: 5 } }), 'inlet.maxsize: unknown setting');
    assert.equal(
      problemOf({ event_id: 'A', inlet: { strategy: 'periodic', increment_by: 5, pause_check: { url: 'https://h', timout: 1 } } }),
      'inlet.pause_check.timout: unknown setting',
    );
    assert.equal(problemOf({ event_id: 'A', oidc: { redirect_uris: ['https://rp/cb'], client_id: 'x' } }), 'oidc.client_id: unknown setting');
  });

  it('states each range once, in the message', () => {
    assert.equal(problemOf({ event_id: 'A', validity_period: 0 }), 'validity_period: must be a whole number from 1 to 31536000');
    assert.equal(problemOf({ event_id: 'A', queue_position_expiry_period: 1.5 }), 'queue_position_expiry_period: must be a whole number from 1 to 31536000');
    assert.equal(problemOf({ event_id: 'a b' }), "event_id: must be 1–128 letters, digits, '.', '_', '~' or '-'");
    assert.equal(problemOf({ validity_period: 60 }), 'event_id: is required');
    assert.deepEqual(SECONDS_RANGE, {
      min: RoomSettingsSchema.properties.validity_period.minimum,
      max: RoomSettingsSchema.properties.validity_period.maximum,
    });
  });

  it('never echoes a value (a webhook secret may be in it)', () => {
    const secret = 'short-secret';
    const text = problemOf({ event_id: 'A', webhooks: [{ url: 'https://h', secret }] });
    assert.match(text, /^webhooks\[0\]\.secret: must be 16 to 256 characters$/);
    assert.doesNotMatch(text, new RegExp(secret));
  });

  it('defaults given by the caller apply to what the input leaves out; the input wins per field', () => {
    const result = parseRoomSettings({ event_id: 'A', validity_period: 60 }, { validity_period: 120, incr_serving_on_expiry: true });
    assert.ok(result.ok);
    assert.equal(result.settings.validity_period, 60);
    assert.equal(result.settings.incr_serving_on_expiry, true);
  });
});

describe('room settings: admission and state (spec rooms.md §2)', () => {
  const automatic = { event_id: 'A', admission: 'automatic', new_users_per_minute: 600, total_active_users: 50 };

  it('automatic admission with both limits', () => {
    const result = parseRoomSettings({ ...automatic, state: 'paused', session_duration: 60, session_renewal: false });
    assert.ok(result.ok);
    const { admission, new_users_per_minute, total_active_users, state, session_duration, session_renewal } = result.settings;
    assert.deepEqual(
      { admission, new_users_per_minute, total_active_users, state, session_duration, session_renewal },
      { admission: 'automatic', new_users_per_minute: 600, total_active_users: 50, state: 'paused', session_duration: 60, session_renewal: false },
    );
  });

  it('automatic requires both limits, naming the one missing', () => {
    assert.equal(problemOf({ ...automatic, new_users_per_minute: undefined }), 'new_users_per_minute: is required with admission "automatic"');
    assert.equal(problemOf({ ...automatic, total_active_users: undefined }), 'total_active_users: is required with admission "automatic"');
    assert.equal(problemOf({ event_id: 'A', admission: 'automatic' }), 'new_users_per_minute: is required with admission "automatic"');
  });

  it('limits without automatic admission are accepted and unused (a room switched back to manual keeps them)', () => {
    assert.ok(parseRoomSettings({ event_id: 'A', new_users_per_minute: 5 }).ok);
  });

  it('values out of range or of the wrong kind name the field', () => {
    assert.equal(problemOf({ ...automatic, new_users_per_minute: 0 }), 'new_users_per_minute: must be a whole number from 1 to 1000000000');
    assert.equal(problemOf({ ...automatic, total_active_users: 2.5 }), 'total_active_users: must be a whole number from 1 to 1000000000');
    assert.equal(problemOf({ event_id: 'A', admission: 'auto' }), 'admission: must be "manual" or "automatic"');
    assert.equal(problemOf({ event_id: 'A', state: 'shut' }), 'state: must be "open", "paused", "closed" or "off"');
    assert.equal(problemOf({ event_id: 'A', session_duration: 0 }), 'session_duration: must be a whole number from 1 to 31536000');
    assert.equal(problemOf({ event_id: 'A', session_renewal: 'yes' }), 'session_renewal: must be true or false');
  });
});

describe('room settings: the schedule and the draw', () => {
  const schedule = {
    event_id: 'A',
    prequeue_start_time: '2026-11-24T17:00:00Z',
    event_start_time: '2026-11-24T18:00:00.500Z',
    event_end_time: '2026-11-24T20:00:00Z',
    shuffle_at_event_start: true,
  };

  it('keeps the times as written and adds no defaults for the schedule', () => {
    const result = parseRoomSettings(schedule);
    assert.ok(result.ok);
    assert.equal(result.settings.event_start_time, '2026-11-24T18:00:00.500Z');
    assert.equal(result.settings.shuffle_at_event_start, true);
    const plain = parseRoomSettings({ event_id: 'A' });
    assert.ok(plain.ok && !('shuffle_at_event_start' in plain.settings) && !('event_start_time' in plain.settings));
  });

  it('a time is ISO 8601 in UTC, and a real one', () => {
    const rule = 'must be an ISO 8601 UTC time like 2026-11-24T18:00:00Z';
    assert.equal(problemOf({ ...schedule, event_end_time: '2026-11-24T20:00:00+01:00' }), `event_end_time: ${rule}`);
    assert.equal(problemOf({ ...schedule, event_start_time: '2026-11-24 18:00' }), `event_start_time: ${rule}`);
    assert.equal(problemOf({ ...schedule, event_start_time: 1795543200 }), `event_start_time: ${rule}`);
    assert.equal(problemOf({ ...schedule, prequeue_start_time: '2026-02-30T17:00:00Z' }), 'prequeue_start_time: must be a real date and time');
  });

  it('the times are in order, and a pre-queue or a draw needs a start', () => {
    assert.equal(problemOf({ ...schedule, prequeue_start_time: '2026-11-24T18:00:00.500Z' }), 'prequeue_start_time: must be before event_start_time');
    assert.equal(problemOf({ ...schedule, event_end_time: '2026-11-24T18:00:00Z' }), 'event_end_time: must be after event_start_time');
    const { event_start_time: _start, ...withoutStart } = schedule;
    assert.equal(problemOf({ ...withoutStart, prequeue_start_time: undefined }), 'event_start_time: is required with shuffle_at_event_start');
    assert.equal(problemOf(withoutStart), 'event_start_time: is required with prequeue_start_time');
    assert.equal(problemOf({ ...schedule, shuffle_atevent_start: true }), 'shuffle_atevent_start: unknown setting');
    assert.ok(parseRoomSettings({ event_id: 'A', event_end_time: '2026-11-24T20:00:00Z' }).ok, 'an end alone is fine');
    assert.equal(
      problemOf({ ...schedule, oidc: { redirect_uris: ['https://rp.example/cb'] } }),
      'shuffle_at_event_start: cannot be used with oidc (the login needs a position at the join)',
    );
  });
});

describe('room settings: bot_defence', () => {
  it('absent by default (VWR rooms ask nothing); given, its defaults fill in with the challenge off', () => {
    const plain = parseRoomSettings({ event_id: 'A' });
    assert.ok(plain.ok && !('bot_defence' in plain.settings));
    const given = parseRoomSettings({ event_id: 'A', bot_defence: {} });
    assert.ok(given.ok);
    assert.deepEqual(given.settings.bot_defence, {
      challenge: 'off',
      difficulty: 50_000,
      max_difficulty: 1_000_000,
      room_threshold_per_minute: 600,
      client_threshold_per_minute: 1,
      challenge_ttl: 120,
      require_enqueue_key: false,
      infinite_queue: false,
    });
  });

  it('refuses unknown keys, bad values, a ceiling under the base, and an enqueue key requirement without a secret', () => {
    assert.equal(problemOf({ event_id: 'A', bot_defence: { challange: 'auto' } }), 'bot_defence.challange: unknown setting');
    assert.equal(problemOf({ event_id: 'A', bot_defence: { challenge: 'sometimes' } }), 'bot_defence.challenge: must be "off", "always" or "auto"');
    assert.equal(problemOf({ event_id: 'A', bot_defence: { joins_per_client_per_minute: 0 } }), 'bot_defence.joins_per_client_per_minute: must be a whole number from 1 to 1000000');
    assert.equal(problemOf({ event_id: 'A', bot_defence: { difficulty: 2_000_000 } }), 'bot_defence.max_difficulty: must be at least difficulty (2000000)');
    assert.equal(problemOf({ event_id: 'A', bot_defence: { require_enqueue_key: true } }), 'bot_defence.enqueue_key_secret: is required with require_enqueue_key');
    assert.equal(problemOf({ event_id: 'A', bot_defence: { enqueue_key_secret: 'short' } }), 'bot_defence.enqueue_key_secret: must be 32-256 printable ASCII characters');
  });
});

describe('room settings: the events file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-room-settings-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (content: unknown) => {
    const path = join(dir, `events-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };

  it('an unknown key stops the start with the event, the field and its place in the file named (issue 12)', () => {
    const path = file({ events: [{ event_id: 'A' }, { event_id: 'B', validity_periodd: 60 }] });
    assert.throws(() => readEventsFile(path, defaultEventDefaults()), (error: Error) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(
        error.message,
        `invalid config file ${path}: event "B": validity_periodd: unknown setting (at /events/1/validity_periodd)`,
      );
      return true;
    });
  });

  it('an entry without a valid event_id is named by its index', () => {
    const path = file([{ event_id: 'A' }, { event_id: 'no spaces' }]);
    assert.throws(() => readEventsFile(path, defaultEventDefaults()), /events\[1\]: event_id: must be 1–128/);
  });

  it('flag values are the defaults of every event; the file wins per field', () => {
    const config = configFromOptions({
      dataDir: dir,
      store: 'memory',
      eventId: 'Sample',
      config: file({ events: [{ event_id: 'A', validity_period: 60 }, { event_id: 'B', issuer: 'https://b.example' }] }),
      validityPeriod: 120,
      enableQueuePositionExpiry: false,
      queuePositionExpiryPeriod: 900,
      incrServingOnExpiry: false,
      enableEventsGeneration: true,
      issuer: 'https://flags.example',
      privateBasePath: '/private',
      redisKeyPrefix: 'ar:',
    });
    const [a, b] = config.events;
    assert.equal(a?.validity_period, 60);
    assert.equal(b?.validity_period, 120);
    assert.equal(a?.enable_events_generation, true);
    assert.equal(a?.enable_queue_position_expiry, false);
    assert.equal(a?.issuer, 'https://flags.example');
    assert.equal(b?.issuer, 'https://b.example');
  });
});

describe('room settings: the AWS environment', () => {
  const env = { EVENT_ID: 'Sample', REDIS_HOST: 'redis.internal' };

  it('reads the room through the schema, naming the variable at fault', () => {
    assert.equal(awsConfigFromEnv({ ...env, VALIDITY_PERIOD: '60', ENABLE_EVENTS_GENERATION: 'true' }).event.validity_period, 60);
    assert.throws(() => awsConfigFromEnv({ ...env, VALIDITY_PERIOD: 'soon' }), /^ConfigError: VALIDITY_PERIOD must be a whole number from 1 to 31536000 \(got "soon"\)$/);
    assert.throws(() => awsConfigFromEnv({ ...env, INCR_SVC_ON_QUEUE_POSITION_EXPIRY: 'maybe' }), /INCR_SVC_ON_QUEUE_POSITION_EXPIRY must be true or false/);
    assert.throws(() => awsConfigFromEnv({ ...env, EVENT_ID: 'a/b' }), /EVENT_ID must be 1–128/);
  });
});

describe('room settings: the rules across fields', () => {
  const ok = (input: object) => {
    const result = parseRoomSettings({ event_id: 'A', ...input });
    assert.equal(result.ok, true, result.ok ? '' : describeProblem(result.problem));
  };
  const refused = (input: object) => problemOf({ event_id: 'A', ...input });

  it('the gate\'s bypass IPs are addresses or CIDRs whose prefix fits the family', () => {
    const routes = [{ path: '/' }];
    const gate = (ips: string[]) => ({ gate: { origin: 'https://shop.example', routes, bypass: { ips } } });
    ok(gate(['10.0.0.1', '10.0.0.0/32', '10.0.0.0/0', '::1', '2001:db8::/128']));
    ok({ gate: { origin: 'https://shop.example', routes, bypass: { paths: ['/health'] } } });
    ok({ gate: { origin: 'https://shop.example', routes } });
    assert.equal(refused(gate(['10.0.0.1', '10.0.0.0/33'])), 'gate.bypass.ips[1]: must be an IP address or CIDR');
    assert.equal(refused(gate(['2001:db8::/129'])), 'gate.bypass.ips[0]: must be an IP address or CIDR');
    assert.equal(refused(gate(['shop.example'])), 'gate.bypass.ips[0]: must be an IP address or CIDR');
    // Written like an address (the schema's pattern lets them through), but none: the rule across fields says so.
    assert.equal(refused(gate(['999.1.1.1'])), 'gate.bypass.ips[0]: must be an IP address or CIDR');
    assert.equal(refused(gate(['abc'])), 'gate.bypass.ips[0]: must be an IP address or CIDR');
    assert.equal(refused(gate(['/8'])), 'gate.bypass.ips[0]: must be an IP address or CIDR');
  });

  it('the periodic inlet: end after start (or 0), a pause check shorter than the interval, json_path with threshold', () => {
    const periodic = (extra: object) => ({ inlet: { strategy: 'periodic', increment_by: 1, interval: 10, ...extra } });
    ok(periodic({ start_time: 100, end_time: 0 }));
    ok(periodic({ start_time: 100, end_time: 101 }));
    assert.equal(refused(periodic({ start_time: 100, end_time: 100 })), 'inlet.end_time: must be after start_time (or 0 for no end)');
    assert.equal(refused(periodic({ start_time: 100, end_time: 99 })), 'inlet.end_time: must be after start_time (or 0 for no end)');
    const check = (extra: object) => periodic({ pause_check: { url: 'https://shop.example/health', ...extra } });
    ok(check({ timeout: 9.5 }));
    ok(check({ json_path: '$.cpu', threshold: 2 }));
    assert.equal(refused(check({ timeout: 10 })), 'inlet.pause_check.timeout: must be shorter than the interval (10 s)');
    assert.equal(refused(check({ json_path: '$.cpu' })), 'inlet.pause_check: json_path and threshold go together');
    assert.equal(refused(check({ threshold: 2 })), 'inlet.pause_check: json_path and threshold go together');
    assert.equal(
      refused(check({ json_path: '$.cpu..load', threshold: 2 })),
      'inlet.pause_check.json_path: use a dotted path like $.cpu.load or a JSON Pointer like /cpu/load',
    );
    // The max_size inlet has none of these.
    ok({ inlet: { strategy: 'max_size', max_size: 10 } });
  });

  it('a pause check alone (the standalone inlet\'s flags) has the same rules and its default timeout', () => {
    const parsed = parsePauseCheck({ url: 'https://shop.example/health' });
    assert.deepEqual(parsed, { ok: true, settings: { url: 'https://shop.example/health', timeout: DEFAULT_PAUSE_TIMEOUT } });
    assert.equal(DEFAULT_PAUSE_TIMEOUT, 5);
    assert.equal(DEFAULT_PERIODIC_INTERVAL, 60);
    const bad = parsePauseCheck({ url: 'https://shop.example/health', json_path: 'a' });
    assert.deepEqual(bad, { ok: false, problem: { path: [], rule: 'json_path and threshold go together' } });
    const badPath = parsePauseCheck({ url: 'https://shop.example/health', json_path: 'a.', threshold: 1 });
    assert.deepEqual(badPath.ok ? null : badPath.problem.path, ['json_path']);
    const schema = parsePauseCheck({ url: 'ftp://x' });
    assert.equal(schema.ok ? '' : describeProblem(schema.problem), 'url: must be an http(s) URL of at most 2048 characters');
  });

  it('json paths: a JSON Pointer, or a dotted path with an optional "$." and no empty segment', () => {
    for (const path of ['/cpu/load', '/a..b', '/', '$', '$.', '', '$.cpu', '$cpu', 'cpu.load', 'measurements.0.value']) assert.equal(isJsonPath(path), true, path);
    for (const path of ['$..cpu', 'cpu.', '.cpu', 'a..b', 'cpu$.']) assert.equal(isJsonPath(path), false, path);
  });

  it('one scalar setting alone, named', () => {
    assert.equal(scalarSettingProblem('validity_period', 60), undefined);
    assert.deepEqual(scalarSettingProblem('validity_period', 0), { path: ['validity_period'], rule: 'must be a whole number from 1 to 31536000' });
  });

  it('the schedule: an end after the start, a pre-queue before it; a draw needs a start and no OpenID Connect login', () => {
    const at = (s: string) => `2026-11-24T${s}Z`;
    ok({ event_start_time: at('18:00:00'), event_end_time: at('18:00:01') });
    ok({ event_end_time: at('18:00:00') });
    ok({ prequeue_start_time: at('17:59:59'), event_start_time: at('18:00:00') });
    assert.equal(refused({ event_start_time: at('18:00:00'), event_end_time: at('18:00:00') }), 'event_end_time: must be after event_start_time');
    assert.equal(refused({ prequeue_start_time: at('18:00:00'), event_start_time: at('18:00:00') }), 'prequeue_start_time: must be before event_start_time');
    assert.equal(refused({ prequeue_start_time: at('18:00:00') }), 'event_start_time: is required with prequeue_start_time');
    ok({ event_start_time: at('18:00:00'), shuffle_at_event_start: false, oidc: { redirect_uris: ['https://rp.example/cb'] } });
    assert.equal(
      refused({ event_start_time: at('18:00:00'), shuffle_at_event_start: true, oidc: { redirect_uris: ['https://rp.example/cb'] } }),
      'shuffle_at_event_start: cannot be used with oidc (the login needs a position at the join)',
    );
  });

  it('bot defence: a ceiling at least the base; an enqueue key needs its secret and no draw', () => {
    const defence = (extra: object) => ({ bot_defence: { difficulty: 1000, ...extra } });
    ok(defence({ max_difficulty: 1000 }));
    assert.equal(refused(defence({ max_difficulty: 999 })), 'bot_defence.max_difficulty: must be at least difficulty (1000)');
    const secret = 's'.repeat(32);
    ok(defence({ enqueue_key_secret: secret, require_enqueue_key: true }));
    ok({ ...defence({}), event_start_time: '2026-11-24T18:00:00Z', shuffle_at_event_start: true });
    ok({ ...defence({ enqueue_key_secret: secret }), event_start_time: '2026-11-24T18:00:00Z', shuffle_at_event_start: false });
    assert.equal(
      refused({ ...defence({ enqueue_key_secret: secret }), event_start_time: '2026-11-24T18:00:00Z', shuffle_at_event_start: true }),
      'bot_defence.enqueue_key_secret: cannot be used with shuffle_at_event_start',
    );
  });
});

describe('room settings: the bounds of each setting (docs/rooms.md, docs/gate.md, docs/integrations.md)', () => {
  const at = (s: string) => `2026-11-24T${s}Z`;
  const periodic = (extra: object) => ({ inlet: { strategy: 'periodic', increment_by: 1, ...extra } });
  const check = (extra: object) => periodic({ interval: 60, pause_check: { url: 'https://shop.example/health', ...extra } });
  const oidc = (extra: object) => ({ oidc: { redirect_uris: ['https://rp.example/cb'], ...extra } });
  const gate = (extra: object) => ({ gate: { origin: 'https://shop.example', routes: [{ path: '/' }], ...extra } });
  const bypass = (extra: object) => gate({ bypass: extra });
  const many = (n: number, item: unknown) => Array.from({ length: n }, () => item);

  // [what, accepted, refused, the field the refusal names]
  const cases: [string, object, object, string][] = [
    ['interval', periodic({ interval: 86_400 }), periodic({ interval: 86_401 }), 'inlet.interval'],
    ['interval ≥ 1', periodic({ interval: 1 }), periodic({ interval: 0 }), 'inlet.interval'],
    ['increment_by', periodic({ increment_by: 1_000_000 }), periodic({ increment_by: 1_000_001 }), 'inlet.increment_by'],
    ['increment_by ≥ 1', periodic({ increment_by: 1 }), periodic({ increment_by: 0 }), 'inlet.increment_by'],
    ['start_time', periodic({ start_time: 0 }), periodic({ start_time: -1 }), 'inlet.start_time'],
    ['the periodic inlet\'s keys', periodic({}), periodic({ max_size: 5 }), 'inlet.max_size'],
    ['max_size', { inlet: { strategy: 'max_size', max_size: 0 } }, { inlet: { strategy: 'max_size', max_size: -1 } }, 'inlet.max_size'],
    ['max_size at most', { inlet: { strategy: 'max_size', max_size: 1_000_000_000 } }, { inlet: { strategy: 'max_size', max_size: 1_000_000_001 } }, 'inlet.max_size'],
    ['pause_check.url', check({}), check({ url: 'ftp://shop.example/health' }), 'inlet.pause_check.url'],
    ['pause_check.timeout', check({ timeout: 59.5 }), check({ timeout: 0 }), 'inlet.pause_check.timeout'],
    ['pause_check.timeout at most 60', check({ timeout: 59 }), check({ timeout: 61 }), 'inlet.pause_check.timeout'],
    ['json_path length', check({ json_path: 'a', threshold: 1 }), check({ json_path: '', threshold: 1 }), 'inlet.pause_check.json_path'],
    ['json_path at most 256', check({ json_path: 'a'.repeat(256), threshold: 1 }), check({ json_path: 'a'.repeat(257), threshold: 1 }), 'inlet.pause_check.json_path'],
    ['threshold is a number', check({ json_path: 'a', threshold: 0.5 }), check({ json_path: 'a', threshold: 'high' }), 'inlet.pause_check.threshold'],
    ['redirect_uris at least one', oidc({}), oidc({ redirect_uris: [] }), 'oidc.redirect_uris'],
    ['redirect_uris at most 100', oidc({ redirect_uris: many(100, 'https://rp.example/cb') }), oidc({ redirect_uris: many(101, 'https://rp.example/cb') }), 'oidc.redirect_uris'],
    ['client_secret', oidc({ client_secret: 'x'.repeat(16) }), oidc({ client_secret: 'x'.repeat(15) }), 'oidc.client_secret'],
    ['gate routes at least one', gate({}), gate({ routes: [] }), 'gate.routes'],
    ['a route\'s keys', gate({ routes: [{ path: '/', host: 'shop.example:8443' }] }), gate({ routes: [{ path: '/', port: 1 }] }), 'gate.routes[0].port'],
    ['a route\'s host', gate({ routes: [{ path: '/', host: 'shop.example' }] }), gate({ routes: [{ path: '/', host: 'shop example' }] }), 'gate.routes[0].host'],
    ['a route\'s path', gate({ routes: [{ path: '/a' }] }), gate({ routes: [{ path: 'a' }] }), 'gate.routes[0].path'],
    ['the gate\'s keys', gate({}), gate({ port: 1 }), 'gate.port'],
    ['bypass paths', bypass({ paths: ['/health'] }), bypass({ paths: ['health'] }), 'gate.bypass.paths[0]'],
    ['bypass paths at most 100', bypass({ paths: many(100, '/a') }), bypass({ paths: many(101, '/a') }), 'gate.bypass.paths'],
    ['bypass ips', bypass({ ips: ['10.0.0.1'] }), bypass({ ips: ['ten'] }), 'gate.bypass.ips[0]'],
    ['bypass ips at most 100', bypass({ ips: many(100, '10.0.0.1') }), bypass({ ips: many(101, '10.0.0.1') }), 'gate.bypass.ips'],
    ['bypass header names', bypass({ headers: { 'x-key': 'v' } }), bypass({ headers: { 'x key': 'v' } }), 'gate.bypass.headers'],
    ['bypass header values', bypass({ headers: { 'x-key': 'v' } }), bypass({ headers: { 'x-key': '' } }), 'gate.bypass.headers'],
    ['the bypass\'s keys', bypass({}), bypass({ cookies: [] }), 'gate.bypass.cookies'],
    ['queueing_status_code', gate({ queueing_status_code: 599 }), gate({ queueing_status_code: 600 }), 'gate.queueing_status_code'],
    ['queueing_status_code ≥ 200', gate({ queueing_status_code: 200 }), gate({ queueing_status_code: 199 }), 'gate.queueing_status_code'],
    ['challenge', { bot_defence: { challenge: 'auto' } }, { bot_defence: { challenge: 'sometimes' } }, 'bot_defence.challenge'],
    ['issuer', { issuer: 'i' }, { issuer: '' }, 'issuer'],
    ['issuer at most 512', { issuer: 'i'.repeat(512) }, { issuer: 'i'.repeat(513) }, 'issuer'],
    ['allowed_return_origins', { allowed_return_origins: ['https://shop.example'] }, { allowed_return_origins: ['https://shop.example/cart'] }, 'allowed_return_origins[0]'],
    ['allowed_api_origins', { allowed_api_origins: ['https://api.example'] }, { allowed_api_origins: ['https://api.example/v1'] }, 'allowed_api_origins[0]'],
    ['allowed_api_origins at most 100', { allowed_api_origins: many(100, 'https://api.example') }, { allowed_api_origins: many(101, 'https://api.example') }, 'allowed_api_origins'],
    ['allowed_return_origins at most 100', { allowed_return_origins: many(100, 'https://shop.example') }, { allowed_return_origins: many(101, 'https://shop.example') }, 'allowed_return_origins'],
    ['shuffle_at_event_start', { event_start_time: at('18:00:00'), shuffle_at_event_start: true }, { shuffle_at_event_start: 'yes' }, 'shuffle_at_event_start'],
  ];

  for (const [what, accepted, refused, field] of cases) {
    it(what, () => {
      const good = parseRoomSettings({ event_id: 'A', ...accepted });
      assert.equal(good.ok, true, good.ok ? '' : describeProblem(good.problem));
      assert.ok(problemOf({ event_id: 'A', ...refused }).startsWith(`${field}`), `${field} named`);
    });
  }
});

describe('room settings: each refusal states its rule in words (the schema\'s errorMessage texts)', () => {
  const gate = (extra: object) => ({ gate: { origin: 'https://shop.example', routes: [{ path: '/' }], ...extra } });
  const oidc = (extra: object) => ({ oidc: { redirect_uris: ['https://rp.example/cb'], ...extra } });
  // [input, the whole problem text]
  const cases: [object, string][] = [
    [{ webhooks: [{ url: 'ftp://hooks.example', secret: '0123456789abcdef' }] }, 'webhooks[0].url: must be an http(s) URL of at most 2048 characters'],
    [{ event_start_time: '2026-11-24 18:00' }, 'event_start_time: must be an ISO 8601 UTC time like 2026-11-24T18:00:00Z'],
    [oidc({ client_secret: 'short' }), 'oidc.client_secret: must be 16-256 printable ASCII characters'],
    [oidc({ redirect_uris: ['https://rp.example/cb#frag'] }), 'oidc.redirect_uris[0]: must be an absolute http(s) URL with a host and no fragment, of at most 2048 characters'],
    [oidc({ redirect_uris: ['https:///cb'] }), 'oidc.redirect_uris[0]: must be an absolute http(s) URL with a host and no fragment, of at most 2048 characters'],
    [{ gate: { origin: 'https://shop.example/cart', routes: [{ path: '/' }] } }, 'gate.origin: must be an origin like https://shop.example.com (scheme, host and port only)'],
    [gate({ routes: [{ path: '/', host: 'shop example' }] }), 'gate.routes[0].host: must be a host name, optionally with :port'],
    [gate({ routes: [{ path: 'a' }] }), 'gate.routes[0].path: must start with /'],
    [gate({ bypass: { ips: ['ten'] } }), 'gate.bypass.ips[0]: must be an IP address or CIDR'],
    [{ bot_defence: { challenge: 'sometimes' } }, 'bot_defence.challenge: must be "off", "always" or "auto"'],
    [{ bot_defence: { enqueue_key_secret: 'short' } }, 'bot_defence.enqueue_key_secret: must be 32-256 printable ASCII characters'],
    [{ admission: 'sometimes' }, 'admission: must be "manual" or "automatic"'],
    [{ state: 'ajar' }, 'state: must be "open", "paused", "closed" or "off"'],
    [{ signing_algorithm: 'HS256' }, 'signing_algorithm: must be "RS256", "ES256" or "EdDSA"'],
    [{ page: '' }, 'page: must be an HTML template of 1 to 1048576 characters'],
  ];
  for (const [input, text] of cases) {
    it(text.slice(0, text.indexOf(':')), () => {
      assert.equal(problemOf({ event_id: 'A', ...input }), text);
    });
  }
});

describe('room settings: every value of each choice is accepted', () => {
  const choices: [string, string[]][] = [
    ['state', ['open', 'paused', 'closed', 'off']],
    ['signing_algorithm', ['RS256', 'ES256', 'EdDSA']],
    ['admission', ['manual']],
  ];
  for (const [field, values] of choices) {
    it(`${field}: ${values.join(', ')}`, () => {
      for (const value of values) {
        const parsed = parseRoomSettings({ event_id: 'A', [field]: value });
        assert.equal(parsed.ok, true, `${field} ${value}: ${parsed.ok ? '' : describeProblem(parsed.problem)}`);
        assert.equal(((parsed as { settings: unknown }).settings as Record<string, unknown>)[field], value);
      }
    });
  }

  it('bot_defence.challenge: off, always, auto', () => {
    for (const challenge of ['off', 'always', 'auto']) {
      const parsed = parseRoomSettings({ event_id: 'A', bot_defence: { challenge } });
      assert.equal(parsed.ok, true, `${challenge}: ${parsed.ok ? '' : describeProblem(parsed.problem)}`);
      assert.equal((parsed as { settings: RoomSettings }).settings.bot_defence?.challenge, challenge);
    }
  });

  it('the inlet (a choice of sections) and the return origins\' entries are described too (the OpenAPI document shows them)', () => {
    const { inlet, allowed_return_origins: origins } = RoomSettingsSchema.properties;
    assert.match(String(inlet.description), /serving counter/);
    assert.match(String((origins.items as TSchema).description), /origin/);
  });
});
