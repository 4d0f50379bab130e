// The one schema of a room's settings (TypeBox): each setting's type, range, default and meaning, stated once;
// unknown keys are refused at every level, so a misspelt setting stops the start instead of being silently
// ignored. Defaults are those of VWR's core stack. Checked against the types of room-settings-model.ts below.

import { PresenceSettingProperties } from './presence-settings.ts';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  EVENT_ID_PATTERN,
  type BotDefenceSettings,
  type InletSettings,
  type OidcClientSettings,
  type PauseCheckSettings,
  type RoomSettings,
  type WebhookTarget,
} from './room-settings-model.ts';
import { BrandingSchema } from './page-branding.ts';
import { Secret } from './secret-settings.ts';

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
    sample_store: Type.Optional(
      Type.Boolean({
        description:
          "the demo's sample store (deploy/demo): at the visitor's turn the default page offers Purchase now at /store and shows the receipt; otherwise it says \"It's your turn\" and continues to the site (branding.link_url, or the hand-off)",
      }),
    ),
  },
  { additionalProperties: false },
);

/** What a source of settings gives: event_id, and any other setting (the rest take their defaults). */
export type RoomSettingsInput = Static<typeof RoomSettingsSchema>;

const defaultOf = <T>(schema: TSchema): T => schema.default as T;

export const DEFAULT_PERIODIC_INTERVAL = defaultOf<number>(PeriodicInletSchema.properties.interval);
export const DEFAULT_PAUSE_TIMEOUT = defaultOf<number>(PauseCheckSchema.properties.timeout);

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
