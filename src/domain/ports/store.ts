// The store port, owned by the domain: one method per atomic operation the waiting room needs, grouped by
// capability (queue, signing keys, locks, shared secrets, OpenID Connect authorizations) so that a part that
// needs one capability (the key ring, the job scheduler) depends on that one only. Every mutating method is ONE
// atomic unit in its backend (a SQLite transaction, a Redis Lua script): never a read-modify-write across
// round trips. The contract suite in test/store/contract.ts states the behaviour every backend must show.

import type { SessionStatus, TokenRecord } from '../claims.ts';
import type { PresenceStore } from './presence.ts';

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
  /** Positions given up with leaveQueue (never counted in `expired` as well). */
  left: number;
  /**
   * How many times the room was reset (resetEvent): its "generation". A page compares it with the one it joined
   * in to say at once that the queue was restarted. Absent where a store does not keep it (0).
   */
  generation?: number;
}

export interface PositionRecord {
  position: number;
  /** Epoch seconds. */
  entryTime: number;
}

export interface JoinRequest {
  requestId: string;
  entryTime: number;
  /**
   * An OpenID Connect authorization request (opaque text, src/oidc) to bind to the position once it is numbered:
   * the join carries it through the intake, so that whoever numbers the join binds it. The stores' numbering
   * ignores it.
   */
  authorization?: string | undefined;
}

/** Everything generate_token and queue_pos_expiry decide on, read at one instant. */
export interface ClaimContext extends PositionRecord {
  serving: number;
  servedAt: number | null;
  expiryEnabledSince: number | null;
  maxExpired: number;
  token: TokenRecord | null;
  /** The visitor gave the position up (leaveQueue): no token set can be issued for it. */
  left: boolean;
}

export type IssueResult =
  | { outcome: 'issued'; record: TokenRecord }
  | { outcome: 'existing'; record: TokenRecord }
  /** The expiry job recorded the position as expired before the token could be issued. */
  | { outcome: 'expired' }
  /** The position no longer exists (a reset happened in between). */
  | { outcome: 'no-position' }
  /** The visitor gave the position up (leaveQueue) before the token set could be issued. */
  | { outcome: 'left' };

export interface ExpiryAdvance {
  previousMaxExpired: number;
  maxExpired: number;
  /** Positions in the newly expired range that never claimed a token. */
  newlyExpiredUnclaimed: number;
  previousServing: number;
  serving: number;
}

// ---- Leaving the queue and automatic admission (issue 12, spec/rooms.md §2 and §4) ----

/** What leaveQueue did. Only `left` changed anything. */
export type LeaveResult =
  | { outcome: 'left'; position: number }
  | { outcome: 'no-position' }
  | { outcome: 'already-left' }
  /** A token set was issued for the position: its session is closed with closeSession instead. */
  | { outcome: 'claimed' }
  /** The expiry job recorded the position as expired before the leave. */
  | { outcome: 'expired' };

/** A move of the serving counter: where it was and where it is now. */
export interface ServingMove {
  previousServing: number;
  serving: number;
}

/**
 * What renewSession found (the gate's sessions, spec rooms.md §5). `lastSeen` is in epoch milliseconds: the
 * session's shared "last seen" after the call.
 */
export type SessionRenewal =
  | { outcome: 'open'; lastSeen: number }
  /** Idle (last seen before `idleBefore`): closed as abandoned by this call. */
  | { outcome: 'ended' }
  /** The session was closed already (update_session, a revoke, another node). */
  | { outcome: 'closed' }
  /** No token set for the request ID (never claimed, or a reset). */
  | { outcome: 'no-session' };

/** What one tick of automatic admission decides on, read at one instant (getAdmissionSnapshot). */
export interface AdmissionSnapshot {
  /** Positions handed out. */
  queue: number;
  serving: number;
  /** Positions the serving counter first reached at or after `windowStart` (the rate's window). */
  reachedInWindow: number;
  /** Positions the serving counter first reached at or after `now` (this second). */
  reachedThisSecond: number;
  /**
   * Admitted visitors who have not claimed yet: positions ≤ min(serving, queue) that are not recorded as
   * expired, hold no token set and were not left.
   */
  awaitingClaim: number;
  /** Token sets with exp ≥ now whose session is open (countActiveTokens). */
  activeSessions: number;
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
  /**
   * Whether a token set kept in memory (src/domain/claim-cache.ts) may answer a re-claim now: `true` at once when
   * the counters peekCounters gives change with every write to the store (this process its only writer: SQLite),
   * so that the entry's stamp of them tells every change; else one read of whether the store still holds exactly
   * `record`, its session open (a store other nodes write to), confirmed like any read that answers a visitor.
   * Absent: re-claims are always read from the store.
   */
  confirmTokenSet?(eventId: string, record: TokenRecord): true | Promise<boolean>;
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
  /**
   * The shared "last seen" of a session, so that every gate node decides idleness on the same value. A
   * session's last seen is the latest `nowMs` a touching call recorded, or its token set's `iat` (in ms) if
   * none did. One atomic unit:
   * - no token set → 'no-session'; session closed → 'closed';
   * - `idleBeforeMs` given and last seen < idleBeforeMs → the session is closed as abandoned, counted as
   *   closeSession(…, -1) counts it → 'ended';
   * - otherwise, with `touch`, last seen becomes max(last seen, nowMs) → 'open' with the last seen after the call.
   * Last-seen values go with the token sets (resetEvent, deleteRoomData).
   */
  renewSession(eventId: string, requestId: string, nowMs: number, idleBeforeMs: number | null, touch: boolean): Promise<SessionRenewal>;
  /** Tokens with exp ≥ now whose session is still open. */
  countActiveTokens(eventId: string, now: number): Promise<number>;
  /** Request IDs whose token exp < now, any session status, oldest first. */
  listExpiredTokens(eventId: string, now: number, limit: number): Promise<string[]>;

  /**
   * Expiry job step: records as expired every position P with eligibility time < cutoff that has no token,
   * advancing maxExpired and `expired` (a position that was left is passed over but never counted as expired);
   * when `incrServing`, also moves the serving counter forward by the number of newly expired unclaimed
   * positions, never past the queue (as incrementServingWithinQueue). One atomic unit.
   */
  advanceExpiry(eventId: string, cutoff: number, incrServing: boolean, now: number): Promise<ExpiryAdvance>;

  /**
   * Deletes every position, token, counter, OpenID Connect authorization, pre-queue entry and the draw of the
   * event; keeps its keys and settings. One atomic unit.
   */
  resetEvent(eventId: string): Promise<void>;

  // ---- leaving the queue and automatic admission ----

  /**
   * The visitor gives the position up: it is recorded as left and counted in `left`, unless the request ID has
   * no position, left already, holds a token set or was recorded as expired (then nothing changes). A left
   * position can no longer be issued a token set, and the expiry job never counts it as expired. One atomic
   * unit (with issueTokenIfAbsent: of a leave and a first claim of the same position, exactly one succeeds).
   */
  leaveQueue(eventId: string, requestId: string): Promise<LeaveResult>;
  /**
   * Positions given up with leaveQueue that are above `after`, ascending, at most `limit` of them (the people a
   * waiting page must not count as ahead: src/domain/people-ahead.ts). Read-only. Optional: a store without it
   * counts nobody as left.
   */
  leftPositionsAbove?(eventId: string, after: number, limit: number): Promise<number[]>;
  /**
   * Moves the serving counter forward by min(by, queue − serving), never backwards (a counter already past the
   * queue stays where it is), recording new highest values like incrementServing: nobody who joins later
   * skips the line. `by` ≥ 0. With `ifServing`, moves only if the counter is still that value (a compare-and-set:
   * the automatic admission tick moves from the counter its snapshot read, so two ticks that overlap in time
   * — on two nodes, for consecutive seconds — cannot both admit on the same reading); otherwise changes nothing
   * and answers the counter as it is. One atomic unit.
   */
  incrementServingWithinQueue(eventId: string, by: number, now: number, ifServing?: number): Promise<ServingMove>;
  /** Everything one automatic admission tick reads, at one instant; see AdmissionSnapshot. Read-only. */
  getAdmissionSnapshot(eventId: string, now: number, windowStart: number): Promise<AdmissionSnapshot>;
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

// ---- Pre-queue and the draw (spec rooms.md §3; the algorithm is src/domain/draw.ts) ----

/** committed: seed stored and its commitment public; drawing: entries fixed, places being numbered; done. */
export type DrawState = 'committed' | 'drawing' | 'done';

/** A room's draw as stored. */
export interface DrawRecord {
  state: DrawState;
  /** 64 hex digits. Secret until the draw is done. */
  seed: string;
  commitment: string;
  algorithm: string;
  /** Join order of the last pre-queue entry the draw covers; set when the draw starts (0 before). */
  drawnThrough: number;
  /** How many entries the draw orders: those up to drawnThrough that had not left when it started. */
  entryCount: number;
  /** Places numbered so far, 0..entryCount: places 1..progress have their positions. */
  progress: number;
  /** The position given to place 1: the queue counter + 1 when the draw started. */
  firstPosition: number;
  /**
   * Join order through which the late arrivals (entries that joined after the draw started) have positions,
   * FIFO behind the drawn ones: drawnThrough when the draw starts, then it grows (numberLateArrivals).
   */
  numberedThrough: number;
  /**
   * Pre-queue entries ever listed (join orders 1..listed) and how many of them left, as getDraw reads them
   * (the operator's pre-queue figure, src/domain/prequeue-figures.ts); absent from the numbering calls' answers.
   */
  listed?: number;
  leftPrequeue?: number;
}

/** A seed and its commitment, stored only if the room has no draw yet (the first one stored wins). */
export interface DrawSeed {
  seed: string;
  commitment: string;
  algorithm: string;
}

export interface PrequeueEntry {
  requestId: string;
  /** Epoch seconds. */
  entryTime: number;
  /** 1, 2, 3, … in the order the joins were stored. */
  joinOrder: number;
  /** Gave up their place before it was numbered (leavePrequeue). */
  left: boolean;
  /** The position numbered for it, null while it has none. */
  position: number | null;
}

/**
 * What leavePrequeue did: `left` the entry is given up now; `already-left`; `not-in-prequeue` the request ID
 * never joined the pre-queue; `numbered` it has a position now (leave the queue instead); `being-drawn` the
 * draw that covers it is numbering the places (it has a position within seconds; leave then).
 */
export type PrequeueLeave = 'left' | 'already-left' | 'not-in-prequeue' | 'numbered' | 'being-drawn';

/**
 * The pre-queue of a room with shuffle_at_event_start and its draw. A join of the pre-queue gets no position:
 * it is listed with its join order; at the start the draw orders the listed entries and numbers them chunk by
 * chunk (numberDrawn), then the entries that joined meanwhile, FIFO (numberLateArrivals). Every method is one
 * atomic unit; each numbering call moves at most the entries it is given (callers keep it to ≤ 5,000), so no
 * single call holds the store for long. Deleted by resetEvent.
 */
export interface DrawStore {
  /** Stores `candidate` as the room's draw unless it has one; returns the stored draw (the winner of any race). */
  commitDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord>;
  getDraw(eventId: string): Promise<DrawRecord | null>;
  /**
   * Joins of the pre-queue, one atomic unit for the batch (the JoinBatcher's group commit), storing `candidate`
   * as the draw if the room has none. Per join: a request ID that has a position keeps it (answered); one already
   * listed keeps its entry (0); a new one is listed after the others (0) — or, once the draw is done, gets the
   * next position as in assignPositionsIfAbsent (answered), so a join routed here late is never stranded.
   * A request ID repeated in the batch is listed once. Returns one number per join.
   */
  joinPrequeue(eventId: string, joins: readonly JoinRequest[], candidate: DrawSeed): Promise<number[]>;
  getPrequeueEntry(eventId: string, requestId: string): Promise<PrequeueEntry | null>;
  /** Up to `limit` entries with join order > `afterJoinOrder`, in join order, left ones included (flagged). */
  readPrequeue(eventId: string, afterJoinOrder: number, limit: number): Promise<PrequeueEntry[]>;
  /**
   * Starts the draw: fixes its entries (every entry listed now that has not left) and the position of place 1.
   * Stores `candidate` first if the room has no draw. A draw already started or done is returned unchanged
   * (a resumed draw continues from its progress).
   */
  startDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord>;
  /**
   * Numbers the next places: `requestIds` are the entries of places progress+1, progress+2, … in that order,
   * each getting the next position (its pre-queue entry time kept), the queue counter moving with them. Only
   * when the draw is `drawing` with exactly `expectedProgress` places numbered (a second runner or a stale one
   * changes nothing); returns the draw as stored after the call. An ID that is not a fixed, unnumbered entry of
   * the draw is refused, writing nothing.
   */
  numberDrawn(eventId: string, expectedProgress: number, requestIds: readonly string[]): Promise<DrawRecord | null>;
  /**
   * Once every place is numbered: gives the next positions, FIFO, to up to `limit` entries that joined after the
   * draw started; when none are left the draw is marked done in the same unit (later joins get positions
   * directly). Returns the draw as stored after the call; a draw not in that stage is returned unchanged.
   */
  numberLateArrivals(eventId: string, limit: number): Promise<DrawRecord | null>;
  /** Gives up a pre-queue place (the leave_queue of a visitor without a position); see PrequeueLeave. */
  leavePrequeue(eventId: string, requestId: string): Promise<PrequeueLeave>;
}

/** A whole backend: every capability, plus its health and lifetime. */
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
   * Second step, once no node serves the room any more (RoomService.deleteRoom waits for that): every
   * piece of the room's data — positions, tokens, counters, serving history, signing keys, OpenID Connect
   * authorizations, and any other per-room state. One atomic unit.
   */
  deleteRoomData(eventId: string): Promise<void>;
}

/** One window of a rate counter: the count of the window holding `now`, the previous window's, and when the current one ends. */
export interface WindowCounts {
  current: number;
  previous: number;
  /** When the current window ends (ms since the epoch). */
  endsAtMs: number;
}

/** What the bot defence keeps (src/domain/bot-defence.ts): rate counters and single-use marks, shared by every node. */
export interface BotDefenceStore {
  /**
   * Adds `by` (0 only reads) to the counter `name` in the fixed window of `windowMs` that holds `nowMs` (windows
   * start at multiples of windowMs since the epoch), and returns it with the previous window's count. Counters
   * disappear by themselves after two windows. One atomic unit.
   */
  countInWindow(name: string, by: number, windowMs: number, nowMs: number): Promise<WindowCounts>;
  /**
   * Marks `name` used until `untilMs`: true the first time, false for every later call before then (on any
   * node). A replayed proof of work is refused with it. One atomic unit.
   */
  useOnce(name: string, untilMs: number, nowMs: number): Promise<boolean>;
  /**
   * A mark that holds until a time: extends `name` to hold until `untilMs` when that is later than it holds now
   * (0 only reads), and returns until when it held before the call (0 or a past time: it did not hold), so of
   * concurrent calls that start a hold one only sees it not held. Marks disappear by themselves once past. The
   * flood detector's hold. One atomic unit.
   */
  holdUntil(name: string, untilMs: number, nowMs: number): Promise<number>;
}

/** A whole backend: every capability, plus its health and lifetime. */
/** One change made through the private API (who, from where, what, before and after). */
export interface AuditEntry {
  /** Milliseconds since the epoch. */
  at: number;
  /** The credential: "admin token" or "SigV4 access key <id>" (never a secret). */
  caller: string;
  /** The client's address as the server saw it. */
  address: string;
  /** e.g. "POST /private/increment_serving_counter". */
  action: string;
  event_id: string | null;
  /** The request's parameters (secrets never: room settings are recorded as before/after views instead). */
  request: unknown;
  before: unknown;
  after: unknown;
}

/** The audit log: appended by every private-API change, read newest first. */
export interface AuditStore {
  appendAudit(entry: AuditEntry): Promise<void>;
  /** At most `limit` entries, newest first, older than `beforeSeq` when given; each with its sequence number. */
  listAudit(limit: number, beforeSeq?: number): Promise<(AuditEntry & { seq: number })[]>;
}

/** A room's counters as they stood at one minute (epoch seconds, a multiple of 60), for after-event reports. */
export interface HistorySample {
  minute: number;
  counters: Counters;
  /** Token sets not expired with their session open. */
  active: number;
  /** People in the pre-queue without a position (src/domain/prequeue-figures.ts); absent in older samples. */
  prequeue?: number;
  /** The room's presence figures at the minute (src/domain/presence-figures.ts); absent in older samples. */
  presence?: HistoryPresence;
}

/** What the history keeps of a room's presence figures (issue 34). */
export interface HistoryPresence {
  present_waiting: number;
  absent_waiting: number;
  no_shows: number;
  /** Since the last reset (the report counts each minute's from the difference). */
  late_arrivals: number;
}

/** Per-room history at one-minute resolution. */
export interface HistoryStore {
  /** Keeps the sample (replacing one of the same minute) and drops the room's samples older than `keepSeconds`. */
  recordHistory(eventId: string, sample: HistorySample, keepSeconds: number): Promise<void>;
  /** The samples with fromMinute ≤ minute ≤ toMinute, oldest first. */
  readHistory(eventId: string, fromMinute: number, toMinute: number): Promise<HistorySample[]>;
  /**
   * Adds the counts to the room's counts of that minute (field by field; several nodes add theirs) and drops
   * the room's minutes older than `keepSeconds` before it. One atomic unit.
   */
  addWaits(eventId: string, waits: MinuteWaits, keepSeconds: number): Promise<void>;
  /** The minutes with fromMinute ≤ minute ≤ toMinute that have counts, oldest first. */
  readWaits(eventId: string, fromMinute: number, toMinute: number): Promise<MinuteWaits[]>;
}

/**
 * One minute's wait histogram of a room (src/domain/wait-histogram.ts): field → count, where `w<bucket>` counts
 * visitors admitted that minute by their wait and `e<bucket>` their turn estimates by error.
 */
export interface MinuteWaits {
  /** Epoch seconds, a multiple of 60. */
  minute: number;
  counts: Record<string, number>;
}

/** The audit log keeps this many most recent entries on every store. */
export const AUDIT_LOG_KEEP = 100_000;

export interface Store
  extends QueueStore,
    SigningKeyStore,
    LockStore,
    SecretStore,
    AuthorizationStore,
    DrawStore,
    RoomStore,
    BotDefenceStore,
    AuditStore,
    HistoryStore {
  /** A name for logs and /readyz, e.g. "sqlite:/path" or "redis://host:port" (no credentials). */
  readonly description: string;
  /** Who is still there (issue 34): src/domain/ports/presence.ts. */
  readonly presence: PresenceStore;

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
