// Distributed store on Redis (ioredis): any number of stateless nodes share one Redis (or Redis Cluster).
// Every mutating method is ONE Lua script (./lua/<operation>.lua), so it is atomic without a read-modify-
// write across round trips; reads that combine several keys are scripts too, so they see one instant.
//
// Key layout (prefix default "ar:"; E = event ID, in a hash tag so all keys of an event share one slot):
//   ar:{E}:c   hash      counters: q queue, s serving, ms highest serving ever, t tokens, x expired,
//                        co completed, ab abandoned, mx max expired, es expiry switched on at (absent = off),
//                        lf left
//   ar:{E}:rq  hash      request ID (16 raw bytes of the UUID) → position. The only per-visitor structure.
//   ar:{E}:et  zset      entry-time runs: score = first position of a run of equal entry times,
//                        member "<start>:<entry time>". Entry time of P = run with the greatest start ≤ P.
//   ar:{E}:sh  zset      serving history: score = each new highest counter value, member "<value>:<reached at>"
//   ar:{E}:tk  hash      request ID → token record "<status>,<position>,<JSON [iat,nbf,exp,iss,kid,nonce?] or [.., kid, nonce|null, signatures]>"
//   ar:{E}:te  zset      every token by exp; member = 6-byte big-endian position + request ID, so equal
//                        exps sort by position ("oldest first" in expired_tokens)
//   ar:{E}:to  zset      open sessions only, same members: active tokens = ZCOUNT exp ≥ now, O(log n)
//   ar:{E}:tp  zset      token positions (score = member = position): tokens held in a range of positions
//   ar:{E}:k   hash      signing keys: kid → JSON [createdAt, private JWK, public JWK]
//   ar:{E}:oa  hash      OpenID Connect: request ID (as in ar:{E}:rq) → its authorization request (JSON)
//   ar:{E}:ls  hash      the gate's shared "last seen" of open sessions: request ID → epoch ms (lua/renewSession.lua)
//   ar:{E}:lp  zset      positions given up with leave_queue (score = member = position); counted in lf of ar:{E}:c
//   ar:{E}:pq, ar:{E}:pl, ar:{E}:dr   the pre-queue (hash and list in join order) and the draw: see
//                        lua/joinPrequeue.lua
//   ar:lock:<name> hash  job leader lock {o owner, x expires at (ms, caller's clock)}, with a Redis TTL
//   ar:rate:{<name>}:<window> string  a bot-defence rate counter for one fixed window (TTL two windows)
//   ar:once:<name> string  a single-use mark (a proof of work's challenge), TTL until the challenge expires
//   ar:secret:<name> string  a value generated once and shared by every node (the generated admin
//                        credentials, JSON): readable by anyone who can read this Redis, like the signing keys
//   Rooms at runtime, under the hash tag {@rooms} ('@' is not allowed in an event ID, so no event's keys
//   can share it): one slot for every room's settings, so a put or a list is one script.
//   ar:{@rooms}:settings hash  event ID → settings (JSON text, opaque to Redis)
//   ar:{@rooms}:created  hash  event ID → rooms version at which the room was created
//   ar:{@rooms}:version  string the rooms version, bumped by every change (every node GETs it every second)
//
// Memory: a queued visitor costs one entry of ar:{E}:rq (≈ 80 bytes of used_memory, see
// bench/redis-memory.ts); entry times cost one run per distinct second, not one per visitor.
//
// Failure behaviour (docs/distributed.md, "Failure behaviour"): every call is answered within
// `readyTimeoutMs` + `commandTimeoutMs` at most (default 500 + 1000 ms; the documented bound is 2 s).
// - A call made while Redis is unreachable waits at most `readyTimeoutMs` for the client to reconnect, then
//   fails with StoreUnavailableError; later calls fail at once until the client is connected again.
// - A command sent on a connection that then hangs fails after `commandTimeoutMs`; later calls fail at once
//   until a probe (PING) on that connection is answered again. After two unanswered probes the connection is
//   dropped and re-opened (a half-open TCP connection never errors by itself).
// - No late writes: nothing is queued while disconnected (enableOfflineQueue off), a command whose reply was
//   lost with its connection is not re-sent (it may have run), and the cluster client does not re-send after
//   a failover. A command that timed out is still in the socket, though, and a paused Redis would run it when
//   it resumes: so every writing script carries a deadline on the Redis server's clock, a little before the
//   caller's give-up time, and refuses to run after it (FENCE_PROLOGUE in scripts.ts, clock in
//   write-fence.ts). A write answered 503 because of a timeout never takes effect.
// - With `minReplicas` N > 0, each write is followed by WAIT N on the same connection; fewer than N replicas
//   within `replicaTimeoutMs` is a StoreUnavailableError (503), never a success.
// The client reconnects by itself (at most one second apart), so calls succeed again once Redis is back.

import { Cluster, Redis } from 'ioredis';
import type { SessionStatus, TokenRecord } from '../../domain/claims.ts';
import {
  StoreUnavailableError,
  type AdmissionSnapshot,
  type ClaimContext,
  type Counters,
  type DrawRecord,
  type DrawSeed,
  type ExpiryAdvance,
  type IssueResult,
  type JoinRequest,
  type LeaveResult,
  type PositionRecord,
  type ServingMove,
  type SessionRenewal,
  type PrequeueEntry,
  type PrequeueLeave,
  type RoomPutOutcome,
  type Store,
  type StoredRoom,
  type StoredRooms,
  type StoredSigningKey,
  type WindowCounts,
  type AuditEntry,
  type HistorySample,
  type MinuteWaits,
  AUDIT_LOG_KEEP,
} from '../../domain/ports/store.ts';
import {
  decodeDraw,
  decodePrequeueEntry,
  decodeRequestId,
  decodeSigningKeys,
  decodeTokenRecord,
  encodeRequestId,
  encodeSigningKey,
  encodeTokenClaims,
  POSITION_PREFIX_BYTES,
} from './encoding.ts';
import { RedisScripts, type EventKeys, type RawTokenClaim, type RedisClient, type RoomKeys } from './scripts.ts';
import { WriteFenceClock } from './write-fence.ts';

export interface RedisStoreOptions {
  /**
   * redis:// or rediss:// URL to connect to. With `client` (e.g. redis-cluster://h1:p1,h2:p2) it is only
   * the description, without credentials.
   */
  url: string;
  /** Prepended to every key, so several deployments or test runs can share one Redis. Default "ar:". */
  keyPrefix?: string;
  /** An existing client (e.g. a Cluster); by default the store leaves it open on close(). */
  client?: RedisClient;
  /** Close `client` when the store closes. Default: true for a client the store created, else false. */
  closeClient?: boolean;
  /** How long a call waits for a (re)connection before failing. Default 500 ms. */
  readyTimeoutMs?: number;
  /** How long a sent command may take. Default 1000 ms. */
  commandTimeoutMs?: number;
  /** How long a connection attempt may take. Default 1000 ms. */
  connectTimeoutMs?: number;
  /** Replicas every write must reach (WAIT) before it is acknowledged. Default 0 (no WAIT). */
  minReplicas?: number;
  /** How long WAIT waits for them. Default 250 ms; at most half the command timeout. */
  replicaTimeoutMs?: number;
}

export const DEFAULT_COMMAND_TIMEOUT_MS = 1000;
export const DEFAULT_READY_TIMEOUT_MS = 500;
export const DEFAULT_REPLICA_TIMEOUT_MS = 250;
/**
 * The write fence closes this long before the command timeout: a script that started just before its
 * deadline has this long to finish and have its reply read before the caller gives up (see call()).
 */
const FENCE_MARGIN_MS = 300;
/** ioredis' own command timeout is only a backstop behind the store's (which decides the 503). */
const BACKSTOP_MS = 500;

const DEFAULT_PREFIX = 'ar:';
/** Redis deletes a lock key this long after the lock expires; see tryAcquireLock.lua. */
const LOCK_GRACE_MS = 60_000;

/** A client with the failure behaviour described at the top of this file. */
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

function toStoreError(description: string, error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !(error instanceof Error)) return error;
  // Script errors and wrong commands are bugs, not outages: let them through unchanged.
  if (error.name === 'ReplyError' && !UNAVAILABLE_REPLY.test(error.message)) return error;
  return new StoreUnavailableError(`Redis ${description} unavailable: ${error.message}`, { cause: error });
}

export class RedisStore implements Store {
  readonly description: string;
  private readonly client: RedisClient;
  private readonly ownsClient: boolean;
  private readonly scripts: RedisScripts;
  private readonly prefix: string;
  private readonly readyTimeoutMs: number;
  private readonly commandTimeoutMs: number;
  private readonly fenceClock: WriteFenceClock;
  private readyWaiter: Promise<void> | null = null;
  /** Set when a wait for the connection timed out; cleared when the client is ready again. */
  private unreachable = false;
  /** One server (not a Cluster): a command timed out and nothing was answered since; see probe(). */
  private hung = false;
  /** The client's last connection error (e.g. WRONGPASS), to say why Redis is unavailable. */
  private lastConnectionError: string | null = null;
  private closed = false;

  constructor(options: RedisStoreOptions) {
    this.description = describeRedisUrl(options.url);
    this.prefix = options.keyPrefix ?? DEFAULT_PREFIX;
    this.readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
    const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.commandTimeoutMs = commandTimeoutMs;
    const minReplicas = options.minReplicas ?? 0;
    const replicaTimeoutMs = options.replicaTimeoutMs ?? DEFAULT_REPLICA_TIMEOUT_MS;
    if (!Number.isInteger(minReplicas) || minReplicas < 0) throw new RangeError('minReplicas must be an integer ≥ 0');
    if (!(replicaTimeoutMs >= 1 && replicaTimeoutMs <= commandTimeoutMs / 2)) {
      throw new RangeError(`replicaTimeoutMs must be between 1 and ${commandTimeoutMs / 2} ms (half the command timeout)`);
    }
    if (options.client) {
      this.client = options.client;
      this.ownsClient = options.closeClient ?? false;
    } else {
      this.client = createRedisClient(options.url, options);
      this.ownsClient = options.closeClient ?? true;
      // Connection errors surface through the calls that fail (StoreUnavailableError); without a listener
      // ioredis would print every reconnection attempt.
      this.client.on('error', () => {});
    }
    // A client passed in (a Cluster) has its own command timeout; the fence assumes the default or the given one.
    this.fenceClock = new WriteFenceClock(this.client, { budgetMs: commandTimeoutMs - FENCE_MARGIN_MS });
    this.scripts = new RedisScripts(this.client, {
      fence: () => this.fenceClock.fence(),
      replicas: minReplicas > 0 ? { count: minReplicas, timeoutMs: replicaTimeoutMs } : undefined,
    });
    this.client.on('ready', () => {
      this.unreachable = false;
      this.hung = false;
      this.lastConnectionError = null;
      // A reconnection may reach another machine (a Sentinel failover): measure its clock before writing.
      if (!this.isCluster()) this.fenceClock.forget();
    });
    this.client.on('error', (error: Error) => {
      this.lastConnectionError = error.message;
    });
  }

  private keys(eventId: string): EventKeys {
    const base = `${this.prefix}{${eventId}}:`;
    return {
      counters: `${base}c`,
      positions: `${base}rq`,
      runs: `${base}et`,
      history: `${base}sh`,
      tokens: `${base}tk`,
      tokensByExp: `${base}te`,
      openByExp: `${base}to`,
      tokenPositions: `${base}tp`,
      signingKeys: `${base}k`,
      authorizations: `${base}oa`,
      closedSessions: `${base}cs`,
      leftPositions: `${base}lp`,
      prequeue: `${base}pq`,
      prequeueList: `${base}pl`,
      draw: `${base}dr`,
      lastSeen: `${base}ls`,
    };
  }

  private roomKeys(): RoomKeys {
    const base = `${this.prefix}{@rooms}:`;
    return { settings: `${base}settings`, created: `${base}created`, version: `${base}version` };
  }

  private isCluster(): boolean {
    return (this.client as Cluster).isCluster === true;
  }

  /** Runs one Redis call once the client is connected, turning connection trouble into StoreUnavailableError. */
  private async call<T>(operation: () => Promise<T>): Promise<T> {
    await this.connected();
    try {
      return await this.withTimeout(operation());
    } catch (error) {
      if (error instanceof Error && /timed out/i.test(error.message) && !this.isCluster()) this.suspectHung();
      throw toStoreError(this.description, error);
    }
  }

  /**
   * The command timeout. When the timer fires, the reply may already sit in the socket, unread because the
   * event loop was busy (timers run before I/O in a loop turn): look once more after the next I/O poll
   * (setImmediate) before giving up, so a write that ran in time is answered as done, not 503.
   */
  private withTimeout<T>(pending: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        setImmediate(() => {
          if (settled) return;
          settled = true;
          reject(new Error(`Command timed out after ${this.commandTimeoutMs} ms`));
        });
      }, this.commandTimeoutMs);
      pending.then(
        (value) => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /**
   * A command timed out on the one connection: fail every call at once (the bound) until a PING on that
   * connection is answered, which also means the commands stuck before it have been answered (refused by
   * the fence if late). After two unanswered PINGs the connection is dropped and re-opened: by then every
   * command sent before the first timeout has timed out by itself, and nothing new was sent in between.
   */
  private suspectHung(): void {
    if (this.hung) return;
    this.hung = true;
    const client = this.client as Redis;
    void (async () => {
      for (let unanswered = 0; this.hung && !this.closed; ) {
        try {
          await client.ping();
          this.hung = false;
        } catch {
          if (client.status !== 'ready') return; // the 'ready' event ends the suspicion
          if (++unanswered >= 2) {
            client.disconnect(true);
            return;
          }
        }
      }
    })();
  }
  private unavailable(): StoreUnavailableError {
    const why = this.lastConnectionError ? ` (${this.lastConnectionError})` : '';
    const status = this.hung ? 'not answering' : this.client.status;
    return new StoreUnavailableError(`Redis ${this.description} unavailable: ${status}${why}`);
  }

  private async connected(): Promise<void> {
    const client = this.client;
    if (this.closed) throw new StoreUnavailableError(`Redis ${this.description}: the store is closed`);
    if (client.status === 'ready') {
      if (this.hung) throw this.unavailable();
      if (!this.fenceClock.ready()) {
        try {
          await this.fenceClock.measure();
        } catch (error) {
          throw toStoreError(this.description, error);
        }
      }
      return;
    }
    if (client.status === 'end') {
      throw new StoreUnavailableError(`Redis ${this.description}: the client was closed`);
    }
    // Once a wait has timed out, fail at once until the client reconnects: callers queued behind one
    // another (e.g. join batches of one event) must not each wait readyTimeoutMs during an outage.
    if (this.unreachable) throw this.unavailable();
    if (client.status === 'wait') client.connect().catch(() => {}); // a lazyConnect client passed in
    this.readyWaiter ??= new Promise<void>((resolve) => {
      client.once('ready', () => {
        this.readyWaiter = null;
        resolve();
      });
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.unreachable = true;
        reject(this.unavailable());
      }, this.readyTimeoutMs);
    });
    try {
      await Promise.race([this.readyWaiter, timeout]);
    } finally {
      clearTimeout(timer);
    }
    await this.connected();
  }

  async ping(): Promise<void> {
    await this.call(() => this.client.ping());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.ownsClient) return;
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // fall through: drop the connection without waiting
      }
    }
    this.client.disconnect();
  }

  async syncExpirySwitch(eventId: string, enabled: boolean, now: number): Promise<void> {
    await this.call(() => this.scripts.syncExpirySwitch(this.keys(eventId), enabled, now));
  }

  async assignPositions(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    if (joins.length === 0) return [];
    const args = joins.map((join) => ({ requestId: encodeRequestId(join.requestId), entryTime: join.entryTime }));
    const first = await this.call(() => this.scripts.assignPositions(this.keys(eventId), args));
    return joins.map((_, i) => first + i);
  }

  async assignPositionsIfAbsent(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    if (joins.length === 0) return [];
    const args = joins.map((join) => ({ requestId: encodeRequestId(join.requestId), entryTime: join.entryTime }));
    return this.call(() => this.scripts.assignPositionsIfAbsent(this.keys(eventId), args));
  }

  async getPosition(eventId: string, requestId: string): Promise<PositionRecord | null> {
    return this.call(() => this.scripts.getPosition(this.keys(eventId), encodeRequestId(requestId)));
  }

  async getCounters(eventId: string): Promise<Counters> {
    const values = await this.call(() =>
      this.client.hmget(this.keys(eventId).counters, 'q', 's', 't', 'x', 'co', 'ab', 'mx', 'lf', 'g'),
    );
    const [queue, serving, tokens, expired, completed, abandoned, maxExpired, left, generation] = values.map((v) => Number(v ?? 0));
    return {
      queue: queue as number,
      serving: serving as number,
      tokens: tokens as number,
      expired: expired as number,
      completed: completed as number,
      abandoned: abandoned as number,
      maxExpired: maxExpired as number,
      left: left as number,
      generation: generation as number,
    };
  }

  async getServingCounter(eventId: string): Promise<number> {
    return Number((await this.call(() => this.client.hget(this.keys(eventId).counters, 's'))) ?? 0);
  }

  async incrementServing(eventId: string, by: number, now: number): Promise<number> {
    return this.call(() => this.scripts.incrementServing(this.keys(eventId), by, now));
  }

  async getClaimContext(eventId: string, requestId: string): Promise<ClaimContext | null> {
    const raw = await this.call(() => this.scripts.getClaimContext(this.keys(eventId), encodeRequestId(requestId)));
    if (!raw) return null;
    return {
      position: raw.position,
      entryTime: raw.entryTime,
      serving: raw.serving,
      servedAt: raw.servedAt,
      expiryEnabledSince: raw.expiryEnabledSince,
      maxExpired: raw.maxExpired,
      token: raw.token === null ? null : decodeTokenRecord(requestId, raw.token),
      left: raw.left,
    };
  }

  async issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult> {
    const result = await this.call(() =>
      this.scripts.issueTokenIfAbsent(
        this.keys(eventId),
        encodeRequestId(record.requestId),
        record.exp,
        encodeTokenClaims(record),
      ),
    );
    switch (result.outcome) {
      case 'existing':
        return { outcome: 'existing', record: decodeTokenRecord(record.requestId, result.token) };
      case 'issued':
        return { outcome: 'issued', record: { ...record, position: result.position, status: 0 } };
      default:
        return result;
    }
  }

  async closeSession(eventId: string, requestId: string, status: Exclude<SessionStatus, 0>): Promise<boolean> {
    return this.call(() => this.scripts.closeSession(this.keys(eventId), encodeRequestId(requestId), status));
  }

  async renewSession(eventId: string, requestId: string, nowMs: number, idleBeforeMs: number | null, touch: boolean): Promise<SessionRenewal> {
    const result = await this.call(() => this.scripts.renewSession(this.keys(eventId), encodeRequestId(requestId), nowMs, idleBeforeMs, touch));
    // 'idle' is only answered for a token set kept outside Redis (renewLastSeen).
    if (result.outcome === 'open') return result;
    return { outcome: result.outcome === 'idle' ? 'ended' : result.outcome };
  }

  /**
   * The composite store's half of renewSession: the last seen kept in Redis for a token set kept elsewhere
   * (whose iat is `iatMs`); 'idle' when it is older than idleBeforeMs (the caller closes the session).
   */
  async renewLastSeen(
    eventId: string,
    requestId: string,
    nowMs: number,
    idleBeforeMs: number | null,
    touch: boolean,
    iatMs: number,
  ): Promise<{ outcome: 'open'; lastSeen: number } | { outcome: 'idle' }> {
    const result = await this.call(() => this.scripts.renewSession(this.keys(eventId), encodeRequestId(requestId), nowMs, idleBeforeMs, touch, iatMs));
    return result.outcome === 'open' ? result : { outcome: 'idle' };
  }

  async countActiveTokens(eventId: string, now: number): Promise<number> {
    return this.call(() => this.client.zcount(this.keys(eventId).openByExp, now, '+inf'));
  }

  async listExpiredTokens(eventId: string, now: number, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    const members = await this.call(() =>
      this.client.zrangebyscoreBuffer(this.keys(eventId).tokensByExp, '-inf', `(${now}`, 'LIMIT', 0, limit),
    );
    return members.map((member) => decodeRequestId(member.subarray(POSITION_PREFIX_BYTES)));
  }

  async advanceExpiry(eventId: string, cutoff: number, incrServing: boolean, now: number): Promise<ExpiryAdvance> {
    return this.call(() => this.scripts.advanceExpiry(this.keys(eventId), cutoff, incrServing, now));
  }

  async resetEvent(eventId: string): Promise<void> {
    await this.call(() => this.scripts.resetEvent(this.keys(eventId)));
  }

  async getSigningKeys(eventId: string): Promise<StoredSigningKey[]> {
    const stored = await this.call(() => this.client.hgetall(this.keys(eventId).signingKeys));
    return decodeSigningKeys(Object.entries(stored).flat());
  }

  async addSigningKeyIfNone(eventId: string, key: StoredSigningKey): Promise<StoredSigningKey> {
    const flat = await this.call(() =>
      this.scripts.addSigningKeyIfNone(this.keys(eventId), key.kid, encodeSigningKey(key)),
    );
    return decodeSigningKeys(flat)[0] as StoredSigningKey;
  }

  // A room's history: one sorted set per room scored by minute, in the room's hash slot.
  async recordHistory(eventId: string, sample: HistorySample, keepSeconds: number): Promise<void> {
    const key = `${this.prefix}{${eventId}}:history`;
    await this.call(() =>
      this.client
        .multi()
        .zremrangebyscore(key, sample.minute, sample.minute)
        .zadd(key, sample.minute, JSON.stringify(sample))
        .zremrangebyscore(key, '-inf', `(${sample.minute - keepSeconds}`)
        .exec(),
    );
  }

  async readHistory(eventId: string, fromMinute: number, toMinute: number): Promise<HistorySample[]> {
    const members = await this.call(() => this.client.zrangebyscore(`${this.prefix}{${eventId}}:history`, fromMinute, toMinute));
    return members.map((m) => JSON.parse(m) as HistorySample);
  }

  // A room's wait histograms: one hash per minute (`…:waits:<minute>`, field → count, HINCRBY adds a node's
  // counts) and a sorted set of the minutes that have one (`…:waits`), all in the room's hash slot. A minute's
  // hash expires by itself after the retention; the index is trimmed by score.
  async addWaits(eventId: string, waits: MinuteWaits, keepSeconds: number): Promise<void> {
    const index = `${this.prefix}{${eventId}}:waits`;
    const key = `${index}:${waits.minute}`;
    const multi = this.client.multi();
    for (const [field, count] of Object.entries(waits.counts)) if (count > 0) multi.hincrby(key, field, Math.trunc(count));
    multi
      .expire(key, Math.max(1, Math.ceil(keepSeconds + 120)))
      .zadd(index, waits.minute, String(waits.minute))
      .zremrangebyscore(index, '-inf', `(${waits.minute - keepSeconds}`);
    await this.call(() => multi.exec());
  }

  async readWaits(eventId: string, fromMinute: number, toMinute: number): Promise<MinuteWaits[]> {
    const index = `${this.prefix}{${eventId}}:waits`;
    const minutes = await this.call(() => this.client.zrangebyscore(index, fromMinute, toMinute));
    if (minutes.length === 0) return [];
    const pipeline = this.client.pipeline();
    for (const minute of minutes) pipeline.hgetall(`${index}:${minute}`);
    const replies = (await this.call(() => pipeline.exec())) ?? [];
    const out: MinuteWaits[] = [];
    minutes.forEach((minute, i) => {
      const [error, hash] = replies[i] ?? [null, null];
      if (error) throw toStoreError(this.description, error);
      const counts: Record<string, number> = {};
      for (const [field, count] of Object.entries((hash ?? {}) as Record<string, string>)) counts[field] = Number(count);
      if (Object.keys(counts).length > 0) out.push({ minute: Number(minute), counts });
    });
    return out;
  }

  // The audit log: one sorted set scored by a sequence number (INCR), trimmed to the newest AUDIT_LOG_KEEP.
  // Its keys share one hash tag, so a cluster keeps them on one node.
  private auditKeys(): { log: string; seq: string } {
    return { log: `${this.prefix}{@audit}:log`, seq: `${this.prefix}{@audit}:seq` };
  }

  async appendAudit(entry: AuditEntry): Promise<void> {
    const keys = this.auditKeys();
    const seq = await this.call(() => this.client.incr(keys.seq));
    await this.call(() =>
      this.client
        .multi()
        .zadd(keys.log, seq, JSON.stringify({ ...entry, seq }))
        .zremrangebyscore(keys.log, '-inf', seq - AUDIT_LOG_KEEP)
        .exec(),
    );
  }

  async listAudit(limit: number, beforeSeq?: number): Promise<(AuditEntry & { seq: number })[]> {
    const max = beforeSeq === undefined ? '+inf' : `(${beforeSeq}`;
    const members = await this.call(() => this.client.zrevrangebyscore(this.auditKeys().log, max, '-inf', 'LIMIT', 0, limit));
    return members.map((m) => JSON.parse(m) as AuditEntry & { seq: number });
  }

  async tryAcquireLock(name: string, owner: string, ttlMs: number, nowMs: number): Promise<boolean> {
    return this.call(() =>
      this.scripts.tryAcquireLock(`${this.prefix}lock:${name}`, owner, ttlMs, nowMs, LOCK_GRACE_MS),
    );
  }

  // ---- Bot defence (BotDefenceStore) ----

  async countInWindow(name: string, by: number, windowMs: number, nowMs: number): Promise<WindowCounts> {
    const index = Math.floor(nowMs / windowMs);
    const base = `${this.prefix}rate:{${name}}:`;
    const [current, previous] = await this.call(() =>
      this.scripts.countInWindow(`${base}${index}`, `${base}${index - 1}`, Math.trunc(by), 2 * windowMs + LOCK_GRACE_MS),
    );
    return { current, previous, endsAtMs: (index + 1) * windowMs };
  }

  async useOnce(name: string, untilMs: number, nowMs: number): Promise<boolean> {
    const keepMs = Math.max(1, Math.ceil(untilMs - nowMs)) + LOCK_GRACE_MS;
    return this.call(() => this.scripts.useOnce(`${this.prefix}once:${name}`, keepMs));
  }

  async holdUntil(name: string, untilMs: number, nowMs: number): Promise<number> {
    const keepMs = Math.max(1, Math.ceil(untilMs - nowMs)) + LOCK_GRACE_MS;
    const held = await this.call(() => this.scripts.holdUntil(`${this.prefix}hold:${name}`, untilMs, keepMs));
    return held > nowMs ? held : 0;
  }

  async claimSecret(name: string, candidate: string): Promise<string> {
    return this.call(() => this.scripts.claimSecret(`${this.prefix}secret:${name}`, candidate));
  }

  async replaceSecret(name: string, expected: string, next: string): Promise<string | null> {
    return this.call(() => this.scripts.replaceSecret(`${this.prefix}secret:${name}`, expected, next));
  }

  // ---- Pre-queue and the draw (DrawStore) ----

  async commitDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return decodeDraw(await this.call(() => this.scripts.commitDraw(this.keys(eventId), candidate))) as DrawRecord;
  }

  async getDraw(eventId: string): Promise<DrawRecord | null> {
    const keys = this.keys(eventId);
    // The list's length is how many entries were ever listed (the pre-queue figure); `lv` how many left.
    const [stored, listed] = await this.call(() => Promise.all([this.client.hgetall(keys.draw), this.client.llen(keys.prequeueList)]));
    const draw = decodeDraw(Object.entries(stored).flat());
    return draw && { ...draw, listed, leftPrequeue: Number(stored.lv ?? 0) };
  }

  async joinPrequeue(eventId: string, joins: readonly JoinRequest[], candidate: DrawSeed): Promise<number[]> {
    if (joins.length === 0) return [];
    const args = joins.map((join) => ({ requestId: encodeRequestId(join.requestId), entryTime: join.entryTime }));
    return this.call(() => this.scripts.joinPrequeue(this.keys(eventId), args, candidate));
  }

  async getPrequeueEntry(eventId: string, requestId: string): Promise<PrequeueEntry | null> {
    const raw = await this.call(() => this.scripts.getPrequeueEntry(this.keys(eventId), encodeRequestId(requestId)));
    return raw ? decodePrequeueEntry(requestId, raw.value, raw.position) : null;
  }

  async readPrequeue(eventId: string, afterJoinOrder: number, limit: number): Promise<PrequeueEntry[]> {
    if (limit <= 0) return [];
    const raw = await this.call(() => this.scripts.readPrequeue(this.keys(eventId), afterJoinOrder, limit));
    return raw.map((entry) => decodePrequeueEntry(decodeRequestId(entry.requestId), entry.value, entry.position));
  }

  async startDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return decodeDraw(await this.call(() => this.scripts.startDraw(this.keys(eventId), candidate))) as DrawRecord;
  }

  async numberDrawn(eventId: string, expectedProgress: number, requestIds: readonly string[]): Promise<DrawRecord | null> {
    const ids = requestIds.map(encodeRequestId);
    const flat = await this.call(() => this.scripts.numberDrawn(this.keys(eventId), expectedProgress, ids));
    return flat && decodeDraw(flat);
  }

  async numberLateArrivals(eventId: string, limit: number): Promise<DrawRecord | null> {
    const flat = await this.call(() => this.scripts.numberLateArrivals(this.keys(eventId), limit));
    return flat && decodeDraw(flat);
  }

  async leavePrequeue(eventId: string, requestId: string): Promise<PrequeueLeave> {
    return (await this.call(() =>
      this.scripts.leavePrequeue(this.keys(eventId), encodeRequestId(requestId)),
    )) as PrequeueLeave;
  }

  // ---- rooms at runtime (the rooms API) ----

  async putRoom(eventId: string, settings: string): Promise<RoomPutOutcome> {
    return this.call(() => this.scripts.putRoom(this.roomKeys(), eventId, settings));
  }

  async getRoom(eventId: string): Promise<StoredRoom | null> {
    const room = await this.call(() => this.scripts.getRoom(this.roomKeys(), eventId));
    return room && { eventId, ...room };
  }

  async listRooms(): Promise<StoredRooms> {
    const flat = await this.call(() => this.scripts.listRooms(this.roomKeys()));
    const created = new Map<string, number>();
    for (let i = 0; i + 1 < flat.created.length; i += 2) created.set(flat.created[i] as string, Number(flat.created[i + 1]));
    const rooms: StoredRoom[] = [];
    for (let i = 0; i + 1 < flat.settings.length; i += 2) {
      const eventId = flat.settings[i] as string;
      rooms.push({ eventId, settings: flat.settings[i + 1] as string, createdVersion: created.get(eventId) ?? 0 });
    }
    rooms.sort((a, b) => a.createdVersion - b.createdVersion);
    return { version: flat.version, rooms };
  }

  async roomsVersion(): Promise<number> {
    return Number((await this.call(() => this.client.get(this.roomKeys().version))) ?? 0);
  }

  // Deleting a room is two scripts, because its settings ({@rooms}) and its data ({eventId}) live in different
  // hash slots of a Redis Cluster. The settings go first (WaitingRoomService.deleteRoom keeps that order and
  // waits for every node to stop serving the room in between): the other order could leave, after a crash in
  // between, a room that every node serves with its data half gone. This one can leave only data without a
  // room, which no node serves.

  async deleteRoomSettings(eventId: string): Promise<boolean> {
    return this.call(() => this.scripts.deleteRoomSettings(this.roomKeys(), eventId));
  }

  async deleteRoomData(eventId: string): Promise<void> {
    await this.call(() => this.scripts.deleteRoomData(this.keys(eventId)));
    // The history and the wait histograms (one hash per minute, listed by their index) go after the rest.
    const history = `${this.prefix}{${eventId}}:history`;
    const index = `${this.prefix}{${eventId}}:waits`;
    const minutes = await this.call(() => this.client.zrangebyscore(index, '-inf', '+inf'));
    await this.call(() => this.client.unlink(history, index, ...minutes.map((minute) => `${index}:${minute}`)));
  }

  // ---- for the composite store (Redis + DynamoDB token records, src/store/dynamodb/), not the port ----

  /** The Redis half of issuing a token set: see lua/claimTokenPosition.lua. */
  async claimTokenPosition(eventId: string, requestId: string): Promise<RawTokenClaim> {
    return this.call(() => this.scripts.claimTokenPosition(this.keys(eventId), encodeRequestId(requestId)));
  }

  /** Counts a session closed elsewhere in completed/abandoned, once per request ID; true if counted now. */
  async countClosedSession(eventId: string, requestId: string, status: Exclude<SessionStatus, 0>): Promise<boolean> {
    return this.call(() => this.scripts.countClosedSession(this.keys(eventId), encodeRequestId(requestId), status));
  }

  /** How many times the event was reset (token records of an older generation belong to a previous run). */
  async resetGeneration(eventId: string): Promise<number> {
    return Number((await this.call(() => this.client.hget(this.keys(eventId).counters, 'g'))) ?? 0);
  }

  async saveAuthorization(eventId: string, requestId: string, authorization: string): Promise<boolean> {
    return this.call(() =>
      this.scripts.saveAuthorization(this.keys(eventId), encodeRequestId(requestId), authorization),
    );
  }

  async getAuthorization(eventId: string, requestId: string): Promise<string | null> {
    return this.call(() => this.client.hget(this.keys(eventId).authorizations, encodeRequestId(requestId)));
  }

  // ---- leaving the queue and automatic admission ----

  async leaveQueue(eventId: string, requestId: string): Promise<LeaveResult> {
    return this.call(() => this.scripts.leaveQueue(this.keys(eventId), encodeRequestId(requestId)));
  }

  async leftPositionsAbove(eventId: string, after: number, limit: number): Promise<number[]> {
    const members = await this.call(() => this.client.zrangebyscore(this.keys(eventId).leftPositions, `(${after}`, '+inf', 'LIMIT', 0, limit));
    return members.map(Number);
  }

  async incrementServingWithinQueue(eventId: string, by: number, now: number, ifServing?: number): Promise<ServingMove> {
    return this.call(() => this.scripts.incrementServingWithinQueue(this.keys(eventId), by, now, ifServing));
  }

  async getAdmissionSnapshot(eventId: string, now: number, windowStart: number): Promise<AdmissionSnapshot> {
    return this.call(() => this.scripts.getAdmissionSnapshot(this.keys(eventId), now, windowStart));
  }
}
