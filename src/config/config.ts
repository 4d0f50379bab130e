// The one typed configuration of a server, from CLI flags, ANTEROOM_* environment variables and an
// optional JSON file listing events. Invalid configuration fails at start with a message naming the
// offending option or field.

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { defaultSettings, EVENT_ID_PATTERN, type EventSettings } from '../domain/settings.ts';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type StoreLocation = { kind: 'sqlite'; path: string } | { kind: 'memory' } | { kind: 'redis'; url: string };

export interface ServerConfig {
  host: string;
  port: number;
  dataDir: string;
  store: StoreLocation;
  sqliteSynchronous: 'full' | 'normal';
  events: EventSettings[];
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
}

const WebhookSchema = Type.Object(
  {
    url: Type.String({ pattern: '^https?://', maxLength: 2048 }),
    secret: Type.String({ minLength: 16, maxLength: 256 }),
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
  },
  { additionalProperties: true },
);

const EventListSchema = Type.Array(EventFileSchema, { minItems: 1, maxItems: 10_000 });
/** The file is {"events": [...]} or, for short, the bare list. */
const ConfigFileSchema = Type.Object({ events: EventListSchema }, { additionalProperties: false });

export type EventFileEntry = Static<typeof EventFileSchema>;

/** Event settings given by flags: defaults for every event, and the whole event when no file is given. */
export type EventDefaults = Omit<EventSettings, 'event_id' | 'webhooks'>;

export function readEventsFile(path: string, defaults: EventDefaults): EventSettings[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  const file = Array.isArray(parsed) ? { events: parsed } : parsed;
  if (!Value.Check(ConfigFileSchema, file)) {
    const first = [...Value.Errors(ConfigFileSchema, file)][0];
    throw new ConfigError(
      `invalid config file ${path}: ${first ? `${first.path || '/'}: ${first.message}` : 'unexpected shape'}` +
        ' (expected {"events": [{"event_id": "...", ...}]})',
    );
  }
  const entries = file.events;
  const seen = new Set<string>();
  return entries.map((entry) => {
    if (seen.has(entry.event_id)) throw new ConfigError(`config file ${path}: event "${entry.event_id}" is listed twice`);
    seen.add(entry.event_id);
    const settings: EventSettings = {
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
    return settings;
  });
}

export function parseStoreLocation(value: string | undefined, dataDir: string): StoreLocation {
  if (value === undefined || value === '') return { kind: 'sqlite', path: join(dataDir, 'anteroom.db') };
  if (value === 'memory') return { kind: 'memory' };
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length);
    if (path === '') throw new ConfigError('--store sqlite:<path> needs a path');
    return { kind: 'sqlite', path: resolve(path) };
  }
  if (/^(redis|rediss|redis-cluster):\/\//.test(value)) return { kind: 'redis', url: value };
  throw new ConfigError(`--store must be sqlite:<path>, memory or redis://host:port (got "${value}")`);
}

export function defaultEventDefaults(): EventDefaults {
  const { event_id: _id, webhooks: _w, ...rest } = defaultSettings();
  return rest;
}
