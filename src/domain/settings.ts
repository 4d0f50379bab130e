// Settings of one event (one waiting room). Defaults are those of VWR's core stack.

export interface WebhookTarget {
  url: string;
  /** HMAC-SHA256 key for the X-Anteroom-Signature header. Never returned by any API nor logged. */
  secret: string;
}

export interface EventSettings {
  event_id: string;
  validity_period: number;
  enable_queue_position_expiry: boolean;
  queue_position_expiry_period: number;
  incr_serving_on_expiry: boolean;
  enable_events_generation: boolean;
  /** Token issuer; when absent the server's public base URL is used. */
  issuer?: string;
  webhooks: WebhookTarget[];
}

export const DEFAULT_EVENT_ID = 'Sample';

export function defaultSettings(eventId: string = DEFAULT_EVENT_ID): EventSettings {
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
