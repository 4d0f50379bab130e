// The one typed configuration of a server, from CLI flags, ANTEROOM_* environment variables and an
// optional JSON file listing events. Invalid configuration fails at start with a message naming the
// offending option or field.

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ConfigErrors } from '../domain/errors.ts';
import { defaultSettings, EVENT_ID_PATTERN, type RoomSettings } from '../domain/room-settings.ts';
import { inletSettings } from '../inlet/inlet-config.ts';

export type StoreLocation = { kind: 'sqlite'; path: string } | { kind: 'memory' } | { kind: 'redis'; url: string };

export interface ServerConfig {
  host: string;
  port: number;
  dataDir: string;
  store: StoreLocation;
  sqliteSynchronous: 'full' | 'normal';
  events: RoomSettings[];
  adminToken?: string | undefined;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  region?: string | undefined;
  publicApiKey?: string | undefined;
  /** Base URL visitors use and default issuer of tokens; derived from host and port when absent. */
  publicUrl?: string | undefined;
  privateBasePath: string;
  pollTtl: number;
  expiryJobIntervalSec: number;
  metricsJobIntervalSec: number;
  joinBatchWindowMs: number;
  logLevel: string;
  logRequests: boolean;
  /** POSTed {event_id, paths} after every reset, so a CDN drops answers from before it. */
  cdnPurgeUrl?: string | undefined;
  cdnPurgeToken?: string | undefined;
  /** Redis store: prepended to every key, so several deployments can share one Redis. Default "ar:". */
  redisKeyPrefix?: string | undefined;
  /** Redis store: how long this process serves the serving/waiting counters from memory (0 = never). Default 250. */
  hotReadTtlMs?: number | undefined;
  /** Worker processes sharing the listening port (--workers); 1 (default) = this process serves. */
  workers?: number | undefined;
}

const WebhookSchema = Type.Object(
  {
    url: Type.String({ pattern: '^https?://', maxLength: 2048 }),
    secret: Type.String({ minLength: 16, maxLength: 256 }),
  },
  { additionalProperties: false },
);

/** OpenID Connect client of the event (docs/oidc.md); client_id = event_id. */
const OidcSchema = Type.Object(
  {
    /** Optional: generated (50 alphanumerics) and kept in the store when absent. */
    client_secret: Type.Optional(Type.String({ pattern: '^[\\x21-\\x7E]{16,256}$' })),
    /** Absolute http(s) URLs with a host and no fragment, compared exactly. */
    redirect_uris: Type.Array(Type.String({ pattern: '^https?://[^\\s#/?]+[^\\s#]*$', maxLength: 2048 }), {
      minItems: 1,
      maxItems: 100,
    }),
  },
  { additionalProperties: false },
);

const EventFileSchema = Type.Object(
  {
    event_id: Type.String({ pattern: EVENT_ID_PATTERN }),
    validity_period: Type.Optional(Type.Integer({ minimum: 1, maximum: 31_536_000 })),
    enable_queue_position_expiry: Type.Optional(Type.Boolean()),
    queue_position_expiry_period: Type.Optional(Type.Integer({ minimum: 1, maximum: 31_536_000 })),
    incr_serving_on_expiry: Type.Optional(Type.Boolean()),
    enable_events_generation: Type.Optional(Type.Boolean()),
    issuer: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    webhooks: Type.Optional(Type.Array(WebhookSchema, { maxItems: 20 })),
    /** Checked by inletSettings, whose messages name the field at fault. */
    inlet: Type.Optional(Type.Unknown()),
    oidc: Type.Optional(OidcSchema),
  },
  { additionalProperties: true },
);

const EventListSchema = Type.Array(EventFileSchema, { minItems: 1, maxItems: 10_000 });
/** The file is {"events": [...]} or, for short, the bare list. */
const ConfigFileSchema = Type.Object({ events: EventListSchema }, { additionalProperties: false });

export type EventFileEntry = Static<typeof EventFileSchema>;

/** Event settings given by flags: defaults for every event, and the whole event when no file is given. */
export type EventDefaults = Omit<RoomSettings, 'event_id' | 'webhooks' | 'inlet'>;

export function readEventsFile(path: string, defaults: EventDefaults): RoomSettings[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw ConfigErrors.eventsFile(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  const file = Array.isArray(parsed) ? { events: parsed } : parsed;
  if (!Value.Check(ConfigFileSchema, file)) {
    const first = [...Value.Errors(ConfigFileSchema, file)][0];
    throw ConfigErrors.eventsFile(
      `invalid config file ${path}: ${first ? `${first.path || '/'}: ${first.message}` : 'unexpected shape'}` +
        ' (expected {"events": [{"event_id": "...", ...}]})',
    );
  }
  const entries = file.events;
  const seen = new Set<string>();
  return entries.map((entry) => {
    if (seen.has(entry.event_id)) throw ConfigErrors.eventsFile(`config file ${path}: event "${entry.event_id}" is listed twice`);
    seen.add(entry.event_id);
    const settings: RoomSettings = {
      ...defaults,
      event_id: entry.event_id,
      webhooks: entry.webhooks ?? [],
    };
    const keys = [
      'validity_period',
      'enable_queue_position_expiry',
      'queue_position_expiry_period',
      'incr_serving_on_expiry',
      'enable_events_generation',
      'issuer',
    ] as const;
    for (const key of keys) if (entry[key] !== undefined) Object.assign(settings, { [key]: entry[key] });
    if (entry.inlet !== undefined) {
      const inlet = inletSettings(entry.inlet);
      if (typeof inlet === 'string') throw ConfigErrors.eventsFile(`config file ${path}: event "${entry.event_id}": ${inlet}`);
      settings.inlet = inlet;
    }
    if (entry.oidc !== undefined) settings.oidc = { ...entry.oidc, redirect_uris: [...entry.oidc.redirect_uris] };
    return settings;
  });
}

export function parseStoreLocation(value: string | undefined, dataDir: string): StoreLocation {
  if (value === undefined || value === '') return { kind: 'sqlite', path: join(dataDir, 'anteroom.db') };
  if (value === 'memory') return { kind: 'memory' };
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length);
    if (path === '') throw ConfigErrors.option('--store sqlite:<path> needs a path');
    return { kind: 'sqlite', path: resolve(path) };
  }
  if (/^(redis|rediss|redis-cluster|rediss-cluster):\/\//.test(value)) return { kind: 'redis', url: value };
  // Never echo a password: whatever precedes an '@' may be credentials.
  const shown = value.replace(/^.*@/, '…@');
  throw ConfigErrors.option(
    `--store must be sqlite:<path>, memory, redis[s]://host:port or redis[s]-cluster://host:port,host:port (got "${shown}")`,
  );
}

export function defaultEventDefaults(): EventDefaults {
  const { event_id: _id, webhooks: _w, ...rest } = defaultSettings();
  return rest;
}
