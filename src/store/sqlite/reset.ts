// Deleting a room's data (QueueStore.resetEvent, RoomStore.deleteRoomData). A reset zeroes the counters at once
// and deletes the old rows afterwards, chunk by chunk, on a second connection in a worker thread (checkpointer.ts):
// the `pending_resets` table remembers a purge not finished, which the next open finishes before anything is read.
// Both drop what the modules keep in memory of the room (SqliteConnection.forgetEvent).

import type { StatementSync } from 'node:sqlite';
import { Checkpointer } from './checkpointer.ts';
import { prepareAll, type Prepared, type SqliteConnection } from './connection.ts';
import type { SqliteCounters } from './counters.ts';
import type { SqliteDraws } from './draws.ts';

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

/**
 * The per-room tables a reset empties, each with the rest of its primary key after event_id. A new table of
 * per-room state that a reset must empty goes here (deleteRoomData finds every table with an event_id itself).
 */
const RESET_TABLES: readonly { table: string; key: string }[] = [
  { table: 'positions', key: 'position' },
  { table: 'tokens', key: 'position' },
  { table: 'serving_history', key: 'value' },
  { table: 'oidc_authorizations', key: 'request_id' },
  { table: 'left_positions', key: 'position' },
  { table: 'prequeue', key: 'join_order' },
];

const SQL = {
  markReset: 'INSERT OR IGNORE INTO pending_resets (event_id) VALUES (?)',
  unmarkReset: 'DELETE FROM pending_resets WHERE event_id = ?',
  pendingResets: 'SELECT event_id FROM pending_resets',
};

/** Every table of per-room data: each one with an event_id column, but the rooms' settings themselves. */
function roomDataTables(connection: SqliteConnection): string[] {
  const { db } = connection;
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name <> 'rooms'").all() as { name: string }[];
  return tables
    .map((table) => table.name)
    .filter((name) => (db.prepare('SELECT name FROM pragma_table_info(?)').all(name) as { name: string }[]).some((c) => c.name === 'event_id'));
}

export class SqliteResets {
  private readonly connection: SqliteConnection;
  private readonly counters: SqliteCounters;
  private readonly draws: SqliteDraws;
  private readonly sql: Prepared<typeof SQL>;
  /** DELETE of at most ?2 rows of event ?1, per table of RESET_TABLES: one chunk of a purge. */
  private readonly purgeChunk: StatementSync[];
  /** DELETE … WHERE event_id = ? for every table of per-room data (see schema.sql). */
  private readonly roomDataDeletes: StatementSync[];

  constructor(connection: SqliteConnection, counters: SqliteCounters, draws: SqliteDraws) {
    this.connection = connection;
    this.counters = counters;
    this.draws = draws;
    this.sql = prepareAll(connection.db, SQL);
    this.purgeChunk = RESET_TABLES.map(({ table, key }) =>
      connection.db.prepare(`DELETE FROM ${table} WHERE event_id = ?1 AND ${key} IN (SELECT ${key} FROM ${table} WHERE event_id = ?1 LIMIT ?2)`),
    );
    this.roomDataDeletes = roomDataTables(connection).map((table) => connection.db.prepare(`DELETE FROM "${table}" WHERE event_id = ?`));
  }

  /** A reset cut short by a crash is finished (at open, before anything is read). */
  finishInterrupted(): void {
    for (const { event_id } of this.sql.pendingResets.all() as { event_id: string }[]) {
      for (const statement of this.purgeChunk) {
        let deleted = 1;
        while (deleted > 0) deleted = Number(statement.run(event_id, PURGE_CHUNK_ROWS).changes);
      }
      this.sql.unmarkReset.run(event_id);
    }
  }

  /**
   * One short transaction zeroes the counters, deletes the draw and records the reset as pending; the old rows
   * (up to millions of positions and tokens) are then deleted in chunks, one transaction each, by a second
   * connection on a worker thread (purgeOldRows; issue 15: one multi-second transaction had blocked every
   * request and dropped keep-alive connections). Until the last chunk the event's other operations wait
   * (SqliteConnection.purges); a crash in between is finished at the next open. Resolves once every old row is gone.
   */
  async resetEvent(eventId: string): Promise<void> {
    const { connection } = this;
    let purge: Promise<void> = Promise.resolve();
    await connection.transaction(eventId, () => {
      this.counters.ensure(eventId);
      this.sql.markReset.run(eventId);
      this.draws.sql.deleteDraw.run(eventId);
      this.counters.sql.zeroCounters.run(eventId);
    }, {
      // From the commit on, every write to the event waits for the purge (transaction).
      committed: () => {
        connection.forgetEvent(eventId);
        purge = this.purgeOldRows(eventId).finally(() => connection.purges.delete(eventId));
        connection.purges.set(eventId, purge);
      },
    });
    await purge;
  }

  async deleteRoomData(eventId: string): Promise<void> {
    await this.connection.transaction(eventId, () => {
      for (const statement of this.roomDataDeletes) statement.run(eventId);
    }, { committed: () => this.connection.forgetEvent(eventId) });
  }

  private async purgeOldRows(eventId: string): Promise<void> {
    const { connection } = this;
    // The chunks run on another thread's connection, each followed by a checkpoint there (checkpointer.ts); in
    // memory (no file to share), or if that thread fails, they run here.
    let thread = connection.filePath === null ? null : new Checkpointer(connection.filePath);
    if (thread) connection.db.exec('PRAGMA wal_autocheckpoint = 0');
    const stopThread = async () => {
      if (!thread) return;
      const closing = thread.close();
      thread = null;
      if (connection.db.isOpen) connection.db.exec(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      await closing;
    };
    try {
      await this.purgeChunks(eventId, async (index, rows) => {
        if (thread) {
          try {
            return await thread.deleteChunk(this.purgeChunk[index]!.sourceSQL, eventId, rows);
          } catch {
            // The thread failed (its transaction rolled back): the rest of the purge runs here.
            await stopThread();
          }
        }
        const started = performance.now();
        const changes = Number((await connection.unsyncedTransaction(() => this.purgeChunk[index]!.run(eventId, rows))).changes);
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
    for (let statement = 0; statement < this.purgeChunk.length; statement++) {
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
    await this.connection.transaction(null, () => this.sql.unmarkReset.run(eventId));
  }
}
