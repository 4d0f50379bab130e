// Opens the store a configuration names: the embedded SQLite file (default), an in-memory SQLite, or Redis
// (one server, `redis://` / `rediss://`; a cluster, `redis-cluster://` / `rediss-cluster://` with a seed
// list; or a primary found through Sentinel, `redis-sentinel://` / `rediss-sentinel://`). A Redis store is shared by every node, so the hot counters are cached in front of it (see
// hot-read-cache.ts); the SQLite store keeps its own exact copy, being the database's only writer.

import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerConfig } from '../config/config.ts';
import { ConfigErrors } from '../domain/errors.ts';
import { DEFAULT_HOT_READ_TTL_MS, withHotReadCache } from '../store/hot-read-cache.ts';
import type { Store } from '../domain/ports/store.ts';
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_REPLICA_TIMEOUT_MS,
  RedisStore,
  createRedisClusterClient,
  createRedisSentinelClient,
  describeRedisUrl,
} from '../store/redis/redis-store.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';

export type StoreConfig = Pick<
  ServerConfig,
  'store' | 'sqliteSynchronous' | 'redisKeyPrefix' | 'hotReadTtlMs' | 'redisMinReplicas' | 'redisReplicaTimeoutMs'
>;

export const DEFAULT_REDIS_KEY_PREFIX = 'ar:';
export { DEFAULT_REPLICA_TIMEOUT_MS };
/** WAIT must end well within the command timeout (the bound on every answer). */
export const MAX_REPLICA_TIMEOUT_MS = DEFAULT_COMMAND_TIMEOUT_MS / 2;

export interface OpenStoreOptions {
  /** How long to wait for a Redis store to answer before giving up at start. Default 10 s. */
  connectWaitMs?: number;
}

export async function openStore(config: StoreConfig, options: OpenStoreOptions = {}): Promise<Store> {
  const location = config.store;
  switch (location.kind) {
    case 'sqlite':
      return new SqliteStore({ path: location.path, synchronous: config.sqliteSynchronous });
    case 'memory':
      return new SqliteStore({ path: ':memory:' });
    case 'redis': {
      const store = openRedisStore(location.url, checkRedisKeyPrefix(config.redisKeyPrefix ?? DEFAULT_REDIS_KEY_PREFIX), {
        minReplicas: config.redisMinReplicas ?? 0,
        replicaTimeoutMs: config.redisReplicaTimeoutMs ?? DEFAULT_REPLICA_TIMEOUT_MS,
      });
      await waitUntilReachable(store, options.connectWaitMs ?? 10_000);
      return withHotReadCache(store, { ttlMs: config.hotReadTtlMs ?? DEFAULT_HOT_READ_TTL_MS });
    }
  }
}

/** Whether a store location is shared by several processes (what --workers and several nodes need). */
export function isSharedStore(config: Pick<ServerConfig, 'store'>): boolean {
  return config.store.kind === 'redis';
}

/** The store's name for the banner and logs, without credentials. */
export function describeStoreLocation(config: Pick<ServerConfig, 'store'>): string {
  const location = config.store;
  switch (location.kind) {
    case 'sqlite':
      return `sqlite:${location.path}`;
    case 'memory':
      return 'memory';
    case 'redis':
      return describeRedisUrl(location.url);
  }
}

/**
 * A key prefix keeps deployments sharing one Redis apart. It may not hold '{' or '}': Redis Cluster hashes
 * the first {...} of a key, and every key of an event must hash on its {eventId} tag.
 */
export function checkRedisKeyPrefix(prefix: string): string {
  if (prefix.length > 64 || /[{}\s]/.test(prefix)) {
    throw ConfigErrors.option('--redis-key-prefix must be at most 64 characters, without spaces, "{" or "}"');
  }
  return prefix;
}

function openRedisStore(url: string, keyPrefix: string, replication: { minReplicas: number; replicaTimeoutMs: number }): RedisStore {
  const sentinel = /^(rediss?)-sentinel:\/\//.exec(url);
  if (sentinel) {
    const { nodes, username, password, masterName } = parseSentinelUrl(url);
    // A factory, not a client: the store builds a new client whenever one ends for good (issue 35).
    const createClient = () => {
      const client = createRedisSentinelClient(nodes, masterName, { username, password, tls: sentinel[1] === 'rediss' });
      client.on('error', () => {});
      return client;
    };
    return new RedisStore({ url, keyPrefix, createClient, ...replication });
  }
  const cluster = /^(rediss?)-cluster:\/\//.exec(url);
  if (!cluster) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw ConfigErrors.option(`--store ${describeRedisUrl(url)} is not a valid URL (redis://[user:password@]host:port[/db])`);
    }
    if (parsed.pathname.length > 1 && !/^\/\d+$/.test(parsed.pathname)) {
      throw ConfigErrors.option(`--store ${describeRedisUrl(url)}: the path must be a database number, e.g. /0`);
    }
    return new RedisStore({ url, keyPrefix, ...replication });
  }
  const { nodes, username, password } = parseClusterUrl(url);
  const createClient = () => {
    const client = createRedisClusterClient(nodes, { username, password, tls: cluster[1] === 'rediss' });
    // As for a single server: failures surface through the calls (StoreUnavailableError), not as log noise.
    client.on('error', () => {});
    return client;
  };
  return new RedisStore({ url, keyPrefix, createClient, ...replication });
}

/**
 * redis-sentinel://[user:password@]host:port,host:port/<master name>: the Sentinels to ask, and the name of
 * the primary they watch. The credentials are those of the Redis servers (Sentinels without a password).
 */
export function parseSentinelUrl(url: string): {
  nodes: { host: string; port: number }[];
  username: string | undefined;
  password: string | undefined;
  masterName: string;
} {
  const shown = describeRedisUrl(url);
  const match = /^(rediss?-sentinel:\/\/(?:[^@/]*@)?[^/?#]+)\/([^/?#]+)\/?(?:[?#].*)?$/.exec(url);
  if (!match) throw ConfigErrors.option(`--store ${shown}: expected redis-sentinel://[user:password@]host:port,host:port/<master name>`);
  const [, seeds, name] = match as unknown as [string, string, string];
  const parsed = parseClusterUrl(seeds.replace(/^(rediss?)-sentinel:/, '$1-cluster:'));
  return { ...parsed, masterName: decodeURIComponent(name) };
}

/** redis-cluster://[user:password@]host:port,host:port,…  (a seed list: the client discovers the rest). */
export function parseClusterUrl(url: string): {
  nodes: { host: string; port: number }[];
  username: string | undefined;
  password: string | undefined;
} {
  const match = /^rediss?-cluster:\/\/(?:([^@/]*)@)?([^/?#]+)\/?(?:[?#].*)?$/.exec(url);
  const shown = describeRedisUrl(url);
  if (!match) throw ConfigErrors.option(`--store ${shown}: expected redis-cluster://[user:password@]host:port,host:port`);
  const [, auth, list] = match as unknown as [string, string | undefined, string];
  const nodes = list.split(',').map((address) => {
    const node = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(address.trim());
    const port = Number(node?.[2]);
    if (!node || port < 1 || port > 65535) {
      throw ConfigErrors.option(`--store ${shown}: "${address}" is not host:port`);
    }
    return { host: (node[1] as string).replace(/^\[|\]$/g, ''), port };
  });
  let username: string | undefined;
  let password: string | undefined;
  if (auth !== undefined) {
    const colon = auth.indexOf(':');
    const user = colon === -1 ? auth : auth.slice(0, colon);
    username = user === '' ? undefined : decodeURIComponent(user);
    password = colon === -1 ? undefined : decodeURIComponent(auth.slice(colon + 1));
  }
  return { nodes, username, password };
}

/** A node that cannot reach its store at start says so and stops, instead of answering 503 forever. */
async function waitUntilReachable(store: RedisStore, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await store.ping();
      return;
    } catch (error) {
      if (Date.now() >= deadline) {
        await store.close();
        throw new Error(`cannot reach the store ${store.description}: ${(error as Error).message}`, { cause: error });
      }
      await sleep(100);
    }
  }
}
