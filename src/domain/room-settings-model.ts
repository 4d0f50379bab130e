// The settings of one room as the code reads them: their types and the constants of a room's ID. The schema
// that every source of settings is checked against is room-settings-schema.ts; the rules across fields are
// room-setting-rules.ts; parsing (the one way in) is room-settings.ts, which every other part imports.

import type { Branding } from './page-branding.ts';
import type { PresenceSettings } from './presence-settings.ts';

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
  /** The demo's sample store: the default page's "your turn" is its purchase (docs/pages.md); absent = continue to the site. */
  sample_store?: boolean;
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
