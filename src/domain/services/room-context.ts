// What every capability of the waiting room (./waiting-room.ts) shares: the answer shape, the room lookups that
// turn a client's raw event ID and request ID into a served room or a 400, the room's phase now (which asks
// whether its draw has run), and where a join of a room with a draw goes. Private to the services: drivers never
// see a RoomContext, only the capabilities built on it.

import type { ClaimRoom, ExpiryRule } from '../claim-decision.ts';
import { epochSeconds, type Clock } from '../clock.ts';
import type { DrawRunner } from '../draw-runner.ts';
import { Errors } from '../errors.ts';
import { isRequestId, normaliseRequestId } from '../ids.ts';
import type { Counters, DrawStore } from '../ports/store.ts';
import { drawIsDue, roomDraws } from '../prequeue.ts';
import { roomPhase, roomScheduleOf, type RoomPhase } from '../room-phase.ts';
import type { RoomRegistry } from '../room-registry.ts';
import type { RoomSettings } from '../room-settings.ts';

export type Answer<T> = { status: 200; body: T } | { status: 202; body: { error: string } };

export const ok = <T>(body: T): Answer<T> => ({ status: 200, body });

/** People who joined and have neither claimed a token, lost their place nor given it up (VWR #208: always subtract). */
export function waitingOf(counters: Counters): number {
  return Math.max(0, counters.queue - counters.tokens - counters.expired - counters.left);
}

export interface RoomContextDeps {
  rooms: RoomRegistry;
  clock: Clock;
  /** The draws of this process (whether a room's draw is done, known or asked). */
  draws: DrawRunner;
  store: Pick<DrawStore, 'getPrequeueEntry'>;
}

export class RoomContext {
  /** The rooms served now. */
  readonly catalog: RoomRegistry;
  readonly clock: Clock;
  private readonly draws: DrawRunner;
  private readonly store: Pick<DrawStore, 'getPrequeueEntry'>;
  /** When this process last asked the store whether a room's due draw is done, to route joins (ms). */
  private readonly drawCheckedAt = new Map<string, number>();

  constructor(deps: RoomContextDeps) {
    this.catalog = deps.rooms;
    this.clock = deps.clock;
    this.draws = deps.draws;
    this.store = deps.store;
  }

  /** Epoch seconds now. */
  now(): number {
    return epochSeconds(this.clock);
  }

  /** The room named by a client's event ID, or the error `invalid` (400 by default). */
  event(eventId: unknown, invalid: () => Error = Errors.invalidEventId): RoomSettings {
    const event = this.catalog.get(eventId);
    if (!event) throw invalid();
    return event;
  }

  /** The room and the (normalised) request ID a client named, or 400 for either. */
  eventAndRequest(eventId: unknown, requestId: unknown): { event: RoomSettings; requestId: string } {
    const event = this.event(eventId, Errors.invalidEventOrRequestId);
    if (!isRequestId(requestId)) throw Errors.invalidEventOrRequestId();
    return { event, requestId: normaliseRequestId(requestId) };
  }

  expiryRule(event: RoomSettings): ExpiryRule {
    return { enabled: event.enable_queue_position_expiry, period: event.queue_position_expiry_period };
  }

  // ---- the room's phase (src/domain/room-phase.ts) ----

  /** The room's phase now. Asks whether the draw has run only where that can change the answer. */
  async phaseOf(room: RoomSettings): Promise<RoomPhase> {
    const schedule = roomScheduleOf(room);
    const now = this.now();
    const drawMatters = schedule.shuffleAtEventStart && schedule.eventStart !== undefined && now >= schedule.eventStart;
    return roomPhase(schedule, now, { pending: drawMatters && !(await this.drawDone(room.event_id)) });
  }

  /** Whether claims in this room are decided as if every position were served (state `off`). */
  async claimRoom(room: RoomSettings): Promise<ClaimRoom> {
    return { servesEveryone: (await this.phaseOf(room)) === 'off' };
  }

  // ---- the pre-queue (spec rooms.md §3; ../prequeue.ts) ----

  /**
   * Whether the room may admit as far as the draw is concerned: true for a room without a draw, and for one
   * whose draw is done. The admission tick waits for it; nobody has a position to admit before anyway.
   */
  async drawDone(eventId: string): Promise<boolean> {
    const room = this.catalog.get(eventId);
    if (!room || !roomDraws(room)) return true;
    return this.draws.isDone(eventId);
  }

  /** Whether a join of the room goes to the pre-queue now, by what this process knows of its draw. */
  routesToPrequeue(eventId: string): boolean {
    const room = this.catalog.get(eventId);
    if (!room || !roomDraws(room) || this.draws.knownDone(eventId)) return false;
    // Once the start has passed, learn (at most once a second) whether the draw is done, so that joins stop
    // taking the pre-queue's path; until then they take it, which is correct either way.
    if (drawIsDue(room, this.now())) {
      const nowMs = this.clock();
      if (nowMs - (this.drawCheckedAt.get(eventId) ?? -Infinity) >= 1000) {
        this.drawCheckedAt.set(eventId, nowMs);
        void this.draws.isDone(eventId).catch(() => {});
      }
    }
    return true;
  }

  /** A visitor in the room's pre-queue (without a position yet) who has not left. */
  async waitsForDraw(room: RoomSettings, requestId: string): Promise<boolean> {
    if (!roomDraws(room)) return false;
    const entry = await this.store.getPrequeueEntry(room.event_id, requestId);
    return entry !== null && !entry.left;
  }
}
