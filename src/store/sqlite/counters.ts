// The counters of a room (QueueStore: getCounters, peekCounters, getServingCounter, incrementServing,
// incrementServingWithinQueue, syncExpirySwitch): the `events` table, one row per room, and `serving_history`,
// when the serving counter first reached each value. Polls are answered from memory: this process is the
// database's only writer, so the copy of each row as last committed is exact (every transaction on the event
// drops it: SqliteConnection.cachePerEvent). The other queue modules read and move the counters through this one.

import type { Counters, ServingMove } from '../../domain/ports/store.ts';
import { prepareAll, type Prepared, type SqliteConnection } from './connection.ts';

export interface EventRow {
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

/** The statements of the events row and the serving history; the sibling modules run them too. */
const SQL = {
  getEvent: 'SELECT * FROM events WHERE event_id = ?',
  insertEvent: 'INSERT OR IGNORE INTO events (event_id) VALUES (?)',
  setServing: 'UPDATE events SET serving = ?, max_serving = ? WHERE event_id = ?',
  setQueue: 'UPDATE events SET queue = ? WHERE event_id = ?',
  setExpirySince: 'UPDATE events SET expiry_enabled_since = ? WHERE event_id = ?',
  addTokens: 'UPDATE events SET tokens = tokens + ? WHERE event_id = ?',
  incrementCompleted: 'UPDATE events SET completed = completed + 1 WHERE event_id = ?',
  incrementAbandoned: 'UPDATE events SET abandoned = abandoned + 1 WHERE event_id = ?',
  incrementLeft: 'UPDATE events SET left_count = left_count + 1 WHERE event_id = ?',
  recordExpired: 'UPDATE events SET max_expired = ?, expired = expired + ? WHERE event_id = ?',
  zeroCounters: `UPDATE events SET queue = 0, serving = 0, max_serving = 0, tokens = 0, expired = 0, completed = 0,
     abandoned = 0, max_expired = 0, left_count = 0, resets = resets + 1 WHERE event_id = ?`,
  insertHistory: 'INSERT OR REPLACE INTO serving_history (event_id, value, reached_at) VALUES (?, ?, ?)',
  maxServedBefore: 'SELECT max(value) AS value FROM serving_history WHERE event_id = ? AND reached_at < ?',
  historyFromTop: 'SELECT value, reached_at FROM serving_history WHERE event_id = ? ORDER BY value DESC',
};

export class SqliteCounters {
  readonly sql: Prepared<typeof SQL>;
  private readonly connection: SqliteConnection;
  /** Each event's counter row as last committed (SqliteConnection.cachePerEvent). Keeps polling off SQLite. */
  private readonly rows: Map<string, EventRow>;

  constructor(connection: SqliteConnection) {
    this.connection = connection;
    this.sql = prepareAll(connection.db, SQL);
    this.rows = connection.cachePerEvent<EventRow>();
  }

  /** The event's counters row (zeros if it has none), from memory when this process holds it. */
  row(eventId: string): EventRow {
    let row = this.rows.get(eventId);
    if (!row) {
      row = (this.sql.getEvent.get(eventId) as EventRow | undefined) ?? ZERO_EVENT;
      if (!this.connection.db.isTransaction) this.rows.set(eventId, row);
    }
    return row;
  }

  /** The event's counters row, created if it has none (inside the caller's transaction). */
  ensure(eventId: string): EventRow {
    this.sql.insertEvent.run(eventId);
    return this.sql.getEvent.get(eventId) as unknown as EventRow;
  }

  /** Moves serving to `value`, recording the first time each new highest value is reached. */
  setServing(eventId: string, row: EventRow, value: number, now: number): void {
    if (value > row.max_serving) {
      this.sql.insertHistory.run(eventId, value, now);
      this.sql.setServing.run(value, value, eventId);
    } else {
      this.sql.setServing.run(value, row.max_serving, eventId);
    }
  }

  /**
   * How many positions the counter first reached at or after `since`: the highest value ever reached minus the
   * highest one reached before `since`. Read from the top of the history down, so only the values of the
   * window itself are passed over (like the expiry step).
   */
  reachedSince(eventId: string, highest: number, since: number): number {
    for (const entry of this.sql.historyFromTop.iterate(eventId) as Iterable<{ value: number; reached_at: number }>) {
      if (entry.reached_at < since) return highest - entry.value;
    }
    return highest;
  }

  async syncExpirySwitch(eventId: string, enabled: boolean, now: number): Promise<void> {
    await this.connection.transaction(eventId, () => {
      const row = this.ensure(eventId);
      if (enabled && row.expiry_enabled_since === null) this.sql.setExpirySince.run(now, eventId);
      if (!enabled && row.expiry_enabled_since !== null) this.sql.setExpirySince.run(null, eventId);
    });
  }

  async getCounters(eventId: string): Promise<Counters> {
    return toCounters(this.row(eventId));
  }

  peekCounters(eventId: string): Counters | undefined {
    const row = this.rows.get(eventId);
    return row && toCounters(row);
  }

  async getServingCounter(eventId: string): Promise<number> {
    return this.row(eventId).serving;
  }

  async incrementServing(eventId: string, by: number, now: number): Promise<number> {
    return this.connection.transaction(eventId, () => {
      const row = this.ensure(eventId);
      // The counter never goes below zero: "nobody may enter" is 0, and a negative value would make
      // every later increment silently admit nobody.
      const value = Math.max(0, row.serving + by);
      this.setServing(eventId, row, value, now);
      return value;
    });
  }

  async incrementServingWithinQueue(eventId: string, by: number, now: number, ifServing?: number): Promise<ServingMove> {
    return this.connection.transaction(eventId, (): ServingMove => {
      const row = this.ensure(eventId);
      if (ifServing !== undefined && row.serving !== ifServing) return { previousServing: row.serving, serving: row.serving };
      const serving = row.serving + Math.max(0, Math.min(by, row.queue - row.serving));
      if (serving !== row.serving) this.setServing(eventId, row, serving, now);
      return { previousServing: row.serving, serving };
    });
  }
}
