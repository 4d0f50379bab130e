// Settings of one event (one waiting room): their types, and the one schema every source of settings goes
// through — the events file, the flags and ANTEROOM_* variables of `anteroom serve`, the environment of the AWS
// functions (and the rooms API to come). The schema states each setting's type, range, default and meaning
// once; unknown keys are refused at every level, so a misspelt setting stops the start instead of being
// silently ignored. Defaults are those of VWR's core stack.

import { isIP } from 'node:net';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { BrandingSchema, brandingRuleProblem, type Branding } from './page-branding.ts';
import { Secret } from './secret-settings.ts';
import { schemaProblem, type Parsed, type SettingProblem } from './setting-problems.ts';
import { PresenceSettingProperties, presenceRuleProblem, type PresenceSettings } from './presence-settings.ts';

export interface WebhookTarget {
  url: string;
  /** HMAC-SHA256 key for the X-Anteroom-Signature header. Never returned by any API nor logged. */
  secret: string;
}

/** Presence and the arrival window: src/domain/presence-settings.ts. */
export interface RoomSettings extends PresenceSettings {
  event_id: string;
  validity_period: number;
  enable_queue_position_expiry: boolean;
  queue_position_expiry_period: number;
  incr_serving_on_expiry: boolean;
  enable_events_generation: boolean;
  // ---- Admission (spec rooms.md §2; rules in src/domain/admission/automatic.ts and src/domain/room-phase.ts) ----
  /** manual: VWR's (increment_serving_counter, inlets, expiry move the counter); automatic: the room admits by itself. */
  admission: 'manual' | 'automatic';
  /** automatic: at most this many admissions in any 60 s (at most ⌈n/60⌉ in any second). */
  new_users_per_minute?: number;
  /** automatic: at most this many visitors in at once (admitted and not yet claimed, plus active sessions). */
  total_active_users?: number;
  /** Seconds: a gate session ends after this long without a request. */
  session_duration: number;
  /** false: a session ends session_duration after admission, whatever the traffic. */
  session_renewal: boolean;
  /** open; paused: joins accepted, nobody admitted; closed: no new joins; off: every arrival admitted at once. */
  state: RoomState;
  /** Token issuer; when absent the server's public base URL is used. */
  issuer?: string;
  /** The tokens' JWS algorithm (issue 15): RS256 by default, as VWR's clients and authorizer expect. */
  signing_algorithm: 'RS256' | 'ES256' | 'EdDSA';
  webhooks: WebhookTarget[];
  /** Who moves the serving counter from inside the server (spec/integrations.md §3); none = manual. */
  inlet?: InletSettings;
  /** The event as an OpenID Connect client (spec/integrations.md §2); absent = no OIDC for this event. */
  oidc?: OidcClientSettings;
  // ---- Schedule and the draw (spec rooms.md §3); times are ISO 8601 UTC, stored as given ----
  /** Joins open at this time; with shuffle_at_event_start they wait in the pre-queue until the draw. */
  prequeue_start_time?: string;
  /** Admission starts (nobody is admitted before); with shuffle_at_event_start the draw runs at this time. */
  event_start_time?: string;
  /** After this time the room is closed. */
  event_end_time?: string;
  /** Everyone who joined before the start gets a random place at the start (the verifiable draw). */
  shuffle_at_event_start?: boolean;
  // ---- The gate and the hand-off (spec rooms.md §5; docs/gate.md) ----
  /** What this room protects behind `anteroom serve --gate-port`; absent = the room protects nothing there. */
  gate?: GateSettings;
  /** Origins the waiting-room page may send a served visitor back to (return_to, the hand-off). */
  allowed_return_origins?: string[];
  /** Origins, besides its own, the waiting-room page may use as its public API and sample store (publicApiUrl, commerceApiUrl). */
  allowed_api_origins?: string[];
  /** Keeping bots out of the line (docs/bots.md); absent = no defence (VWR's behaviour). */
  bot_defence?: BotDefenceSettings;
  // ---- The visitor's page (docs/pages.md "Templates") ----
  /** The waiting-room page of this room: a Mustache template (≤ 1 MiB); absent = the default page. */
  page?: string;
  /** The default page's words and look (./page-branding.ts); absent = the plain default page. */
  branding?: Branding;
}

/** A room's gate (spec rooms.md §5): the protected origin, the requests it answers, and who skips the queue. */
export interface GateSettings {
  /** Where admitted requests go: http(s)://host[:port], no path. */
  origin: string;
  /** The requests of this room: the longest matching path for the request's host wins; no host = any host. */
  routes: GateRoute[];
  bypass?: GateBypass;
  /** Status of the waiting page (200 keeps crawlers and monitors quiet; 503 tells them to come back). */
  queueing_status_code: number;
  /** Verify at the edge (docs/edge.md): seconds an edge cookie admits before the edge asks Anteroom again. */
  edge_renewal_interval?: number;
  /** Pass the visitor's `anteroom_token` cookie on to the origin (for a site that checks it itself). Default false. */
  forward_token_cookie?: boolean;
}

export interface GateRoute {
  host?: string;
  path: string;
}

/** Requests that go straight to the origin, not counted: path prefixes, client IPs or CIDRs, exact header values. */
export interface GateBypass {
  paths?: string[];
  ips?: string[];
  headers?: Record<string, string>;
}

/** Proof of work at join, per-client join limits and one place per identity (docs/bots.md). */
export interface BotDefenceSettings {
  /** off: no challenge; always: every join solves one; auto: when the room's or the client's join rate passes its threshold. */
  challenge: 'off' | 'always' | 'auto';
  /** Work of a challenge at rest: SHA-256 hashes the page computes on average is about 0.75 × this. */
  difficulty: number;
  /** The ceiling of the automatic raise under a flood. */
  max_difficulty: number;
  /** Join attempts in the room per minute (all nodes) from which `auto` asks everyone, and difficulty doubles per multiple. */
  room_threshold_per_minute: number;
  /** `auto` asks a client making more join attempts in the room a minute than this (1: its second join within a minute). */
  client_threshold_per_minute: number;
  /** Seconds a challenge stays valid. */
  challenge_ttl: number;
  /** Joins of one client (IP) in this room per minute, all nodes; over it: 429 with Retry-After. Absent = no limit. */
  joins_per_client_per_minute?: number;
  /** HMAC-SHA256 key of enqueue keys signed by the site; write-only (never answered nor logged). */
  enqueue_key_secret?: string;
  /** Refuse joins without a valid enqueue key (needs enqueue_key_secret). */
  require_enqueue_key: boolean;
  /** Joins with a failed proof of work or over the client limit get a place that is never served instead of a refusal. */
  infinite_queue: boolean;
}

/** What an operator sets a room to (spec rooms.md §2); its phase also depends on the schedule (room-phase.ts). */
export type RoomState = 'open' | 'paused' | 'closed' | 'off';

/** OpenID Connect client of one event: client_id = event_id. */
export interface OidcClientSettings {
  /** When absent, one is generated (50 alphanumerics) and kept in the store, shared by every node. */
  client_secret?: string;
  /** The only redirect URIs accepted, compared exactly (no prefix or pattern matching). */
  redirect_uris: string[];
}

/** "Site struggling" signal of the periodic inlet: non-2xx, or the JSON value at json_path > threshold. */
export interface PauseCheckSettings {
  url: string;
  json_path?: string;
  threshold?: number;
  /** Seconds to wait for the answer before treating the site as struggling. */
  timeout: number;
}

export type InletSettings =
  | {
      strategy: 'periodic';
      /** Seconds between increments. */
      interval: number;
      increment_by: number;
      /** Epoch seconds; increments happen while start_time < now < end_time (end_time 0 = no end). */
      start_time: number;
      end_time: number;
      pause_check?: PauseCheckSettings;
    }
  | { strategy: 'max_size'; max_size: number };

export const DEFAULT_EVENT_ID = 'Sample';

/** Event IDs are names in URLs, keys and log lines: keep them short and printable. */
export const EVENT_ID_PATTERN = '^[A-Za-z0-9._~-]{1,128}$';

// ---- the schema ----
// A secret setting is wrapped in Secret(…) (secret-settings.ts): that one mark keeps it out of every answer,
// audit entry and log line, and lets an answer be written back without erasing it.

const HttpUrl = (description: string) =>
  Type.String({ pattern: '^https?://', maxLength: 2048, description, errorMessage: 'must be an http(s) URL of at most 2048 characters' });

/** A period in seconds: at least one, at most a year. */
const PeriodSeconds = (options: { default: number; description: string }) =>
  Type.Integer({ minimum: 1, maximum: 31_536_000, ...options });

const EpochSeconds = (description: string) => Type.Integer({ minimum: 0, maximum: 253_402_300_799, default: 0, description });

/** A time as ISO 8601 in UTC, to the second (fractions allowed): 2026-11-24T18:00:00Z. */
const UtcTime = (description: string) =>
  Type.String({
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,3})?Z$',
    description,
    errorMessage: 'must be an ISO 8601 UTC time like 2026-11-24T18:00:00Z',
  });

export const WebhookSchema = Type.Object(
  {
    url: HttpUrl('where the event envelopes are POSTed'),
    secret: Secret(Type.String({ minLength: 16, maxLength: 256, description: 'HMAC-SHA256 key of the X-Anteroom-Signature header (write-only)' })),
  },
  { additionalProperties: false },
);

export const PauseCheckSchema = Type.Object(
  {
    url: HttpUrl('health URL: a non-2xx answer, a timeout or no answer pauses the inlet'),
    json_path: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'number in the JSON answer: $.cpu.load or /cpu/load (with threshold)' }),
    ),
    threshold: Type.Optional(Type.Number({ description: 'the inlet pauses while the number at json_path is over this' })),
    timeout: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 60, default: 5, description: 'seconds to wait for the answer' }),
    ),
  },
  { additionalProperties: false },
);

export const PeriodicInletSchema = Type.Object(
  {
    strategy: Type.Literal('periodic', { description: 'periodic: increment_by visitors let in every interval' }),
    interval: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, default: 60, description: 'seconds between increments' })),
    increment_by: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'visitors let in per tick' }),
    start_time: Type.Optional(EpochSeconds('epoch seconds; ticks admit while start_time < now')),
    end_time: Type.Optional(EpochSeconds('epoch seconds; ticks admit while now < end_time (0 = no end)')),
    pause_check: Type.Optional(PauseCheckSchema),
  },
  { additionalProperties: false },
);

export const MaxSizeInletSchema = Type.Object(
  {
    strategy: Type.Literal('max_size', { description: 'max_size: the site reports who left; the counter keeps max_size visitors in' }),
    max_size: Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'how many visitors may hold an active token at once' }),
  },
  { additionalProperties: false },
);

export const OidcClientSchema = Type.Object(
  {
    client_secret: Type.Optional(
      Secret(
        Type.String({
          pattern: '^[\\x21-\\x7E]{16,256}$',
          description: 'generated (50 alphanumerics) and kept in the store when absent (write-only)',
          errorMessage: 'must be 16-256 printable ASCII characters',
        }),
      ),
    ),
    redirect_uris: Type.Array(
      Type.String({
        pattern: '^https?://[^\\s#/?]+[^\\s#]*$',
        maxLength: 2048,
        errorMessage: 'must be an absolute http(s) URL with a host and no fragment, of at most 2048 characters',
      }),
      { minItems: 1, maxItems: 100, description: 'the only redirect URIs accepted, compared exactly' },
    ),
  },
  { additionalProperties: false },
);

const Origin = (description: string) =>
  Type.String({
    pattern: '^https?://[^/?#\\s]+$',
    maxLength: 2048,
    description,
    errorMessage: 'must be an origin like https://shop.example.com (scheme, host and port only)',
  });

export const GateSchema = Type.Object(
  {
    origin: Origin('where admitted requests go (scheme, host and port)'),
    routes: Type.Array(
      Type.Object(
        {
          host: Type.Optional(
            Type.String({
              pattern: '^[A-Za-z0-9.-]+(:[0-9]{1,5})?$',
              maxLength: 260,
              description: 'the Host the request names (absent: any host)',
              errorMessage: 'must be a host name, optionally with :port',
            }),
          ),
          path: Type.String({ pattern: '^/', maxLength: 2048, description: 'path prefix, matched by whole segments', errorMessage: 'must start with /' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100, default: [{ path: '/' }], description: 'the requests of this room (longest path per host wins)' },
    ),
    bypass: Type.Optional(
      Type.Object(
        {
          paths: Type.Optional(Type.Array(Type.String({ pattern: '^/', maxLength: 2048 }), { maxItems: 100, description: 'path prefixes that skip the queue' })),
          ips: Type.Optional(
            Type.Array(
              Type.String({ pattern: '^[0-9A-Fa-f.:]+(/[0-9]{1,3})?$', maxLength: 64, errorMessage: 'must be an IP address or CIDR' }),
              { maxItems: 100, description: 'client IPs or CIDRs that skip the queue' },
            ),
          ),
          headers: Type.Optional(
            Type.Record(Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$' }), Secret(Type.String({ minLength: 1, maxLength: 1024 })), {
              description: 'request headers whose exact value skips the queue (compared in constant time; the values are write-only)',
              // A name outside the pattern is refused, not ignored (a Record's key pattern alone lets it through).
              additionalProperties: false,
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    queueing_status_code: Type.Optional(
      Type.Integer({ minimum: 200, maximum: 599, default: 200, description: 'status of the waiting page' }),
    ),
    edge_renewal_interval: Type.Optional(
      Type.Integer({
        minimum: 5,
        maximum: 3600,
        description: 'verify at the edge (docs/edge.md): seconds an edge cookie admits before the edge asks Anteroom again (absent: session_duration / 10, at least 5)',
      }),
    ),
    forward_token_cookie: Type.Optional(
      Type.Boolean({
        default: false,
        description: "pass the visitor's anteroom_token cookie on to the origin, for a site that checks the token itself (default: every Anteroom cookie is removed from what the origin receives)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const BotDefenceSchema = Type.Object(
  {
    challenge: Type.Optional(
      Type.Union([Type.Literal('off'), Type.Literal('always'), Type.Literal('auto')], {
        default: 'off',
        description: 'proof of work at join: off; always; auto = when the room\'s or one client\'s join rate passes its threshold',
        errorMessage: 'must be "off", "always" or "auto"',
      }),
    ),
    difficulty: Type.Optional(
      Type.Integer({ minimum: 100, maximum: 100_000_000, default: 50_000, description: 'work of a challenge at rest (about 0.75 × this SHA-256 hashes)' }),
    ),
    max_difficulty: Type.Optional(
      Type.Integer({ minimum: 100, maximum: 100_000_000, default: 1_000_000, description: 'ceiling of the automatic raise under a flood' }),
    ),
    room_threshold_per_minute: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000_000,
        default: 600,
        description: 'auto challenges everyone once the room\'s join attempts come faster than this a minute (measured over about a second) and until they have stayed under it for a minute; difficulty doubles at each further doubling',
      }),
    ),
    client_threshold_per_minute: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'auto challenges a client making more join attempts a minute than this (1: its second join within a minute)' }),
    ),
    challenge_ttl: Type.Optional(
      Type.Integer({ minimum: 10, maximum: 3600, default: 120, description: 'seconds a challenge stays valid (each is used once)' }),
    ),
    joins_per_client_per_minute: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'joins of one client IP a minute across all nodes; then 429 with Retry-After' }),
    ),
    enqueue_key_secret: Type.Optional(
      Secret(
        Type.String({
          pattern: '^[\\x21-\\x7E]{32,256}$',
          description: 'HMAC-SHA256 key of the enqueue keys the site signs (write-only)',
          errorMessage: 'must be 32-256 printable ASCII characters',
        }),
      ),
    ),
    require_enqueue_key: Type.Optional(
      Type.Boolean({ default: false, description: 'refuse joins without a valid enqueue key (needs enqueue_key_secret)' }),
    ),
    infinite_queue: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'a join with an invalid or replayed proof of work, or over joins_per_client_per_minute, gets a place that is never served instead of a 403/429',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RoomSettingsSchema = Type.Object(
  {
    event_id: Type.String({
      pattern: EVENT_ID_PATTERN,
      description: 'the event (waiting room): its name in URLs, keys and log lines',
      errorMessage: "must be 1–128 letters, digits, '.', '_', '~' or '-'",
    }),
    validity_period: Type.Optional(PeriodSeconds({ default: 3600, description: 'lifetime of issued tokens' })),
    enable_queue_position_expiry: Type.Optional(
      Type.Boolean({ default: true, description: 'expire positions not claimed in time' }),
    ),
    queue_position_expiry_period: Type.Optional(
      PeriodSeconds({ default: 900, description: 'time a served visitor has to claim a token' }),
    ),
    incr_serving_on_expiry: Type.Optional(
      Type.Boolean({ default: false, description: 'give the places of expired positions to the next visitors' }),
    ),
    enable_events_generation: Type.Optional(
      Type.Boolean({ default: false, description: 'emit waiting_room_metrics events every metrics interval' }),
    ),
    // ---- Admission ----
    admission: Type.Optional(
      Type.Union([Type.Literal('manual'), Type.Literal('automatic')], {
        default: 'manual',
        description: 'manual: the counter moves through increment_serving_counter, inlets and expiry (VWR); automatic: the room admits by itself within new_users_per_minute and total_active_users',
        errorMessage: 'must be "manual" or "automatic"',
      }),
    ),
    new_users_per_minute: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'automatic: admissions in any 60 s (at most ⌈n/60⌉ a second)' }),
    ),
    total_active_users: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000_000,
        description: 'automatic: visitors in at once (admitted and not yet claimed, plus active sessions)',
      }),
    ),
    ...PresenceSettingProperties,
    session_duration: Type.Optional(PeriodSeconds({ default: 300, description: 'a gate session ends after this long without a request' })),
    session_renewal: Type.Optional(
      Type.Boolean({ default: true, description: 'false: a session ends session_duration after admission, whatever the traffic' }),
    ),
    state: Type.Optional(
      Type.Union([Type.Literal('open'), Type.Literal('paused'), Type.Literal('closed'), Type.Literal('off')], {
        default: 'open',
        description: 'paused: joins accepted, nobody admitted; closed: joins refused; off: no queue, every arrival admitted',
        errorMessage: 'must be "open", "paused", "closed" or "off"',
      }),
    ),
    issuer: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'token issuer (default: the public URL)' })),
    signing_algorithm: Type.Optional(
      Type.Union([Type.Literal('RS256'), Type.Literal('ES256'), Type.Literal('EdDSA')], {
        default: 'RS256',
        description: "the tokens' JWS algorithm: RS256 (what VWR's clients and authorizer expect), ES256 (signs ~6× faster) or EdDSA (Ed25519, ~10× faster)",
        errorMessage: 'must be "RS256", "ES256" or "EdDSA"',
      }),
    ),
    webhooks: Type.Optional(Type.Array(WebhookSchema, { maxItems: 20, default: [], description: 'where the event\'s events are POSTed' })),
    inlet: Type.Optional(
      Type.Union([PeriodicInletSchema, MaxSizeInletSchema], {
        discriminator: 'strategy',
        description: 'who moves the serving counter from inside the server (none = manual)',
      }),
    ),
    oidc: Type.Optional(OidcClientSchema),
    // ---- Schedule and the draw ----
    prequeue_start_time: Type.Optional(
      UtcTime('joins open at this time (before it: 403); with shuffle_at_event_start they wait for the draw'),
    ),
    event_start_time: Type.Optional(UtcTime('admission starts; with shuffle_at_event_start the draw runs then')),
    event_end_time: Type.Optional(UtcTime('after this time the room is closed')),
    shuffle_at_event_start: Type.Optional(
      Type.Boolean({ description: 'everyone who joined before the start gets a random place at the start (needs event_start_time)' }),
    ),
    // ---- The gate and the hand-off ----
    gate: Type.Optional(GateSchema),
    allowed_return_origins: Type.Optional(
      Type.Array(Origin('an origin return_to may point at'), { maxItems: 100, description: 'origins the waiting-room page may send a served visitor back to' }),
    ),
    allowed_api_origins: Type.Optional(
      Type.Array(Origin('an origin the waiting-room page may call'), {
        maxItems: 100,
        description: "origins, besides the page's own, the waiting-room page may use as its public API (publicApiUrl) and sample store (commerceApiUrl)",
      }),
    ),
    bot_defence: Type.Optional(BotDefenceSchema),
    // ---- The visitor's page ----
    page: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1_048_576,
        description: 'the waiting-room page: an HTML Mustache template with the variables of docs/pages.md (absent: the default page)',
        errorMessage: 'must be an HTML template of 1 to 1048576 characters',
      }),
    ),
    branding: Type.Optional(BrandingSchema),
  },
  { additionalProperties: false },
);

/** What a source of settings gives: event_id, and any other setting (the rest take their defaults). */
export type RoomSettingsInput = Static<typeof RoomSettingsSchema>;

/** Defaults for the settings an input leaves out, in place of the schema's: the flags of `anteroom serve`. */
export type RoomDefaults = Partial<Omit<RoomSettings, 'event_id'>>;

/** The settings given as one value each by flags and environment variables. */
export type ScalarSettingName =
  | 'validity_period'
  | 'enable_queue_position_expiry'
  | 'queue_position_expiry_period'
  | 'incr_serving_on_expiry'
  | 'enable_events_generation'
  | 'issuer'
  | 'signing_algorithm';

const defaultOf = <T>(schema: TSchema): T => schema.default as T;

export const DEFAULT_PERIODIC_INTERVAL = defaultOf<number>(PeriodicInletSchema.properties.interval);
export const DEFAULT_PAUSE_TIMEOUT = defaultOf<number>(PauseCheckSchema.properties.timeout);

export function defaultSettings(eventId: string = DEFAULT_EVENT_ID): RoomSettings {
  return Value.Default(RoomSettingsSchema, { event_id: eventId }) as RoomSettings;
}

// ---- parsing ----

/**
 * The settings of a room from an input object (a JSON document's entry, or values read from flags or the
 * environment): checked against the schema, with `defaults` then the schema's defaults for what it leaves
 * out (the input wins per field). A problem names the first field at fault, from the room.
 */
export function parseRoomSettings(input: unknown, defaults: RoomDefaults = {}): Parsed<RoomSettings> {
  const problem = schemaProblem(RoomSettingsSchema, input);
  if (problem) return { ok: false, problem };
  const merged = Value.Clone({ ...defaults, ...(input as RoomSettingsInput) });
  const settings = Value.Default(RoomSettingsSchema, merged) as RoomSettings;
  const ruleProblem =
    (settings.inlet ? inletRuleProblem(settings.inlet) : undefined) ??
    admissionRuleProblem(settings) ??
    presenceRuleProblem(settings) ??
    scheduleRuleProblem(settings) ??
    gateRuleProblem(settings) ??
    botDefenceRuleProblem(settings) ??
    brandingRuleProblem(settings.branding);
  return ruleProblem ? { ok: false, problem: ruleProblem } : { ok: true, settings };
}

/** One scalar setting (a flag's or an environment variable's value), checked alone: a problem, or undefined. */
export function scalarSettingProblem(name: ScalarSettingName, value: unknown): SettingProblem | undefined {
  return schemaProblem(RoomSettingsSchema.properties[name], value, [name]);
}

/** A pause check on its own (the standalone periodic inlet's flags), with its default timeout. */
export function parsePauseCheck(input: unknown): Parsed<PauseCheckSettings> {
  const problem = schemaProblem(PauseCheckSchema, input);
  if (problem) return { ok: false, problem };
  const settings = Value.Default(PauseCheckSchema, Value.Clone(input)) as PauseCheckSettings;
  const ruleProblem = pauseCheckRuleProblem(settings, []);
  return ruleProblem ? { ok: false, problem: ruleProblem } : { ok: true, settings };
}

/** The rules a schema does not express, across fields of the inlet (defaults filled in). */
function inletRuleProblem(inlet: InletSettings): SettingProblem | undefined {
  if (inlet.strategy !== 'periodic') return undefined;
  if (inlet.end_time !== 0 && inlet.end_time <= inlet.start_time) {
    return { path: ['inlet', 'end_time'], rule: 'must be after start_time (or 0 for no end)' };
  }
  if (!inlet.pause_check) return undefined;
  const at = ['inlet', 'pause_check'];
  const problem = pauseCheckRuleProblem(inlet.pause_check, at);
  if (problem) return problem;
  // A check still waiting when the next tick starts would let two ticks overlap.
  if (inlet.pause_check.timeout >= inlet.interval) {
    return { path: [...at, 'timeout'], rule: `must be shorter than the interval (${inlet.interval} s)` };
  }
  return undefined;
}

/** Automatic admission needs both of its limits: the first one missing is named. */
function admissionRuleProblem(settings: RoomSettings): SettingProblem | undefined {
  if (settings.admission !== 'automatic') return undefined;
  for (const limit of ['new_users_per_minute', 'total_active_users'] as const) {
    if (settings[limit] === undefined) return { path: [limit], rule: 'is required with admission "automatic"' };
  }
  return undefined;
}

/** The gate's bypass IPs are real addresses, and a CIDR's prefix fits its family. */
function gateRuleProblem(settings: RoomSettings): SettingProblem | undefined {
  const ips = settings.gate?.bypass?.ips ?? [];
  for (const [index, entry] of ips.entries()) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 4 ? 32 : 128;
    if (family === 0 || (bits !== undefined && Number(bits) > maxBits)) {
      return { path: ['gate', 'bypass', 'ips', String(index)], rule: 'must be an IP address or CIDR' };
    }
  }
  return undefined;
}

/** The schedule's rules across fields: real times, in order, and a draw needs a start. */
function scheduleRuleProblem(settings: RoomSettings): SettingProblem | undefined {
  const fields = ['prequeue_start_time', 'event_start_time', 'event_end_time'] as const;
  for (const field of fields) {
    const value = settings[field];
    // The pattern admits 2026-02-30: a time is real when it reads back the same.
    if (value !== undefined && new Date(Date.parse(value)).toISOString().slice(0, 19) !== value.slice(0, 19)) {
      return { path: [field], rule: 'must be a real date and time' };
    }
  }
  const [prequeue, start, end] = fields.map((field) => {
    const value = settings[field];
    return value === undefined ? undefined : Date.parse(value);
  });
  if (prequeue !== undefined && start === undefined) return { path: ['event_start_time'], rule: 'is required with prequeue_start_time' };
  if (prequeue !== undefined && start !== undefined && prequeue >= start) {
    return { path: ['prequeue_start_time'], rule: 'must be before event_start_time' };
  }
  if (start !== undefined && end !== undefined && end <= start) return { path: ['event_end_time'], rule: 'must be after event_start_time' };
  if (settings.shuffle_at_event_start === true && start === undefined) {
    return { path: ['event_start_time'], rule: 'is required with shuffle_at_event_start' };
  }
  // The OpenID Connect login page binds the login to a position at the join, which a pre-queue join does not have.
  if (settings.shuffle_at_event_start === true && settings.oidc !== undefined) {
    return { path: ['shuffle_at_event_start'], rule: 'cannot be used with oidc (the login needs a position at the join)' };
  }
  return undefined;
}

/** Bot defence across fields: a ceiling over the base, an enqueue key needs its secret. */
function botDefenceRuleProblem(settings: RoomSettings): SettingProblem | undefined {
  const defence = settings.bot_defence;
  if (!defence) return undefined;
  if (defence.max_difficulty < defence.difficulty) {
    return { path: ['bot_defence', 'max_difficulty'], rule: `must be at least difficulty (${defence.difficulty})` };
  }
  if (defence.require_enqueue_key && defence.enqueue_key_secret === undefined) {
    return { path: ['bot_defence', 'enqueue_key_secret'], rule: 'is required with require_enqueue_key' };
  }
  // A keyed join gets its place in one atomic unit that the pre-queue of a draw does not offer (yet).
  if (defence.enqueue_key_secret !== undefined && settings.shuffle_at_event_start === true) {
    return { path: ['bot_defence', 'enqueue_key_secret'], rule: 'cannot be used with shuffle_at_event_start' };
  }
  return undefined;
}

function pauseCheckRuleProblem(check: PauseCheckSettings, at: string[]): SettingProblem | undefined {
  if ((check.json_path === undefined) !== (check.threshold === undefined)) {
    return { path: at, rule: 'json_path and threshold go together' };
  }
  if (check.json_path !== undefined && !isJsonPath(check.json_path)) {
    return { path: [...at, 'json_path'], rule: 'use a dotted path like $.cpu.load or a JSON Pointer like /cpu/load' };
  }
  return undefined;
}

/**
 * The path syntax of a pause check: a JSON Pointer ("/measurements/0/value", RFC 6901, for keys holding
 * dots) or a dotted path with an optional "$." prefix ("$.cpu.load", "measurements.0.value"); "$" alone is
 * the whole document.
 */
export function isJsonPath(path: string): boolean {
  if (path.startsWith('/')) return true;
  const dotted = path.replace(/^\$\.?/, '');
  return dotted === '' || dotted.split('.').every((segment) => segment !== '');
}

// The interfaces above are what the code reads; the schema is what sources are checked against. Both list
// the same fields (a compile error here means one of them gained a field the other lacks).
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
type PeriodicInlet = Extract<InletSettings, { strategy: 'periodic' }>;
type MaxSizeInlet = Extract<InletSettings, { strategy: 'max_size' }>;
const _schemaMatchesTypes: [
  SameKeys<RoomSettings, RoomSettingsInput>,
  SameKeys<WebhookTarget, Static<typeof WebhookSchema>>,
  SameKeys<PauseCheckSettings, Static<typeof PauseCheckSchema>>,
  SameKeys<PeriodicInlet, Static<typeof PeriodicInletSchema>>,
  SameKeys<MaxSizeInlet, Static<typeof MaxSizeInletSchema>>,
  SameKeys<OidcClientSettings, Static<typeof OidcClientSchema>>,
  SameKeys<BotDefenceSettings, Static<typeof BotDefenceSchema>>,
] = [true, true, true, true, true, true, true];
