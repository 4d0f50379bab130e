// The Redis clients of the store (one server, Sentinel, Cluster), each with the failure behaviour described at
// the top of redis-store.ts, and how their errors become StoreUnavailableError. A client that ends for good is
// replaced by the store's connection (connection.ts), which builds a new one with the same factory.

import { Cluster, Redis } from 'ioredis';
import { StoreUnavailableError } from '../../domain/ports/store.ts';

export const DEFAULT_COMMAND_TIMEOUT_MS = 1000;
export const DEFAULT_READY_TIMEOUT_MS = 500;
export const DEFAULT_REPLICA_TIMEOUT_MS = 250;
/** ioredis' own command timeout is only a backstop behind the store's (which decides the 503). */
const BACKSTOP_MS = 500;

/** A client with the failure behaviour described at the top of redis-store.ts. */
export function createRedisClient(
  url: string,
  options: { commandTimeoutMs?: number; connectTimeoutMs?: number } = {},
): Redis {
  return new Redis(url, {
    connectionName: 'anteroom',
    commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    connectTimeout: options.connectTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    // Fail at once instead of queueing while disconnected; the store waits for `ready` itself, bounded.
    enableOfflineQueue: false,
    // A command in flight when the connection drops may have run: fail it rather than run it twice.
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 1000),
  });
}

/**
 * The same failure behaviour for a Redis Cluster (the caller parses the node list). Each node connection
 * gets the settings of createRedisClient; the cluster itself queues nothing while it is not ready.
 */
export function createRedisClusterClient(
  nodes: readonly { host: string; port: number }[],
  options: {
    commandTimeoutMs?: number;
    connectTimeoutMs?: number;
    /** ACL user and password, the same on every node. */
    username?: string | undefined;
    password?: string | undefined;
    /** TLS to every node (rediss-cluster://). */
    tls?: boolean;
  } = {},
): Cluster {
  return new Cluster([...nodes], {
    enableOfflineQueue: false,
    clusterRetryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 1000),
    // Never re-send a command whose connection closed under it (it may have run): the caller gets 503.
    retryDelayOnFailover: 0,
    // CLUSTERDOWN (nothing ran): 503 at once rather than a wait beyond the bound.
    retryDelayOnClusterDown: 0,
    // MOVED / ASK / TRYAGAIN mean the command did not run; following them is safe, and the write fence
    // refuses a script that arrives after the caller's deadline anyway.
    maxRedirections: 5,
    redisOptions: {
      connectionName: 'anteroom',
      commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      connectTimeout: options.connectTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      ...(options.username ? { username: options.username } : {}),
      ...(options.password ? { password: options.password } : {}),
      ...(options.tls ? { tls: {} } : {}),
    },
  });
}

/**
 * A client of the primary that Redis Sentinel names (redis-sentinel://), with the failure behaviour of
 * createRedisClient. It asks the Sentinels for the primary at every (re)connection, checks that the server
 * is a primary, and listens for +switch-master, so it follows a failover by itself: the old primary's
 * connection is closed and the commands in flight on it fail (503; none is re-sent), then the client
 * connects to the new primary.
 */
export function createRedisSentinelClient(
  sentinels: readonly { host: string; port: number }[],
  name: string,
  options: {
    commandTimeoutMs?: number;
    connectTimeoutMs?: number;
    username?: string | undefined;
    password?: string | undefined;
    tls?: boolean;
  } = {},
): Redis {
  return new Redis({
    sentinels: [...sentinels],
    name,
    role: 'master',
    connectionName: 'anteroom',
    commandTimeout: (options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS) + BACKSTOP_MS,
    connectTimeout: options.connectTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    sentinelCommandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    sentinelRetryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 1000),
    failoverDetector: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 1000),
    ...(options.username ? { username: options.username } : {}),
    ...(options.password ? { password: options.password } : {}),
    ...(options.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
  });
}

/** The URL without credentials or query (which may carry a password), for logs and /readyz. */
export function describeRedisUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1').replace(/[?#].*$/, '');
}

/** Errors of the Redis server itself that mean "not available right now", not "bad command". */
const UNAVAILABLE_REPLY = /^(LOADING|BUSY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|NOREPLICAS|FENCED|MOVED|ASK)\b/;

export function toStoreError(description: string, error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !(error instanceof Error)) return error;
  // Script errors and wrong commands are bugs, not outages: let them through unchanged.
  if (error.name === 'ReplyError' && !UNAVAILABLE_REPLY.test(error.message)) return error;
  return new StoreUnavailableError(`Redis ${description} unavailable: ${error.message}`, { cause: error });
}
