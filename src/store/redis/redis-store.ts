// Distributed store on Redis (ioredis): any number of stateless nodes share one Redis (or Redis Cluster).
// Every mutating method is ONE Lua script (./lua/<operation>.lua), so it is atomic without a read-modify-
// write across round trips; reads that combine several keys are scripts too, so they see one instant.
//
// Key layout: keys.ts.
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
// - With `minReplicas` N > 0, each write, and each read that answers a visitor, is followed by a barrier write
//   and WAIT N on the same connection (replica-waits.ts); fewer than N replicas within `replicaTimeoutMs` is a
//   StoreUnavailableError (503), never a success.
// - A client that ends for good (ioredis' "end") is replaced by a new one from the same factory (connection.ts).
// The client reconnects by itself (at most one second apart), so calls succeed again once Redis is back.

import type { SessionStatus, TokenRecord } from '../../domain/claims.ts';
import {
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
import {
  createRedisClient,
  describeRedisUrl,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_READY_TIMEOUT_MS,
  DEFAULT_REPLICA_TIMEOUT_MS,
  toStoreError,
} from './clients.ts';
import { RedisConnection } from './connection.ts';
import { eventKeys, roomKeys } from './keys.ts';
import type { EventKeys, RawTokenClaim, RedisClient, RedisScripts, RoomKeys } from './scripts.ts';
import { RedisPresence } from './presence.ts';

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
  /**
   * Builds the client (Sentinel, Cluster): the store calls it at start (unless `client` is given) and again
   * whenever its client ends for good, so a node follows every failover by itself. Such clients are the store's.
   */
  createClient?: () => RedisClient;
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

const DEFAULT_PREFIX = 'ar:';
/** Redis deletes a lock key this long after the lock expires; see tryAcquireLock.lua. */
const LOCK_GRACE_MS = 60_000;

export {
  createRedisClient,
  createRedisClusterClient,
  createRedisSentinelClient,
  describeRedisUrl,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_READY_TIMEOUT_MS,
  DEFAULT_REPLICA_TIMEOUT_MS,
} from './clients.ts';

export class RedisStore implements Store {
  readonly description: string;
  /** Presence (issue 34): ./presence.ts. */
  readonly presence: RedisPresence;
  private readonly connection: RedisConnection;
  private readonly prefix: string;

  constructor(options: RedisStoreOptions) {
    this.description = describeRedisUrl(options.url);
    this.prefix = options.keyPrefix ?? DEFAULT_PREFIX;
    const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
    const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    const minReplicas = options.minReplicas ?? 0;
    const replicaTimeoutMs = options.replicaTimeoutMs ?? DEFAULT_REPLICA_TIMEOUT_MS;
    if (!Number.isInteger(minReplicas) || minReplicas < 0) throw new RangeError('minReplicas must be an integer ≥ 0');
    if (!(replicaTimeoutMs >= 1 && replicaTimeoutMs <= commandTimeoutMs / 2)) {
      throw new RangeError(`replicaTimeoutMs must be between 1 and ${commandTimeoutMs / 2} ms (half the command timeout)`);
    }
    let createClient = options.createClient;
    if (!options.client && !createClient) {
      createClient = () => {
        const client = createRedisClient(options.url, options);
        // Connection errors surface through the calls that fail (StoreUnavailableError); without a listener
        // ioredis would print every reconnection attempt.
        client.on('error', () => {});
        return client;
      };
    }
    const client = options.client ?? (createClient as () => RedisClient)();
    this.connection = new RedisConnection({
      description: this.description,
      client,
      createClient,
      ownsClient: options.closeClient ?? !options.client,
      readyTimeoutMs,
      commandTimeoutMs,
      replicas: minReplicas > 0 ? { count: minReplicas, timeoutMs: replicaTimeoutMs } : undefined,
    });
    this.presence = new RedisPresence({ client: () => this.client, prefix: this.prefix, call: (op) => this.call(op), fence: () => this.connection.fence() });
  }

  /** The current client: a new one after the last ended (see connection.ts). */
  private get client(): RedisClient {
    return this.connection.client;
  }

  private get scripts(): RedisScripts {
    return this.connection.scripts;
  }

  /** How many times the client ended for good and was replaced by a new one. */
  get clientReplacements(): number {
    return this.connection.replacements;
  }

  private call<T>(operation: () => Promise<T>): Promise<T> {
    return this.connection.call(operation);
  }

  private keys(eventId: string): EventKeys {
    return eventKeys(this.prefix, eventId);
  }

  private roomKeys(): RoomKeys {
    return roomKeys(this.prefix);
  }

  async ping(): Promise<void> {
    await this.call(() => this.client.ping());
  }

  close(): Promise<void> {
    return this.connection.close();
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

  /** Other nodes close sessions too: the set's own field is read (still this set, session open: status 0). */
  async confirmTokenSet(eventId: string, record: TokenRecord): Promise<boolean> {
    const field = await this.call(() => this.scripts.tokenField(this.keys(eventId), encodeRequestId(record.requestId)));
    return field === `0,${record.position},${encodeTokenClaims(record)}`;
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
