// The pre-queue and the draw (DrawStore): the `prequeue` table (the joins listed before the start, in join
// order) and `draws` (each room's seed, its commitment and how far the numbering got). Numbering a place inserts
// its position through positions.ts, the queue counter moving with it (counters.ts); which positions the entries
// hold is read from the in-memory request index, never stored twice.

import type { DrawRecord, DrawSeed, JoinRequest, PrequeueEntry, PrequeueLeave } from '../../domain/ports/store.ts';
import { prepareAll, type Prepared, type SqliteConnection } from './connection.ts';
import type { SqliteCounters } from './counters.ts';
import type { SqlitePositions } from './positions.ts';

const ENTRIES = 'SELECT join_order, request_id, entry_time, left_queue FROM prequeue';

const SQL = {
  insertDraw: `INSERT OR IGNORE INTO draws (event_id, state, seed, commitment, algorithm) VALUES (?, 'committed', ?, ?, ?)`,
  getDraw: 'SELECT * FROM draws WHERE event_id = ?',
  setJoined: 'UPDATE draws SET joined = ? WHERE event_id = ?',
  countLeft: 'UPDATE draws SET left_count = left_count + 1 WHERE event_id = ?',
  start: `UPDATE draws SET state = 'drawing', drawn_through = ?, entry_count = ?, progress = 0, first_position = ?,
     numbered_through = ? WHERE event_id = ?`,
  setProgress: 'UPDATE draws SET progress = ? WHERE event_id = ?',
  setNumberedThrough: 'UPDATE draws SET numbered_through = ?, state = ? WHERE event_id = ?',
  deleteDraw: 'DELETE FROM draws WHERE event_id = ?',
  insertEntry: 'INSERT INTO prequeue (event_id, join_order, request_id, entry_time) VALUES (?, ?, ?, ?)',
  getEntry: `${ENTRIES} WHERE event_id = ? AND request_id = ?`,
  readEntries: `${ENTRIES} WHERE event_id = ? AND join_order > ? ORDER BY join_order LIMIT ?`,
  markLeft: 'UPDATE prequeue SET left_queue = 1 WHERE event_id = ? AND request_id = ?',
};

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
    listed: row.joined,
    leftPrequeue: row.left_count,
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

export class SqliteDraws {
  private readonly connection: SqliteConnection;
  private readonly counters: SqliteCounters;
  private readonly positions: SqlitePositions;
  readonly sql: Prepared<typeof SQL>;

  constructor(connection: SqliteConnection, counters: SqliteCounters, positions: SqlitePositions) {
    this.connection = connection;
    this.counters = counters;
    this.positions = positions;
    this.sql = prepareAll(connection.db, SQL);
  }

  /** The room's draw row, created from `candidate` if it has none (inside the caller's transaction). */
  private ensureDraw(eventId: string, candidate: DrawSeed): DrawRow {
    this.sql.insertDraw.run(eventId, candidate.seed, candidate.commitment, candidate.algorithm);
    return this.sql.getDraw.get(eventId) as unknown as DrawRow;
  }

  private storedDraw(eventId: string): DrawRecord {
    return toDrawRecord(this.sql.getDraw.get(eventId) as unknown as DrawRow);
  }

  async commitDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return toDrawRecord(await this.connection.transaction(eventId, () => this.ensureDraw(eventId, candidate)));
  }

  async getDraw(eventId: string): Promise<DrawRecord | null> {
    if (this.connection.purges.has(eventId)) await this.connection.purges.get(eventId);
    const row = this.sql.getDraw.get(eventId) as DrawRow | undefined;
    return row ? toDrawRecord(row) : null;
  }

  async joinPrequeue(eventId: string, joins: readonly JoinRequest[], candidate: DrawSeed): Promise<number[]> {
    if (joins.length === 0) return [];
    const inserted = new Map<string, number>();
    return this.connection.transaction(eventId, () => {
      const draw = this.ensureDraw(eventId, candidate);
      if (draw.state === 'done') return this.positions.numberIfAbsent(eventId, joins, inserted);
      let joined = draw.joined;
      const listedNow = new Set<string>();
      const answers = joins.map((join) => {
        if (listedNow.has(join.requestId)) return 0;
        const existing = this.positions.find(eventId, join.requestId);
        if (existing) return existing.position;
        if (this.sql.getEntry.get(eventId, join.requestId)) return 0;
        joined += 1;
        this.sql.insertEntry.run(eventId, joined, join.requestId, join.entryTime);
        listedNow.add(join.requestId);
        return 0;
      });
      if (joined !== draw.joined) this.sql.setJoined.run(joined, eventId);
      return answers;
    }, { committed: () => this.positions.indexCommitted(eventId, inserted) });
  }

  /** A pre-queue row with the position its request ID holds (null if none), from the in-memory index. */
  private withPosition(eventId: string, row: Omit<EntryRow, 'position'>): EntryRow {
    return { ...row, position: this.positions.find(eventId, row.request_id)?.position ?? null };
  }

  private entryWithPosition(eventId: string, requestId: string): EntryRow | undefined {
    const row = this.sql.getEntry.get(eventId, requestId) as Omit<EntryRow, 'position'> | undefined;
    return row && this.withPosition(eventId, row);
  }

  async getPrequeueEntry(eventId: string, requestId: string): Promise<PrequeueEntry | null> {
    if (this.connection.purges.has(eventId)) await this.connection.purges.get(eventId);
    const row = this.entryWithPosition(eventId, requestId);
    return row ? toPrequeueEntry(row) : null;
  }

  async readPrequeue(eventId: string, afterJoinOrder: number, limit: number): Promise<PrequeueEntry[]> {
    if (this.connection.purges.has(eventId)) await this.connection.purges.get(eventId);
    const rows = this.sql.readEntries.all(eventId, afterJoinOrder, limit) as unknown as Omit<EntryRow, 'position'>[];
    return rows.map((row) => toPrequeueEntry(this.withPosition(eventId, row)));
  }

  async startDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return this.connection.transaction(eventId, () => {
      const draw = this.ensureDraw(eventId, candidate);
      if (draw.state !== 'committed') return toDrawRecord(draw);
      const row = this.counters.ensure(eventId);
      // Every entry that left so far is among those listed so far: the draw orders the others.
      this.sql.start.run(draw.joined, draw.joined - draw.left_count, row.queue + 1, draw.joined, eventId);
      return this.storedDraw(eventId);
    });
  }

  async numberDrawn(eventId: string, expectedProgress: number, requestIds: readonly string[]): Promise<DrawRecord | null> {
    const inserted = new Map<string, number>();
    return this.connection.transaction(eventId, () => {
      const draw = this.sql.getDraw.get(eventId) as DrawRow | undefined;
      if (!draw) return null;
      if (
        draw.state !== 'drawing' ||
        draw.progress !== expectedProgress ||
        expectedProgress + requestIds.length > draw.entry_count
      ) {
        return toDrawRecord(draw);
      }
      const row = this.counters.ensure(eventId);
      let position = row.queue;
      for (const requestId of requestIds) {
        const entry = this.sql.getEntry.get(eventId, requestId) as EntryRow | undefined;
        if (!entry || entry.left_queue !== 0 || entry.join_order > draw.drawn_through) {
          throw new Error(`numberDrawn: ${requestId} is not an entry of the draw`);
        }
        position += 1;
        // An entry that has a position already is refused; the transaction then writes nothing.
        this.positions.insert(eventId, position, requestId, entry.entry_time, inserted);
      }
      this.counters.sql.setQueue.run(position, eventId);
      this.sql.setProgress.run(expectedProgress + requestIds.length, eventId);
      return this.storedDraw(eventId);
    }, { committed: () => this.positions.indexCommitted(eventId, inserted) });
  }

  async numberLateArrivals(eventId: string, limit: number): Promise<DrawRecord | null> {
    const inserted = new Map<string, number>();
    return this.connection.transaction(eventId, () => {
      const draw = this.sql.getDraw.get(eventId) as DrawRow | undefined;
      if (!draw) return null;
      if (draw.state !== 'drawing' || draw.progress !== draw.entry_count) return toDrawRecord(draw);
      const late = this.sql.readEntries.all(eventId, draw.numbered_through, Math.max(1, limit)) as unknown as EntryRow[];
      const row = this.counters.ensure(eventId);
      let position = row.queue;
      let through = draw.numbered_through;
      for (const entry of late) {
        through = entry.join_order;
        if (entry.left_queue !== 0) continue;
        position += 1;
        this.positions.insert(eventId, position, entry.request_id, entry.entry_time, inserted);
      }
      if (position !== row.queue) this.counters.sql.setQueue.run(position, eventId);
      this.sql.setNumberedThrough.run(through, through === draw.joined ? 'done' : 'drawing', eventId);
      return this.storedDraw(eventId);
    }, { committed: () => this.positions.indexCommitted(eventId, inserted) });
  }

  async leavePrequeue(eventId: string, requestId: string): Promise<PrequeueLeave> {
    return this.connection.transaction(eventId, (): PrequeueLeave => {
      const entry = this.entryWithPosition(eventId, requestId);
      if (!entry) return 'not-in-prequeue';
      if (entry.left_queue !== 0) return 'already-left';
      if (entry.position !== null) return 'numbered';
      const draw = this.sql.getDraw.get(eventId) as unknown as DrawRow;
      if (draw.state === 'drawing' && entry.join_order <= draw.drawn_through) return 'being-drawn';
      this.sql.markLeft.run(eventId, requestId);
      this.sql.countLeft.run(eventId);
      return 'left';
    });
  }
}
