// Hot reads served from process memory: the counters behind /serving_num and /waiting_num (and the
// metrics gauges) are read from the store at most once per `ttlMs` per event, however many visitors poll.
// Used in front of a shared store (Redis), where every read is a network round trip; the SQLite store keeps
// an exact copy of its counters itself, being the database's only writer.
//
// Freshness: a value is at most `ttlMs` older than the read that fetched it (its age counts from when that
// read was sent). Concurrent misses share one read. Every write this process makes to an event drops the
// event's entry and discards any read already in flight, so this node's own writes are visible at once
// (the operator's control panel moves the counter and reads it back); writes by other nodes show within
// `ttlMs`. A failed read is not cached: each later miss tries the store again.

import type { SessionStatus, TokenRecord } from '../domain/claims.ts';
import type {
  Counters,
  DrawRecord,
  DrawSeed,
  ExpiryAdvance,
  IssueResult,
  JoinRequest,
  LeaveResult,
  ServingMove,
  SessionRenewal,
  Store,
} from '../domain/ports/store.ts';
import { ForwardingStore } from './forwarding-store.ts';

/** The longest TTL accepted: a poller must see the counter move within a few seconds. */
export const MAX_HOT_READ_TTL_MS = 5000;
export const DEFAULT_HOT_READ_TTL_MS = 250;

export interface HotReadCacheOptions {
  ttlMs: number;
  /** Monotonic milliseconds; tests pass their own. */
  nowMs?: () => number;
}

interface Entry {
  /** Bumped by every write of this process to the event: a read started before it is not kept. */
  generation: number;
  value?: Counters;
  fetchedAt?: number;
  pending?: Promise<Counters>;
}

/** Wraps `store` with the cache, or returns it unchanged when ttlMs is 0. */
export function withHotReadCache(store: Store, options: HotReadCacheOptions): Store {
  if (options.ttlMs <= 0) return store;
  return new HotReadCache(store, options);
}

export class HotReadCache extends ForwardingStore {
  private readonly ttlMs: number;
  private readonly nowMs: () => number;
  private readonly entries = new Map<string, Entry>();
  /** The wrapped store's confirmation of a kept token set (Redis: a read of the set's field), when it has one. */
  readonly confirmTokenSet?: Store['confirmTokenSet'];

  constructor(store: Store, options: HotReadCacheOptions) {
    super(store);
    if (!(options.ttlMs > 0 && options.ttlMs <= MAX_HOT_READ_TTL_MS)) {
      throw new RangeError(`hot-read TTL must be 1–${MAX_HOT_READ_TTL_MS} ms (got ${options.ttlMs})`);
    }
    this.ttlMs = options.ttlMs;
    this.nowMs = options.nowMs ?? (() => performance.now());
    if (store.confirmTokenSet) this.confirmTokenSet = store.confirmTokenSet.bind(store);
  }

  // ---- cached reads ----

  override async getCounters(eventId: string): Promise<Counters> {
    return { ...(await this.counters(eventId)) };
  }

  override async getServingCounter(eventId: string): Promise<number> {
    return (await this.counters(eventId)).serving;
  }

  peekCounters(eventId: string): Counters | undefined {
    const entry = this.entries.get(eventId);
    if (entry?.value && entry.fetchedAt !== undefined && this.nowMs() - entry.fetchedAt < this.ttlMs) return entry.value;
    // Stale or missing: start the refresh now so the next poll finds it; this one takes the slow path.
    void Promise.resolve(this.counters(eventId)).catch(() => {});
    return undefined;
  }

  /** The cached value itself (callers copy it before handing it out). */
  private counters(eventId: string): Counters | Promise<Counters> {
    let entry = this.entries.get(eventId);
    if (!entry) this.entries.set(eventId, (entry = { generation: 0 }));
    if (entry.value && entry.fetchedAt !== undefined && this.nowMs() - entry.fetchedAt < this.ttlMs) {
      return entry.value;
    }
    entry.pending ??= this.refresh(eventId, entry);
    return entry.pending;
  }

  private async refresh(eventId: string, entry: Entry): Promise<Counters> {
    const generation = entry.generation;
    const sentAt = this.nowMs();
    try {
      const value = await this.inner.getCounters(eventId);
      if (entry.generation === generation) {
        entry.value = value;
        entry.fetchedAt = sentAt;
      }
      return value;
    } finally {
      if (entry.generation === generation) entry.pending = undefined;
    }
  }

  /** Called once a write of this process to the event has finished (or failed: it may have landed). */
  private invalidate(eventId: string): void {
    const entry = this.entries.get(eventId);
    if (!entry) return;
    entry.generation += 1;
    entry.value = undefined;
    entry.fetchedAt = undefined;
    entry.pending = undefined;
  }

  private async write<T>(eventId: string, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } finally {
      this.invalidate(eventId);
    }
  }

  // ---- writes: drop this event's entry ----

  override syncExpirySwitch(eventId: string, enabled: boolean, now: number): Promise<void> {
    return this.write(eventId, () => this.inner.syncExpirySwitch(eventId, enabled, now));
  }

  override assignPositions(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    return this.write(eventId, () => this.inner.assignPositions(eventId, joins));
  }

  override assignPositionsIfAbsent(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    return this.write(eventId, () => this.inner.assignPositionsIfAbsent(eventId, joins));
  }

  override incrementServing(eventId: string, by: number, now: number): Promise<number> {
    return this.write(eventId, () => this.inner.incrementServing(eventId, by, now));
  }

  override issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult> {
    return this.write(eventId, () => this.inner.issueTokenIfAbsent(eventId, record));
  }

  override renewSession(eventId: string, requestId: string, nowMs: number, idleBeforeMs: number | null, touch: boolean): Promise<SessionRenewal> {
    // Only an idle session's end changes the counters (abandoned).
    if (idleBeforeMs === null) return this.inner.renewSession(eventId, requestId, nowMs, idleBeforeMs, touch);
    return this.write(eventId, () => this.inner.renewSession(eventId, requestId, nowMs, idleBeforeMs, touch));
  }

  override closeSession(eventId: string, requestId: string, status: Exclude<SessionStatus, 0>): Promise<boolean> {
    return this.write(eventId, () => this.inner.closeSession(eventId, requestId, status));
  }

  override advanceExpiry(eventId: string, cutoff: number, incrServing: boolean, now: number): Promise<ExpiryAdvance> {
    return this.write(eventId, () => this.inner.advanceExpiry(eventId, cutoff, incrServing, now));
  }

  override resetEvent(eventId: string): Promise<void> {
    return this.write(eventId, () => this.inner.resetEvent(eventId));
  }

  // leaving the queue and automatic admission
  override leaveQueue(eventId: string, requestId: string): Promise<LeaveResult> {
    return this.write(eventId, () => this.inner.leaveQueue(eventId, requestId));
  }

  override incrementServingWithinQueue(eventId: string, by: number, now: number, ifServing?: number): Promise<ServingMove> {
    return this.write(eventId, () => this.inner.incrementServingWithinQueue(eventId, by, now, ifServing));
  }

  // The pre-queue and the draw move the queue counter when they number entries.

  override joinPrequeue(eventId: string, joins: readonly JoinRequest[], candidate: DrawSeed): Promise<number[]> {
    return this.write(eventId, () => this.inner.joinPrequeue(eventId, joins, candidate));
  }

  override numberDrawn(eventId: string, expectedProgress: number, requestIds: readonly string[]): Promise<DrawRecord | null> {
    return this.write(eventId, () => this.inner.numberDrawn(eventId, expectedProgress, requestIds));
  }

  override numberLateArrivals(eventId: string, limit: number): Promise<DrawRecord | null> {
    return this.write(eventId, () => this.inner.numberLateArrivals(eventId, limit));
  }

  // rooms at runtime: deleting a room deletes its counters
  override deleteRoomData(eventId: string): Promise<void> {
    return this.write(eventId, () => this.inner.deleteRoomData(eventId));
  }

  override close(): Promise<void> {
    this.entries.clear();
    return super.close();
  }
}
