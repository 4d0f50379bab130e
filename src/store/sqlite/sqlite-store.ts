// Embedded store on Node's built-in SQLite (node:sqlite). One process owns the database file; every
// mutating method is one transaction. WAL journal; `synchronous` FULL by default so an acknowledged join
// survives a power loss as well as a kill -9 (NORMAL survives kill -9 only; see docs/operations.md).

import { chmodSync, readFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { InMemoryBotDefence } from '../bot-defence-memory.ts';
import type { SessionStatus, TokenRecord } from '../../domain/claims.ts';
import {
  StoreUnavailableError,
  type WindowCounts,
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
  type AuditEntry,
  type HistorySample,
  type MinuteWaits,
  AUDIT_LOG_KEEP,
} from '../../domain/ports/store.ts';
import { ActiveTokens } from './active-tokens.ts';
import { Checkpointer } from './checkpointer.ts';
import { RequestIndex } from './request-index.ts';
import { SqlitePresence } from './presence.ts';

/** SQLITE_FULL (13) and SQLITE_IOERR (10), with their extended codes: the disk, not the request. */
/** SQLITE_BUSY: another connection holds the write lock (the purge thread of a reset, an operator's shell). */
function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && (code & 0xff) === 5;
}

/**
 * How much of the database file is read through a memory map (PRAGMA mmap_size; SQLite caps it at 2 GiB here).
 * A read of a page the 2 MiB page cache does not hold is then a memory access, not a read() into the cache: at
 * 1M token sets a claim's reads cost 0.7× the CPU (16.5 → 11.4 µs, bench/claim-read.ts). Writes still go through the WAL
 * (synchronous=FULL unchanged). The mapped pages are the OS's page cache, counted in the process's RSS as
 * shared file pages (docs/operations.md).
 */
const MMAP_BYTES = 2 ** 31;

/**
 * How long a write waits for another connection's write lock (see transaction), trying again after
 * LOCK_RETRY_FIRST_MS, twice that, … at most LOCK_RETRY_MAX_MS apart. The connection's own busy_timeout is 0.
 */
const LOCK_WAIT_MS = 5000;
const LOCK_RETRY_FIRST_MS = 1;
const LOCK_RETRY_MAX_MS = 20;

interface TransactionOptions<T> {
  /** How long to wait for another connection's write lock (LOCK_WAIT_MS; 0: try once). */
  waitMs?: number;
  /** Committed without an fsync of its own (see unsyncedTransaction). */
  unsynced?: boolean;
  /** Run right after the commit, before anything else can write (see transaction). */
  committed?: (result: T) => void;
}

/** BEGIN IMMEDIATE met another connection's write lock: nothing ran (transaction() tries again). */
class LockBusy extends Error {
  constructor(cause: unknown) {
    super('database is locked', { cause });
  }
}

function isOutOfSpaceOrIo(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && ((code & 0xff) === 13 || (code & 0xff) === 10);
}

const SCHEMA = readFileSync(new URL('./schema.sql', import.meta.url), 'utf8');

/**
 * A reset deletes the old rows one chunk per transaction (see resetEvent), sized to take about this long: the
 * store's own writes never wait much longer for a chunk's write lock (and the event loop, when the chunks run on
 * it, is never held much longer). Deleting a position takes microseconds (the table grows in order); a token set
 * far more (the tokens table and its exp index; until issue 15's rekey its rows sat on random pages).
 */
const PURGE_CHUNK_MS = 10;
/**
 * Rows per chunk at first (in each table: a token set costs ~100× a position) and at most; at open, after a
 * crash, the largest chunks are used.
 */
const PURGE_FIRST_ROWS = 50;
const PURGE_CHUNK_ROWS = 20_000;
/** SQLite's default wal_autocheckpoint, restored after a purge (which checkpoints on another thread). */
const WAL_AUTOCHECKPOINT_PAGES = 1000;

/** The per-room tables a reset empties, each with the rest of its primary key after event_id. */
const RESET_TABLES: readonly { table: string; key: string }[] = [
  { table: 'positions', key: 'position' },
  { table: 'tokens', key: 'position' },
  { table: 'serving_history', key: 'value' },
  { table: 'oidc_authorizations', key: 'request_id' },
  { table: 'left_positions', key: 'position' },
  { table: 'prequeue', key: 'join_order' },
];

/**
 * Columns added to a table after it was first released: `CREATE TABLE IF NOT EXISTS` leaves an existing table
 * as it is, so the store adds each one missing at start (an existing database keeps its data).
 */
const ADDED_COLUMNS: readonly { table: string; column: string; definition: string }[] = [
  // Leaving the queue (issue 12): positions given up, see left_positions in schema.sql.
  { table: 'events', column: 'left_count', definition: 'INTEGER NOT NULL DEFAULT 0' },
  // Stored token sets (issue 15): the three signatures of the set, so a re-claim never signs again.
  { table: 'tokens', column: 'signatures', definition: 'TEXT' },
  // The room's generation (issue 16): how many times it was reset.
  { table: 'events', column: 'resets', definition: 'INTEGER NOT NULL DEFAULT 0' },
  // The gate's shared "last seen" of a session (issue 13), epoch ms; NULL until a gate node records one.
  { table: 'tokens', column: 'last_seen_ms', definition: 'INTEGER' },
];

function addMissingColumns(db: DatabaseSync): void {
  for (const { table, column, definition } of ADDED_COLUMNS) {
    const columns = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
    if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  }
}

/**
 * A tokens table created before issue 15's change, keyed by (event_id, request_id), rebuilt keyed by
 * (event_id, position) (schema.sql says why), in one transaction: a crash in the middle leaves the old table.
 */
function rekeyTokens(db: DatabaseSync): void {
  const OLD_KEY = /PRIMARY KEY\s*\(\s*event_id\s*,\s*request_id\s*\)/i;
  const tableSql = () => (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'tokens'").get() as { sql: string }).sql;
  if (!OLD_KEY.test(tableSql())) return;
  db.exec('BEGIN IMMEDIATE');
  try {
    // Read again under the write lock: another process opening the same database may have rebuilt it already.
    const sql = tableSql();
    if (OLD_KEY.test(sql)) {
      const columns = (db.prepare('PRAGMA table_info(tokens)').all() as { name: string }[]).map((c) => c.name).join(', ');
      const definition = sql.slice(sql.indexOf('(') + 1, sql.lastIndexOf(')')).replace(OLD_KEY, 'PRIMARY KEY (event_id, position)');
      db.exec(`CREATE TABLE tokens_rekeyed (${definition}) WITHOUT ROWID`);
      db.exec(`INSERT INTO tokens_rekeyed (${columns}) SELECT ${columns} FROM tokens ORDER BY event_id, position`);
      db.exec('DROP TABLE tokens');
      db.exec('ALTER TABLE tokens_rekeyed RENAME TO tokens');
      db.exec('CREATE INDEX IF NOT EXISTS tokens_by_exp ON tokens (event_id, exp)');
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

export type SqliteSynchronous = 'full' | 'normal';

export interface SqliteStoreOptions {
  /** File path, or ':memory:' for a store that lives as long as the process. */
  path: string;
  synchronous?: SqliteSynchronous;
  /** Replaces the request index's keyed hash (tests use it to make request IDs share a tag; see request-index.ts). */
  requestTag?: (requestId: string) => number;
}

interface EventRow {
  queue: number;
  serving: number;
  max_serving: number;
  tokens: number;
  expired: number;
  completed: number;
  abandoned: number;
  max_expired: number;
  expiry_enabled_since: number | null;
  left_count: number;
  resets: number;
}

interface TokenRow {
  request_id: string;
  position: number;
  iat: number;
  nbf: number;
  exp: number;
  iss: string;
  kid: string;
  status: number;
  nonce: string | null;
  signatures: string | null;
}

/**
 * A claim's reads in one statement (findClaimRow; ?1 the event, ?2 the position): the position's row, when the
 * counter first reached it, whether it was left, and its token set, whose columns are NULL when it has none.
 */
export const CLAIM_ROW_SQL = `SELECT p.request_id AS position_request_id, p.position AS at, p.entry_time,
    (SELECT reached_at FROM serving_history WHERE event_id = ?1 AND value >= ?2 ORDER BY value LIMIT 1) AS served_at,
    EXISTS (SELECT 1 FROM left_positions WHERE event_id = ?1 AND position = ?2) AS is_left,
    t.request_id, t.position, t.iat, t.nbf, t.exp, t.iss, t.kid, t.status, t.nonce, t.signatures
  FROM positions p LEFT JOIN tokens t ON t.event_id = ?1 AND t.position = ?2
  WHERE p.event_id = ?1 AND p.position = ?2`;

/** The values of insertToken and insertTokenIfFree, in their order: a set of `record` at `position`. */
function tokenColumns(eventId: string, record: TokenRecord, position: number): SQLInputValue[] {
  const { requestId, iat, nbf, exp, iss, kid } = record;
  return [eventId, requestId, position, iat, nbf, exp, iss, kid, record.nonce ?? null, record.signatures ?? null];
}

/** findClaimRow's row: the position's, with its token's columns (all NULL when it has no token set). */
interface ClaimRow extends Omit<TokenRow, 'position'> {
  position_request_id: string;
  at: number;
  entry_time: number;
  served_at: number | null;
  is_left: 0 | 1;
  /** The token's position: NULL when the position has no token set. */
  position: number | null;
}

const ZERO_EVENT: EventRow = {
  queue: 0,
  serving: 0,
  max_serving: 0,
  tokens: 0,
  expired: 0,
  completed: 0,
  abandoned: 0,
  max_expired: 0,
  expiry_enabled_since: null,
  left_count: 0,
  resets: 0,
};

function toTokenRecord(row: TokenRow): TokenRecord {
  return {
    requestId: row.request_id,
    position: row.position,
    iat: row.iat,
    nbf: row.nbf,
    exp: row.exp,
    iss: row.iss,
    kid: row.kid,
    status: row.status as SessionStatus,
    nonce: row.nonce ?? undefined,
    signatures: row.signatures ?? undefined,
  };
}

function toCounters(row: EventRow): Counters {
  return {
    queue: row.queue,
    serving: row.serving,
    tokens: row.tokens,
    expired: row.expired,
    completed: row.completed,
    abandoned: row.abandoned,
    maxExpired: row.max_expired,
    left: row.left_count,
    generation: row.resets,
  };
}

interface DrawRow {
  state: DrawRecord['state'];
  seed: string;
  commitment: string;
  algorithm: string;
  joined: number;
  left_count: number;
  drawn_through: number;
  entry_count: number;
  progress: number;
  first_position: number;
  numbered_through: number;
}

interface EntryRow {
  join_order: number;
  request_id: string;
  entry_time: number;
  left_queue: number;
  position: number | null;
}

function toDrawRecord(row: DrawRow): DrawRecord {
  return {
    state: row.state,
    seed: row.seed,
    commitment: row.commitment,
    algorithm: row.algorithm,
    drawnThrough: row.drawn_through,
    entryCount: row.entry_count,
    progress: row.progress,
    firstPosition: row.first_position,
    numberedThrough: row.numbered_through,
  };
}

function toPrequeueEntry(row: EntryRow): PrequeueEntry {
  return {
    requestId: row.request_id,
    entryTime: row.entry_time,
    joinOrder: row.join_order,
    left: row.left_queue !== 0,
    position: row.position ?? null,
  };
}

export class SqliteStore implements Store {
  readonly description: string;
  private readonly db: DatabaseSync;
  private readonly sql: ReturnType<typeof prepareStatements>;
  private readonly drawSql: ReturnType<typeof prepareDrawStatements>;
  /** DELETE … WHERE event_id = ? for every table of per-room data (see schema.sql). */
  private readonly roomDataDeletes: StatementSync[];
  /**
   * Each event's counter row as last committed. This process is the database's only writer, so the copy is
   * exact: every transaction that may change a row drops that event's entry. Keeps polling off SQLite.
   */
  private readonly rows = new Map<string, EventRow>();
  /** The error of the last write, if it failed for lack of space or an I/O error (cleared by a commit). */
  private writeFailure: string | null = null;
  /**
   * Each event's positions by request ID, in memory (request-index.ts): the database has no index of the random
   * IDs, so a join writes only the end of the positions table. Built from the table at open; changed only after
   * a commit (a rolled-back transaction leaves it as it was).
   */
  private readonly byRequest = new Map<string, RequestIndex>();
  /** Each event's open sessions by exp (active-tokens.ts): countActiveTokens without a scan. Built at open. */
  private readonly active = new Map<string, ActiveTokens>();
  /**
   * Resets whose old rows are still being deleted, chunk by chunk (resetEvent): every write to the event waits for
   * it (transaction), as does every read of its positions, tokens, history or pre-queue; polls keep reading the
   * (zeroed) counters.
   */
  private readonly purges = new Map<string, Promise<void>>();
  /** The database file (null in memory): a reset's purge checkpoints it from a second connection. */
  private readonly filePath: string | null;
  /** The request index's tag (SqliteStoreOptions.requestTag; the keyed hash unless a test replaces it). */
  private readonly requestTag: ((requestId: string) => number) | undefined;
  /** The connection's `synchronous` setting (the purge of a reset lowers it for its chunks, see purgeOldRows). */
  private readonly synchronousMode: 'FULL' | 'NORMAL';
  /** Writes waiting for another connection's write lock or for a purge (transaction): close() waits for them. */
  private readonly waitingWrites = new Set<Promise<void>>();
  /** Token issues waiting for the next group commit (issueTokenIfAbsent). */
  private readonly pendingIssues: {
    eventId: string;
    record: TokenRecord;
    resolve: (result: IssueResult) => void;
    reject: (error: unknown) => void;
  }[] = [];
  /** Rate counters and single-use marks: in memory, this process being the only one (see bot-defence-memory.ts). */
  private readonly botDefence = new InMemoryBotDefence();
  private presenceInProcess: SqlitePresence | undefined;
  /** Presence (issue 34), in the process: ./presence.ts. */
  get presence(): SqlitePresence {
    return (this.presenceInProcess ??= new SqlitePresence({ db: this.db, counters: (id) => this.getCounters(id) }));
  }

  constructor(options: SqliteStoreOptions) {
    const inMemory = options.path === ':memory:';
    if (!inMemory) mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
    this.description = inMemory ? 'memory' : `sqlite:${options.path}`;
    this.db = new DatabaseSync(options.path);
    // The database holds the events' private signing keys: owner-only, like the credentials file. SQLite
    // creates its -wal and -shm files with the database file's mode.
    if (!inMemory) chmodSync(options.path, 0o600);
    if (!inMemory) this.db.exec('PRAGMA journal_mode = WAL');
    if (!inMemory) this.db.exec(`PRAGMA mmap_size = ${MMAP_BYTES}`);
    this.filePath = inMemory ? null : options.path;
    this.requestTag = options.requestTag;
    this.synchronousMode = options.synchronous === 'normal' ? 'NORMAL' : 'FULL';
    this.db.exec(`PRAGMA synchronous = ${this.synchronousMode}`);
    // Opening (the schema, a purge cut short) may wait in SQLite for another connection's write lock: nothing is
    // answered yet. From then on busy_timeout is 0 and writes wait on the event loop (transaction).
    this.db.exec(`PRAGMA busy_timeout = ${LOCK_WAIT_MS}`);
    this.db.exec(SCHEMA);
    addMissingColumns(this.db);
    rekeyTokens(this.db);
    // The primary key (event_id, position) replaces it.
    this.db.exec('DROP INDEX IF EXISTS tokens_by_position');
    // Replaced by the in-memory index (byRequest); a database created before it loses the on-disk one.
    this.db.exec('DROP INDEX IF EXISTS positions_by_request');
    this.sql = prepareStatements(this.db);
    this.drawSql = prepareDrawStatements(this.db);
    this.roomDataDeletes = roomDataTables(this.db).map((table) => this.db.prepare(`DELETE FROM "${table}" WHERE event_id = ?`));
    // One pass over the positions in key order (about 1 s per million on the development machine).
    this.sql.allPositions.setReturnArrays(true);
    // A reset cut short by a crash is finished before anything is read.
    for (const { event_id } of this.sql.pendingResets.all() as { event_id: string }[]) {
      for (const statement of this.sql.purgeChunk) {
        let deleted = 1;
        while (deleted > 0) deleted = Number(statement.run(event_id, PURGE_CHUNK_ROWS).changes);
      }
      this.sql.unmarkReset.run(event_id);
    }
    for (const [eventId, position, requestId] of this.sql.allPositions.iterate() as Iterable<[string, number, string]>) {
      this.indexOf(eventId).add(requestId, position);
    }
    for (const row of this.sql.openSessionsByExp.iterate() as Iterable<{ event_id: string; exp: number; n: number }>) {
      this.activeOf(row.event_id).opened(row.exp, row.n);
    }
    this.db.exec('PRAGMA busy_timeout = 0');
  }

  private activeOf(eventId: string): ActiveTokens {
    let counter = this.active.get(eventId);
    if (!counter) this.active.set(eventId, (counter = new ActiveTokens()));
    return counter;
  }

  private indexOf(eventId: string): RequestIndex {
    let index = this.byRequest.get(eventId);
    if (!index) this.byRequest.set(eventId, (index = new RequestIndex(this.requestTag)));
    return index;
  }

  /**
   * What a claim reads of the position held by `requestId` (through the in-memory index), in ONE statement: the
   * position's row, when the counter first reached it, its token set and whether it was given up. Four
   * statements before: the one costs 0.6× their CPU at 20k and at 1M token sets (bench/claim-read.ts).
   */
  private findClaimRow(eventId: string, requestId: string): ClaimRow | undefined {
    const index = this.byRequest.get(eventId);
    if (!index) return undefined;
    for (const position of index.candidates(requestId)) {
      const row = this.sql.claimRow.get(eventId, position) as ClaimRow | undefined;
      if (row?.position_request_id === requestId) return row;
    }
    return undefined;
  }

  /** The position held by `requestId` in the event, read through the in-memory index. */
  private findPosition(eventId: string, requestId: string): { position: number; entry_time: number } | undefined {
    const index = this.byRequest.get(eventId);
    if (!index) return undefined;
    for (const position of index.candidates(requestId)) {
      const row = this.sql.positionRow.get(eventId, position) as { request_id: string; entry_time: number } | undefined;
      if (row?.request_id === requestId) return { position, entry_time: row.entry_time };
    }
    return undefined;
  }

  /** Records positions inserted by a transaction that has committed. */
  private indexPositions(eventId: string, inserted: ReadonlyMap<string, number>): void {
    if (inserted.size === 0) return;
    const index = this.indexOf(eventId);
    for (const [requestId, position] of inserted) index.add(requestId, position);
  }

  /** Inserts a position, refusing a request ID that holds one (the unique constraint the on-disk index was). */
  private insertPosition(
    eventId: string,
    position: number,
    requestId: string,
    entryTime: number,
    inserted: Map<string, number>,
  ): void {
    if (inserted.has(requestId) || this.findPosition(eventId, requestId) !== undefined) {
      throw new Error(`request ID ${requestId} already holds a position of event ${eventId}`);
    }
    this.sql.insertPosition.run(eventId, position, requestId, entryTime);
    inserted.set(requestId, position);
  }

  /** The durability in force on this connection, as SQLite reports it (what the README promises is FULL). */
  get synchronous(): SqliteSynchronous | 'other' {
    const { synchronous } = this.db.prepare('PRAGMA synchronous').get() as { synchronous: number };
    return synchronous === 2 ? 'full' : synchronous === 1 ? 'normal' : 'other';
  }

  /**
   * Runs `work` as one transaction (BEGIN IMMEDIATE: this process is the only writer). While another connection
   * holds the write lock (a reset's purge thread, an operator's sqlite3 shell), it waits for it on the event loop,
   * trying again after 1, 2, 4 … 20 ms, up to `waitMs` (LOCK_WAIT_MS), and then fails with SQLite's "database is
   * locked" having changed nothing. SQLite's own wait (busy_timeout) slept on the event loop: every request
   * waited with it, up to hundreds of ms while a purge chunk met a busy disk (issue 15). BEGIN, `work` and
   * COMMIT run in one synchronous stretch, so no other transaction of this connection can start in between;
   * what must change in memory with the commit (the request index, the count of open sessions, a reset's purge)
   * is done by `committed`, in the same stretch: an `await` after it would let other writes commit in between.
   * A write to an event (`eventId`) whose reset is being purged waits for the purge first.
   */
  private async transaction<T>(
    eventId: string | null,
    work: () => T,
    options: TransactionOptions<T> = {},
  ): Promise<T> {
    const waitMs = options.waitMs ?? LOCK_WAIT_MS;
    let deadline = performance.now() + waitMs;
    let waiting: { done: () => void } | null = null;
    try {
      for (let pause = LOCK_RETRY_FIRST_MS; ; pause = Math.min(2 * pause, LOCK_RETRY_MAX_MS)) {
        // A reset's purge of the event began while this write waited: it waits for the purge, as it would have
        // had it come after it (the purge deletes every row of the event older than its end), and then for
        // the lock as long as any write.
        const purge = eventId === null ? undefined : this.purges.get(eventId);
        if (purge) {
          waiting ??= this.writeWaiting();
          await purge.catch(() => undefined);
          deadline = performance.now() + waitMs;
          continue;
        }
        try {
          const result = this.transactionNow(eventId, work, options.unsynced === true);
          options.committed?.(result);
          return result;
        } catch (error) {
          if (!(error instanceof LockBusy)) throw error;
          if (performance.now() >= deadline) throw error.cause;
        }
        waiting ??= this.writeWaiting();
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    } finally {
      waiting?.done();
    }
  }

  /** Counts a write waiting for the lock or a purge (close waits for them); `done` when it ends either way. */
  private writeWaiting(): { done: () => void } {
    let done!: () => void;
    const ended = new Promise<void>((resolve) => (done = resolve));
    this.waitingWrites.add(ended);
    return {
      done: () => {
        this.waitingWrites.delete(ended);
        done();
      },
    };
  }

  /**
   * One attempt at transaction(): throws LockBusy if the write lock is another connection's (nothing ran). On
   * failure it rolls back only if a transaction is still open (after SQLITE_FULL or an I/O error SQLite may have
   * rolled back by itself, and a second ROLLBACK would fail and hide the first error), and a full disk or an I/O
   * error becomes StoreUnavailableError (503 with Retry-After; /readyz fails until a write succeeds again).
   */
  private transactionNow<T>(eventId: string | null, work: () => T, unsynced: boolean): T {
    const lowered = unsynced && this.synchronousMode !== 'NORMAL';
    if (lowered) this.db.exec('PRAGMA synchronous = NORMAL');
    if (eventId !== null) this.rows.delete(eventId);
    try {
      try {
        this.db.exec('BEGIN IMMEDIATE');
      } catch (error) {
        if (isBusy(error)) throw new LockBusy(error);
        throw error;
      }
      const result = work();
      this.db.exec('COMMIT');
      this.writeFailure = null;
      return result;
    } catch (error) {
      // LockBusy: BEGIN failed, so no transaction is open and nothing below applies to it.
      if (this.db.isOpen && this.db.isTransaction) {
        try {
          this.db.exec('ROLLBACK');
        } catch {
          // the first error is the one to report
        }
      }
      if (eventId !== null) this.rows.delete(eventId);
      if (isOutOfSpaceOrIo(error)) {
        this.writeFailure = (error as Error).message;
        throw new StoreUnavailableError(`${this.description}: cannot write (${this.writeFailure})`, { cause: error });
      }
      throw error;
    } finally {
      if (lowered && this.db.isOpen) this.db.exec(`PRAGMA synchronous = ${this.synchronousMode}`);
    }
  }

  private eventRow(eventId: string): EventRow {
    let row = this.rows.get(eventId);
    if (!row) {
      row = (this.sql.getEvent.get(eventId) as EventRow | undefined) ?? ZERO_EVENT;
      if (!this.db.isTransaction) this.rows.set(eventId, row);
    }
    return row;
  }

  private ensureEvent(eventId: string): EventRow {
    this.sql.insertEvent.run(eventId);
    return this.sql.getEvent.get(eventId) as unknown as EventRow;
  }

  /** Moves serving to `value`, recording the first time each new highest value is reached. */
  private setServing(eventId: string, row: EventRow, value: number, now: number): void {
    if (value > row.max_serving) {
      this.sql.insertHistory.run(eventId, value, now);
      this.sql.setServing.run(value, value, eventId);
    } else {
      this.sql.setServing.run(value, row.max_serving, eventId);
    }
  }

  async recordHistory(eventId: string, sample: HistorySample, keepSeconds: number): Promise<void> {
    const add = this.db.prepare('INSERT OR REPLACE INTO room_history (event_id, minute, sample) VALUES (?, ?, ?)');
    const drop = this.db.prepare('DELETE FROM room_history WHERE event_id = ? AND minute < ?');
    await this.transaction(null, () => {
      add.run(eventId, sample.minute, JSON.stringify(sample));
      drop.run(eventId, sample.minute - keepSeconds);
    });
  }

  async readHistory(eventId: string, fromMinute: number, toMinute: number): Promise<HistorySample[]> {
    const rows = this.db
      .prepare('SELECT sample FROM room_history WHERE event_id = ? AND minute BETWEEN ? AND ? ORDER BY minute')
      .all(eventId, fromMinute, toMinute) as { sample: string }[];
    return rows.map((row) => JSON.parse(row.sample) as HistorySample);
  }

  async addWaits(eventId: string, waits: MinuteWaits, keepSeconds: number): Promise<void> {
    const add = this.db.prepare(
      'INSERT INTO room_waits (event_id, minute, field, count) VALUES (?, ?, ?, ?) ON CONFLICT (event_id, minute, field) DO UPDATE SET count = count + excluded.count',
    );
    const drop = this.db.prepare('DELETE FROM room_waits WHERE event_id = ? AND minute < ?');
    await this.transaction(null, () => {
      for (const [field, count] of Object.entries(waits.counts)) if (count > 0) add.run(eventId, waits.minute, field, Math.trunc(count));
      drop.run(eventId, waits.minute - keepSeconds);
    });
  }

  async readWaits(eventId: string, fromMinute: number, toMinute: number): Promise<MinuteWaits[]> {
    const rows = this.db
      .prepare('SELECT minute, field, count FROM room_waits WHERE event_id = ? AND minute BETWEEN ? AND ? ORDER BY minute')
      .all(eventId, fromMinute, toMinute) as { minute: number; field: string; count: number }[];
    const out: MinuteWaits[] = [];
    for (const row of rows) {
      let last = out[out.length - 1];
      if (!last || last.minute !== row.minute) out.push((last = { minute: row.minute, counts: {} }));
      last.counts[row.field] = row.count;
    }
    return out;
  }

  async appendAudit(entry: AuditEntry): Promise<void> {
    const add = this.db.prepare('INSERT INTO audit_log (entry) VALUES (?)');
    const drop = this.db.prepare('DELETE FROM audit_log WHERE seq <= (SELECT MAX(seq) FROM audit_log) - ?');
    await this.transaction(null, () => {
      add.run(JSON.stringify(entry));
      drop.run(AUDIT_LOG_KEEP);
    });
  }

  async listAudit(limit: number, beforeSeq?: number): Promise<(AuditEntry & { seq: number })[]> {
    const rows = this.db
      .prepare('SELECT seq, entry FROM audit_log WHERE seq < ? ORDER BY seq DESC LIMIT ?')
      .all(beforeSeq ?? Number.MAX_SAFE_INTEGER, limit) as { seq: number; entry: string }[];
    return rows.map((row) => ({ ...(JSON.parse(row.entry) as AuditEntry), seq: Number(row.seq) }));
  }

  async ping(): Promise<void> {
    this.sql.ping.get();
    // After a failed write (disk full), ready only once a write succeeds again: try one that needs room
    // (64 KiB, in a table created and dropped in the same transaction, so nothing of it stays but free pages).
    if (this.writeFailure !== null) {
      await this.transaction(null, () => {
        this.db.exec('CREATE TABLE anteroom_write_probe (b BLOB)');
        this.db.exec('INSERT INTO anteroom_write_probe VALUES (zeroblob(65536))');
        this.db.exec('DROP TABLE anteroom_write_probe');
      });
    }
  }

  async close(): Promise<void> {
    // Writes already asked for end first, committed or failed: the issues waiting for the next group commit,
    // and the writes waiting for another connection's lock (each at most LOCK_WAIT_MS).
    if (this.db.isOpen) await this.commitIssues();
    while (this.waitingWrites.size > 0) await Promise.all(this.waitingWrites);
    if (this.db.isOpen) this.db.close();
  }

  async syncExpirySwitch(eventId: string, enabled: boolean, now: number): Promise<void> {
    await this.transaction(eventId, () => {
      const row = this.ensureEvent(eventId);
      if (enabled && row.expiry_enabled_since === null) this.sql.setExpirySince.run(now, eventId);
      if (!enabled && row.expiry_enabled_since !== null) this.sql.setExpirySince.run(null, eventId);
    });
  }

  async assignPositions(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    if (joins.length === 0) return [];
    const inserted = new Map<string, number>();
    const positions = await this.transaction(eventId, () => {
      const row = this.ensureEvent(eventId);
      const positions: number[] = [];
      let position = row.queue;
      for (const join of joins) {
        position += 1;
        this.insertPosition(eventId, position, join.requestId, join.entryTime, inserted);
        positions.push(position);
      }
      this.sql.setQueue.run(position, eventId);
      return positions;
    }, { committed: () => this.indexPositions(eventId, inserted) });
    return positions;
  }

  async assignPositionsIfAbsent(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    if (joins.length === 0) return [];
    const inserted = new Map<string, number>();
    return this.transaction(eventId, () => this.numberIfAbsent(eventId, joins, inserted), {
      committed: () => this.indexPositions(eventId, inserted),
    });
  }

  /**
   * assignPositionsIfAbsent's work, inside the caller's transaction; the positions it inserts are added to
   * `inserted` (for the index, once committed).
   */
  private numberIfAbsent(eventId: string, joins: readonly JoinRequest[], inserted: Map<string, number>): number[] {
    const row = this.ensureEvent(eventId);
    const assigned = new Map<string, number>();
    let position = row.queue;
    const positions = joins.map((join) => {
      const known = assigned.get(join.requestId);
      if (known !== undefined) return known;
      const existing = this.findPosition(eventId, join.requestId);
      if (existing) {
        assigned.set(join.requestId, existing.position);
        return existing.position;
      }
      position += 1;
      this.insertPosition(eventId, position, join.requestId, join.entryTime, inserted);
      assigned.set(join.requestId, position);
      return position;
    });
    if (position !== row.queue) this.sql.setQueue.run(position, eventId);
    return positions;
  }

  async getPosition(eventId: string, requestId: string): Promise<PositionRecord | null> {
    if (this.purges.has(eventId)) await this.purges.get(eventId);
    const row = this.findPosition(eventId, requestId);
    return row ? { position: row.position, entryTime: row.entry_time } : null;
  }

  async getCounters(eventId: string): Promise<Counters> {
    return toCounters(this.eventRow(eventId));
  }

  peekCounters(eventId: string): Counters | undefined {
    const row = this.rows.get(eventId);
    return row && toCounters(row);
  }

  async getServingCounter(eventId: string): Promise<number> {
    return this.eventRow(eventId).serving;
  }

  async incrementServing(eventId: string, by: number, now: number): Promise<number> {
    return this.transaction(eventId, () => {
      const row = this.ensureEvent(eventId);
      // The counter never goes below zero: "nobody may enter" is 0, and a negative value would make
      // every later increment silently admit nobody.
      const value = Math.max(0, row.serving + by);
      this.setServing(eventId, row, value, now);
      return value;
    });
  }

  async getClaimContext(eventId: string, requestId: string): Promise<ClaimContext | null> {
    if (this.purges.has(eventId)) await this.purges.get(eventId);
    const claim = this.findClaimRow(eventId, requestId);
    if (!claim) return null;
    const row = this.eventRow(eventId);
    return {
      position: claim.at,
      entryTime: claim.entry_time,
      serving: row.serving,
      servedAt: claim.served_at,
      expiryEnabledSince: row.expiry_enabled_since,
      maxExpired: row.max_expired,
      token: claim.position === null ? null : toTokenRecord(claim as TokenRow),
      left: claim.is_left === 1,
    };
  }

  /**
   * Group commit, like the joins (issue 15): every issue asked for in the same event-loop turn is written in ONE
   * transaction (one fsync), each still decided on its own and atomically; before, every first claim paid its own
   * fsync on the event loop, which capped token issue at a few hundred sets/s whatever the signing cost.
   */
  async issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult> {
    if (this.purges.has(eventId)) await this.purges.get(eventId);
    return new Promise<IssueResult>((resolve, reject) => {
      this.pendingIssues.push({ eventId, record, resolve, reject });
      if (this.pendingIssues.length === 1) setImmediate(() => void this.commitIssues());
    });
  }

  /** Commits every issue asked for so far, in one transaction; then answers each. */
  private async commitIssues(): Promise<void> {
    const batch = this.pendingIssues.splice(0);
    if (batch.length === 0) return;
    let results: IssueResult[];
    try {
      results = await this.transaction(null, () => {
        for (const { eventId } of batch) this.rows.delete(eventId);
        // Per event of the batch: its counters row, read once (nothing in the batch changes max_expired), and
        // the sets issued, added to its token count by one UPDATE at the end (profile of a first-claim storm:
        // one read and one write of the events row per claim were ~10 % of the batch's statements).
        const events = new Map<string, { row: EventRow; issued: number }>();
        const results = batch.map(({ eventId, record }) => {
          let event = events.get(eventId);
          if (!event) events.set(eventId, (event = { row: this.eventRow(eventId), issued: 0 }));
          const result = this.issueOne(eventId, event.row, record);
          if (result.outcome === 'issued') event.issued++;
          return result;
        });
        for (const [eventId, { issued }] of events) if (issued > 0) this.sql.addTokens.run(issued, eventId);
        return results;
      }, {
        committed: (results) =>
          batch.forEach(({ eventId, record }, i) => {
            if (results[i]?.outcome === 'issued') this.activeOf(eventId).opened(record.exp);
          }),
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach(({ resolve }, i) => resolve(results[i] as IssueResult));
  }

  /**
   * One issueTokenIfAbsent, inside the batch's transaction. The common case in one statement: the record's
   * position is still the visitor's, has no token set and was not given up, and the set is inserted. Anything else
   * (a concurrent claim, a leave, a reset in between) inserts nothing and is told apart by the full read below;
   * the one statement costs less than that read (bench/claim-cost.ts).
   */
  private issueOne(eventId: string, row: EventRow, record: TokenRecord): IssueResult {
    if (record.position > row.max_expired) {
      const inserted = this.sql.insertTokenIfFree.run(...tokenColumns(eventId, record, record.position)).changes;
      if (Number(inserted) === 1) return { outcome: 'issued', record: { ...record, status: 0 } };
    }
    const claim = this.findClaimRow(eventId, record.requestId);
    if (!claim) return { outcome: 'no-position' };
    if (claim.position !== null) return { outcome: 'existing', record: toTokenRecord(claim as TokenRow) };
    if (claim.is_left === 1) return { outcome: 'left' };
    if (claim.at <= row.max_expired) return { outcome: 'expired' };
    this.sql.insertToken.run(...tokenColumns(eventId, record, claim.at));
    return { outcome: 'issued', record: { ...record, position: claim.at, status: 0 } };
  }

  async closeSession(eventId: string, requestId: string, status: Exclude<SessionStatus, 0>): Promise<boolean> {
    const closedExp = await this.transaction(eventId, (): number | null => {
      const found = this.findPosition(eventId, requestId);
      if (!found) return null;
      const changed = this.sql.closeSession.run(status, eventId, found.position).changes;
      if (Number(changed) !== 1) return null;
      (status === 1 ? this.sql.incrementCompleted : this.sql.incrementAbandoned).run(eventId);
      return (this.sql.getToken.get(eventId, found.position) as unknown as TokenRow).exp;
    }, {
      committed: (exp) => {
        if (exp !== null) this.activeOf(eventId).closed(exp);
      },
    });
    return closedExp !== null;
  }

  async renewSession(eventId: string, requestId: string, nowMs: number, idleBeforeMs: number | null, touch: boolean): Promise<SessionRenewal> {
    let endedExp: number | null = null;
    return this.transaction(eventId, (): SessionRenewal => {
      const found = this.findPosition(eventId, requestId);
      if (!found) return { outcome: 'no-session' };
      const row = this.sql.sessionSeen.get(eventId, found.position) as { status: number; iat: number; exp: number; last_seen_ms: number | null } | undefined;
      if (!row) return { outcome: 'no-session' };
      if (row.status !== 0) return { outcome: 'closed' };
      const lastSeen = row.last_seen_ms ?? row.iat * 1000;
      if (idleBeforeMs !== null && lastSeen < idleBeforeMs) {
        this.sql.closeSession.run(-1, eventId, found.position);
        this.sql.incrementAbandoned.run(eventId);
        endedExp = row.exp;
        return { outcome: 'ended' };
      }
      if (touch && nowMs > lastSeen) {
        this.sql.touchSession.run(nowMs, eventId, found.position);
        return { outcome: 'open', lastSeen: nowMs };
      }
      return { outcome: 'open', lastSeen };
    }, {
      // The in-memory count of open sessions follows the commit, as closeSession's does.
      committed: () => {
        if (endedExp !== null) this.activeOf(eventId).closed(endedExp);
      },
    });
  }

  async countActiveTokens(eventId: string, now: number): Promise<number> {
    return this.active.get(eventId)?.count(now) ?? 0;
  }

  async listExpiredTokens(eventId: string, now: number, limit: number): Promise<string[]> {
    if (this.purges.has(eventId)) await this.purges.get(eventId);
    return (this.sql.listExpired.all(eventId, now, limit) as { request_id: string }[]).map((r) => r.request_id);
  }

  async advanceExpiry(eventId: string, cutoff: number, incrServing: boolean, now: number): Promise<ExpiryAdvance> {
    return this.transaction(eventId, (): ExpiryAdvance => {
      const row = this.ensureEvent(eventId);
      const unchanged: ExpiryAdvance = {
        previousMaxExpired: row.max_expired,
        maxExpired: row.max_expired,
        newlyExpiredUnclaimed: 0,
        previousServing: row.serving,
        serving: row.serving,
      };
      // Every eligibility time is ≥ the time expiry was switched on; none can be before the cutoff yet.
      if (row.expiry_enabled_since === null || row.expiry_enabled_since >= cutoff) return unchanged;
      // Highest position the counter had reached before the cutoff: beyond it nothing was servable long enough.
      const reached = this.sql.maxServedBefore.get(eventId, cutoff) as { value: number | null };
      if (reached.value === null) return unchanged;
      const upper = Math.min(reached.value, row.queue);
      if (upper <= row.max_expired) return unchanged;
      // Positions expire in order: stop at the first one that joined at or after the cutoff.
      const firstTooRecent = this.sql.firstEntryAtOrAfter.get(eventId, row.max_expired, upper, cutoff) as
        | { position: number }
        | undefined;
      const newMax = firstTooRecent === undefined ? upper : firstTooRecent.position - 1;
      if (newMax <= row.max_expired) return unchanged;
      const claimed = (this.sql.countTokensInRange.get(eventId, row.max_expired, newMax) as { n: number }).n;
      const left = (this.sql.countLeftInRange.get(eventId, row.max_expired, newMax) as { n: number }).n;
      const unclaimed = newMax - row.max_expired - claimed - left;
      this.sql.recordExpired.run(newMax, unclaimed, eventId);
      let serving = row.serving;
      if (incrServing && unclaimed > 0) {
        // Never past the queue, never backwards (incrementServingWithinQueue).
        serving = Math.max(row.serving, Math.min(row.serving + unclaimed, row.queue));
        if (serving !== row.serving) this.setServing(eventId, row, serving, now);
      }
      return {
        previousMaxExpired: row.max_expired,
        maxExpired: newMax,
        newlyExpiredUnclaimed: unclaimed,
        previousServing: row.serving,
        serving,
      };
    });
  }

  /**
   * One short transaction zeroes the counters, deletes the draw and records the reset as pending; the old rows
   * (up to millions of positions and tokens) are then deleted in chunks, one transaction each, by a second
   * connection on a worker thread (purgeOldRows; issue 15: one multi-second transaction had blocked every
   * request and dropped keep-alive connections). Until the last chunk the event's other operations wait (purges); a crash in between
   * is finished at the next open. Resolves once every old row is gone.
   */
  async resetEvent(eventId: string): Promise<void> {
    let purge: Promise<void> = Promise.resolve();
    await this.transaction(eventId, () => {
      this.ensureEvent(eventId);
      this.sql.markReset.run(eventId);
      this.drawSql.deleteDraw.run(eventId);
      this.sql.zeroCounters.run(eventId);
    }, {
      // From the commit on, every write to the event waits for the purge (transaction).
      committed: () => {
        this.byRequest.delete(eventId);
        this.active.delete(eventId);
        purge = this.purgeOldRows(eventId).finally(() => this.purges.delete(eventId));
        this.purges.set(eventId, purge);
      },
    });
    await purge;
  }

  private async purgeOldRows(eventId: string): Promise<void> {
    // The chunks run on another thread's connection, each followed by a checkpoint there (checkpointer.ts); in
    // memory (no file to share), or if that thread fails, they run here.
    let thread = this.filePath === null ? null : new Checkpointer(this.filePath);
    if (thread) this.db.exec('PRAGMA wal_autocheckpoint = 0');
    const stopThread = async () => {
      if (!thread) return;
      const closing = thread.close();
      thread = null;
      if (this.db.isOpen) this.db.exec(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      await closing;
    };
    try {
      await this.purgeChunks(eventId, async (index, rows) => {
        if (thread) {
          try {
            return await thread.deleteChunk(this.sql.purgeChunk[index]!.sourceSQL, eventId, rows);
          } catch {
            // The thread failed (its transaction rolled back): the rest of the purge runs here.
            await stopThread();
          }
        }
        const started = performance.now();
        const changes = Number((await this.unsyncedTransaction(() => this.sql.purgeChunk[index]!.run(eventId, rows))).changes);
        return { changes, ms: performance.now() - started };
      });
    } finally {
      await stopThread();
    }
  }

  private async purgeChunks(
    eventId: string,
    deleteChunk: (statement: number, rows: number) => Promise<{ changes: number; ms: number }>,
  ): Promise<void> {
    for (let statement = 0; statement < this.sql.purgeChunk.length; statement++) {
      let rows = PURGE_FIRST_ROWS;
      for (;;) {
        const { changes, ms } = await deleteChunk(statement, rows);
        if (changes < rows) break;
        // Sized to the time a chunk took on this machine (commit included): the rows that would have taken
        // PURGE_CHUNK_MS, at most a quarter more or half fewer than the last chunk's. The aim is well under the
        // 50 ms bound: rows of the same table cost unevenly (a token set's pages may have to be read from disk).
        // On the purge thread, the bound is on how long the store's own writes may wait for a chunk's lock.
        const took = Math.max(0.1, ms);
        rows = Math.max(PURGE_FIRST_ROWS, Math.min(PURGE_CHUNK_ROWS, Math.ceil(rows * 1.25), Math.max(rows >> 1, Math.floor((rows * PURGE_CHUNK_MS) / took))));
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    // Committed with the store's own setting: its fsync of the WAL makes every chunk before it durable too.
    await this.transaction(null, () => this.sql.unmarkReset.run(eventId));
  }

  /**
   * A transaction committed without an fsync of its own (synchronous=NORMAL: in WAL mode the database stays
   * consistent; a power cut may lose the last such commits), for writes whose loss costs nothing: a job's
   * lease, and the chunks of a reset's purge — the reset stays recorded as pending (committed with the store's
   * setting before the purge began) until the last chunk, and a purge cut short is finished at the next open.
   * An fsync per chunk had held the event loop for most of a chunk's time on a busy disk (issue 15).
   */
  private unsyncedTransaction<T>(work: () => T): Promise<T> {
    return this.transaction(null, work, { unsynced: true });
  }

  // ---- leaving the queue and automatic admission ----

  async leaveQueue(eventId: string, requestId: string): Promise<LeaveResult> {
    return this.transaction(eventId, (): LeaveResult => {
      const found = this.findPosition(eventId, requestId);
      if (!found) return { outcome: 'no-position' };
      const position = found.position;
      if (this.sql.isLeft.get(eventId, position) !== undefined) return { outcome: 'already-left' };
      if (this.sql.getToken.get(eventId, position) !== undefined) return { outcome: 'claimed' };
      if (position <= this.eventRow(eventId).max_expired) return { outcome: 'expired' };
      this.sql.insertLeft.run(eventId, position);
      this.sql.incrementLeft.run(eventId);
      return { outcome: 'left', position };
    });
  }

  async incrementServingWithinQueue(eventId: string, by: number, now: number, ifServing?: number): Promise<ServingMove> {
    return this.transaction(eventId, (): ServingMove => {
      const row = this.ensureEvent(eventId);
      if (ifServing !== undefined && row.serving !== ifServing) return { previousServing: row.serving, serving: row.serving };
      const serving = row.serving + Math.max(0, Math.min(by, row.queue - row.serving));
      if (serving !== row.serving) this.setServing(eventId, row, serving, now);
      return { previousServing: row.serving, serving };
    });
  }

  async getAdmissionSnapshot(eventId: string, now: number, windowStart: number): Promise<AdmissionSnapshot> {
    if (this.purges.has(eventId)) await this.purges.get(eventId);
    // Statements run one after another with nothing in between: this process is the database's only writer.
    const row = this.eventRow(eventId);
    const admitted = Math.min(row.serving, row.queue);
    let awaitingClaim = 0;
    if (admitted > row.max_expired) {
      const claimed = (this.sql.countTokensInRange.get(eventId, row.max_expired, admitted) as { n: number }).n;
      const left = (this.sql.countLeftInRange.get(eventId, row.max_expired, admitted) as { n: number }).n;
      awaitingClaim = admitted - row.max_expired - claimed - left;
    }
    return {
      queue: row.queue,
      serving: row.serving,
      reachedInWindow: this.reachedSince(eventId, row.max_serving, windowStart),
      reachedThisSecond: this.reachedSince(eventId, row.max_serving, now),
      awaitingClaim,
      activeSessions: this.active.get(eventId)?.count(now) ?? 0,
    };
  }

  /**
   * How many positions the counter first reached at or after `since`: the highest value ever reached minus the
   * highest one reached before `since`. Read from the top of the history down, so only the values of the
   * window itself are passed over (like the expiry step).
   */
  private reachedSince(eventId: string, highest: number, since: number): number {
    for (const entry of this.sql.historyFromTop.iterate(eventId) as Iterable<{ value: number; reached_at: number }>) {
      if (entry.reached_at < since) return highest - entry.value;
    }
    return highest;
  }

  // ---- Pre-queue and the draw (DrawStore) ----

  /** The room's draw row, created from `candidate` if it has none (inside the caller's transaction). */
  private ensureDraw(eventId: string, candidate: DrawSeed): DrawRow {
    this.drawSql.insertDraw.run(eventId, candidate.seed, candidate.commitment, candidate.algorithm);
    return this.drawSql.getDraw.get(eventId) as unknown as DrawRow;
  }

  async commitDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return toDrawRecord(await this.transaction(eventId, () => this.ensureDraw(eventId, candidate)));
  }

  async getDraw(eventId: string): Promise<DrawRecord | null> {
    if (this.purges.has(eventId)) await this.purges.get(eventId);
    const row = this.drawSql.getDraw.get(eventId) as DrawRow | undefined;
    return row ? toDrawRecord(row) : null;
  }

  async joinPrequeue(eventId: string, joins: readonly JoinRequest[], candidate: DrawSeed): Promise<number[]> {
    if (joins.length === 0) return [];
    const inserted = new Map<string, number>();
    return this.transaction(eventId, () => {
      const draw = this.ensureDraw(eventId, candidate);
      if (draw.state === 'done') return this.numberIfAbsent(eventId, joins, inserted);
      let joined = draw.joined;
      const listedNow = new Set<string>();
      const answers = joins.map((join) => {
        if (listedNow.has(join.requestId)) return 0;
        const existing = this.findPosition(eventId, join.requestId);
        if (existing) return existing.position;
        if (this.drawSql.getEntry.get(eventId, join.requestId)) return 0;
        joined += 1;
        this.drawSql.insertEntry.run(eventId, joined, join.requestId, join.entryTime);
        listedNow.add(join.requestId);
        return 0;
      });
      if (joined !== draw.joined) this.drawSql.setJoined.run(joined, eventId);
      return answers;
    }, { committed: () => this.indexPositions(eventId, inserted) });
  }

  /** A pre-queue row with the position its request ID holds (null if none), from the in-memory index. */
  private withPosition(eventId: string, row: Omit<EntryRow, 'position'>): EntryRow {
    return { ...row, position: this.findPosition(eventId, row.request_id)?.position ?? null };
  }

  private entryWithPosition(eventId: string, requestId: string): EntryRow | undefined {
    const row = this.drawSql.getEntry.get(eventId, requestId) as Omit<EntryRow, 'position'> | undefined;
    return row && this.withPosition(eventId, row);
  }

  private entriesWithPosition(eventId: string, afterJoinOrder: number, limit: number): EntryRow[] {
    const rows = this.drawSql.readEntries.all(eventId, afterJoinOrder, limit) as unknown as Omit<EntryRow, 'position'>[];
    return rows.map((row) => this.withPosition(eventId, row));
  }

  async getPrequeueEntry(eventId: string, requestId: string): Promise<PrequeueEntry | null> {
    if (this.purges.has(eventId)) await this.purges.get(eventId);
    const row = this.entryWithPosition(eventId, requestId);
    return row ? toPrequeueEntry(row) : null;
  }

  async readPrequeue(eventId: string, afterJoinOrder: number, limit: number): Promise<PrequeueEntry[]> {
    if (this.purges.has(eventId)) await this.purges.get(eventId);
    return this.entriesWithPosition(eventId, afterJoinOrder, limit).map(toPrequeueEntry);
  }

  async startDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return this.transaction(eventId, () => {
      const draw = this.ensureDraw(eventId, candidate);
      if (draw.state !== 'committed') return toDrawRecord(draw);
      const row = this.ensureEvent(eventId);
      // Every entry that left so far is among those listed so far: the draw orders the others.
      this.drawSql.start.run(draw.joined, draw.joined - draw.left_count, row.queue + 1, draw.joined, eventId);
      return toDrawRecord(this.drawSql.getDraw.get(eventId) as unknown as DrawRow);
    });
  }

  async numberDrawn(eventId: string, expectedProgress: number, requestIds: readonly string[]): Promise<DrawRecord | null> {
    const inserted = new Map<string, number>();
    return this.transaction(eventId, () => {
      const draw = this.drawSql.getDraw.get(eventId) as DrawRow | undefined;
      if (!draw) return null;
      if (
        draw.state !== 'drawing' ||
        draw.progress !== expectedProgress ||
        expectedProgress + requestIds.length > draw.entry_count
      ) {
        return toDrawRecord(draw);
      }
      const row = this.ensureEvent(eventId);
      let position = row.queue;
      for (const requestId of requestIds) {
        const entry = this.drawSql.getEntry.get(eventId, requestId) as EntryRow | undefined;
        if (!entry || entry.left_queue !== 0 || entry.join_order > draw.drawn_through) {
          throw new Error(`numberDrawn: ${requestId} is not an entry of the draw`);
        }
        position += 1;
        // An entry that has a position already is refused; the transaction then writes nothing.
        this.insertPosition(eventId, position, requestId, entry.entry_time, inserted);
      }
      this.sql.setQueue.run(position, eventId);
      this.drawSql.setProgress.run(expectedProgress + requestIds.length, eventId);
      return toDrawRecord(this.drawSql.getDraw.get(eventId) as unknown as DrawRow);
    }, { committed: () => this.indexPositions(eventId, inserted) });
  }

  async numberLateArrivals(eventId: string, limit: number): Promise<DrawRecord | null> {
    const inserted = new Map<string, number>();
    return this.transaction(eventId, () => {
      const draw = this.drawSql.getDraw.get(eventId) as DrawRow | undefined;
      if (!draw) return null;
      if (draw.state !== 'drawing' || draw.progress !== draw.entry_count) return toDrawRecord(draw);
      const late = this.drawSql.readEntries.all(eventId, draw.numbered_through, Math.max(1, limit)) as unknown as EntryRow[];
      const row = this.ensureEvent(eventId);
      let position = row.queue;
      let through = draw.numbered_through;
      for (const entry of late) {
        through = entry.join_order;
        if (entry.left_queue !== 0) continue;
        position += 1;
        this.insertPosition(eventId, position, entry.request_id, entry.entry_time, inserted);
      }
      if (position !== row.queue) this.sql.setQueue.run(position, eventId);
      this.drawSql.setNumberedThrough.run(through, through === draw.joined ? 'done' : 'drawing', eventId);
      return toDrawRecord(this.drawSql.getDraw.get(eventId) as unknown as DrawRow);
    }, { committed: () => this.indexPositions(eventId, inserted) });
  }

  async leavePrequeue(eventId: string, requestId: string): Promise<PrequeueLeave> {
    return this.transaction(eventId, (): PrequeueLeave => {
      const entry = this.entryWithPosition(eventId, requestId);
      if (!entry) return 'not-in-prequeue';
      if (entry.left_queue !== 0) return 'already-left';
      if (entry.position !== null) return 'numbered';
      const draw = this.drawSql.getDraw.get(eventId) as unknown as DrawRow;
      if (draw.state === 'drawing' && entry.join_order <= draw.drawn_through) return 'being-drawn';
      this.drawSql.markLeft.run(eventId, requestId);
      this.drawSql.countLeft.run(eventId);
      return 'left';
    });
  }

  async getSigningKeys(eventId: string): Promise<StoredSigningKey[]> {
    return (this.sql.getKeys.all(eventId) as Record<string, string | number>[]).map((r) => ({
      kid: String(r.kid),
      privateJwk: String(r.private_jwk),
      publicJwk: String(r.public_jwk),
      createdAt: Number(r.created_at),
    }));
  }

  async addSigningKeyIfNone(eventId: string, key: StoredSigningKey): Promise<StoredSigningKey> {
    await this.transaction(null, () => {
      const existing = this.sql.getKeys.all(eventId);
      if (existing.length === 0) {
        this.sql.insertKey.run(eventId, key.kid, key.privateJwk, key.publicJwk, key.createdAt);
      }
    });
    const keys = await this.getSigningKeys(eventId);
    return keys[0] as StoredSigningKey;
  }

  /**
   * A job's leader lock. This process is the database's only writer, so the lock only guards against a second
   * process started by mistake, and taking it never waits: while another connection holds the write lock (the
   * purge thread of a reset, an operator's shell) the lock is not taken this time and the job skips a tick,
   * instead of the event loop waiting up to busy_timeout for it (a reset of a million token sets held the loop
   * 62–92 ms once per reset). Committed without an fsync of its own: a lease a power cut takes back only ends
   * early.
   */
  async tryAcquireLock(name: string, owner: string, ttlMs: number, nowMs: number): Promise<boolean> {
    try {
      return await this.transaction(
        null,
        () => {
          this.sql.acquireLock.run(name, owner, nowMs + ttlMs, nowMs);
          const row = this.sql.getLock.get(name) as { owner: string };
          return row.owner === owner;
        },
        { waitMs: 0, unsynced: true },
      );
    } catch (error) {
      if (isBusy(error)) return false;
      throw error;
    }
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

  async claimSecret(name: string, candidate: string): Promise<string> {
    return this.transaction(null, () => {
      this.sql.insertSecret.run(name, candidate);
      return (this.sql.getSecret.get(name) as { value: string }).value;
    });
  }

  async replaceSecret(name: string, expected: string, next: string): Promise<string | null> {
    return this.transaction(null, () => {
      this.sql.replaceSecret.run(next, name, expected);
      return (this.sql.getSecret.get(name) as { value: string } | undefined)?.value ?? null;
    });
  }

  // ---- rooms at runtime (the rooms API) ----

  async putRoom(eventId: string, settings: string): Promise<RoomPutOutcome> {
    return this.transaction(null, (): RoomPutOutcome => {
      const stored = this.sql.getRoom.get(eventId) as { settings: string } | undefined;
      if (stored?.settings === settings) return 'unchanged';
      const version = this.bumpRoomsVersion();
      if (stored) {
        this.sql.replaceRoom.run(settings, eventId);
        return 'replaced';
      }
      this.sql.insertRoom.run(eventId, settings, version);
      return 'created';
    });
  }

  async getRoom(eventId: string): Promise<StoredRoom | null> {
    const row = this.sql.getRoom.get(eventId) as RoomRow | undefined;
    return row ? toStoredRoom(row) : null;
  }

  async listRooms(): Promise<StoredRooms> {
    // Two synchronous reads with nothing in between (this process is the database's only writer): one instant.
    return {
      version: this.roomsVersionNow(),
      rooms: (this.sql.listRooms.all() as unknown as RoomRow[]).map(toStoredRoom),
    };
  }

  async roomsVersion(): Promise<number> {
    return this.roomsVersionNow();
  }

  async deleteRoomSettings(eventId: string): Promise<boolean> {
    return this.transaction(null, () => {
      const existed = Number(this.sql.deleteRoom.run(eventId).changes) === 1;
      if (existed) this.bumpRoomsVersion();
      return existed;
    });
  }

  async deleteRoomData(eventId: string): Promise<void> {
    await this.transaction(eventId, () => {
      for (const statement of this.roomDataDeletes) statement.run(eventId);
    }, {
      committed: () => {
        this.byRequest.delete(eventId);
        this.active.delete(eventId);
      },
    });
  }

  private roomsVersionNow(): number {
    return (this.sql.getRoomsVersion.get() as { version: number }).version;
  }

  private bumpRoomsVersion(): number {
    return (this.sql.bumpRoomsVersion.get() as { version: number }).version;
  }

  async saveAuthorization(eventId: string, requestId: string, authorization: string): Promise<boolean> {
    return this.transaction(eventId, () => {
      if (this.findPosition(eventId, requestId) === undefined) return false;
      return Number(this.sql.saveAuthorization.run(eventId, requestId, authorization).changes) === 1;
    });
  }

  async getAuthorization(eventId: string, requestId: string): Promise<string | null> {
    if (this.purges.has(eventId)) await this.purges.get(eventId);
    const row = this.sql.getAuthorization.get(eventId, requestId) as { authorization_request: string } | undefined;
    return row?.authorization_request ?? null;
  }
}

interface RoomRow {
  event_id: string;
  settings: string;
  created_version: number;
}

function toStoredRoom(row: RoomRow): StoredRoom {
  return { eventId: row.event_id, settings: row.settings, createdVersion: row.created_version };
}

/** Every table of per-room data: each one with an event_id column, but the rooms' settings themselves. */
function roomDataTables(db: DatabaseSync): string[] {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name <> 'rooms'").all() as { name: string }[];
  return tables
    .map((table) => table.name)
    .filter((name) => (db.prepare('SELECT name FROM pragma_table_info(?)').all(name) as { name: string }[]).some((c) => c.name === 'event_id'));
}

function prepareStatements(db: DatabaseSync) {
  const s = (sql: string): StatementSync => db.prepare(sql);
  return {
    ping: s('SELECT 1'),
    getEvent: s('SELECT * FROM events WHERE event_id = ?'),
    insertEvent: s('INSERT OR IGNORE INTO events (event_id) VALUES (?)'),
    setServing: s('UPDATE events SET serving = ?, max_serving = ? WHERE event_id = ?'),
    setQueue: s('UPDATE events SET queue = ? WHERE event_id = ?'),
    setExpirySince: s('UPDATE events SET expiry_enabled_since = ? WHERE event_id = ?'),
    addTokens: s('UPDATE events SET tokens = tokens + ? WHERE event_id = ?'),
    incrementCompleted: s('UPDATE events SET completed = completed + 1 WHERE event_id = ?'),
    incrementAbandoned: s('UPDATE events SET abandoned = abandoned + 1 WHERE event_id = ?'),
    recordExpired: s('UPDATE events SET max_expired = ?, expired = expired + ? WHERE event_id = ?'),
    zeroCounters: s(
      `UPDATE events SET queue = 0, serving = 0, max_serving = 0, tokens = 0, expired = 0, completed = 0,
       abandoned = 0, max_expired = 0, left_count = 0, resets = resets + 1 WHERE event_id = ?`,
    ),
    insertPosition: s('INSERT INTO positions (event_id, position, request_id, entry_time) VALUES (?, ?, ?, ?)'),
    // Request ID → position is the in-memory index (request-index.ts); these read the table by its key.
    positionRow: s('SELECT request_id, entry_time FROM positions WHERE event_id = ? AND position = ?'),
    claimRow: s(CLAIM_ROW_SQL),
    allPositions: s('SELECT event_id, position, request_id FROM positions'),
    firstEntryAtOrAfter: s(
      `SELECT position FROM positions
       WHERE event_id = ? AND position > ? AND position <= ? AND entry_time >= ? ORDER BY position LIMIT 1`,
    ),
    // ---- reset (resetEvent): old rows deleted in chunks, the reset pending until they are all gone ----
    purgeChunk: RESET_TABLES.map(({ table, key }) =>
      s(`DELETE FROM ${table} WHERE event_id = ?1 AND ${key} IN (SELECT ${key} FROM ${table} WHERE event_id = ?1 LIMIT ?2)`),
    ),
    markReset: s('INSERT OR IGNORE INTO pending_resets (event_id) VALUES (?)'),
    unmarkReset: s('DELETE FROM pending_resets WHERE event_id = ?'),
    pendingResets: s('SELECT event_id FROM pending_resets'),
    insertHistory: s('INSERT OR REPLACE INTO serving_history (event_id, value, reached_at) VALUES (?, ?, ?)'),
    maxServedBefore: s('SELECT max(value) AS value FROM serving_history WHERE event_id = ? AND reached_at < ?'),
    getToken: s(
      'SELECT request_id, position, iat, nbf, exp, iss, kid, status, nonce, signatures FROM tokens WHERE event_id = ? AND position = ?',
    ),
    insertToken: s(
      `INSERT INTO tokens (event_id, request_id, position, iat, nbf, exp, iss, kid, status, nonce, signatures)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
    ),
    // issueOne's common case: the position (?3) is the request's (?2), has no token set and was not given up.
    insertTokenIfFree: s(
      `INSERT INTO tokens (event_id, request_id, position, iat, nbf, exp, iss, kid, status, nonce, signatures)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0, ?9, ?10
       WHERE EXISTS (SELECT 1 FROM positions WHERE event_id = ?1 AND position = ?3 AND request_id = ?2)
         AND NOT EXISTS (SELECT 1 FROM left_positions WHERE event_id = ?1 AND position = ?3)
       ON CONFLICT (event_id, position) DO NOTHING`,
    ),
    closeSession: s('UPDATE tokens SET status = ? WHERE event_id = ? AND position = ? AND status = 0'),
    // Read once at open (active-tokens.ts); countActiveTokens is answered from memory.
    openSessionsByExp: s('SELECT event_id, exp, count(*) AS n FROM tokens WHERE status = 0 GROUP BY event_id, exp'),
    sessionSeen: s('SELECT status, iat, exp, last_seen_ms FROM tokens WHERE event_id = ? AND position = ?'),
    touchSession: s('UPDATE tokens SET last_seen_ms = ? WHERE event_id = ? AND position = ?'),
    listExpired: s(
      'SELECT request_id FROM tokens WHERE event_id = ? AND exp < ? ORDER BY exp, position LIMIT ?',
    ),
    countTokensInRange: s(
      'SELECT count(*) AS n FROM tokens WHERE event_id = ? AND position > ? AND position <= ?',
    ),
    getKeys: s(
      'SELECT kid, private_jwk, public_jwk, created_at FROM signing_keys WHERE event_id = ? ORDER BY created_at, kid',
    ),
    insertKey: s(
      'INSERT INTO signing_keys (event_id, kid, private_jwk, public_jwk, created_at) VALUES (?, ?, ?, ?, ?)',
    ),
    acquireLock: s(
      `INSERT INTO locks (name, owner, expires_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE locks.owner = excluded.owner OR locks.expires_at <= ?4`,
    ),
    getLock: s('SELECT owner FROM locks WHERE name = ?'),
    insertSecret: s('INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)'),
    getSecret: s('SELECT value FROM secrets WHERE name = ?'),
    replaceSecret: s('UPDATE secrets SET value = ? WHERE name = ? AND value = ?'),
    saveAuthorization: s('INSERT OR REPLACE INTO oidc_authorizations (event_id, request_id, authorization_request) VALUES (?, ?, ?)'),
    getAuthorization: s(
      'SELECT authorization_request FROM oidc_authorizations WHERE event_id = ? AND request_id = ?',
    ),
    // rooms at runtime
    getRoom: s('SELECT event_id, settings, created_version FROM rooms WHERE event_id = ?'),
    listRooms: s('SELECT event_id, settings, created_version FROM rooms ORDER BY created_version'),
    insertRoom: s('INSERT INTO rooms (event_id, settings, created_version) VALUES (?, ?, ?)'),
    replaceRoom: s('UPDATE rooms SET settings = ? WHERE event_id = ?'),
    deleteRoom: s('DELETE FROM rooms WHERE event_id = ?'),
    getRoomsVersion: s('SELECT version FROM rooms_version WHERE only_row = 1'),
    bumpRoomsVersion: s('UPDATE rooms_version SET version = version + 1 WHERE only_row = 1 RETURNING version'),
    // ---- leaving the queue and automatic admission ----
    isLeft: s('SELECT 1 AS found FROM left_positions WHERE event_id = ? AND position = ?'),
    insertLeft: s('INSERT INTO left_positions (event_id, position) VALUES (?, ?)'),
    incrementLeft: s('UPDATE events SET left_count = left_count + 1 WHERE event_id = ?'),
    countLeftInRange: s(
      'SELECT count(*) AS n FROM left_positions WHERE event_id = ? AND position > ? AND position <= ?',
    ),
    historyFromTop: s('SELECT value, reached_at FROM serving_history WHERE event_id = ? ORDER BY value DESC'),
  };
}

/** The statements of the pre-queue and the draw (tables prequeue and draws). */
function prepareDrawStatements(db: DatabaseSync) {
  const s = (sql: string): StatementSync => db.prepare(sql);
  const entries = 'SELECT join_order, request_id, entry_time, left_queue FROM prequeue';
  return {
    insertDraw: s(
      `INSERT OR IGNORE INTO draws (event_id, state, seed, commitment, algorithm) VALUES (?, 'committed', ?, ?, ?)`,
    ),
    getDraw: s('SELECT * FROM draws WHERE event_id = ?'),
    setJoined: s('UPDATE draws SET joined = ? WHERE event_id = ?'),
    countLeft: s('UPDATE draws SET left_count = left_count + 1 WHERE event_id = ?'),
    start: s(
      `UPDATE draws SET state = 'drawing', drawn_through = ?, entry_count = ?, progress = 0, first_position = ?,
       numbered_through = ? WHERE event_id = ?`,
    ),
    setProgress: s('UPDATE draws SET progress = ? WHERE event_id = ?'),
    setNumberedThrough: s('UPDATE draws SET numbered_through = ?, state = ? WHERE event_id = ?'),
    deleteDraw: s('DELETE FROM draws WHERE event_id = ?'),
    insertEntry: s('INSERT INTO prequeue (event_id, join_order, request_id, entry_time) VALUES (?, ?, ?, ?)'),
    getEntry: s('SELECT join_order, request_id, entry_time, left_queue FROM prequeue WHERE event_id = ? AND request_id = ?'),
    readEntries: s(`${entries} WHERE event_id = ? AND join_order > ? ORDER BY join_order LIMIT ?`),
    markLeft: s('UPDATE prequeue SET left_queue = 1 WHERE event_id = ? AND request_id = ?'),
  };
}
