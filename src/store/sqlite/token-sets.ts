// Token sets and their sessions (QueueStore: getClaimContext, issueTokenIfAbsent, closeSession, renewSession,
// countActiveTokens, listExpiredTokens): the `tokens` table, keyed by (event_id, position), and each event's
// count of open sessions by exp in memory (active-tokens.ts). A claim reads everything it decides on in one
// statement (CLAIM_ROW_SQL), and first claims are written by group commit, one transaction per event-loop turn.

import type { SessionStatus, TokenRecord } from '../../domain/claims.ts';
import type { ClaimContext, IssueResult, SessionRenewal } from '../../domain/ports/store.ts';
import { ActiveTokens } from './active-tokens.ts';
import { prepareAll, type EventMemory, type Prepared, type SqliteConnection } from './connection.ts';
import type { EventRow, SqliteCounters } from './counters.ts';
import type { SqlitePositions } from './positions.ts';

/**
 * A claim's reads in one statement (findClaimRow; ?1 the event, ?2 the position): the position's row, when the
 * counter first reached it, whether it was left, and its token set, whose columns are NULL when it has none.
 */
export const CLAIM_ROW_SQL = `SELECT p.request_id AS position_request_id, p.position AS at, p.entry_time,
    (SELECT reached_at FROM serving_history WHERE event_id = ?1 AND value >= ?2 ORDER BY value LIMIT 1) AS served_at,
    EXISTS (SELECT 1 FROM left_positions WHERE event_id = ?1 AND position = ?2) AS is_left,
    t.request_id, t.position, t.iat, t.nbf, t.exp, t.iss, t.kid, t.status, t.nonce, t.signatures
  FROM positions p LEFT JOIN tokens t ON t.event_id = ?1 AND t.position = ?2
  WHERE p.event_id = ?1 AND p.position = ?2`;

const SQL = {
  claimRow: CLAIM_ROW_SQL,
  getToken:
    'SELECT request_id, position, iat, nbf, exp, iss, kid, status, nonce, signatures FROM tokens WHERE event_id = ? AND position = ?',
  insertToken: `INSERT INTO tokens (event_id, request_id, position, iat, nbf, exp, iss, kid, status, nonce, signatures)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
  // issueOne's common case: the position (?3) is the request's (?2), has no token set and was not given up.
  insertTokenIfFree: `INSERT INTO tokens (event_id, request_id, position, iat, nbf, exp, iss, kid, status, nonce, signatures)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0, ?9, ?10
     WHERE EXISTS (SELECT 1 FROM positions WHERE event_id = ?1 AND position = ?3 AND request_id = ?2)
       AND NOT EXISTS (SELECT 1 FROM left_positions WHERE event_id = ?1 AND position = ?3)
     ON CONFLICT (event_id, position) DO NOTHING`,
  closeSession: 'UPDATE tokens SET status = ? WHERE event_id = ? AND position = ? AND status = 0',
  // Read once at open (active-tokens.ts); countActiveTokens is answered from memory.
  openSessionsByExp: 'SELECT event_id, exp, count(*) AS n FROM tokens WHERE status = 0 GROUP BY event_id, exp',
  sessionSeen: 'SELECT status, iat, exp, last_seen_ms FROM tokens WHERE event_id = ? AND position = ?',
  touchSession: 'UPDATE tokens SET last_seen_ms = ? WHERE event_id = ? AND position = ?',
  listExpired: 'SELECT request_id FROM tokens WHERE event_id = ? AND exp < ? ORDER BY exp, position LIMIT ?',
  countTokensInRange: 'SELECT count(*) AS n FROM tokens WHERE event_id = ? AND position > ? AND position <= ?',
};

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
  signatures: string | null;
}

/** findClaimRow's row: the position's, with its token's columns (all NULL when it has no token set). */
interface ClaimRow extends Omit<TokenRow, 'position'> {
  position_request_id: string;
  at: number;
  entry_time: number;
  served_at: number | null;
  is_left: 0 | 1;
  /** The token's position: NULL when the position has no token set. */
  position: number | null;
}

/** The values of insertToken and insertTokenIfFree, in their order: a set of `record` at `position`. */
function tokenColumns(eventId: string, record: TokenRecord, position: number): [string, string, number, number, number, number, string, string, string | null, string | null] {
  const { requestId, iat, nbf, exp, iss, kid } = record;
  return [eventId, requestId, position, iat, nbf, exp, iss, kid, record.nonce ?? null, record.signatures ?? null];
}

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
    signatures: row.signatures ?? undefined,
  };
}

export class SqliteTokenSets implements EventMemory {
  private readonly connection: SqliteConnection;
  private readonly counters: SqliteCounters;
  private readonly positions: SqlitePositions;
  readonly sql: Prepared<typeof SQL>;
  /** Each event's open sessions by exp (active-tokens.ts): countActiveTokens without a scan. Built at open. */
  private readonly active = new Map<string, ActiveTokens>();
  /** Token issues waiting for the next group commit (issueTokenIfAbsent). */
  private readonly pendingIssues: {
    eventId: string;
    record: TokenRecord;
    resolve: (result: IssueResult) => void;
    reject: (error: unknown) => void;
  }[] = [];

  constructor(connection: SqliteConnection, counters: SqliteCounters, positions: SqlitePositions) {
    this.connection = connection;
    this.counters = counters;
    this.positions = positions;
    this.sql = prepareAll(connection.db, SQL);
    connection.rememberPerEvent(this);
  }

  /** Counts the open sessions by exp from the table. */
  load(): void {
    for (const row of this.sql.openSessionsByExp.iterate() as Iterable<{ event_id: string; exp: number; n: number }>) {
      this.activeOf(row.event_id).opened(row.exp, row.n);
    }
  }

  forget(eventId: string): void {
    this.active.delete(eventId);
  }

  private activeOf(eventId: string): ActiveTokens {
    let counter = this.active.get(eventId);
    if (!counter) this.active.set(eventId, (counter = new ActiveTokens()));
    return counter;
  }

  /** Whether a token set was issued for the position (inside the caller's transaction, or at one instant). */
  issuedAt(eventId: string, position: number): boolean {
    return this.sql.getToken.get(eventId, position) !== undefined;
  }

  /**
   * What a claim reads of the position held by `requestId` (through the in-memory index), in ONE statement: the
   * position's row, when the counter first reached it, its token set and whether it was given up. Four
   * statements before: the one costs 0.6× their CPU at 20k and at 1M token sets (bench/claim-read.ts).
   */
  private findClaimRow(eventId: string, requestId: string): ClaimRow | undefined {
    for (const position of this.positions.candidates(eventId, requestId)) {
      const row = this.sql.claimRow.get(eventId, position) as ClaimRow | undefined;
      if (row?.position_request_id === requestId) return row;
    }
    return undefined;
  }

  async getClaimContext(eventId: string, requestId: string): Promise<ClaimContext | null> {
    if (this.connection.purges.has(eventId)) await this.connection.purges.get(eventId);
    const claim = this.findClaimRow(eventId, requestId);
    if (!claim) return null;
    const row = this.counters.row(eventId);
    return {
      position: claim.at,
      entryTime: claim.entry_time,
      serving: row.serving,
      servedAt: claim.served_at,
      expiryEnabledSince: row.expiry_enabled_since,
      maxExpired: row.max_expired,
      token: claim.position === null ? null : toTokenRecord(claim as TokenRow),
      left: claim.is_left === 1,
    };
  }

  /**
   * Group commit, like the joins (issue 15): every issue asked for in the same event-loop turn is written in ONE
   * transaction (one fsync), each still decided on its own and atomically; before, every first claim paid its own
   * fsync on the event loop, which capped token issue at a few hundred sets/s whatever the signing cost.
   */
  async issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult> {
    if (this.connection.purges.has(eventId)) await this.connection.purges.get(eventId);
    return new Promise<IssueResult>((resolve, reject) => {
      this.pendingIssues.push({ eventId, record, resolve, reject });
      if (this.pendingIssues.length === 1) setImmediate(() => void this.commitIssues());
    });
  }

  /** Commits every issue asked for so far, in one transaction; then answers each (close() calls it too). */
  async commitIssues(): Promise<void> {
    const batch = this.pendingIssues.splice(0);
    if (batch.length === 0) return;
    let results: IssueResult[];
    try {
      results = await this.connection.transaction(null, () => {
        for (const { eventId } of batch) this.connection.forgetCached(eventId);
        // Per event of the batch: its counters row, read once (nothing in the batch changes max_expired), and
        // the sets issued, added to its token count by one UPDATE at the end (profile of a first-claim storm:
        // one read and one write of the events row per claim were ~10 % of the batch's statements).
        const events = new Map<string, { row: EventRow; issued: number }>();
        const results = batch.map(({ eventId, record }) => {
          let event = events.get(eventId);
          if (!event) events.set(eventId, (event = { row: this.counters.row(eventId), issued: 0 }));
          const result = this.issueOne(eventId, event.row, record);
          if (result.outcome === 'issued') event.issued++;
          return result;
        });
        for (const [eventId, { issued }] of events) if (issued > 0) this.counters.sql.addTokens.run(issued, eventId);
        return results;
      }, {
        committed: (results) =>
          batch.forEach(({ eventId, record }, i) => {
            if (results[i]?.outcome === 'issued') this.activeOf(eventId).opened(record.exp);
          }),
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach(({ resolve }, i) => resolve(results[i] as IssueResult));
  }

  /**
   * One issueTokenIfAbsent, inside the batch's transaction. The common case in one statement: the record's
   * position is still the visitor's, has no token set and was not given up, and the set is inserted. Anything else
   * (a concurrent claim, a leave, a reset in between) inserts nothing and is told apart by the full read below;
   * the one statement costs less than that read (bench/claim-cost.ts).
   */
  private issueOne(eventId: string, row: EventRow, record: TokenRecord): IssueResult {
    if (record.position > row.max_expired) {
      const inserted = this.sql.insertTokenIfFree.run(...tokenColumns(eventId, record, record.position)).changes;
      if (Number(inserted) === 1) return { outcome: 'issued', record: { ...record, status: 0 } };
    }
    const claim = this.findClaimRow(eventId, record.requestId);
    if (!claim) return { outcome: 'no-position' };
    if (claim.position !== null) return { outcome: 'existing', record: toTokenRecord(claim as TokenRow) };
    if (claim.is_left === 1) return { outcome: 'left' };
    if (claim.at <= row.max_expired) return { outcome: 'expired' };
    this.sql.insertToken.run(...tokenColumns(eventId, record, claim.at));
    return { outcome: 'issued', record: { ...record, position: claim.at, status: 0 } };
  }

  async closeSession(eventId: string, requestId: string, status: Exclude<SessionStatus, 0>): Promise<boolean> {
    const closedExp = await this.connection.transaction(eventId, (): number | null => {
      const found = this.positions.find(eventId, requestId);
      if (!found) return null;
      const changed = this.sql.closeSession.run(status, eventId, found.position).changes;
      if (Number(changed) !== 1) return null;
      (status === 1 ? this.counters.sql.incrementCompleted : this.counters.sql.incrementAbandoned).run(eventId);
      return (this.sql.getToken.get(eventId, found.position) as unknown as TokenRow).exp;
    }, {
      committed: (exp) => {
        if (exp !== null) this.activeOf(eventId).closed(exp);
      },
    });
    return closedExp !== null;
  }

  async renewSession(eventId: string, requestId: string, nowMs: number, idleBeforeMs: number | null, touch: boolean): Promise<SessionRenewal> {
    let endedExp: number | null = null;
    return this.connection.transaction(eventId, (): SessionRenewal => {
      const found = this.positions.find(eventId, requestId);
      if (!found) return { outcome: 'no-session' };
      const row = this.sql.sessionSeen.get(eventId, found.position) as { status: number; iat: number; exp: number; last_seen_ms: number | null } | undefined;
      if (!row) return { outcome: 'no-session' };
      if (row.status !== 0) return { outcome: 'closed' };
      const lastSeen = row.last_seen_ms ?? row.iat * 1000;
      if (idleBeforeMs !== null && lastSeen < idleBeforeMs) {
        this.sql.closeSession.run(-1, eventId, found.position);
        this.counters.sql.incrementAbandoned.run(eventId);
        endedExp = row.exp;
        return { outcome: 'ended' };
      }
      if (touch && nowMs > lastSeen) {
        this.sql.touchSession.run(nowMs, eventId, found.position);
        return { outcome: 'open', lastSeen: nowMs };
      }
      return { outcome: 'open', lastSeen };
    }, {
      // The in-memory count of open sessions follows the commit, as closeSession's does.
      committed: () => {
        if (endedExp !== null) this.activeOf(eventId).closed(endedExp);
      },
    });
  }

  async countActiveTokens(eventId: string, now: number): Promise<number> {
    return this.activeCount(eventId, now);
  }

  /** countActiveTokens at once (the admission snapshot reads it in the same synchronous stretch as the rest). */
  activeCount(eventId: string, now: number): number {
    return this.active.get(eventId)?.count(now) ?? 0;
  }

  async listExpiredTokens(eventId: string, now: number, limit: number): Promise<string[]> {
    if (this.connection.purges.has(eventId)) await this.connection.purges.get(eventId);
    return (this.sql.listExpired.all(eventId, now, limit) as { request_id: string }[]).map((r) => r.request_id);
  }

  /** Token sets issued for positions in (after, through]. */
  countInRange(eventId: string, after: number, through: number): number {
    return (this.sql.countTokensInRange.get(eventId, after, through) as { n: number }).n;
  }
}
