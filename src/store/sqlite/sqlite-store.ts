// Embedded store on Node's built-in SQLite (node:sqlite). One process owns the database file; every
// mutating method is one transaction. WAL journal; `synchronous` FULL by default so an acknowledged join
// survives a power loss as well as a kill -9 (NORMAL survives kill -9 only; see docs/operations.md).

import { chmodSync, readFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { SessionStatus, TokenRecord } from '../../domain/claims.ts';
import type {
  ClaimContext,
  Counters,
  ExpiryAdvance,
  IssueResult,
  JoinRequest,
  PositionRecord,
  Store,
  StoredSigningKey,
} from '../../domain/ports/store.ts';

const SCHEMA = readFileSync(new URL('./schema.sql', import.meta.url), 'utf8');

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
  };
}

export class SqliteStore implements Store {
  readonly description: string;
  private readonly db: DatabaseSync;
  private readonly sql: ReturnType<typeof prepareStatements>;
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
    this.sql = prepareStatements(this.db);
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
    return this.transaction(eventId, () => {
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
    });
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
      const unclaimed = newMax - row.max_expired - claimed;
      this.sql.recordExpired.run(newMax, unclaimed, eventId);
      let serving = row.serving;
      if (incrServing && unclaimed > 0) {
        serving = row.serving + unclaimed;
        this.setServing(eventId, row, serving, now);
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
      this.sql.zeroCounters.run(eventId);
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

  async saveAuthorization(eventId: string, requestId: string, authorization: string): Promise<boolean> {
    // One statement, so the position check and the write are one atomic unit.
    return Number(this.sql.saveAuthorization.run(eventId, requestId, authorization).changes) === 1;
  }

  async getAuthorization(eventId: string, requestId: string): Promise<string | null> {
    const row = this.sql.getAuthorization.get(eventId, requestId) as { authorization_request: string } | undefined;
    return row?.authorization_request ?? null;
  }
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
       abandoned = 0, max_expired = 0 WHERE event_id = ?`,
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
  };
}
