// The embedded store's connection: the database file opened on Node's built-in SQLite (node:sqlite), and the
// one way every capability module writes to it (transaction). One process owns the database file; every
// mutating store method is one transaction. WAL journal; `synchronous` FULL by default so an acknowledged join
// survives a power loss as well as a kill -9 (NORMAL survives kill -9 only; see docs/operations.md).

import { chmodSync, readFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { StoreUnavailableError } from '../../domain/ports/store.ts';
import { migrate } from './migrations.ts';

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

const SCHEMA = readFileSync(new URL('./schema.sql', import.meta.url), 'utf8');

/** SQLITE_BUSY: another connection holds the write lock (the purge thread of a reset, an operator's shell). */
export function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && (code & 0xff) === 5;
}

/** SQLITE_FULL (13) and SQLITE_IOERR (10), with their extended codes: the disk, not the request. */
function isOutOfSpaceOrIo(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && ((code & 0xff) === 13 || (code & 0xff) === 10);
}

/** BEGIN IMMEDIATE met another connection's write lock: nothing ran (transaction() tries again). */
class LockBusy extends Error {
  constructor(cause: unknown) {
    super('database is locked', { cause });
  }
}

export interface TransactionOptions<T> {
  /** How long to wait for another connection's write lock (LOCK_WAIT_MS; 0: try once). */
  waitMs?: number;
  /** Committed without an fsync of its own (see unsyncedTransaction). */
  unsynced?: boolean;
  /** Run right after the commit, before anything else can write (see transaction). */
  committed?: (result: T) => void;
}

export type SqliteSynchronous = 'full' | 'normal';

export interface SqliteStoreOptions {
  /** File path, or ':memory:' for a store that lives as long as the process. */
  path: string;
  synchronous?: SqliteSynchronous;
  /** Replaces the request index's keyed hash (tests use it to make request IDs share a tag; see request-index.ts). */
  requestTag?: (requestId: string) => number;
}

/** A module's statements: one per SQL text of `S`, by the same name. */
export type Prepared<S extends Record<string, string>> = Record<keyof S, StatementSync>;

/** A capability module's statements, prepared once: the same names, each SQL text prepared on `db`. */
export function prepareAll<K extends string>(db: DatabaseSync, sql: Record<K, string>): Record<K, StatementSync> {
  const statements = {} as Record<K, StatementSync>;
  for (const name of Object.keys(sql) as K[]) statements[name] = db.prepare(sql[name]);
  return statements;
}

/** What a module keeps in memory per event (an index, a count) and drops when the event's data is deleted. */
export interface EventMemory {
  forget(eventId: string): void;
}

export class SqliteConnection {
  readonly description: string;
  readonly db: DatabaseSync;
  /** The database file (null in memory): a reset's purge checkpoints it from a second connection. */
  readonly filePath: string | null;
  /** The connection's `synchronous` setting (the purge of a reset lowers it for its chunks, see reset.ts). */
  readonly synchronousMode: 'FULL' | 'NORMAL';
  /**
   * Resets whose old rows are still being deleted, chunk by chunk (reset.ts): every write to the event waits for
   * it (transaction), as does every read of its positions, tokens, history or pre-queue; polls keep reading the
   * (zeroed) counters.
   */
  readonly purges = new Map<string, Promise<void>>();
  /** The error of the last write, if it failed for lack of space or an I/O error (cleared by a commit). */
  private writeFailure: string | null = null;
  /** Writes waiting for another connection's write lock or for a purge (transaction): close() waits for them. */
  private readonly waitingWrites = new Set<Promise<void>>();
  /** Per-event copies of rows (the counters row): every transaction on the event drops its entry (cachePerEvent). */
  private readonly caches: Map<string, unknown>[] = [];
  /** Per-event memory of the modules, dropped when the event's data is deleted (rememberPerEvent). */
  private readonly memories: EventMemory[] = [];
  private readonly pingStatement: StatementSync;

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
    this.synchronousMode = options.synchronous === 'normal' ? 'NORMAL' : 'FULL';
    this.db.exec(`PRAGMA synchronous = ${this.synchronousMode}`);
    // Opening (the schema, a purge cut short) may wait in SQLite for another connection's write lock: nothing is
    // answered yet. From then on (opened()) busy_timeout is 0 and writes wait on the event loop (transaction).
    this.db.exec(`PRAGMA busy_timeout = ${LOCK_WAIT_MS}`);
    this.db.exec(SCHEMA);
    migrate(this.db);
    this.pingStatement = this.db.prepare('SELECT 1');
  }

  /** The modules have read what they keep in memory: from now on writes wait on the event loop, not in SQLite. */
  opened(): void {
    this.db.exec('PRAGMA busy_timeout = 0');
  }

  /** A map of per-event copies that every transaction on the event drops (before it, and after it fails). */
  cachePerEvent<V>(): Map<string, V> {
    const cache = new Map<string, V>();
    this.caches.push(cache);
    return cache;
  }

  /** Drops the event's cached copies (cachePerEvent). */
  forgetCached(eventId: string): void {
    for (const cache of this.caches) cache.delete(eventId);
  }

  /** Registers a module's per-event memory, dropped by forgetEvent (a reset, a room's data deleted). */
  rememberPerEvent(memory: EventMemory): void {
    this.memories.push(memory);
  }

  /** The event's data is gone (committed): every module drops what it kept in memory of it. */
  forgetEvent(eventId: string): void {
    for (const memory of this.memories) memory.forget(eventId);
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
  async transaction<T>(eventId: string | null, work: () => T, options: TransactionOptions<T> = {}): Promise<T> {
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

  /**
   * A transaction committed without an fsync of its own (synchronous=NORMAL: in WAL mode the database stays
   * consistent; a power cut may lose the last such commits), for writes whose loss costs nothing: a job's
   * lease, and the chunks of a reset's purge — the reset stays recorded as pending (committed with the store's
   * setting before the purge began) until the last chunk, and a purge cut short is finished at the next open.
   * An fsync per chunk had held the event loop for most of a chunk's time on a busy disk (issue 15).
   */
  unsyncedTransaction<T>(work: () => T): Promise<T> {
    return this.transaction(null, work, { unsynced: true });
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
    if (eventId !== null) this.forgetCached(eventId);
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
      if (eventId !== null) this.forgetCached(eventId);
      if (isOutOfSpaceOrIo(error)) {
        this.writeFailure = (error as Error).message;
        throw new StoreUnavailableError(`${this.description}: cannot write (${this.writeFailure})`, { cause: error });
      }
      throw error;
    } finally {
      if (lowered && this.db.isOpen) this.db.exec(`PRAGMA synchronous = ${this.synchronousMode}`);
    }
  }

  async ping(): Promise<void> {
    this.pingStatement.get();
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

  /** Waits for the writes waiting for another connection's lock (each at most LOCK_WAIT_MS), then closes. */
  async close(): Promise<void> {
    while (this.waitingWrites.size > 0) await Promise.all(this.waitingWrites);
    if (this.db.isOpen) this.db.close();
  }
}
