// Reports: what the operator reads about a room — its counters and figures (the control panel), the metrics
// events, the minute-by-minute history and the after-event report with its wait histograms, the audit log of
// the private API, and whether the store answers (/readyz). Sealed: the private routes, the metrics, the jobs
// and the gate's page call these methods and never reach the store.

import { rateWindowStart } from '../admission/automatic.ts';
import type { BotDefence, BotDefenceOutcome } from '../bot-defence.ts';
import { Errors } from '../errors.ts';
import type { EventPublisher } from '../ports/events.ts';
import type { AuditEntry, AuditStore, Counters, DrawStore, HistoryStore, QueueStore, Store } from '../ports/store.ts';
import { roomFigures, type RoomFigures } from '../room-figures.ts';
import { readPrequeueNum } from '../prequeue-figures.ts';
import { reportMinutes, reportTotals, type ReportMinute, type ReportTotals } from '../room-report.ts';
import type { PresenceTracker } from '../presence.ts';
import type { PresenceFigures } from '../presence-figures.ts';
import type { EstimateAccuracy, WaitEstimates } from '../wait-estimates.ts';
import type { WaitTally } from '../wait-histogram.ts';
import { ok, waitingOf, type Answer, type RoomContext } from './room-context.ts';

/** Entries read at a time when the audit log is filtered by room. */
const AUDIT_SCAN_CHUNK = 1_000;

export type ReportStoreUsed = Pick<QueueStore, 'getCounters' | 'countActiveTokens' | 'getAdmissionSnapshot'> &
  Pick<DrawStore, 'getDraw'> &
  HistoryStore &
  AuditStore &
  Pick<Store, 'ping' | 'description'>;

export interface ReportServiceDeps {
  store: ReportStoreUsed;
  context: RoomContext;
  events: EventPublisher;
  botDefence: BotDefence;
  estimates: WaitEstimates;
  waitTally: WaitTally;
  /** The presence figures of a room (../presence.ts, issue 34). */
  presence: Pick<PresenceTracker, 'figures'>;
}

export class ReportService {
  private readonly store: ReportStoreUsed;
  private readonly context: RoomContext;
  private readonly events: EventPublisher;
  private readonly botDefence: BotDefence;
  private readonly estimates: WaitEstimates;
  private readonly waitTally: WaitTally;

  private readonly presence: Pick<PresenceTracker, 'figures'>;

  constructor(deps: ReportServiceDeps) {
    this.store = deps.store;
    this.presence = deps.presence;
    this.context = deps.context;
    this.events = deps.events;
    this.botDefence = deps.botDefence;
    this.estimates = deps.estimates;
    this.waitTally = deps.waitTally;
  }

  async counters(eventId: string): Promise<Counters & { waiting: number; activeTokens: number }> {
    const counters = await this.store.getCounters(eventId);
    const activeTokens = await this.store.countActiveTokens(eventId, this.context.now());
    return { ...counters, waiting: waitingOf(counters), activeTokens };
  }

  /**
   * The room's figures for the control panel (GET /private/rooms/{event_id}/figures, ../room-figures.ts): the
   * counters and the admission snapshot, read now. A room this node does not serve → 404.
   */
  async roomFigures(
    eventId: unknown,
  ): Promise<Answer<RoomFigures & { estimate_accuracy: EstimateAccuracy; presence: PresenceFigures; bot_defence?: Record<BotDefenceOutcome, number> }>> {
    const room = this.context.catalog.get(eventId);
    if (!room) throw Errors.unknownRoom();
    const now = this.context.now();
    const [counters, snapshot, phase, prequeue] = await Promise.all([
      this.store.getCounters(room.event_id),
      this.store.getAdmissionSnapshot(room.event_id, now, rateWindowStart(now)),
      this.context.phaseOf(room),
      readPrequeueNum(this.store, room),
    ]);
    return ok({
      ...roomFigures(room.event_id, phase, counters, snapshot, prequeue),
      estimate_accuracy: this.estimates.accuracy(room.event_id),
      presence: await this.presence.figures(room, snapshot),
      // What the bot defence did here (this node, since it started), for a room that has one.
      ...(room.bot_defence ? { bot_defence: this.botDefence.tally(room.event_id) } : {}),
    });
  }

  /** People in the room's pre-queue, waiting for the draw (../prequeue-figures.ts); 0 for a room unknown here. */
  async prequeueNum(eventId: string): Promise<number> {
    const room = this.context.catalog.get(eventId);
    return room ? readPrequeueNum(this.store, room) : 0;
  }

  /** One tick of the metrics job for one event (only when events generation is on, and the room still served). */
  async emitMetrics(eventId: string): Promise<void> {
    const event = this.context.catalog.get(eventId);
    if (!event?.enable_events_generation) return;
    const c = await this.counters(eventId);
    this.events.publish('waiting_room_metrics', {
      event_id: eventId,
      num_active_tokens: c.activeTokens,
      total_num_tokens: c.tokens,
      queue_counter: c.queue,
      serving_number: c.serving,
      completed_sessions: c.completed,
      abandoned_sessions: c.abandoned,
      expired_queue_positions: c.expired,
      waiting_num: c.waiting,
    });
  }

  /**
   * Keeps every room's counters at the current minute in its history (the history job, once a minute across
   * nodes), dropping samples older than `keepSeconds`.
   */
  async recordHistory(keepSeconds: number): Promise<void> {
    const now = this.context.now();
    const minute = now - (now % 60);
    for (const room of this.context.catalog.all()) {
      const eventId = room.event_id;
      const [counters, active, prequeue] = await Promise.all([
        this.store.getCounters(eventId),
        this.store.countActiveTokens(eventId, now),
        readPrequeueNum(this.store, room),
      ]);
      const { present_waiting, absent_waiting, no_shows, late_arrivals } = await this.presence.figures(room, { activeSessions: active });
      const presence = { present_waiting, absent_waiting, no_shows, late_arrivals };
      await this.store.recordHistory(eventId, { minute, counters, active, prequeue, presence }, keepSeconds);
    }
    await this.flushWaits(keepSeconds);
  }

  /**
   * Adds this node's wait tallies to the store's histograms (every node, every few seconds, and at close).
   * Tallies the store could not take are kept for the next flush.
   */
  async flushWaits(keepSeconds: number): Promise<void> {
    const entries = this.waitTally.drain();
    for (let i = 0; i < entries.length; i++) {
      const { eventId, waits } = entries[i]!;
      try {
        await this.store.addWaits(eventId, waits, keepSeconds);
      } catch (error) {
        this.waitTally.restore(entries.slice(i));
        throw error;
      }
    }
  }

  /** The room's after-event report, minute by minute, for the minutes from `from` to `to` (epoch seconds). */
  async roomReport(
    eventId: string,
    from: number,
    to: number,
  ): Promise<{ status: 200; body: { event_id: string; from: number; to: number; totals: ReportTotals; minutes: ReportMinute[] } }> {
    if (!this.context.catalog.get(eventId)) throw Errors.unknownRoom();
    const first = from - (from % 60);
    // One sample before the range gives its first minute's movements.
    const [samples, waits] = await Promise.all([this.store.readHistory(eventId, first - 60, to), this.store.readWaits(eventId, first, to)]);
    const previous = samples[0] && samples[0].minute < first ? samples.shift() : undefined;
    const minutes = reportMinutes(samples, previous, waits);
    return { status: 200, body: { event_id: eventId, from, to, totals: reportTotals(minutes, waits), minutes } };
  }

  /** Keeps one private-API change in the audit log (who, from where, what, before and after). */
  async recordChange(entry: Omit<AuditEntry, 'at'>): Promise<void> {
    await this.store.appendAudit({ at: this.context.clock(), ...entry });
  }

  /**
   * The audit log, newest first: at most `limit` entries older than `beforeSeq`; of one room when `eventId` is
   * given (the log is read back in chunks until `limit` of the room's entries are found or the log ends: it keeps
   * AUDIT_LOG_KEEP entries at most, so one call reads that many at worst).
   */
  async auditLog(limit: number, beforeSeq?: number, eventId?: string): Promise<(AuditEntry & { seq: number })[]> {
    if (eventId === undefined) return this.store.listAudit(limit, beforeSeq);
    const found: (AuditEntry & { seq: number })[] = [];
    let before = beforeSeq;
    for (;;) {
      const chunk = await this.store.listAudit(AUDIT_SCAN_CHUNK, before);
      for (const entry of chunk) {
        if (entry.event_id !== eventId) continue;
        found.push(entry);
        if (found.length === limit) return found;
      }
      if (chunk.length < AUDIT_SCAN_CHUNK) return found;
      before = chunk.at(-1)!.seq;
    }
  }

  /** Throws when the store cannot be reached (/readyz). */
  async checkStore(): Promise<void> {
    await this.store.ping();
  }

  /** The store's name for logs and /readyz (no credentials). */
  get storeDescription(): string {
    return this.store.description;
  }
}
