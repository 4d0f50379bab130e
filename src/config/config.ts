// The one typed configuration of a server, from CLI flags, ANTEROOM_* environment variables and an
// optional JSON file listing events. Invalid configuration fails at start with a message naming the
// offending option or field.

import { isIP } from 'node:net';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { ConfigErrors } from '../domain/errors.ts';
import { defaultSettings, EVENT_ID_PATTERN, parseRoomSettings, type RoomDefaults, type RoomSettings } from '../domain/room-settings.ts';
import { describeProblem, jsonPointer, schemaProblem } from '../domain/setting-problems.ts';

export type StoreLocation = { kind: 'sqlite'; path: string } | { kind: 'memory' } | { kind: 'redis'; url: string };

export interface ServerConfig {
  host: string;
  port: number;
  dataDir: string;
  store: StoreLocation;
  sqliteSynchronous: 'full' | 'normal';
  events: RoomSettings[];
  /** Defaults of the settings a room put through the rooms API leaves out (the flags); else the schema's. */
  roomDefaults?: RoomDefaults | undefined;
  adminToken?: string | undefined;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  region?: string | undefined;
  publicApiKey?: string | undefined;
  /** How long each room's per-minute history is kept (after-event reports). Default 30 days. */
  historyRetentionDays?: number | undefined;
  /** When set, GET /metrics requires this bearer token. */
  metricsToken?: string | undefined;
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
  /** Public counter streams (GET /stream) one process keeps open at most; 0 = no stream (pages poll). Default 10,000. */
  streamMaxConnections?: number | undefined;
  /** The gate's listener (--gate-port): reverse proxy in front of the rooms' gate.origin; absent = no gate. */
  gatePort?: number | undefined;
  /**
   * The gate listener's timeouts and connection caps (src/gate/listener-limits.ts; --gate-max-connections,
   * --gate-max-connections-per-client, --gate-request-timeout); absent ones have their defaults.
   */
  gateLimits?: GateLimitSettings | undefined;
  /**
   * --trust-proxy: which proxies in front of Anteroom to believe about the client (X-Forwarded-For/-Proto/-Host),
   * as Fastify's trustProxy: true, a hop count, or comma-separated IPs/CIDRs. Absent = trust none.
   */
  trustProxy?: TrustProxy | undefined;
  /**
   * --forward-auth-uri-header: the one request header GET /_anteroom/check reads the original URI from (your
   * proxy must overwrite it on every check). Default X-Original-URI (deploy/nginx/anteroom-forward-auth.conf).
   */
  forwardAuthUriHeader?: string | undefined;
  /** Open HTTP connections at most (--max-connections). Default 200,000. */
  maxConnections?: number | undefined;
  /** On SIGTERM/SIGINT the process exits within this many seconds (--drain-timeout). Default 10. */
  drainTimeoutSec?: number | undefined;
  /** Redis store: replicas every write must reach (WAIT) before it is acknowledged; 0 (default) = no WAIT. */
  redisMinReplicas?: number | undefined;
  /** Redis store: how long WAIT waits for those replicas (ms). Default 250. */
  redisReplicaTimeoutMs?: number | undefined;
  /** Public writes one client may make a minute across all nodes (--writes-per-client-per-minute); 0 = no limit. */
  writesPerClientPerMinute?: number | undefined;
}

/** The gate listener's limits a configuration may set (ms and counts; 0 = no limit where the gate allows it). */
export interface GateLimitSettings {
  headersTimeoutMs?: number | undefined;
  requestTimeoutMs?: number | undefined;
  keepAliveTimeoutMs?: number | undefined;
  maxConnections?: number | undefined;
  maxConnectionsPerClient?: number | undefined;
}

/** Fastify's trustProxy values that --trust-proxy gives. */
export type TrustProxy = boolean | number | string[];

/**
 * --trust-proxy / ANTEROOM_TRUST_PROXY: "true" (every hop: only behind a proxy that overwrites the headers),
 * "false", a hop count ("1": the load balancer in front), or comma-separated IPs/CIDRs of the proxies (or the
 * named ranges loopback, linklocal, uniquelocal).
 */
export function parseTrustProxy(value: string): TrustProxy {
  const text = value.trim();
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^\d{1,3}$/.test(text)) return Number(text);
  const entries = text.split(',').map((part) => part.trim());
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const known =
      PROXY_RANGE_NAMES.includes(entry) || (isIP(address) !== 0 && extra === undefined && (bits === undefined || /^\d{1,3}$/.test(bits)));
    if (!known) {
      throw ConfigErrors.option(
        `--trust-proxy: "${entry}" is not allowed: give true, false, a hop count, or comma-separated IPs, CIDRs, loopback, linklocal or uniquelocal`,
      );
    }
  }
  return entries;
}

/** The header the shipped nginx and Caddy recipes set to the original URI. */
export const DEFAULT_FORWARD_AUTH_URI_HEADER = 'X-Original-URI';

/** --forward-auth-uri-header: a header name; never one that carries something else the check reads. */
export function parseForwardAuthUriHeader(value: string): string {
  const name = value.trim();
  if (!/^[A-Za-z0-9-]{1,64}$/.test(name)) throw ConfigErrors.option(`--forward-auth-uri-header: "${value}" is not a header name`);
  if (['host', 'cookie', 'x-forwarded-host', 'x-forwarded-for', 'forwarded'].includes(name.toLowerCase())) {
    throw ConfigErrors.option(`--forward-auth-uri-header: ${name} carries something else; name the header your proxy sets to the original URI`);
  }
  return name;
}

/** The names proxy-addr (Fastify's trustProxy) knows for address ranges. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** The file is {"events": [...]} or, for short, the bare list; each entry is checked by parseRoomSettings. */
const ConfigFileSchema = Type.Object(
  { events: Type.Array(Type.Unknown(), { minItems: 1, maxItems: 10_000 }) },
  { additionalProperties: false },
);

/** Event settings given by flags: defaults for every event, and the whole event when no file is given. */
export type EventDefaults = Omit<RoomSettings, 'event_id' | 'webhooks' | 'inlet'>;

/**
 * The events of the file, each through the room-settings schema with the flags' values as defaults (the
 * file wins per field). An unknown or invalid setting stops the start with the event and the field named.
 */
export function readEventsFile(path: string, defaults: EventDefaults): RoomSettings[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw ConfigErrors.eventsFile(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  const file = Array.isArray(parsed) ? { events: parsed } : parsed;
  const fileProblem = schemaProblem(ConfigFileSchema, file);
  if (fileProblem) {
    throw ConfigErrors.eventsFile(
      `invalid config file ${path}: ${jsonPointer(fileProblem.path) || '/'}: ${fileProblem.rule}` +
        ' (expected {"events": [{"event_id": "...", ...}]})',
    );
  }
  const seen = new Set<string>();
  return (file as Static<typeof ConfigFileSchema>).events.map((entry, index) => {
    const result = parseRoomSettings(entry, defaults);
    if (!result.ok) {
      const id = (entry as { event_id?: unknown } | null)?.event_id;
      const which = typeof id === 'string' && new RegExp(EVENT_ID_PATTERN).test(id) ? `event "${id}"` : `events[${index}]`;
      const at = jsonPointer(['events', String(index), ...result.problem.path]);
      throw ConfigErrors.eventsFile(`invalid config file ${path}: ${which}: ${describeProblem(result.problem)} (at ${at})`);
    }
    const settings = result.settings;
    if (seen.has(settings.event_id)) throw ConfigErrors.eventsFile(`config file ${path}: event "${settings.event_id}" is listed twice`);
    seen.add(settings.event_id);
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
  if (/^(redis|rediss|redis-cluster|rediss-cluster|redis-sentinel|rediss-sentinel):\/\//.test(value)) return { kind: 'redis', url: value };
  // Never echo a password: whatever precedes an '@' may be credentials.
  const shown = value.replace(/^.*@/, '…@');
  throw ConfigErrors.option(
    `--store must be sqlite:<path>, memory, redis[s]://host:port, redis[s]-cluster://host:port,host:port or redis[s]-sentinel://host:port,host:port/<master name> (got "${shown}")`,
  );
}

export function defaultEventDefaults(): EventDefaults {
  const { event_id: _id, webhooks: _w, ...rest } = defaultSettings();
  return rest;
}
