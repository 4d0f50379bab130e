// The embedded store on Node's built-in SQLite: the Store port (src/domain/ports/store.ts), composed of one
// module per capability, each with its tables' SQL beside it (as the Redis store keeps one Lua file per
// operation). This class only builds the modules and hands each port method to the module that owns it.
//
//   connection.ts      the database file, its schema (schema.sql, migrations.ts) and `transaction`, the one way to write
//   counters.ts        QueueStore: the counters and serving moves (events, serving_history); polls read them from memory
//   positions.ts       QueueStore: numbering joins and finding positions (positions + the in-memory request index)
//   token-sets.ts      QueueStore: claims, token sets and sessions (tokens + the in-memory count of open sessions)
//   leaving.ts         QueueStore: leaveQueue (left_positions)
//   left-positions.ts  QueueStore: leftPositionsAbove, the places given up above a point (people ahead, issue 33)
//   admission.ts       QueueStore: advanceExpiry and getAdmissionSnapshot
//   reset.ts           QueueStore.resetEvent and RoomStore.deleteRoomData (pending_resets, the purge thread)
//   draws.ts           DrawStore (prequeue, draws)
//   rooms.ts           RoomStore (rooms, rooms_version)
//   signing-keys.ts    SigningKeyStore       locks.ts    LockStore         secrets.ts   SecretStore
//   authorizations.ts  AuthorizationStore    history.ts  HistoryStore      audit.ts     AuditStore
//   ../bot-defence-memory.ts  BotDefenceStore, in memory (this process is the only one)
//
// Plugging in a new capability (a new port in store.ts, e.g. presence):
//   1. a module `<capability>.ts` here: a class taking the SqliteConnection (and any sibling module it reads),
//      its statements in a `SQL` record prepared with prepareAll, every write through connection.transaction
//      (pass the event ID: it waits for a reset's purge and drops the cached counters); its tables in schema.sql
//      (a table with an event_id column is deleted with the room by itself; add it to RESET_TABLES in reset.ts if
//      a reset empties it). Per-event state kept in memory: connection.rememberPerEvent(this), so that a reset or
//      deleteRoomData drops it; built from the tables in a load() called below, after finishInterrupted();
//   2. here: one field, one line in the constructor, and one delegating line per port method.
// Every call is a direct method call on the module: nothing dynamic sits on the hot paths (a join, a claim, a poll).

import type { DatabaseSync } from 'node:sqlite';
import type { SessionStatus, TokenRecord } from '../../domain/claims.ts';
import type {
  AdmissionSnapshot,
  AuditEntry,
  ClaimContext,
  Counters,
  DrawRecord,
  DrawSeed,
  ExpiryAdvance,
  HistorySample,
  IssueResult,
  JoinRequest,
  LeaveResult,
  MinuteWaits,
  PositionRecord,
  PrequeueEntry,
  PrequeueLeave,
  RoomPutOutcome,
  ServingMove,
  SessionRenewal,
  Store,
  StoredRoom,
  StoredRooms,
  StoredSigningKey,
  WindowCounts,
} from '../../domain/ports/store.ts';
import { InMemoryBotDefence } from '../bot-defence-memory.ts';
import { SqliteAdmission } from './admission.ts';
import { SqliteAudit } from './audit.ts';
import { SqliteAuthorizations } from './authorizations.ts';
import { SqliteConnection, type SqliteStoreOptions, type SqliteSynchronous } from './connection.ts';
import { SqliteCounters } from './counters.ts';
import { SqliteDraws } from './draws.ts';
import { SqliteHistory } from './history.ts';
import { SqliteLeaving } from './leaving.ts';
import { leftPositionsAbove } from './left-positions.ts';
import { SqliteLocks } from './locks.ts';
import { SqlitePositions } from './positions.ts';
import { SqliteResets } from './reset.ts';
import { SqliteRooms } from './rooms.ts';
import { SqliteSecrets } from './secrets.ts';
import { SqliteSigningKeys } from './signing-keys.ts';
import { SqliteTokenSets } from './token-sets.ts';
import { SqlitePresence } from './presence.ts';

export type { SqliteStoreOptions, SqliteSynchronous } from './connection.ts';

export class SqliteStore implements Store {
  readonly description: string;
  private readonly connection: SqliteConnection;
  /** The connection's database and its resets being purged (tests look inside through these names). */
  private readonly db: DatabaseSync;
  private readonly purges: Map<string, Promise<void>>;
  private readonly counters: SqliteCounters;
  private readonly positions: SqlitePositions;
  private readonly tokenSets: SqliteTokenSets;
  private readonly leaving: SqliteLeaving;
  private readonly admission: SqliteAdmission;
  private readonly draws: SqliteDraws;
  private readonly resets: SqliteResets;
  private readonly rooms: SqliteRooms;
  private readonly signingKeys: SqliteSigningKeys;
  private readonly locks: SqliteLocks;
  private readonly secrets: SqliteSecrets;
  private readonly authorizations: SqliteAuthorizations;
  private readonly history: SqliteHistory;
  private readonly audit: SqliteAudit;
  /** Rate counters and single-use marks: in memory, this process being the only one (see bot-defence-memory.ts). */
  private readonly botDefence = new InMemoryBotDefence();
  /** Presence (issue 34), in the process: ./presence.ts. */
  readonly presence: SqlitePresence;

  constructor(options: SqliteStoreOptions) {
    const connection = (this.connection = new SqliteConnection(options));
    this.description = connection.description;
    this.db = connection.db;
    this.purges = connection.purges;
    this.counters = new SqliteCounters(connection);
    this.positions = new SqlitePositions(connection, this.counters, options.requestTag);
    this.tokenSets = new SqliteTokenSets(connection, this.counters, this.positions);
    this.leaving = new SqliteLeaving(connection, this.counters, this.positions, this.tokenSets);
    this.admission = new SqliteAdmission(connection, this.counters, this.tokenSets, this.leaving);
    this.draws = new SqliteDraws(connection, this.counters, this.positions);
    this.resets = new SqliteResets(connection, this.counters, this.draws);
    this.rooms = new SqliteRooms(connection);
    this.signingKeys = new SqliteSigningKeys(connection);
    this.locks = new SqliteLocks(connection);
    this.secrets = new SqliteSecrets(connection);
    this.authorizations = new SqliteAuthorizations(connection, this.positions);
    this.history = new SqliteHistory(connection);
    this.audit = new SqliteAudit(connection);
    this.presence = new SqlitePresence({ db: connection.db, counters: (id) => this.getCounters(id) });
    connection.rememberPerEvent(this.presence);
    // A reset cut short by a crash is finished before anything is read; then the modules read what they keep in
    // memory; then writes stop waiting in SQLite (connection.opened).
    this.resets.finishInterrupted();
    this.positions.load();
    this.tokenSets.load();
    connection.opened();
  }

  /** The durability in force on this connection, as SQLite reports it (what the README promises is FULL). */
  get synchronous(): SqliteSynchronous | 'other' {
    return this.connection.synchronous;
  }

  ping(): Promise<void> {
    return this.connection.ping();
  }

  async close(): Promise<void> {
    // Writes already asked for end first, committed or failed: the issues waiting for the next group commit,
    // and the writes waiting for another connection's lock (each at most LOCK_WAIT_MS).
    if (this.db.isOpen) await this.tokenSets.commitIssues();
    await this.connection.close();
  }

  // ---- QueueStore: counters.ts ----
  syncExpirySwitch(eventId: string, enabled: boolean, now: number): Promise<void> {
    return this.counters.syncExpirySwitch(eventId, enabled, now);
  }
  getCounters(eventId: string): Promise<Counters> {
    return this.counters.getCounters(eventId);
  }
  peekCounters(eventId: string): Counters | undefined {
    return this.counters.peekCounters(eventId);
  }
  /** This process is the database's only writer: the counters in memory show every session close and reset. */
  confirmTokenSet(): true {
    return true;
  }
  getServingCounter(eventId: string): Promise<number> {
    return this.counters.getServingCounter(eventId);
  }
  incrementServing(eventId: string, by: number, now: number): Promise<number> {
    return this.counters.incrementServing(eventId, by, now);
  }
  incrementServingWithinQueue(eventId: string, by: number, now: number, ifServing?: number): Promise<ServingMove> {
    return this.counters.incrementServingWithinQueue(eventId, by, now, ifServing);
  }

  // ---- QueueStore: positions.ts ----
  assignPositions(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    return this.positions.assignPositions(eventId, joins);
  }
  assignPositionsIfAbsent(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    return this.positions.assignPositionsIfAbsent(eventId, joins);
  }
  getPosition(eventId: string, requestId: string): Promise<PositionRecord | null> {
    return this.positions.getPosition(eventId, requestId);
  }

  // ---- QueueStore: token-sets.ts ----
  getClaimContext(eventId: string, requestId: string): Promise<ClaimContext | null> {
    return this.tokenSets.getClaimContext(eventId, requestId);
  }
  issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult> {
    return this.tokenSets.issueTokenIfAbsent(eventId, record);
  }
  closeSession(eventId: string, requestId: string, status: Exclude<SessionStatus, 0>): Promise<boolean> {
    return this.tokenSets.closeSession(eventId, requestId, status);
  }
  renewSession(eventId: string, requestId: string, nowMs: number, idleBeforeMs: number | null, touch: boolean): Promise<SessionRenewal> {
    return this.tokenSets.renewSession(eventId, requestId, nowMs, idleBeforeMs, touch);
  }
  countActiveTokens(eventId: string, now: number): Promise<number> {
    return this.tokenSets.countActiveTokens(eventId, now);
  }
  listExpiredTokens(eventId: string, now: number, limit: number): Promise<string[]> {
    return this.tokenSets.listExpiredTokens(eventId, now, limit);
  }

  // ---- QueueStore: leaving.ts, admission.ts, reset.ts ----
  leaveQueue(eventId: string, requestId: string): Promise<LeaveResult> {
    return this.leaving.leaveQueue(eventId, requestId);
  }
  leftPositionsAbove(eventId: string, after: number, limit: number): Promise<number[]> {
    return Promise.resolve(leftPositionsAbove(this.connection.db, eventId, after, limit));
  }
  advanceExpiry(eventId: string, cutoff: number, incrServing: boolean, now: number): Promise<ExpiryAdvance> {
    return this.admission.advanceExpiry(eventId, cutoff, incrServing, now);
  }
  getAdmissionSnapshot(eventId: string, now: number, windowStart: number): Promise<AdmissionSnapshot> {
    return this.admission.getAdmissionSnapshot(eventId, now, windowStart);
  }
  resetEvent(eventId: string): Promise<void> {
    return this.resets.resetEvent(eventId);
  }

  // ---- DrawStore: draws.ts ----
  commitDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return this.draws.commitDraw(eventId, candidate);
  }
  getDraw(eventId: string): Promise<DrawRecord | null> {
    return this.draws.getDraw(eventId);
  }
  joinPrequeue(eventId: string, joins: readonly JoinRequest[], candidate: DrawSeed): Promise<number[]> {
    return this.draws.joinPrequeue(eventId, joins, candidate);
  }
  getPrequeueEntry(eventId: string, requestId: string): Promise<PrequeueEntry | null> {
    return this.draws.getPrequeueEntry(eventId, requestId);
  }
  readPrequeue(eventId: string, afterJoinOrder: number, limit: number): Promise<PrequeueEntry[]> {
    return this.draws.readPrequeue(eventId, afterJoinOrder, limit);
  }
  startDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return this.draws.startDraw(eventId, candidate);
  }
  numberDrawn(eventId: string, expectedProgress: number, requestIds: readonly string[]): Promise<DrawRecord | null> {
    return this.draws.numberDrawn(eventId, expectedProgress, requestIds);
  }
  numberLateArrivals(eventId: string, limit: number): Promise<DrawRecord | null> {
    return this.draws.numberLateArrivals(eventId, limit);
  }
  leavePrequeue(eventId: string, requestId: string): Promise<PrequeueLeave> {
    return this.draws.leavePrequeue(eventId, requestId);
  }

  // ---- RoomStore: rooms.ts (deleteRoomData: reset.ts) ----
  putRoom(eventId: string, settings: string): Promise<RoomPutOutcome> {
    return this.rooms.putRoom(eventId, settings);
  }
  getRoom(eventId: string): Promise<StoredRoom | null> {
    return this.rooms.getRoom(eventId);
  }
  listRooms(): Promise<StoredRooms> {
    return this.rooms.listRooms();
  }
  roomsVersion(): Promise<number> {
    return this.rooms.roomsVersion();
  }
  deleteRoomSettings(eventId: string): Promise<boolean> {
    return this.rooms.deleteRoomSettings(eventId);
  }
  deleteRoomData(eventId: string): Promise<void> {
    return this.resets.deleteRoomData(eventId);
  }

  // ---- SigningKeyStore, LockStore, SecretStore, AuthorizationStore ----
  getSigningKeys(eventId: string): Promise<StoredSigningKey[]> {
    return this.signingKeys.getSigningKeys(eventId);
  }
  addSigningKeyIfNone(eventId: string, key: StoredSigningKey): Promise<StoredSigningKey> {
    return this.signingKeys.addSigningKeyIfNone(eventId, key);
  }
  tryAcquireLock(name: string, owner: string, ttlMs: number, nowMs: number): Promise<boolean> {
    return this.locks.tryAcquireLock(name, owner, ttlMs, nowMs);
  }
  claimSecret(name: string, candidate: string): Promise<string> {
    return this.secrets.claimSecret(name, candidate);
  }
  replaceSecret(name: string, expected: string, next: string): Promise<string | null> {
    return this.secrets.replaceSecret(name, expected, next);
  }
  saveAuthorization(eventId: string, requestId: string, authorization: string): Promise<boolean> {
    return this.authorizations.saveAuthorization(eventId, requestId, authorization);
  }
  getAuthorization(eventId: string, requestId: string): Promise<string | null> {
    return this.authorizations.getAuthorization(eventId, requestId);
  }

  // ---- HistoryStore, AuditStore, BotDefenceStore ----
  recordHistory(eventId: string, sample: HistorySample, keepSeconds: number): Promise<void> {
    return this.history.recordHistory(eventId, sample, keepSeconds);
  }
  readHistory(eventId: string, fromMinute: number, toMinute: number): Promise<HistorySample[]> {
    return this.history.readHistory(eventId, fromMinute, toMinute);
  }
  addWaits(eventId: string, waits: MinuteWaits, keepSeconds: number): Promise<void> {
    return this.history.addWaits(eventId, waits, keepSeconds);
  }
  readWaits(eventId: string, fromMinute: number, toMinute: number): Promise<MinuteWaits[]> {
    return this.history.readWaits(eventId, fromMinute, toMinute);
  }
  appendAudit(entry: AuditEntry): Promise<void> {
    return this.audit.appendAudit(entry);
  }
  listAudit(limit: number, beforeSeq?: number): Promise<(AuditEntry & { seq: number })[]> {
    return this.audit.listAudit(limit, beforeSeq);
  }
  countInWindow(name: string, by: number, windowMs: number, nowMs: number): Promise<WindowCounts> {
    return this.botDefence.countInWindow(name, by, windowMs, nowMs);
  }
  useOnce(name: string, untilMs: number, nowMs: number): Promise<boolean> {
    return this.botDefence.useOnce(name, untilMs, nowMs);
  }
  holdUntil(name: string, untilMs: number, nowMs: number): Promise<number> {
    return this.botDefence.holdUntil(name, untilMs, nowMs);
  }
}
