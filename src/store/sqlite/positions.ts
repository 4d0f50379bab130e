// Queue positions (QueueStore: assignPositions, assignPositionsIfAbsent, getPosition): the `positions` table,
// keyed by (event_id, position) so that a batch of joins writes only its end, and each event's index from
// request ID to position in memory (request-index.ts). Every module that finds a visitor's position (claims,
// sessions, leaving, the draw, OpenID Connect authorizations) finds it here; every module that numbers joins
// (the draw too) inserts them here.

import type { JoinRequest, PositionRecord } from '../../domain/ports/store.ts';
import { prepareAll, type EventMemory, type Prepared, type SqliteConnection } from './connection.ts';
import type { SqliteCounters } from './counters.ts';
import { RequestIndex } from './request-index.ts';

const SQL = {
  insertPosition: 'INSERT INTO positions (event_id, position, request_id, entry_time) VALUES (?, ?, ?, ?)',
  // Request ID → position is the in-memory index (request-index.ts); this reads the table by its key.
  positionRow: 'SELECT request_id, entry_time FROM positions WHERE event_id = ? AND position = ?',
  allPositions: 'SELECT event_id, position, request_id FROM positions',
};

const NONE: readonly number[] = [];

export class SqlitePositions implements EventMemory {
  private readonly connection: SqliteConnection;
  private readonly counters: SqliteCounters;
  private readonly sql: Prepared<typeof SQL>;
  /**
   * Each event's positions by request ID, in memory (request-index.ts): the database has no index of the random
   * IDs, so a join writes only the end of the positions table. Built from the table at open; changed only after
   * a commit (a rolled-back transaction leaves it as it was).
   */
  private readonly byRequest = new Map<string, RequestIndex>();
  /** The request index's tag (SqliteStoreOptions.requestTag; the keyed hash unless a test replaces it). */
  private readonly requestTag: ((requestId: string) => number) | undefined;

  constructor(connection: SqliteConnection, counters: SqliteCounters, requestTag: ((requestId: string) => number) | undefined) {
    this.connection = connection;
    this.counters = counters;
    this.requestTag = requestTag;
    this.sql = prepareAll(connection.db, SQL);
    connection.rememberPerEvent(this);
  }

  /** Builds the index from the table: one pass over the positions in key order (about 1 s per million). */
  load(): void {
    this.sql.allPositions.setReturnArrays(true);
    for (const [eventId, position, requestId] of this.sql.allPositions.iterate() as Iterable<[string, number, string]>) {
      this.indexOf(eventId).add(requestId, position);
    }
  }

  forget(eventId: string): void {
    this.byRequest.delete(eventId);
  }

  private indexOf(eventId: string): RequestIndex {
    let index = this.byRequest.get(eventId);
    if (!index) this.byRequest.set(eventId, (index = new RequestIndex(this.requestTag)));
    return index;
  }

  /**
   * The positions that may be `requestId`'s (request-index.ts: its own, if any, and rarely others whose ID shares
   * its tag): a caller reads each position's row and compares the stored request ID.
   */
  candidates(eventId: string, requestId: string): readonly number[] {
    return this.byRequest.get(eventId)?.candidates(requestId) ?? NONE;
  }

  /** The position held by `requestId` in the event, read through the in-memory index. */
  find(eventId: string, requestId: string): { position: number; entry_time: number } | undefined {
    const index = this.byRequest.get(eventId);
    if (!index) return undefined;
    for (const position of index.candidates(requestId)) {
      const row = this.sql.positionRow.get(eventId, position) as { request_id: string; entry_time: number } | undefined;
      if (row?.request_id === requestId) return { position, entry_time: row.entry_time };
    }
    return undefined;
  }

  /**
   * Inserts a position (inside the caller's transaction), refusing a request ID that holds one (the unique
   * constraint the on-disk index was); records it in `inserted`, for the index once committed (indexCommitted).
   */
  insert(eventId: string, position: number, requestId: string, entryTime: number, inserted: Map<string, number>): void {
    if (inserted.has(requestId) || this.find(eventId, requestId) !== undefined) {
      throw new Error(`request ID ${requestId} already holds a position of event ${eventId}`);
    }
    this.sql.insertPosition.run(eventId, position, requestId, entryTime);
    inserted.set(requestId, position);
  }

  /** Records positions inserted by a transaction that has committed. */
  indexCommitted(eventId: string, inserted: ReadonlyMap<string, number>): void {
    if (inserted.size === 0) return;
    const index = this.indexOf(eventId);
    for (const [requestId, position] of inserted) index.add(requestId, position);
  }

  async assignPositions(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    if (joins.length === 0) return [];
    const inserted = new Map<string, number>();
    const positions = await this.connection.transaction(eventId, () => {
      const row = this.counters.ensure(eventId);
      const positions: number[] = [];
      let position = row.queue;
      for (const join of joins) {
        position += 1;
        this.insert(eventId, position, join.requestId, join.entryTime, inserted);
        positions.push(position);
      }
      this.counters.sql.setQueue.run(position, eventId);
      return positions;
    }, { committed: () => this.indexCommitted(eventId, inserted) });
    return positions;
  }

  async assignPositionsIfAbsent(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    if (joins.length === 0) return [];
    const inserted = new Map<string, number>();
    return this.connection.transaction(eventId, () => this.numberIfAbsent(eventId, joins, inserted), {
      committed: () => this.indexCommitted(eventId, inserted),
    });
  }

  /**
   * assignPositionsIfAbsent's work, inside the caller's transaction (the draw's late joins too); the positions it
   * inserts are added to `inserted` (for the index, once committed).
   */
  numberIfAbsent(eventId: string, joins: readonly JoinRequest[], inserted: Map<string, number>): number[] {
    const row = this.counters.ensure(eventId);
    const assigned = new Map<string, number>();
    let position = row.queue;
    const positions = joins.map((join) => {
      const known = assigned.get(join.requestId);
      if (known !== undefined) return known;
      const existing = this.find(eventId, join.requestId);
      if (existing) {
        assigned.set(join.requestId, existing.position);
        return existing.position;
      }
      position += 1;
      this.insert(eventId, position, join.requestId, join.entryTime, inserted);
      assigned.set(join.requestId, position);
      return position;
    });
    if (position !== row.queue) this.counters.sql.setQueue.run(position, eventId);
    return positions;
  }

  async getPosition(eventId: string, requestId: string): Promise<PositionRecord | null> {
    if (this.connection.purges.has(eventId)) await this.connection.purges.get(eventId);
    const row = this.find(eventId, requestId);
    return row ? { position: row.position, entryTime: row.entry_time } : null;
  }
}
