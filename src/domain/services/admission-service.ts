// Admission as a capability: every move of the serving counter goes through the one Admission
// (../admission/admission.ts) — the manual increment of the private API, the inlets' ticks and reports, the expiry
// job, the admission job — and the reset, which zeroes the counter with everything else. Sealed: the private
// routes, the inlets (src/inlet), the jobs (src/app.ts, src/aws/jobs.ts) call these methods.

import type { Admission, AdmissionRequest, AdmissionResults } from '../admission/admission.ts';
import type { AutomaticTickOutcome } from '../admission/automatic.ts';
import type { QueueStore } from '../ports/store.ts';
import { ok, type Answer, type RoomContext } from './room-context.ts';

export interface AdmissionServiceDeps {
  store: Pick<QueueStore, 'resetEvent'>;
  context: RoomContext;
  admission: Admission;
  /** Forgets what this process holds in memory of the room (estimates, its draw) once a reset is durable. */
  forgetRoomState: (eventId: string) => void;
  /** Called after a reset is durable (the CDN purge hook); its failures are its own business. */
  afterReset?: ((eventId: string) => Promise<void>) | undefined;
}

export class AdmissionService {
  private readonly store: Pick<QueueStore, 'resetEvent'>;
  private readonly context: RoomContext;
  private readonly admission: Admission;
  private readonly forgetRoomState: (eventId: string) => void;
  private readonly afterReset: ((eventId: string) => Promise<void>) | undefined;

  constructor(deps: AdmissionServiceDeps) {
    this.store = deps.store;
    this.context = deps.context;
    this.admission = deps.admission;
    this.forgetRoomState = deps.forgetRoomState;
    this.afterReset = deps.afterReset;
  }

  /**
   * Moves the room's serving counter as the request asks (src/domain/admission/admission.ts): the manual
   * increment of the private API, a periodic inlet's tick, a MaxSize report. Unknown room → 400.
   */
  async admit<R extends AdmissionRequest>(eventId: unknown, request: R): Promise<AdmissionResults[R['kind']]> {
    const event = this.context.event(eventId);
    return this.admission.admit(event, request);
  }

  /** A manual admission: `by` may be negative (VWR); the counter never goes below 0. */
  async incrementServingCounter(eventId: unknown, by: number, presentOnly = false): Promise<Answer<{ serving_num: number }>> {
    return ok(await this.admit(eventId, { kind: 'manual', by, presentOnly }));
  }

  // ---- background jobs ----

  /** One tick of the expiry job for one event (with incr_serving_on_expiry, an admission); nothing for a room
   * removed since the job listed the rooms. */
  async advanceExpiry(eventId: string): Promise<void> {
    const event = this.context.catalog.get(eventId);
    if (!event?.enable_queue_position_expiry) return;
    await this.admission.advanceExpiry(event);
  }

  /**
   * One tick of the admission job for one room (src/domain/admission/automatic.ts): a room with admission
   * "automatic" admits within its limits, a room that is `off` admits everyone waiting; any other room is left
   * alone without a store call. Undefined for a room removed since the job listed the rooms.
   */
  async admitAutomatically(eventId: string): Promise<AutomaticTickOutcome | undefined> {
    const event = this.context.catalog.get(eventId);
    return event && this.admission.admitAutomatically(event);
  }

  /** reset_initial_state: the room's positions, counters, token sets and draw are gone; its settings stay. */
  async resetInitialState(eventId: unknown): Promise<Answer<{ message: string }>> {
    const event = this.context.event(eventId);
    await this.store.resetEvent(event.event_id);
    this.forgetRoomState(event.event_id);
    await this.afterReset?.(event.event_id);
    // The text VWR's clients know (its reset recreated a DynamoDB table).
    return ok({ message: 'Counters reset. DynamoDB table recreated.' });
  }
}
