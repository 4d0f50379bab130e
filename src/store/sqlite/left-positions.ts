// The embedded store's read of the positions given up above a point (left_positions in schema.sql, keyed by
// event and position): the people a waiting page must not count as ahead (src/domain/people-ahead.ts).

import type { DatabaseSync, StatementSync } from 'node:sqlite';

const statements = new WeakMap<DatabaseSync, StatementSync>();

export function leftPositionsAbove(db: DatabaseSync, eventId: string, after: number, limit: number): number[] {
  let statement = statements.get(db);
  if (!statement) {
    statement = db.prepare('SELECT position FROM left_positions WHERE event_id = ? AND position > ? ORDER BY position LIMIT ?');
    statements.set(db, statement);
  }
  return (statement.all(eventId, after, limit) as { position: number }[]).map((row) => row.position);
}
