// The one base of the store decorators (the hot-read cache, the AWS composite store): every operation of the
// Store port forwarded to the store it wraps. A decorator overrides only what it changes, so a new port
// operation is forwarded by adding it here once.
//
// `peekCounters` is deliberately not forwarded: whether a decorated store can answer polls from memory is the
// decorator's decision (the hot-read cache can; a decorator over SQLite would have to say so itself).

import type { SessionStatus, TokenRecord } from '../domain/claims.ts';
import type {
  WindowCounts,
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
  SessionRenewal,
  PrequeueEntry,
  PrequeueLeave,
  RoomPutOutcome,
  Store,
  StoredRoom,
  StoredRooms,
  StoredSigningKey,
  AuditEntry,
  HistorySample,
  MinuteWaits,
} from '../domain/ports/store.ts';

export abstract class ForwardingStore implements Store {
  readonly description: string;
  protected readonly inner: Store;

  constructor(inner: Store, description: string = inner.description) {
    this.inner = inner;
    this.description = description;
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  syncExpirySwitch(eventId: string, enabled: boolean, now: number): Promise<void> {
    return this.inner.syncExpirySwitch(eventId, enabled, now);
  }

  assignPositions(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    return this.inner.assignPositions(eventId, joins);
  }

  assignPositionsIfAbsent(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    return this.inner.assignPositionsIfAbsent(eventId, joins);
  }

  getPosition(eventId: string, requestId: string): Promise<PositionRecord | null> {
    return this.inner.getPosition(eventId, requestId);
  }

  getCounters(eventId: string): Promise<Counters> {
    return this.inner.getCounters(eventId);
  }

  getServingCounter(eventId: string): Promise<number> {
    return this.inner.getServingCounter(eventId);
  }

  incrementServing(eventId: string, by: number, now: number): Promise<number> {
    return this.inner.incrementServing(eventId, by, now);
  }

  getClaimContext(eventId: string, requestId: string): Promise<ClaimContext | null> {
    return this.inner.getClaimContext(eventId, requestId);
  }

  issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult> {
    return this.inner.issueTokenIfAbsent(eventId, record);
  }

  closeSession(eventId: string, requestId: string, status: Exclude<SessionStatus, 0>): Promise<boolean> {
    return this.inner.closeSession(eventId, requestId, status);
  }

  renewSession(eventId: string, requestId: string, nowMs: number, idleBeforeMs: number | null, touch: boolean): Promise<SessionRenewal> {
    return this.inner.renewSession(eventId, requestId, nowMs, idleBeforeMs, touch);
  }

  countActiveTokens(eventId: string, now: number): Promise<number> {
    return this.inner.countActiveTokens(eventId, now);
  }

  listExpiredTokens(eventId: string, now: number, limit: number): Promise<string[]> {
    return this.inner.listExpiredTokens(eventId, now, limit);
  }

  advanceExpiry(eventId: string, cutoff: number, incrServing: boolean, now: number): Promise<ExpiryAdvance> {
    return this.inner.advanceExpiry(eventId, cutoff, incrServing, now);
  }

  resetEvent(eventId: string): Promise<void> {
    return this.inner.resetEvent(eventId);
  }

  getSigningKeys(eventId: string): Promise<StoredSigningKey[]> {
    return this.inner.getSigningKeys(eventId);
  }

  addSigningKeyIfNone(eventId: string, key: StoredSigningKey): Promise<StoredSigningKey> {
    return this.inner.addSigningKeyIfNone(eventId, key);
  }

  tryAcquireLock(name: string, owner: string, ttlMs: number, nowMs: number): Promise<boolean> {
    return this.inner.tryAcquireLock(name, owner, ttlMs, nowMs);
  }

  countInWindow(name: string, by: number, windowMs: number, nowMs: number): Promise<WindowCounts> {
    return this.inner.countInWindow(name, by, windowMs, nowMs);
  }

  useOnce(name: string, untilMs: number, nowMs: number): Promise<boolean> {
    return this.inner.useOnce(name, untilMs, nowMs);
  }

  holdUntil(name: string, untilMs: number, nowMs: number): Promise<number> {
    return this.inner.holdUntil(name, untilMs, nowMs);
  }

  claimSecret(name: string, candidate: string): Promise<string> {
    return this.inner.claimSecret(name, candidate);
  }

  replaceSecret(name: string, expected: string, next: string): Promise<string | null> {
    return this.inner.replaceSecret(name, expected, next);
  }

  saveAuthorization(eventId: string, requestId: string, authorization: string): Promise<boolean> {
    return this.inner.saveAuthorization(eventId, requestId, authorization);
  }

  getAuthorization(eventId: string, requestId: string): Promise<string | null> {
    return this.inner.getAuthorization(eventId, requestId);
  }

  // ---- leaving the queue and automatic admission ----

  leaveQueue(eventId: string, requestId: string): Promise<LeaveResult> {
    return this.inner.leaveQueue(eventId, requestId);
  }

  leftPositionsAbove(eventId: string, after: number, limit: number): Promise<number[]> {
    return this.inner.leftPositionsAbove?.(eventId, after, limit) ?? Promise.resolve([]);
  }

  incrementServingWithinQueue(eventId: string, by: number, now: number, ifServing?: number): Promise<ServingMove> {
    return this.inner.incrementServingWithinQueue(eventId, by, now, ifServing);
  }

  getAdmissionSnapshot(eventId: string, now: number, windowStart: number): Promise<AdmissionSnapshot> {
    return this.inner.getAdmissionSnapshot(eventId, now, windowStart);
  }

  // ---- Pre-queue and the draw ----

  commitDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return this.inner.commitDraw(eventId, candidate);
  }

  getDraw(eventId: string): Promise<DrawRecord | null> {
    return this.inner.getDraw(eventId);
  }

  joinPrequeue(eventId: string, joins: readonly JoinRequest[], candidate: DrawSeed): Promise<number[]> {
    return this.inner.joinPrequeue(eventId, joins, candidate);
  }

  getPrequeueEntry(eventId: string, requestId: string): Promise<PrequeueEntry | null> {
    return this.inner.getPrequeueEntry(eventId, requestId);
  }

  readPrequeue(eventId: string, afterJoinOrder: number, limit: number): Promise<PrequeueEntry[]> {
    return this.inner.readPrequeue(eventId, afterJoinOrder, limit);
  }

  startDraw(eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    return this.inner.startDraw(eventId, candidate);
  }

  numberDrawn(eventId: string, expectedProgress: number, requestIds: readonly string[]): Promise<DrawRecord | null> {
    return this.inner.numberDrawn(eventId, expectedProgress, requestIds);
  }

  numberLateArrivals(eventId: string, limit: number): Promise<DrawRecord | null> {
    return this.inner.numberLateArrivals(eventId, limit);
  }

  leavePrequeue(eventId: string, requestId: string): Promise<PrequeueLeave> {
    return this.inner.leavePrequeue(eventId, requestId);
  }

  // ---- rooms at runtime ----

  putRoom(eventId: string, settings: string): Promise<RoomPutOutcome> {
    return this.inner.putRoom(eventId, settings);
  }

  getRoom(eventId: string): Promise<StoredRoom | null> {
    return this.inner.getRoom(eventId);
  }

  listRooms(): Promise<StoredRooms> {
    return this.inner.listRooms();
  }

  roomsVersion(): Promise<number> {
    return this.inner.roomsVersion();
  }

  deleteRoomSettings(eventId: string): Promise<boolean> {
    return this.inner.deleteRoomSettings(eventId);
  }

  deleteRoomData(eventId: string): Promise<void> {
    return this.inner.deleteRoomData(eventId);
  }

  appendAudit(entry: AuditEntry): Promise<void> {
    return this.inner.appendAudit(entry);
  }

  listAudit(limit: number, beforeSeq?: number): Promise<(AuditEntry & { seq: number })[]> {
    return this.inner.listAudit(limit, beforeSeq);
  }

  recordHistory(eventId: string, sample: HistorySample, keepSeconds: number): Promise<void> {
    return this.inner.recordHistory(eventId, sample, keepSeconds);
  }

  readHistory(eventId: string, fromMinute: number, toMinute: number): Promise<HistorySample[]> {
    return this.inner.readHistory(eventId, fromMinute, toMinute);
  }

  addWaits(eventId: string, waits: MinuteWaits, keepSeconds: number): Promise<void> {
    return this.inner.addWaits(eventId, waits, keepSeconds);
  }

  readWaits(eventId: string, fromMinute: number, toMinute: number): Promise<MinuteWaits[]> {
    return this.inner.readWaits(eventId, fromMinute, toMinute);
  }
}
