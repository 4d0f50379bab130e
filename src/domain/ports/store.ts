// The store port, owned by the domain: one method per atomic operation the waiting room needs, grouped by
// capability (queue, signing keys, locks, shared secrets, OpenID Connect authorizations) so that a part that
// needs one capability (the key ring, the job scheduler) depends on that one only. Every mutating method is ONE
// atomic unit in its backend (a SQLite transaction, a Redis Lua script): never a read-modify-write across
// round trips. The contract suite in test/store/contract.ts states the behaviour every backend must show.

import type { SessionStatus, TokenRecord } from '../claims.ts';

export interface Counters {
  /** Positions handed out. */
  queue: number;
  serving: number;
  /** Token sets issued. */
  tokens: number;
  /** Positions that expired unclaimed. */
  expired: number;
  completed: number;
  abandoned: number;
  /** Highest position known to have expired unclaimed. */
  maxExpired: number;
}

export interface PositionRecord {
  position: number;
  /** Epoch seconds. */
  entryTime: number;
}

export interface JoinRequest {
  requestId: string;
  entryTime: number;
}

/** Everything generate_token and queue_pos_expiry decide on, read at one instant. */
export interface ClaimContext extends PositionRecord {
  serving: number;
  servedAt: number | null;
  expiryEnabledSince: number | null;
  maxExpired: number;
  token: TokenRecord | null;
}

export type IssueResult =
  | { outcome: 'issued'; record: TokenRecord }
  | { outcome: 'existing'; record: TokenRecord }
  /** The expiry job recorded the position as expired before the token could be issued. */
  | { outcome: 'expired' }
  /** The position no longer exists (a reset happened in between). */
  | { outcome: 'no-position' };

export interface ExpiryAdvance {
  previousMaxExpired: number;
  maxExpired: number;
  /** Positions in the newly expired range that never claimed a token. */
  newlyExpiredUnclaimed: number;
  previousServing: number;
  serving: number;
}

export interface StoredSigningKey {
  kid: string;
  /** Private JWK as JSON text. Stays inside the process. */
  privateJwk: string;
  /** Public JWK as JSON text. */
  publicJwk: string;
  createdAt: number;
}

/** Positions, counters and token sets of the rooms: the waiting room's own state. */
export interface QueueStore {
  /**
   * Records whether queue-position expiry is on for the event. Switching it on stores `now` as the time it
   * was enabled (unless it already was on); switching it off clears that time.
   */
  syncExpirySwitch(eventId: string, enabled: boolean, now: number): Promise<void>;

  /**
   * Hands out the next positions, in order, to the given requests: one atomic unit for the whole batch.
   * Request IDs are lowercase UUIDs, new to the event; a duplicate fails the whole batch, writing nothing.
   */
  assignPositions(eventId: string, joins: readonly JoinRequest[]): Promise<number[]>;
  /**
   * Like assignPositions, for intake that may deliver a join more than once (AWS SQS redelivers a message
   * whose batch partly failed): a request ID that already has a position keeps it and its entry time, and
   * its current position is returned; a request ID repeated inside the batch gets one position. New request
   * IDs get the next positions in batch order. One atomic unit. Returns one position per join.
   */
  assignPositionsIfAbsent(eventId: string, joins: readonly JoinRequest[]): Promise<number[]>;
  getPosition(eventId: string, requestId: string): Promise<PositionRecord | null>;

  getCounters(eventId: string): Promise<Counters>;
  /**
   * The event's counters if this process already holds them in memory, fresh enough to answer a poll
   * (the SQLite store's exact copy, the hot-read cache's entry); undefined otherwise. Never reads the
   * backend and never blocks: the polling fast path (src/http/fast-poll.ts) falls back to getCounters.
   */
  peekCounters?(eventId: string): Counters | undefined;
  getServingCounter(eventId: string): Promise<number>;
  /** Adds `by` (may be negative) and records when each new highest value was first reached. */
  incrementServing(eventId: string, by: number, now: number): Promise<number>;

  getClaimContext(eventId: string, requestId: string): Promise<ClaimContext | null>;
  /**
   * Stores the token set unless one exists for the request ID (then returns that one), counting it in
   * `tokens`. Refuses if the position is gone or already recorded as expired. One atomic unit.
   */
  issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult>;
  /** Closes an open session once; false if no token set exists or it was already closed. */
  closeSession(eventId: string, requestId: string, status: Exclude<SessionStatus, 0>): Promise<boolean>;
  /** Tokens with exp ≥ now whose session is still open. */
  countActiveTokens(eventId: string, now: number): Promise<number>;
  /** Request IDs whose token exp < now, any session status, oldest first. */
  listExpiredTokens(eventId: string, now: number, limit: number): Promise<string[]>;

  /**
   * Expiry job step: records as expired every position P with eligibility time < cutoff that has no token,
   * advancing maxExpired and `expired`; when `incrServing`, also moves the serving counter forward by the
   * number of newly expired unclaimed positions. One atomic unit.
   */
  advanceExpiry(eventId: string, cutoff: number, incrServing: boolean, now: number): Promise<ExpiryAdvance>;

  /**
   * Deletes every position, token, counter and OpenID Connect authorization of the event; keeps its keys and
   * settings. One atomic unit.
   */
  resetEvent(eventId: string): Promise<void>;

}

/** The rooms' signing keys (src/tokens/keys.ts). */
export interface SigningKeyStore {
  getSigningKeys(eventId: string): Promise<StoredSigningKey[]>;
  /** Stores the key unless the event already has one; returns the event's key (the winner of any race). */
  addSigningKeyIfNone(eventId: string, key: StoredSigningKey): Promise<StoredSigningKey>;

}

/** Leader locks of the interval jobs (src/jobs/scheduler.ts). */
export interface LockStore {
  /** Leader lock for interval jobs: true if `owner` holds `name` until now + ttlMs. */
  tryAcquireLock(name: string, owner: string, ttlMs: number, nowMs: number): Promise<boolean>;

}

/** Values generated once and shared by every node (admin credentials, OpenID Connect client secrets). */
export interface SecretStore {
  /**
   * A value generated once and shared by every node (e.g. the generated admin credentials): stores
   * `candidate` under `name` unless a value is stored already, and returns the stored value (the winner of
   * any race). The caller knows it created the value when the answer equals its own candidate. One atomic unit.
   */
  claimSecret(name: string, candidate: string): Promise<string>;
  /**
   * Compare-and-set of a value kept by claimSecret (e.g. rotating a secret): stores `next` under `name` only
   * if `expected` is the value stored now, and returns the value stored afterwards (`next` if it was set,
   * else the current value; null if nothing is stored under `name`). One atomic unit.
   */
  replaceSecret(name: string, expected: string, next: string): Promise<string | null>;

}

/** OpenID Connect authorization requests bound to queue positions (src/oidc/). */
export interface AuthorizationStore {
  /**
   * Binds an OpenID Connect authorization request (opaque text) to a request ID of the event, replacing any
   * earlier one; false, storing nothing, when the request ID has no position. Deleted by resetEvent.
   */
  saveAuthorization(eventId: string, requestId: string, authorization: string): Promise<boolean>;
  getAuthorization(eventId: string, requestId: string): Promise<string | null>;
}

// ---- rooms at runtime (issue 12: the rooms API; rooms live in the store) ----

/** One room as the store keeps it. */
export interface StoredRoom {
  eventId: string;
  /** The room's settings as JSON text, exactly as put: the store never reads it (the domain parses it). */
  settings: string;
  /**
   * The rooms version at which this room was created. A room deleted and created again between two looks of
   * a node has a new one, so the node knows it is a new room (new key, no data) and not a changed one.
   */
  createdVersion: number;
}

export interface StoredRooms {
  /** The rooms version these rooms are of. */
  version: number;
  rooms: StoredRoom[];
}

export type RoomPutOutcome = 'created' | 'replaced' | 'unchanged';

/**
 * The rooms served by every node (the rooms API, the events file's rooms written at start), and a version
 * number that every change bumps, so that a node finds out with one cheap read whether anything changed.
 */
export interface RoomStore {
  /**
   * Creates the room or replaces its settings (JSON text) and bumps the version, in one atomic unit; a put of
   * the text already stored changes nothing and bumps nothing ('unchanged': nodes that write their configured
   * rooms at every start do not make every other node reload the rooms).
   */
  putRoom(eventId: string, settings: string): Promise<RoomPutOutcome>;
  getRoom(eventId: string): Promise<StoredRoom | null>;
  /**
   * Every room and the version they are of, read at one instant; in the order the rooms were created (so a
   * node serves the configured rooms in the configuration's order).
   */
  listRooms(): Promise<StoredRooms>;
  /** The version: 0 before any room was ever put, then bumped by every change. One cheap read. */
  roomsVersion(): Promise<number>;
  /**
   * First step of deleting a room: its settings, with a version bump (every node stops serving it within a
   * second). True when they existed. One atomic unit. A reset (resetEvent) never touches the settings.
   */
  deleteRoomSettings(eventId: string): Promise<boolean>;
  /**
   * Second step, once no node serves the room any more (WaitingRoomService.deleteRoom waits for that): every
   * piece of the room's data — positions, tokens, counters, serving history, signing keys, OpenID Connect
   * authorizations, and any other per-room state. One atomic unit.
   */
  deleteRoomData(eventId: string): Promise<void>;
}

/** A whole backend: every capability, plus its health and lifetime. */
export interface Store extends QueueStore, SigningKeyStore, LockStore, SecretStore, AuthorizationStore, RoomStore {
  /** A name for logs and /readyz, e.g. "sqlite:/path" or "redis://host:port" (no credentials). */
  readonly description: string;

  /** Throws if the backend cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Thrown by a backend that cannot be reached (connection refused, timed out). The HTTP layer answers 503
 * with Retry-After. The change may or may not have been applied (a reply can be lost after the write):
 * callers must not retry a non-idempotent operation (incrementServing) on their own.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
