// What moves the line on its own (QueueStore: advanceExpiry, getAdmissionSnapshot): the expiry job's step, which
// records unclaimed positions as expired (and may move the serving counter past them), and the one read an
// automatic admission tick decides on. Both count, among the positions the counter has reached, those that hold
// a token set (token-sets.ts) or were left (leaving.ts); they own no table (the expiry step also reads positions'
// entry times).

import type { AdmissionSnapshot, ExpiryAdvance } from '../../domain/ports/store.ts';
import { prepareAll, type Prepared, type SqliteConnection } from './connection.ts';
import type { SqliteCounters } from './counters.ts';
import type { SqliteLeaving } from './leaving.ts';
import type { SqliteTokenSets } from './token-sets.ts';

const SQL = {
  firstEntryAtOrAfter: `SELECT position FROM positions
     WHERE event_id = ? AND position > ? AND position <= ? AND entry_time >= ? ORDER BY position LIMIT 1`,
};

export class SqliteAdmission {
  private readonly connection: SqliteConnection;
  private readonly counters: SqliteCounters;
  private readonly tokenSets: SqliteTokenSets;
  private readonly leaving: SqliteLeaving;
  private readonly sql: Prepared<typeof SQL>;

  constructor(connection: SqliteConnection, counters: SqliteCounters, tokenSets: SqliteTokenSets, leaving: SqliteLeaving) {
    this.connection = connection;
    this.counters = counters;
    this.tokenSets = tokenSets;
    this.leaving = leaving;
    this.sql = prepareAll(connection.db, SQL);
  }

  async advanceExpiry(eventId: string, cutoff: number, incrServing: boolean, now: number): Promise<ExpiryAdvance> {
    return this.connection.transaction(eventId, (): ExpiryAdvance => {
      const row = this.counters.ensure(eventId);
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
      const reached = this.counters.sql.maxServedBefore.get(eventId, cutoff) as { value: number | null };
      if (reached.value === null) return unchanged;
      const upper = Math.min(reached.value, row.queue);
      if (upper <= row.max_expired) return unchanged;
      // Positions expire in order: stop at the first one that joined at or after the cutoff.
      const firstTooRecent = this.sql.firstEntryAtOrAfter.get(eventId, row.max_expired, upper, cutoff) as
        | { position: number }
        | undefined;
      const newMax = firstTooRecent === undefined ? upper : firstTooRecent.position - 1;
      if (newMax <= row.max_expired) return unchanged;
      const claimed = this.tokenSets.countInRange(eventId, row.max_expired, newMax);
      const left = this.leaving.countInRange(eventId, row.max_expired, newMax);
      const unclaimed = newMax - row.max_expired - claimed - left;
      this.counters.sql.recordExpired.run(newMax, unclaimed, eventId);
      let serving = row.serving;
      if (incrServing && unclaimed > 0) {
        // Never past the queue, never backwards (incrementServingWithinQueue).
        serving = Math.max(row.serving, Math.min(row.serving + unclaimed, row.queue));
        if (serving !== row.serving) this.counters.setServing(eventId, row, serving, now);
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

  async getAdmissionSnapshot(eventId: string, now: number, windowStart: number): Promise<AdmissionSnapshot> {
    if (this.connection.purges.has(eventId)) await this.connection.purges.get(eventId);
    // Statements run one after another with nothing in between: this process is the database's only writer.
    const row = this.counters.row(eventId);
    const admitted = Math.min(row.serving, row.queue);
    let awaitingClaim = 0;
    if (admitted > row.max_expired) {
      const claimed = this.tokenSets.countInRange(eventId, row.max_expired, admitted);
      const left = this.leaving.countInRange(eventId, row.max_expired, admitted);
      awaitingClaim = admitted - row.max_expired - claimed - left;
    }
    return {
      queue: row.queue,
      serving: row.serving,
      reachedInWindow: this.counters.reachedSince(eventId, row.max_serving, windowStart),
      reachedThisSecond: this.counters.reachedSince(eventId, row.max_serving, now),
      awaitingClaim,
      activeSessions: this.tokenSets.activeCount(eventId, now),
    };
  }
}
