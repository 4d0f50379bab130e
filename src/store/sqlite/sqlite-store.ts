// Embedded store on Node's built-in SQLite (node:sqlite). One process owns the database file; every
// mutating method is one transaction. WAL journal; `synchronous` FULL by default so an acknowledged join
// survives a power loss as well as a kill -9 (NORMAL survives kill -9 only; see docs/operations.md).

import { chmodSync, readFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { SessionStatus, TokenRecord } from '../../domain/claims.ts';
import type {
  AdmissionSnapshot,
  ClaimContext,
  Counters,
  DrawRecord,
  DrawSeed,
  ExpiryAdvance,
  IssueResult,
  JoinRequest,
  LeaveResult,
  PositionRecord,
  ServingMove,
  PrequeueEntry,
  PrequeueLeave,
  RoomPutOutcome,
  Store,
  StoredRoom,
  StoredRooms,
  StoredSigningKey,
  AuditEntry,
  HistorySample,
} from '../../domain/ports/store.ts';
import { AUDIT_LOG_KEEP } from '../../domain/ports/store.ts';

const SCHEMA = readFileSync(new URL('./schema.sql', import.meta.url), 'utf8');

/**
 * Columns added to a table after it was first released: `CREATE TABLE IF NOT EXISTS` leaves an existing table
 * as it is, so the store adds each one missing at start (an existing database keeps its data).
 */
const ADDED_COLUMNS: readonly { table: string; column: string; definition: string }[] = [
  // Leaving the queue (issue 12): positions given up, see left_positions in schema.sql.
  { table: 'events', column: 'left_count', definition: 'INTEGER NOT NULL DEFAULT 0' },
];

function addMissingColumns(db: DatabaseSync): void {
  for (const { table, column, definition } of ADDED_COLUMNS) {
    const columns = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
    if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  }
}

export type SqliteSynchronous = 'full' | 'normal';

export interface SqliteStoreOptions {
  /** File path, or ':memory:' for a store that lives as long as the process. */
  path: string;
  synchronous?: SqliteSynchronous;
}

interface EventRow {
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
}

interface TokenRow {
  request_id: string;
  position: number;
  iat: number;
  nbf: number;
  exp: number;
  iss: string;
  kid: string;
  status: number;
  nonce: string | null;
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
};

function toTokenRecord(row: TokenRow): TokenRecord {
  return {
    requestId: row.request_id,
    position: row.position,
    iat: row.iat,
    nbf: row.nbf,
    exp: row.exp,
    iss: row.iss,
    kid: row.kid,
    status: row.status as SessionStatus,
    nonce: row.nonce ?? undefined,
  };
}

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
  };
}

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

export class SqliteStore implements Store {
  readonly description: string;
  private readonly db: DatabaseSync;
  private readonly sql: ReturnType<typeof prepareStatements>;
  private readonly drawSql: ReturnType<typeof prepareDrawStatements>;
  /** DELETE … WHERE event_id = ? for every table of per-room data (see schema.sql). */
  private readonly roomDataDeletes: StatementSync[];
  /**
   * Each event's counter row as last committed. This process is the database's only writer, so the copy is
   * exact: every transaction that may change a row drops that event's entry. Keeps polling off SQLite.
   */
  private readonly rows = new Map<string, EventRow>();

  constructor(options: SqliteStoreOptions) {
    const inMemory = options.path === ':memory:';
    if (!inMemory) mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
    this.description = inMemory ? 'memory' : `sqlite:${options.path}`;
    this.db = new DatabaseSync(options.path);
    // The database holds the events' private signing keys: owner-only, like the credentials file. SQLite
    // creates its -wal and -shm files with the database file's mode.
    if (!inMemory) chmodSync(options.path, 0o600);
    if (!inMemory) this.db.exec('PRAGMA journal_mode = WAL');
    this.db.exec(`PRAGMA synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    this.db.exec('PRAGMA busy_timeout = 5000');
    this.db.exec(SCHEMA);
    addMissingColumns(this.db);
    this.sql = prepareStatements(this.db);
    this.drawSql = prepareDrawStatements(this.db);
    this.roomDataDeletes = roomDataTables(this.db).map((table) => this.db.prepare(`DELETE FROM "${table}" WHERE event_id = ?`));
  }

  /** The durability in force on this connection, as SQLite reports it (what the README promises is FULL). */
  get synchronous(): SqliteSynchronous | 'other' {
    const { synchronous } = this.db.prepare('PRAGMA synchronous').get() as { synchronous: number };
    return synchronous === 2 ? 'full' : synchronous === 1 ? 'normal' : 'other';
  }

  /** Runs `work` as one transaction (BEGIN IMMEDIATE: this process is the only writer). */
  private transaction<T>(eventId: string | null, work: () => T): T {
    if (eventId !== null) this.rows.delete(eventId);
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  private eventRow(eventId: string): EventRow {
    let row = this.rows.get(eventId);
    if (!row) {
      row = (this.sql.getEvent.get(eventId) as EventRow | undefined) ?? ZERO_EVENT;
      if (!this.db.isTransaction) this.rows.set(eventId, row);
    }
    return row;
  }

  private ensureEvent(eventId: string): EventRow {
    this.sql.insertEvent.run(eventId);
    return this.sql.getEvent.get(eventId) as unknown as EventRow;
  }

  /** Moves serving to `value`, recording the first time each new highest value is reached. */
  private setServing(eventId: string, row: EventRow, value: number, now: number): void {
    if (value > row.max_serving) {
      this.sql.insertHistory.run(eventId, value, now);
      this.sql.setServing.run(value, value, eventId);
    } else {
      this.sql.setServing.run(value, row.max_serving, eventId);
    }
  }

  async recordHistory(eventId: string, sample: HistorySample, keepSeconds: number): Promise<void> {
    this.db.prepare('INSERT OR REPLACE INTO room_history (event_id, minute, sample) VALUES (?, ?, ?)').run(eventId, sample.minute, JSON.stringify(sample));
    this.db.prepare('DELETE FROM room_history WHERE event_id = ? AND minute < ?').run(eventId, sample.minute - keepSeconds);
  }

  async readHistory(eventId: string, fromMinute: number, toMinute: number): Promise<HistorySample[]> {
    const rows = this.db
      .prepare('SELECT sample FROM room_history WHERE event_id = ? AND minute BETWEEN ? AND ? ORDER BY minute')
      .all(eventId, fromMinute, toMinute) as { sample: string }[];
    return rows.map((row) => JSON.parse(row.sample) as HistorySample);
  }

  async appendAudit(entry: AuditEntry): Promise<void> {
    this.db.prepare('INSERT INTO audit_log (entry) VALUES (?)').run(JSON.stringify(entry));
    this.db.prepare('DELETE FROM audit_log WHERE seq <= (SELECT MAX(seq) FROM audit_log) - ?').run(AUDIT_LOG_KEEP);
  }

  async listAudit(limit: number, beforeSeq?: number): Promise<(AuditEntry & { seq: number })[]> {
    const rows = this.db
      .prepare('SELECT seq, entry FROM audit_log WHERE seq < ? ORDER BY seq DESC LIMIT ?')
      .all(beforeSeq ?? Number.MAX_SAFE_INTEGER, limit) as { seq: number; entry: string }[];
    return rows.map((row) => ({ ...(JSON.parse(row.entry) as AuditEntry), seq: Number(row.seq) }));
  }

  async ping(): Promise<void> {
    this.sql.ping.get();
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }

  async syncExpirySwitch(eventId: string, enabled: boolean, now: number): Promise<void> {
    this.transaction(eventId, () => {
      const row = this.ensureEvent(eventId);
      if (enabled && row.expiry_enabled_since === null) this.sql.setExpirySince.run(now, eventId);
      if (!enabled && row.expiry_enabled_since !== null) this.sql.setExpirySince.run(null, eventId);
    });
  }

  async assignPositions(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    if (joins.length === 0) return [];
    return this.transaction(eventId, () => {
      const row = this.ensureEvent(eventId);
      const positions: number[] = [];
      let position = row.queue;
      for (const join of joins) {
        position += 1;
        this.sql.insertPosition.run(eventId, position, join.requestId, join.entryTime);
        positions.push(position);
      }
      this.sql.setQueue.run(position, eventId);
      return positions;
    });
  }

  async assignPositionsIfAbsent(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    if (joins.length === 0) return [];
    return this.transaction(eventId, () => this.numberIfAbsent(eventId, joins));
  }

  /** assignPositionsIfAbsent's work, inside the caller's transaction. */
  private numberIfAbsent(eventId: string, joins: readonly JoinRequest[]): number[] {
    const row = this.ensureEvent(eventId);
    const assigned = new Map<string, number>();
    let position = row.queue;
    const positions = joins.map((join) => {
      const known = assigned.get(join.requestId);
      if (known !== undefined) return known;
      const existing = this.sql.getPosition.get(eventId, join.requestId) as { position: number } | undefined;
      if (existing) {
        assigned.set(join.requestId, existing.position);
        return existing.position;
      }
      position += 1;
      this.sql.insertPosition.run(eventId, position, join.requestId, join.entryTime);
      assigned.set(join.requestId, position);
      return position;
    });
    if (position !== row.queue) this.sql.setQueue.run(position, eventId);
    return positions;
  }

  async getPosition(eventId: string, requestId: string): Promise<PositionRecord | null> {
    const row = this.sql.getPosition.get(eventId, requestId) as
      | { position: number; entry_time: number }
      | undefined;
    return row ? { position: row.position, entryTime: row.entry_time } : null;
  }

  async getCounters(eventId: string): Promise<Counters> {
    return toCounters(this.eventRow(eventId));
  }

  peekCounters(eventId: string): Counters | undefined {
    const row = this.rows.get(eventId);
    return row && toCounters(row);
  }

  async getServingCounter(eventId: string): Promise<number> {
    return this.eventRow(eventId).serving;
  }

  async incrementServing(eventId: string, by: number, now: number): Promise<number> {
    return this.transaction(eventId, () => {
      const row = this.ensureEvent(eventId);
      // The counter never goes below zero: "nobody may enter" is 0, and a negative value would make
      // every later increment silently admit nobody.
      const value = Math.max(0, row.serving + by);
      this.setServing(eventId, row, value, now);
      return value;
    });
  }

  async getClaimContext(eventId: string, requestId: string): Promise<ClaimContext | null> {
    const position = this.sql.getPosition.get(eventId, requestId) as
      | { position: number; entry_time: number }
      | undefined;
    if (!position) return null;
    const row = this.eventRow(eventId);
    const served = this.sql.servedAt.get(eventId, position.position) as { reached_at: number } | undefined;
    const token = this.sql.getToken.get(eventId, requestId) as TokenRow | undefined;
    return {
      position: position.position,
      entryTime: position.entry_time,
      serving: row.serving,
      servedAt: served?.reached_at ?? null,
      expiryEnabledSince: row.expiry_enabled_since,
      maxExpired: row.max_expired,
      token: token ? toTokenRecord(token) : null,
      left: this.sql.isLeft.get(eventId, position.position) !== undefined,
    };
  }

  async issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult> {
    return this.transaction(eventId, (): IssueResult => {
      const existing = this.sql.getToken.get(eventId, record.requestId) as TokenRow | undefined;
      if (existing) return { outcome: 'existing', record: toTokenRecord(existing) };
      const position = this.sql.getPosition.get(eventId, record.requestId) as
        | { position: number }
        | undefined;
      if (!position) return { outcome: 'no-position' };
      if (this.sql.isLeft.get(eventId, position.position) !== undefined) return { outcome: 'left' };
      const row = this.eventRow(eventId);
      if (position.position <= row.max_expired) return { outcome: 'expired' };
      this.sql.insertToken.run(
        eventId,
        record.requestId,
        position.position,
        record.iat,
        record.nbf,
        record.exp,
        record.iss,
        record.kid,
        record.nonce ?? null,
      );
      this.sql.incrementTokens.run(eventId);
      return { outcome: 'issued', record: { ...record, position: position.position, status: 0 } };
    });
  }

  async closeSession(eventId: string, requestId: string, status: Exclude<SessionStatus, 0>): Promise<boolean> {
    return this.transaction(eventId, () => {
      const changed = this.sql.closeSession.run(status, eventId, requestId).changes;
      if (Number(changed) !== 1) return false;
      (status === 1 ? this.sql.incrementCompleted : this.sql.incrementAbandoned).run(eventId);
      return true;
    });
  }

  async countActiveTokens(eventId: string, now: number): Promise<number> {
    return (this.sql.countActive.get(eventId, now) as { n: number }).n;
  }

  async listExpiredTokens(eventId: string, now: number, limit: number): Promise<string[]> {
    return (this.sql.listExpired.all(eventId, now, limit) as { request_id: string }[]).map((r) => r.request_id);
  }

  async advanceExpiry(eventId: string, cutoff: number, incrServing: boolean, now: number): Promise<ExpiryAdvance> {
    return this.transaction(eventId, (): ExpiryAdvance => {
      const row = this.ensureEvent(eventId);
      const unchanged: ExpiryAdvance = {
        previousMaxExpired: row.max_expired,
        maxExpired: row.max_expired,
        newlyExpiredUnclaimed: 0,
        previousServing: row.serving,
        serving: row.serving,
      };
      // Every eligibility time is ≥ the time expiry was switched on; none can be before the cutoff yet.
      if (row.expiry_enabled_since === null || row.expiry_enabled_since >= cutoff) return unchanged;
      // Highest position the counter had reached before the cutoff: beyond it nothing was servable long enough.
      const reached = this.sql.maxServedBefore.get(eventId, cutoff) as { value: number | null };
      if (reached.value === null) return unchanged;
      const upper = Math.min(reached.value, row.queue);
      if (upper <= row.max_expired) return unchanged;
      // Positions expire in order: stop at the first one that joined at or after the cutoff.
      const firstTooRecent = this.sql.firstEntryAtOrAfter.get(eventId, row.max_expired, upper, cutoff) as
        | { position: number }
        | undefined;
      const newMax = firstTooRecent === undefined ? upper : firstTooRecent.position - 1;
      if (newMax <= row.max_expired) return unchanged;
      const claimed = (this.sql.countTokensInRange.get(eventId, row.max_expired, newMax) as { n: number }).n;
      const left = (this.sql.countLeftInRange.get(eventId, row.max_expired, newMax) as { n: number }).n;
      const unclaimed = newMax - row.max_expired - claimed - left;
      this.sql.recordExpired.run(newMax, unclaimed, eventId);
      let serving = row.serving;
      if (incrServing && unclaimed > 0) {
        // Never past the queue, never backwards (incrementServingWithinQueue).
        serving = Math.max(row.serving, Math.min(row.serving + unclaimed, row.queue));
        if (serving !== row.serving) this.setServing(eventId, row, serving, now);
      }
      return {
        previousMaxExpired: row.max_expired,
        maxExpired: newMax,
        newlyExpiredUnclaimed: unclaimed,
        previousServing: row.serving,
        serving,
      };
    });
  }

  async resetEvent(eventId: string): Promise<void> {
    this.transaction(eventId, () => {
      this.ensureEvent(eventId);
      this.sql.deletePositions.run(eventId);
      this.sql.deleteTokens.run(eventId);
      this.sql.deleteHistory.run(eventId);
      this.sql.deleteAuthorizations.run(eventId);
      this.sql.deleteLeft.run(eventId);
      this.drawSql.deletePrequeue.run(eventId);
      this.drawSql.deleteDraw.run(eventId);
      this.sql.zeroCounters.run(eventId);
    });
  }

  // ---- leaving the queue and automatic admission ----

  async leaveQueue(eventId: string, requestId: string): Promise<LeaveResult> {
    return this.transaction(eventId, (): LeaveResult => {
      const found = this.sql.getPosition.get(eventId, requestId) as { position: number } | undefined;
      if (!found) return { outcome: 'no-position' };
      const position = found.position;
      if (this.sql.isLeft.get(eventId, position) !== undefined) return { outcome: 'already-left' };
      if (this.sql.getToken.get(eventId, requestId) !== undefined) return { outcome: 'claimed' };
      if (position <= this.eventRow(eventId).max_expired) return { outcome: 'expired' };
      this.sql.insertLeft.run(eventId, position);
      this.sql.incrementLeft.run(eventId);
      return { outcome: 'left', position };
    });
  }

  async incrementServingWithinQueue(eventId: string, by: number, now: number): Promise<ServingMove> {
    return this.transaction(eventId, (): ServingMove => {
      const row = this.ensureEvent(eventId);
      const serving = row.serving + Math.max(0, Math.min(by, row.queue - row.serving));
      if (serving !== row.serving) this.setServing(eventId, row, serving, now);
      return { previousServing: row.serving, serving };
    });
  }

  async getAdmissionSnapshot(eventId: string, now: number, windowStart: number): Promise<AdmissionSnapshot> {
    // Statements run one after another with nothing in between: this process is the database's only writer.
    const row = this.eventRow(eventId);
    const admitted = Math.min(row.serving, row.queue);
    let awaitingClaim = 0;
    if (admitted > row.max_expired) {
      const claimed = (this.sql.countTokensInRange.get(eventId, row.max_expired, admitted) as { n: number }).n;
      const left = (this.sql.countLeftInRange.get(eventId, row.max_expired, admitted) as { n: number }).n;
      awaitingClaim = admitted - row.max_expired - claimed - left;
    }
    return {
      queue: row.queue,
      serving: row.serving,
      reachedInWindow: this.reachedSince(eventId, row.max_serving, windowStart),
      reachedThisSecond: this.reachedSince(eventId, row.max_serving, now),
      awaitingClaim,
      activeSessions: (this.sql.countActive.get(eventId, now) as { n: number }).n,
    };
  }

  /**
   * How many positions the counter first reached at or after `since`: the highest value ever reached minus the
   * highest one reached before `since`. Read from the top of the history down, so only the values of the
   * window itself are passed over (like the expiry step).
   */
  private reachedSince(eventId: string, highest: number, since: number): number {
    for (const entry of this.sql.historyFromTop.iterate(eventId) as Iterable<{ value: number; reached_at: number }>) {
      if (entry.reached_at < since) return highest - entry.value;
    }
    return highest;
  }

  // ---- Pre-queue and the draw (DrawStore) ----

  /** The room's draw row, created from `candidate` if it has none (inside the caller's transaction). */
  private ensureDraw(eventId: string, candidate: DrawSeed): DrawRow {
    this.drawSql.insertDraw.run(eventId, candidate.seed, candidate.commitment, candidate.algorithm);
    return this.drawSql.getDraw.get(eventId) as unknown as DrawRow;
  }

  async commitDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return toDrawRecord(this.transaction(null, () => this.ensureDraw(eventId, candidate)));
  }

  async getDraw(eventId: string): Promise<DrawRecord | null> {
    const row = this.drawSql.getDraw.get(eventId) as DrawRow | undefined;
    return row ? toDrawRecord(row) : null;
  }

  async joinPrequeue(eventId: string, joins: readonly JoinRequest[], candidate: DrawSeed): Promise<number[]> {
    if (joins.length === 0) return [];
    return this.transaction(eventId, () => {
      const draw = this.ensureDraw(eventId, candidate);
      if (draw.state === 'done') return this.numberIfAbsent(eventId, joins);
      let joined = draw.joined;
      const listedNow = new Set<string>();
      const answers = joins.map((join) => {
        if (listedNow.has(join.requestId)) return 0;
        const existing = this.sql.getPosition.get(eventId, join.requestId) as { position: number } | undefined;
        if (existing) return existing.position;
        if (this.drawSql.getEntry.get(eventId, join.requestId)) return 0;
        joined += 1;
        this.drawSql.insertEntry.run(eventId, joined, join.requestId, join.entryTime);
        listedNow.add(join.requestId);
        return 0;
      });
      if (joined !== draw.joined) this.drawSql.setJoined.run(joined, eventId);
      return answers;
    });
  }

  async getPrequeueEntry(eventId: string, requestId: string): Promise<PrequeueEntry | null> {
    const row = this.drawSql.getEntryWithPosition.get(eventId, requestId) as EntryRow | undefined;
    return row ? toPrequeueEntry(row) : null;
  }

  async readPrequeue(eventId: string, afterJoinOrder: number, limit: number): Promise<PrequeueEntry[]> {
    return (this.drawSql.readEntries.all(eventId, afterJoinOrder, limit) as unknown as EntryRow[]).map(toPrequeueEntry);
  }

  async startDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return this.transaction(eventId, () => {
      const draw = this.ensureDraw(eventId, candidate);
      if (draw.state !== 'committed') return toDrawRecord(draw);
      const row = this.ensureEvent(eventId);
      // Every entry that left so far is among those listed so far: the draw orders the others.
      this.drawSql.start.run(draw.joined, draw.joined - draw.left_count, row.queue + 1, draw.joined, eventId);
      return toDrawRecord(this.drawSql.getDraw.get(eventId) as unknown as DrawRow);
    });
  }

  async numberDrawn(eventId: string, expectedProgress: number, requestIds: readonly string[]): Promise<DrawRecord | null> {
    return this.transaction(eventId, () => {
      const draw = this.drawSql.getDraw.get(eventId) as DrawRow | undefined;
      if (!draw) return null;
      if (
        draw.state !== 'drawing' ||
        draw.progress !== expectedProgress ||
        expectedProgress + requestIds.length > draw.entry_count
      ) {
        return toDrawRecord(draw);
      }
      const row = this.ensureEvent(eventId);
      let position = row.queue;
      for (const requestId of requestIds) {
        const entry = this.drawSql.getEntry.get(eventId, requestId) as EntryRow | undefined;
        if (!entry || entry.left_queue !== 0 || entry.join_order > draw.drawn_through) {
          throw new Error(`numberDrawn: ${requestId} is not an entry of the draw`);
        }
        position += 1;
        // The unique index refuses an entry that has a position already; the transaction then writes nothing.
        this.sql.insertPosition.run(eventId, position, requestId, entry.entry_time);
      }
      this.sql.setQueue.run(position, eventId);
      this.drawSql.setProgress.run(expectedProgress + requestIds.length, eventId);
      return toDrawRecord(this.drawSql.getDraw.get(eventId) as unknown as DrawRow);
    });
  }

  async numberLateArrivals(eventId: string, limit: number): Promise<DrawRecord | null> {
    return this.transaction(eventId, () => {
      const draw = this.drawSql.getDraw.get(eventId) as DrawRow | undefined;
      if (!draw) return null;
      if (draw.state !== 'drawing' || draw.progress !== draw.entry_count) return toDrawRecord(draw);
      const late = this.drawSql.readEntries.all(eventId, draw.numbered_through, Math.max(1, limit)) as unknown as EntryRow[];
      const row = this.ensureEvent(eventId);
      let position = row.queue;
      let through = draw.numbered_through;
      for (const entry of late) {
        through = entry.join_order;
        if (entry.left_queue !== 0) continue;
        position += 1;
        this.sql.insertPosition.run(eventId, position, entry.request_id, entry.entry_time);
      }
      if (position !== row.queue) this.sql.setQueue.run(position, eventId);
      this.drawSql.setNumberedThrough.run(through, through === draw.joined ? 'done' : 'drawing', eventId);
      return toDrawRecord(this.drawSql.getDraw.get(eventId) as unknown as DrawRow);
    });
  }

  async leavePrequeue(eventId: string, requestId: string): Promise<PrequeueLeave> {
    return this.transaction(null, (): PrequeueLeave => {
      const entry = this.drawSql.getEntryWithPosition.get(eventId, requestId) as EntryRow | undefined;
      if (!entry) return 'not-in-prequeue';
      if (entry.left_queue !== 0) return 'already-left';
      if (entry.position !== null) return 'numbered';
      const draw = this.drawSql.getDraw.get(eventId) as unknown as DrawRow;
      if (draw.state === 'drawing' && entry.join_order <= draw.drawn_through) return 'being-drawn';
      this.drawSql.markLeft.run(eventId, requestId);
      this.drawSql.countLeft.run(eventId);
      return 'left';
    });
  }

  async getSigningKeys(eventId: string): Promise<StoredSigningKey[]> {
    return (this.sql.getKeys.all(eventId) as Record<string, string | number>[]).map((r) => ({
      kid: String(r.kid),
      privateJwk: String(r.private_jwk),
      publicJwk: String(r.public_jwk),
      createdAt: Number(r.created_at),
    }));
  }

  async addSigningKeyIfNone(eventId: string, key: StoredSigningKey): Promise<StoredSigningKey> {
    this.transaction(null, () => {
      const existing = this.sql.getKeys.all(eventId);
      if (existing.length === 0) {
        this.sql.insertKey.run(eventId, key.kid, key.privateJwk, key.publicJwk, key.createdAt);
      }
    });
    const keys = await this.getSigningKeys(eventId);
    return keys[0] as StoredSigningKey;
  }

  async tryAcquireLock(name: string, owner: string, ttlMs: number, nowMs: number): Promise<boolean> {
    return this.transaction(null, () => {
      this.sql.acquireLock.run(name, owner, nowMs + ttlMs, nowMs);
      const row = this.sql.getLock.get(name) as { owner: string };
      return row.owner === owner;
    });
  }

  async claimSecret(name: string, candidate: string): Promise<string> {
    return this.transaction(null, () => {
      this.sql.insertSecret.run(name, candidate);
      return (this.sql.getSecret.get(name) as { value: string }).value;
    });
  }

  async replaceSecret(name: string, expected: string, next: string): Promise<string | null> {
    return this.transaction(null, () => {
      this.sql.replaceSecret.run(next, name, expected);
      return (this.sql.getSecret.get(name) as { value: string } | undefined)?.value ?? null;
    });
  }

  // ---- rooms at runtime (the rooms API) ----

  async putRoom(eventId: string, settings: string): Promise<RoomPutOutcome> {
    return this.transaction(null, (): RoomPutOutcome => {
      const stored = this.sql.getRoom.get(eventId) as { settings: string } | undefined;
      if (stored?.settings === settings) return 'unchanged';
      const version = this.bumpRoomsVersion();
      if (stored) {
        this.sql.replaceRoom.run(settings, eventId);
        return 'replaced';
      }
      this.sql.insertRoom.run(eventId, settings, version);
      return 'created';
    });
  }

  async getRoom(eventId: string): Promise<StoredRoom | null> {
    const row = this.sql.getRoom.get(eventId) as RoomRow | undefined;
    return row ? toStoredRoom(row) : null;
  }

  async listRooms(): Promise<StoredRooms> {
    // Two synchronous reads with nothing in between (this process is the database's only writer): one instant.
    return {
      version: this.roomsVersionNow(),
      rooms: (this.sql.listRooms.all() as unknown as RoomRow[]).map(toStoredRoom),
    };
  }

  async roomsVersion(): Promise<number> {
    return this.roomsVersionNow();
  }

  async deleteRoomSettings(eventId: string): Promise<boolean> {
    return this.transaction(null, () => {
      const existed = Number(this.sql.deleteRoom.run(eventId).changes) === 1;
      if (existed) this.bumpRoomsVersion();
      return existed;
    });
  }

  async deleteRoomData(eventId: string): Promise<void> {
    this.transaction(eventId, () => {
      for (const statement of this.roomDataDeletes) statement.run(eventId);
    });
  }

  private roomsVersionNow(): number {
    return (this.sql.getRoomsVersion.get() as { version: number }).version;
  }

  private bumpRoomsVersion(): number {
    return (this.sql.bumpRoomsVersion.get() as { version: number }).version;
  }

  async saveAuthorization(eventId: string, requestId: string, authorization: string): Promise<boolean> {
    // One statement, so the position check and the write are one atomic unit.
    return Number(this.sql.saveAuthorization.run(eventId, requestId, authorization).changes) === 1;
  }

  async getAuthorization(eventId: string, requestId: string): Promise<string | null> {
    const row = this.sql.getAuthorization.get(eventId, requestId) as { authorization_request: string } | undefined;
    return row?.authorization_request ?? null;
  }
}

interface RoomRow {
  event_id: string;
  settings: string;
  created_version: number;
}

function toStoredRoom(row: RoomRow): StoredRoom {
  return { eventId: row.event_id, settings: row.settings, createdVersion: row.created_version };
}

/** Every table of per-room data: each one with an event_id column, but the rooms' settings themselves. */
function roomDataTables(db: DatabaseSync): string[] {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name <> 'rooms'").all() as { name: string }[];
  return tables
    .map((table) => table.name)
    .filter((name) => (db.prepare('SELECT name FROM pragma_table_info(?)').all(name) as { name: string }[]).some((c) => c.name === 'event_id'));
}

function prepareStatements(db: DatabaseSync) {
  const s = (sql: string): StatementSync => db.prepare(sql);
  return {
    ping: s('SELECT 1'),
    getEvent: s('SELECT * FROM events WHERE event_id = ?'),
    insertEvent: s('INSERT OR IGNORE INTO events (event_id) VALUES (?)'),
    setServing: s('UPDATE events SET serving = ?, max_serving = ? WHERE event_id = ?'),
    setQueue: s('UPDATE events SET queue = ? WHERE event_id = ?'),
    setExpirySince: s('UPDATE events SET expiry_enabled_since = ? WHERE event_id = ?'),
    incrementTokens: s('UPDATE events SET tokens = tokens + 1 WHERE event_id = ?'),
    incrementCompleted: s('UPDATE events SET completed = completed + 1 WHERE event_id = ?'),
    incrementAbandoned: s('UPDATE events SET abandoned = abandoned + 1 WHERE event_id = ?'),
    recordExpired: s('UPDATE events SET max_expired = ?, expired = expired + ? WHERE event_id = ?'),
    zeroCounters: s(
      `UPDATE events SET queue = 0, serving = 0, max_serving = 0, tokens = 0, expired = 0, completed = 0,
       abandoned = 0, max_expired = 0, left_count = 0 WHERE event_id = ?`,
    ),
    insertPosition: s('INSERT INTO positions (event_id, position, request_id, entry_time) VALUES (?, ?, ?, ?)'),
    getPosition: s('SELECT position, entry_time FROM positions WHERE event_id = ? AND request_id = ?'),
    firstEntryAtOrAfter: s(
      `SELECT position FROM positions
       WHERE event_id = ? AND position > ? AND position <= ? AND entry_time >= ? ORDER BY position LIMIT 1`,
    ),
    deletePositions: s('DELETE FROM positions WHERE event_id = ?'),
    insertHistory: s('INSERT OR REPLACE INTO serving_history (event_id, value, reached_at) VALUES (?, ?, ?)'),
    servedAt: s(
      'SELECT reached_at FROM serving_history WHERE event_id = ? AND value >= ? ORDER BY value LIMIT 1',
    ),
    maxServedBefore: s('SELECT max(value) AS value FROM serving_history WHERE event_id = ? AND reached_at < ?'),
    deleteHistory: s('DELETE FROM serving_history WHERE event_id = ?'),
    getToken: s(
      'SELECT request_id, position, iat, nbf, exp, iss, kid, status, nonce FROM tokens WHERE event_id = ? AND request_id = ?',
    ),
    insertToken: s(
      `INSERT INTO tokens (event_id, request_id, position, iat, nbf, exp, iss, kid, status, nonce)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
    ),
    closeSession: s('UPDATE tokens SET status = ? WHERE event_id = ? AND request_id = ? AND status = 0'),
    countActive: s('SELECT count(*) AS n FROM tokens WHERE event_id = ? AND exp >= ? AND status = 0'),
    listExpired: s(
      'SELECT request_id FROM tokens WHERE event_id = ? AND exp < ? ORDER BY exp, position LIMIT ?',
    ),
    countTokensInRange: s(
      'SELECT count(*) AS n FROM tokens WHERE event_id = ? AND position > ? AND position <= ?',
    ),
    deleteTokens: s('DELETE FROM tokens WHERE event_id = ?'),
    getKeys: s(
      'SELECT kid, private_jwk, public_jwk, created_at FROM signing_keys WHERE event_id = ? ORDER BY created_at, kid',
    ),
    insertKey: s(
      'INSERT INTO signing_keys (event_id, kid, private_jwk, public_jwk, created_at) VALUES (?, ?, ?, ?, ?)',
    ),
    acquireLock: s(
      `INSERT INTO locks (name, owner, expires_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE locks.owner = excluded.owner OR locks.expires_at <= ?4`,
    ),
    getLock: s('SELECT owner FROM locks WHERE name = ?'),
    insertSecret: s('INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)'),
    getSecret: s('SELECT value FROM secrets WHERE name = ?'),
    replaceSecret: s('UPDATE secrets SET value = ? WHERE name = ? AND value = ?'),
    saveAuthorization: s(
      `INSERT OR REPLACE INTO oidc_authorizations (event_id, request_id, authorization_request)
       SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM positions WHERE event_id = ?1 AND request_id = ?2)`,
    ),
    getAuthorization: s(
      'SELECT authorization_request FROM oidc_authorizations WHERE event_id = ? AND request_id = ?',
    ),
    deleteAuthorizations: s('DELETE FROM oidc_authorizations WHERE event_id = ?'),
    // rooms at runtime
    getRoom: s('SELECT event_id, settings, created_version FROM rooms WHERE event_id = ?'),
    listRooms: s('SELECT event_id, settings, created_version FROM rooms ORDER BY created_version'),
    insertRoom: s('INSERT INTO rooms (event_id, settings, created_version) VALUES (?, ?, ?)'),
    replaceRoom: s('UPDATE rooms SET settings = ? WHERE event_id = ?'),
    deleteRoom: s('DELETE FROM rooms WHERE event_id = ?'),
    getRoomsVersion: s('SELECT version FROM rooms_version WHERE only_row = 1'),
    bumpRoomsVersion: s('UPDATE rooms_version SET version = version + 1 WHERE only_row = 1 RETURNING version'),
    // ---- leaving the queue and automatic admission ----
    isLeft: s('SELECT 1 AS found FROM left_positions WHERE event_id = ? AND position = ?'),
    insertLeft: s('INSERT INTO left_positions (event_id, position) VALUES (?, ?)'),
    incrementLeft: s('UPDATE events SET left_count = left_count + 1 WHERE event_id = ?'),
    countLeftInRange: s(
      'SELECT count(*) AS n FROM left_positions WHERE event_id = ? AND position > ? AND position <= ?',
    ),
    deleteLeft: s('DELETE FROM left_positions WHERE event_id = ?'),
    historyFromTop: s('SELECT value, reached_at FROM serving_history WHERE event_id = ? ORDER BY value DESC'),
  };
}

/** The statements of the pre-queue and the draw (tables prequeue and draws). */
function prepareDrawStatements(db: DatabaseSync) {
  const s = (sql: string): StatementSync => db.prepare(sql);
  const entryWithPosition = `SELECT p.join_order, p.request_id, p.entry_time, p.left_queue, pos.position
    FROM prequeue p LEFT JOIN positions pos ON pos.event_id = p.event_id AND pos.request_id = p.request_id`;
  return {
    insertDraw: s(
      `INSERT OR IGNORE INTO draws (event_id, state, seed, commitment, algorithm) VALUES (?, 'committed', ?, ?, ?)`,
    ),
    getDraw: s('SELECT * FROM draws WHERE event_id = ?'),
    setJoined: s('UPDATE draws SET joined = ? WHERE event_id = ?'),
    countLeft: s('UPDATE draws SET left_count = left_count + 1 WHERE event_id = ?'),
    start: s(
      `UPDATE draws SET state = 'drawing', drawn_through = ?, entry_count = ?, progress = 0, first_position = ?,
       numbered_through = ? WHERE event_id = ?`,
    ),
    setProgress: s('UPDATE draws SET progress = ? WHERE event_id = ?'),
    setNumberedThrough: s('UPDATE draws SET numbered_through = ?, state = ? WHERE event_id = ?'),
    deleteDraw: s('DELETE FROM draws WHERE event_id = ?'),
    insertEntry: s('INSERT INTO prequeue (event_id, join_order, request_id, entry_time) VALUES (?, ?, ?, ?)'),
    getEntry: s('SELECT join_order, request_id, entry_time, left_queue FROM prequeue WHERE event_id = ? AND request_id = ?'),
    getEntryWithPosition: s(`${entryWithPosition} WHERE p.event_id = ? AND p.request_id = ?`),
    readEntries: s(`${entryWithPosition} WHERE p.event_id = ? AND p.join_order > ? ORDER BY p.join_order LIMIT ?`),
    markLeft: s('UPDATE prequeue SET left_queue = 1 WHERE event_id = ? AND request_id = ?'),
    deletePrequeue: s('DELETE FROM prequeue WHERE event_id = ?'),
  };
}
