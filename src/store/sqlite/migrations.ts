// What an existing database needs after schema.sql's `CREATE … IF NOT EXISTS` to have today's shape: columns
// added since a table was first released, the tokens table's new key (issue 15), indexes replaced by memory.
// Run once at open (SqliteConnection), before any capability module prepares its statements.

import type { DatabaseSync } from 'node:sqlite';

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

export function migrate(db: DatabaseSync): void {
  addMissingColumns(db);
  rekeyTokens(db);
  // The primary key (event_id, position) replaces it.
  db.exec('DROP INDEX IF EXISTS tokens_by_position');
  // Replaced by the in-memory index (positions.ts); a database created before it loses the on-disk one.
  db.exec('DROP INDEX IF EXISTS positions_by_request');
}

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
