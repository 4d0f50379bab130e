// Leader locks of the interval jobs (LockStore): the `locks` table.

import { isBusy, prepareAll, type Prepared, type SqliteConnection } from './connection.ts';

const SQL = {
  acquireLock: `INSERT INTO locks (name, owner, expires_at) VALUES (?1, ?2, ?3)
     ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
     WHERE locks.owner = excluded.owner OR locks.expires_at <= ?4`,
  getLock: 'SELECT owner FROM locks WHERE name = ?',
};

export class SqliteLocks {
  private readonly connection: SqliteConnection;
  private readonly sql: Prepared<typeof SQL>;

  constructor(connection: SqliteConnection) {
    this.connection = connection;
    this.sql = prepareAll(connection.db, SQL);
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
      return await this.connection.transaction(
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
}
