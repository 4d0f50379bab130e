// Admission: the one place where this process moves a room's serving counter. Every mover goes through it:
//   manual    increment_serving_counter — an operator, the control panel, or an inlet running in another
//             process (CLI, Lambda: they decide with this module's rules and arrive here as a manual move).
//             VWR's semantics: any whole number, negative allowed; the store floors the counter at 0 in the same
//             atomic unit; never held, never clamped to the queue;
//   periodic  a tick of the in-server periodic inlet (periodic.ts);
//   max-size  a site's report to the in-server MaxSize inlet (max-size.ts);
//   expiry    a step of the expiry job, which moves the counter with incr_serving_on_expiry (on-expiry.ts);
//   automatic a tick of the admission job for a room with admission "automatic" or state "off" (automatic.ts).
// One Admission per process, held by the admission capability (src/domain/services/admission-service.ts:
// admit(), advanceExpiry(), admitAutomatically()); no other capability's store type has the operations that
// move the counter, and
// test/domain/admission-boundary.test.ts checks that nothing else in src/ calls them.
//
// Two rules hold for every move but the manual one (spec/rooms.md §2):
//   - never ahead of the queue: the counter moves by min(by, queue − serving), in one atomic store operation
//     (incrementServingWithinQueue; the expiry step applies the same clamp inside its own atomic advanceExpiry);
//   - held outside the phases that admit (room-phase.ts: before the start, while the draw runs, paused,
//     closed, ended): inlets move nothing, the expiry step records expiries without moving the counter, and
//     automatic admission does nothing.
// (A reset zeroes the counter with everything else: it is not an admission and stays the service's.)

import type { SessionStatus } from '../claims.ts';
import { expiryCutoff } from '../expiry.ts';
import type { EventPublisher } from '../ports/events.ts';
import type { QueueStore, ServingMove } from '../ports/store.ts';
import { admitsInPhase, type RoomPhase } from '../room-phase.ts';
import type { RoomSettings } from '../room-settings.ts';
import {
  admissionModeOf,
  decideAdmission,
  planTick,
  rateWindowStart,
  type AutomaticTickOutcome,
} from './automatic.ts';
import { maxSizeAdmission, type MaxSizeReport, type MaxSizeResult } from './max-size.ts';
import { expiryIncrementEvent, expiryMovesCounter } from './on-expiry.ts';
import { periodicTick, type PeriodicInlet, type PeriodicOutcome } from './periodic.ts';
import type { PresenceStore } from '../ports/presence.ts';
import { presenceApplies, presentIncrement, presentTick, type PresentTickDeps, type PresentTickOutcome } from './presence-aware.ts';

/** Who asks to move the counter, with what they bring. */
export type AdmissionRequest =
  /** presentOnly: count only present visitors (presence-aware.ts presentIncrement); by ≥ 1 then. */
  | { kind: 'manual'; by: number; presentOnly?: boolean }
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
export type CounterMovingStore = Pick<QueueStore, 'incrementServing' | 'incrementServingWithinQueue' | 'advanceExpiry'>;

export interface AdmissionDeps {
  store: CounterMovingStore & Pick<QueueStore, 'countActiveTokens' | 'getServingCounter' | 'getAdmissionSnapshot'>;
  events: EventPublisher;
  /** Epoch seconds now (the service's clock). */
  now: () => number;
  /** The room's phase now (the service's: it knows whether the room's draw has run). */
  phase: (room: RoomSettings) => Promise<RoomPhase>;
  /**
   * update_session as the API does it (same checks, session_updated emitted), answering whether this call
   * closed the session instead of a 404: the MaxSize inlet closes the sessions a site reports this way.
   */
  closeSession: (eventId: string, requestId: string, status: Exclude<SessionStatus, 0>) => Promise<boolean>;
  /** Presence (presence-aware.ts): the store's, and the node's marks of a room merged into it. */
  presence?: PresenceStore | undefined;
  flushPresence?: (eventId: string) => Promise<void>;
}

export class Admission {
  private readonly deps: AdmissionDeps;

  constructor(deps: AdmissionDeps) {
    this.deps = deps;
  }

  /** Carries one request out on a room the caller has validated. */
  async admit<R extends AdmissionRequest>(room: RoomSettings, request: R): Promise<AdmissionResults[R['kind']]> {
    // TypeScript does not narrow R through the switch: the result's kind matches the request's by construction.
    return (await this.carryOut(room, request)) as AdmissionResults[R['kind']];
  }

  private async carryOut(room: RoomSettings, request: AdmissionRequest): Promise<AdmissionResults[AdmissionRequest['kind']]> {
    const eventId = room.event_id;
    if (request.kind === 'manual') {
      const presentDeps = this.presentDeps();
      if (request.presentOnly && request.by > 0 && presentDeps) {
        return { serving_num: (await presentIncrement(presentDeps, room, request.by, this.deps.now())).serving };
      }
      return { serving_num: await this.deps.store.incrementServing(eventId, request.by, this.deps.now()) };
    }
    const phase = await this.deps.phase(room);
    const held = !admitsInPhase(phase);
    const move = held ? () => this.hold(eventId) : (by: number) => this.moveWithinQueue(eventId, by);
    switch (request.kind) {
      case 'periodic':
        if (held) return { kind: 'paused', reason: `the room is ${phase}` };
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

  /** What presence-aware admission needs, when this Admission was given a presence store. */
  private presentDeps(): PresentTickDeps | undefined {
    const presence = this.deps.presence;
    if (!presence) return undefined;
    return { store: this.deps.store, presence, events: this.deps.events, flush: this.deps.flushPresence ?? (async () => {}) };
  }

  /** The one call that moves the counter for an inlet or automatic admission: never past the queue. */
  private moveWithinQueue(eventId: string, by: number): Promise<ServingMove> {
    return this.deps.store.incrementServingWithinQueue(eventId, by, this.deps.now());
  }

  /** A move while admission is held: the counter stays where it is. */
  private async hold(eventId: string): Promise<ServingMove> {
    const serving = await this.deps.store.getServingCounter(eventId);
    return { previousServing: serving, serving };
  }

  /**
   * One step of the expiry job for a room with expiry on: positions eligible for longer than the expiry period
   * are recorded as expired, and with incr_serving_on_expiry (in a phase that admits) the counter moves by those
   * never claimed, never past the queue — all in the store's one atomic advanceExpiry (see on-expiry.ts for why
   * the move is not a separate call).
   */
  async advanceExpiry(room: RoomSettings): Promise<void> {
    const now = this.deps.now();
    const movesCounter = expiryMovesCounter(room, await this.deps.phase(room));
    const step = await this.deps.store.advanceExpiry(
      room.event_id,
      expiryCutoff(now, room.queue_position_expiry_period),
      movesCounter,
      now,
    );
    const increment = expiryIncrementEvent(room, step);
    if (increment) this.deps.events.publish('automatic_serving_counter_incr', increment);
  }

  /**
   * One tick of automatic admission for one room (automatic.ts): rooms with nothing to do cost no store call;
   * otherwise the snapshot, the decision and the move. A move is announced as automatic_serving_counter_incr,
   * like the expiry job's.
   */
  async admitAutomatically(room: RoomSettings): Promise<AutomaticTickOutcome | PresentTickOutcome> {
    const plan = planTick(admissionModeOf(room), await this.deps.phase(room));
    if (plan.kind === 'nothing') return plan;
    const now = this.deps.now();
    const snapshot = await this.deps.store.getAdmissionSnapshot(room.event_id, now, rateWindowStart(now));
    const presentDeps = this.presentDeps();
    if (plan.kind === 'within-limits' && presenceApplies(room) && presentDeps) {
      return presentTick(presentDeps, room, plan.limits, snapshot, now);
    }
    const decision = decideAdmission(plan, snapshot);
    const moved =
      decision.by > 0
        ? // From the counter the snapshot read: a tick that overlaps this one (another node, the next second)
          // and moved it first leaves this one without effect, rather than admitting twice on one reading.
          await this.deps.store.incrementServingWithinQueue(room.event_id, decision.by, now, snapshot.serving)
        : { previousServing: snapshot.serving, serving: snapshot.serving };
    if (moved.serving !== moved.previousServing) {
      this.deps.events.publish('automatic_serving_counter_incr', {
        event_id: room.event_id,
        previous_serving_counter_position: moved.previousServing,
        increment_by: moved.serving - moved.previousServing,
        current_serving_counter_position: moved.serving,
      });
    }
    return { kind: 'admitted', ...decision, ...moved };
  }
}
