// Per-room history at one-minute resolution (HistoryStore): `room_history`, one sample of the counters per
// minute, and `room_waits`, each minute's wait histogram, added to by every node.

import type { HistorySample, MinuteWaits } from '../../domain/ports/store.ts';
import { prepareAll, type Prepared, type SqliteConnection } from './connection.ts';

const SQL = {
  addSample: 'INSERT OR REPLACE INTO room_history (event_id, minute, sample) VALUES (?, ?, ?)',
  dropSamples: 'DELETE FROM room_history WHERE event_id = ? AND minute < ?',
  readSamples: 'SELECT sample FROM room_history WHERE event_id = ? AND minute BETWEEN ? AND ? ORDER BY minute',
  addWaits:
    'INSERT INTO room_waits (event_id, minute, field, count) VALUES (?, ?, ?, ?) ON CONFLICT (event_id, minute, field) DO UPDATE SET count = count + excluded.count',
  dropWaits: 'DELETE FROM room_waits WHERE event_id = ? AND minute < ?',
  readWaits: 'SELECT minute, field, count FROM room_waits WHERE event_id = ? AND minute BETWEEN ? AND ? ORDER BY minute',
};

export class SqliteHistory {
  private readonly connection: SqliteConnection;
  private readonly sql: Prepared<typeof SQL>;

  constructor(connection: SqliteConnection) {
    this.connection = connection;
    this.sql = prepareAll(connection.db, SQL);
  }

  async recordHistory(eventId: string, sample: HistorySample, keepSeconds: number): Promise<void> {
    await this.connection.transaction(null, () => {
      this.sql.addSample.run(eventId, sample.minute, JSON.stringify(sample));
      this.sql.dropSamples.run(eventId, sample.minute - keepSeconds);
    });
  }

  async readHistory(eventId: string, fromMinute: number, toMinute: number): Promise<HistorySample[]> {
    const rows = this.sql.readSamples.all(eventId, fromMinute, toMinute) as { sample: string }[];
    return rows.map((row) => JSON.parse(row.sample) as HistorySample);
  }

  async addWaits(eventId: string, waits: MinuteWaits, keepSeconds: number): Promise<void> {
    await this.connection.transaction(null, () => {
      for (const [field, count] of Object.entries(waits.counts)) if (count > 0) this.sql.addWaits.run(eventId, waits.minute, field, Math.trunc(count));
      this.sql.dropWaits.run(eventId, waits.minute - keepSeconds);
    });
  }

  async readWaits(eventId: string, fromMinute: number, toMinute: number): Promise<MinuteWaits[]> {
    const rows = this.sql.readWaits.all(eventId, fromMinute, toMinute) as { minute: number; field: string; count: number }[];
    const out: MinuteWaits[] = [];
    for (const row of rows) {
      let last = out[out.length - 1];
      if (!last || last.minute !== row.minute) out.push((last = { minute: row.minute, counts: {} }));
      last.counts[row.field] = row.count;
    }
    return out;
  }
}
