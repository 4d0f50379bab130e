// Leaving the queue (QueueStore: leaveQueue): the `left_positions` table, the positions their visitors gave up.
// A left position can no longer be issued a token set (token-sets.ts checks this table in the same statement
// that inserts one), and the expiry step and the admission tick pass over it (admission.ts).

import type { LeaveResult } from '../../domain/ports/store.ts';
import { prepareAll, type Prepared, type SqliteConnection } from './connection.ts';
import type { SqliteCounters } from './counters.ts';
import type { SqlitePositions } from './positions.ts';
import type { SqliteTokenSets } from './token-sets.ts';

const SQL = {
  isLeft: 'SELECT 1 AS found FROM left_positions WHERE event_id = ? AND position = ?',
  insertLeft: 'INSERT INTO left_positions (event_id, position) VALUES (?, ?)',
  countLeftInRange: 'SELECT count(*) AS n FROM left_positions WHERE event_id = ? AND position > ? AND position <= ?',
};

export class SqliteLeaving {
  private readonly connection: SqliteConnection;
  private readonly counters: SqliteCounters;
  private readonly positions: SqlitePositions;
  private readonly tokenSets: SqliteTokenSets;
  private readonly sql: Prepared<typeof SQL>;

  constructor(connection: SqliteConnection, counters: SqliteCounters, positions: SqlitePositions, tokenSets: SqliteTokenSets) {
    this.connection = connection;
    this.counters = counters;
    this.positions = positions;
    this.tokenSets = tokenSets;
    this.sql = prepareAll(connection.db, SQL);
  }

  async leaveQueue(eventId: string, requestId: string): Promise<LeaveResult> {
    return this.connection.transaction(eventId, (): LeaveResult => {
      const found = this.positions.find(eventId, requestId);
      if (!found) return { outcome: 'no-position' };
      const position = found.position;
      if (this.sql.isLeft.get(eventId, position) !== undefined) return { outcome: 'already-left' };
      if (this.tokenSets.issuedAt(eventId, position)) return { outcome: 'claimed' };
      if (position <= this.counters.row(eventId).max_expired) return { outcome: 'expired' };
      this.sql.insertLeft.run(eventId, position);
      this.counters.sql.incrementLeft.run(eventId);
      return { outcome: 'left', position };
    });
  }

  /** Positions in (after, through] that were left. */
  countInRange(eventId: string, after: number, through: number): number {
    return (this.sql.countLeftInRange.get(eventId, after, through) as { n: number }).n;
  }
}
