// Settings of one event (one waiting room). Defaults are those of VWR's core stack.

export interface WebhookTarget {
  url: string;
  /** HMAC-SHA256 key for the X-Anteroom-Signature header. Never returned by any API nor logged. */
  secret: string;
}

export interface RoomSettings {
  event_id: string;
  validity_period: number;
  enable_queue_position_expiry: boolean;
  queue_position_expiry_period: number;
  incr_serving_on_expiry: boolean;
  enable_events_generation: boolean;
  /** Token issuer; when absent the server's public base URL is used. */
  issuer?: string;
  webhooks: WebhookTarget[];
  /** Who moves the serving counter from inside the server (spec/integrations.md §3); none = manual. */
  inlet?: InletSettings;
  /** The event as an OpenID Connect client (spec/integrations.md §2); absent = no OIDC for this event. */
  oidc?: OidcClientSettings;
}

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

export function defaultSettings(eventId: string = DEFAULT_EVENT_ID): RoomSettings {
  return {
    event_id: eventId,
    validity_period: 3600,
    enable_queue_position_expiry: true,
    queue_position_expiry_period: 900,
    incr_serving_on_expiry: false,
    enable_events_generation: false,
    webhooks: [],
  };
}

/** Event IDs are names in URLs, keys and log lines: keep them short and printable. */
export const EVENT_ID_PATTERN = '^[A-Za-z0-9._~-]{1,128}$';
