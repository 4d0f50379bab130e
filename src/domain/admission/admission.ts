// Admission: the one place where this process moves a room's serving counter. Every mover goes through it:
//   manual    increment_serving_counter — an operator, the control panel, or an inlet running in another
//             process (CLI, Lambda: they decide with this module's rules and arrive here as a manual move).
//             VWR's semantics: any whole number, negative allowed; the store floors the counter at 0 in the same
//             atomic unit;
//   periodic  a tick of the in-server periodic inlet (periodic.ts);
//   max-size  a site's report to the in-server MaxSize inlet (max-size.ts);
//   expiry    a step of the expiry job, which moves the counter with incr_serving_on_expiry (on-expiry.ts).
// The WaitingRoomService owns one Admission and reaches it through admit() and advanceExpiry(); its own store
// type leaves out the operations that move the counter, and test/domain/admission-boundary.test.ts checks that
// nothing else in src/ calls them. A rule for every move (never past the last position handed out, a paused or
// closed room, admission by rate and capacity) therefore goes in move(); the expiry step moves the counter inside
// the store's atomic advanceExpiry, so such a rule reaches it as a parameter of that call.
// (A reset zeroes the counter with everything else: it is not an admission and stays the service's.)

import type { SessionStatus } from '../claims.ts';
import { expiryCutoff } from '../expiry.ts';
import type { EventPublisher } from '../ports/events.ts';
import type { QueueStore } from '../ports/store.ts';
import type { RoomSettings } from '../room-settings.ts';
import { maxSizeAdmission, type MaxSizeReport, type MaxSizeResult } from './max-size.ts';
import { expiryIncrementEvent, expiryMovesCounter } from './on-expiry.ts';
import { periodicTick, type PeriodicInlet, type PeriodicOutcome } from './periodic.ts';

/** Who asks to move the counter, with what they bring. */
export type AdmissionRequest =
  | { kind: 'manual'; by: number }
  /** `now`: the tick's time in epoch seconds (the scheduler's clock), for the inlet's window. */
  | { kind: 'periodic'; inlet: PeriodicInlet; now: number }
  /** The report is checked (maxSizeReportProblem) by the caller, which answers a bad one in its own way. */
  | { kind: 'max-size'; maxSize: number; report: MaxSizeReport };

/** What each kind of request answers. */
export interface AdmissionResults {
  manual: { serving_num: number };
  periodic: PeriodicOutcome;
  'max-size': MaxSizeResult;
}

/** The store operations that can move the serving counter: the Admission is the only caller. */
export type CounterMovingStore = Pick<QueueStore, 'incrementServing' | 'advanceExpiry'>;

export interface AdmissionDeps {
  store: CounterMovingStore & Pick<QueueStore, 'countActiveTokens'>;
  events: EventPublisher;
  /** Epoch seconds now (the service's clock). */
  now: () => number;
  /**
   * update_session as the API does it (same checks, session_updated emitted), answering whether this call
   * closed the session instead of a 404: the MaxSize inlet closes the sessions a site reports this way.
   */
  closeSession: (eventId: string, requestId: string, status: Exclude<SessionStatus, 0>) => Promise<boolean>;
}

export class Admission {
  private readonly deps: AdmissionDeps;

  constructor(deps: AdmissionDeps) {
    this.deps = deps;
  }

  /** Carries one request out on a room the caller has validated. */
  async admit<R extends AdmissionRequest>(eventId: string, request: R): Promise<AdmissionResults[R['kind']]> {
    // TypeScript does not narrow R through the switch: the result's kind matches the request's by construction.
    return (await this.carryOut(eventId, request)) as AdmissionResults[R['kind']];
  }

  private async carryOut(eventId: string, request: AdmissionRequest): Promise<AdmissionResults[AdmissionRequest['kind']]> {
    const move = (by: number) => this.move(eventId, by);
    switch (request.kind) {
      case 'manual':
        return { serving_num: await move(request.by) };
      case 'periodic':
        return periodicTick(request.inlet, request.now, move);
      case 'max-size':
        return maxSizeAdmission(
          {
            closeSession: (requestId, status) => this.deps.closeSession(eventId, requestId, status),
            activeTokens: () => this.deps.store.countActiveTokens(eventId, this.deps.now()),
            move,
          },
          request.maxSize,
          request.report,
        );
    }
  }

  /** The one call that moves the counter on request. */
  private move(eventId: string, by: number): Promise<number> {
    return this.deps.store.incrementServing(eventId, by, this.deps.now());
  }

  /**
   * One step of the expiry job for a room with expiry on: positions eligible for longer than the expiry period
   * are recorded as expired, and with incr_serving_on_expiry the counter moves by those never claimed — all in
   * the store's one atomic advanceExpiry (see on-expiry.ts for why the move is not a separate call).
   */
  async advanceExpiry(room: RoomSettings): Promise<void> {
    const now = this.deps.now();
    const step = await this.deps.store.advanceExpiry(
      room.event_id,
      expiryCutoff(now, room.queue_position_expiry_period),
      expiryMovesCounter(room),
      now,
    );
    const increment = expiryIncrementEvent(room, step);
    if (increment) this.deps.events.publish('automatic_serving_counter_incr', increment);
  }
}
