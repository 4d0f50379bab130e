// The queue: a visitor's place from the join to the moment they are served or give it up — join (every door's
// one join path), the proof-of-work challenge and the write limit before it, the place and the counters a
// waiting page polls (with the wait estimate), leave_queue, and the asynchronous intake's numbering (AWS SQS).
// Sealed: the drivers (public routes, the gate, OpenID, the intake consumer, the counter stream, the fast poll)
// call these methods and never reach the store.

import type { BotDefence, JoinCredentials } from '../bot-defence.ts';
import { newDrawCandidate } from '../draw-runner.ts';
import { Errors, OidcErrors, Pending } from '../errors.ts';
import { newRequestId } from '../ids.ts';
import { JoinBatcher } from '../join-batcher.ts';
import type { EventPublisher } from '../ports/events.ts';
import type { AuthorizationStore, Counters, DrawStore, JoinRequest, QueueStore } from '../ports/store.ts';
import { keyWindows, requestIdForIdempotencyKey } from '../idempotency-key.ts';
import { PeopleAhead } from '../people-ahead.ts';
import type { PresenceTracker } from '../presence.ts';
import { joinRefusal, roomPhase, roomScheduleOf, type RoomPhase } from '../room-phase.ts';
import type { WaitEstimate, WaitEstimates } from '../wait-estimates.ts';
import { PositionCache, positionAnswer } from '../position-cache.ts';
import { ok, waitingOf, type Answer, type RoomContext } from './room-context.ts';

export type QueueStoreUsed = Pick<
  QueueStore,
  'assignPositions' | 'assignPositionsIfAbsent' | 'getPosition' | 'getCounters' | 'peekCounters' | 'getServingCounter' | 'leaveQueue' | 'leftPositionsAbove'
> &
  Pick<DrawStore, 'joinPrequeue' | 'leavePrequeue'> &
  Pick<AuthorizationStore, 'saveAuthorization'>;

export interface QueueServiceDeps {
  store: QueueStoreUsed;
  context: RoomContext;
  events: EventPublisher;
  botDefence: BotDefence;
  estimates: WaitEstimates;
  /** Marks the visitors seen (../presence.ts): a /queue_num poll with beat=1 is a beat. */
  presence: Pick<PresenceTracker, 'seen'>;
  joinBatch?: { maxBatch?: number; windowMs?: number; queueWaitMs?: number | undefined } | undefined;
  /** Asynchronous intake (see WaitingRoomDeps.intake). */
  intake?: ((eventId: string, joins: readonly JoinRequest[]) => Promise<void>) | undefined;
  onJoinBatch?: ((size: number) => void) | undefined;
}

export class QueueService {
  private readonly store: QueueStoreUsed;
  private readonly context: RoomContext;
  private readonly events: EventPublisher;
  private readonly botDefence: BotDefence;
  private readonly joins: JoinBatcher;
  private readonly intake: boolean;
  /** The wait estimates given at the first lookup of a place, judged at admission (../wait-estimates.ts). */
  readonly estimates: WaitEstimates;
  /** People still waiting ahead of a place, without those who left (../people-ahead.ts). */
  readonly peopleAhead: PeopleAhead;
  /** Positions found by /queue_num, answered from memory while the counters say nothing changed (../position-cache.ts). */
  private readonly positions = new PositionCache();
  private readonly presence: Pick<PresenceTracker, 'seen'>;

  constructor(deps: QueueServiceDeps) {
    this.store = deps.store;
    this.peopleAhead = new PeopleAhead(deps.store);
    this.context = deps.context;
    this.events = deps.events;
    this.botDefence = deps.botDefence;
    this.estimates = deps.estimates;
    this.presence = deps.presence;
    const intake = deps.intake;
    this.intake = intake !== undefined;
    this.joins = new JoinBatcher(
      intake
        ? // Positions are not known yet: 0 stands for "numbered later" (assignQueueNum does not use them).
          async (eventId, joins) => (await intake(eventId, joins), joins.map(() => 0))
        : (eventId, joins) => this.commitJoins(eventId, joins),
      deps.joinBatch,
    );
    if (deps.onJoinBatch) this.joins.onBatch = deps.onJoinBatch;
    // A room made again under a removed room's ID may start at generation 0 again (SQLite): its kept positions go.
    this.context.catalog.onChange((change) => {
      if (change.kind === 'removed') this.positions.forgetRoom(change.eventId);
    });
  }

  /**
   * Whether joins are numbered after they are answered (an asynchronous intake, AWS's SQS queue): the answer of
   * assignQueueNum then names a request ID whose position does not exist yet.
   */
  get joinsNumberedLater(): boolean {
    return this.intake;
  }

  /**
   * A join: POST /assign_queue_num, the OpenID join (src/oidc) and the gate's (src/gate/gate-join.ts) — the one
   * join path of every door. `credentials`: the client's address, a solved proof of work and an enqueue key
   * (each optional: VWR's clients send none), checked by the room's bot defence before anything is stored
   * (src/domain/bot-defence.ts); required, so that no door can join without saying who joins (`{}`: unknown).
   * `authorization` (the OpenID join) is bound to the position by whoever numbers it — this process, or the
   * intake consumer on AWS — so that both kinds of join take one path.
   */
  async assignQueueNum(
    eventId: unknown,
    credentials: JoinCredentials,
    authorization?: string,
  ): Promise<Answer<{ api_request_id: string }>> {
    const event = this.context.event(eventId);
    // Joins depend on the schedule and the state only, never on the draw: no store call on this hot path.
    switch (joinRefusal(roomPhase(roomScheduleOf(event), this.context.now()))) {
      case 'not-open-yet':
        throw Errors.roomNotOpenYet();
      case 'closed':
        throw Errors.roomClosed();
      case null:
        break;
    }
    if (event.bot_defence || credentials.enqueueKey !== undefined) {
      const verdict = await this.botDefence.checkJoin(event, credentials);
      // One place per enqueue key: its request ID is the key's, numbered once whoever asks, on any node.
      if (verdict.kind === 'keyed') return this.keyedJoin(event.event_id, verdict.requestId, authorization);
      // The infinite queue: answered like a join, with a place behind everyone that is stored nowhere.
      if (verdict.kind === 'parked') {
        const { queue } = await this.store.getCounters(event.event_id);
        return ok({ api_request_id: this.botDefence.parkedRequestId(event.event_id, queue + 1) });
      }
    }
    // One place per Idempotency-Key, likewise (a retry of a refused join gets the place it may have taken).
    if (credentials.idempotencyKey !== undefined) {
      const client = credentials.client ?? '';
      const windows = keyWindows(this.context.now());
      // In the first hour of a key window, the retry of a call made just before it finds that call's place.
      if (windows.previous !== null) {
        const earlier = requestIdForIdempotencyKey(event.event_id, credentials.idempotencyKey, client, windows.previous);
        if ((await this.store.getPosition(event.event_id, earlier)) !== null) return ok({ api_request_id: earlier });
      }
      const requestId = requestIdForIdempotencyKey(event.event_id, credentials.idempotencyKey, client, windows.current);
      // A drawn room before its draw: the key's request ID goes to the pre-queue, which lists a request ID once.
      if (this.context.routesToPrequeue(event.event_id)) {
        if (authorization !== undefined) throw OidcErrors.joinInterrupted();
        await this.store.joinPrequeue(event.event_id, [{ requestId, entryTime: this.context.now() }], newDrawCandidate());
        return ok({ api_request_id: requestId });
      }
      return this.keyedJoin(event.event_id, requestId, authorization);
    }
    // The pre-queue has no position to bind an authorization to (a draw numbers it later, unbound).
    if (authorization !== undefined && this.context.routesToPrequeue(event.event_id)) throw OidcErrors.joinInterrupted();
    const requestId = newRequestId();
    await this.joins.join(event.event_id, { requestId, entryTime: this.context.now(), ...(authorization !== undefined ? { authorization } : {}) });
    return ok({ api_request_id: requestId });
  }

  /** A join whose request ID a key names (an enqueue key, an Idempotency-Key): numbered once, whoever asks. */
  private async keyedJoin(eventId: string, requestId: string, authorization: string | undefined): Promise<Answer<{ api_request_id: string }>> {
    const join = { requestId, entryTime: this.context.now(), authorization };
    await this.store.assignPositionsIfAbsent(eventId, [join]);
    await this.bindJoins(eventId, [join]);
    return ok({ api_request_id: requestId });
  }

  /** GET /challenge: a proof-of-work challenge for the room, as hard as its join rate makes it now. */
  async challenge(eventId: unknown): Promise<Answer<unknown>> {
    return ok(await this.botDefence.challenge(this.context.event(eventId)));
  }

  /** The server-wide per-client limit of public writes (--writes-per-client-per-minute): throws 429 over it. */
  limitPublicWrite(client: string, perMinute: number): Promise<void> {
    return this.botDefence.limitWrite(client, perMinute);
  }

  /** `beat`: the client beats (Anteroom's waiting page sends beat=1): a sign of life for presence (../presence.ts). */
  async queueNum(
    eventId: unknown,
    requestId: unknown,
    beat = false,
  ): Promise<Answer<{ queue_number: number; entry_time: number; event_id: string; status: 1; wait_estimate_s?: [number, number]; people_ahead?: number }>> {
    const { event, requestId: id } = this.context.eventAndRequest(eventId, requestId);
    // The counters the position is kept with, read before it (../position-cache.ts); only where polls are answered from memory.
    const stamp = this.store.peekCounters && this.positions.stamp(this.store.peekCounters(event.event_id) ?? (await this.store.getCounters(event.event_id)));
    const position = await this.store.getPosition(event.event_id, id);
    if (position) this.positions.remember(event.event_id, id, position, stamp);
    if (!position) {
      const parked = this.botDefence.parkedPlace(event, id);
      if (parked) return ok({ queue_number: parked.position, entry_time: parked.entryTime, event_id: event.event_id, status: 1 });
      return (await this.context.waitsForDraw(event, id)) ? Pending.awaitingDraw : Pending.requestIdNotFound;
    }
    if (beat) this.presence.seen(event.event_id, position.position);
    const estimate = await this.estimateFor(event.event_id, id, position.position, position.entryTime);
    return ok({
      queue_number: position.position,
      entry_time: position.entryTime,
      event_id: event.event_id,
      status: 1,
      // Beyond VWR's answer: the estimated wait (seconds, early and late end), once the pace is known.
      ...(estimate ? { wait_estimate_s: [estimate.lowSec, estimate.highSec] as [number, number] } : {}),
      // Anteroom: the people still waiting ahead (issue 33), without those who left.
      people_ahead: await this.peopleAhead.of(event.event_id, position.position, this.store.peekCounters?.(event.event_id) ?? (await this.store.getCounters(event.event_id))),
    });
  }

  /** The wait estimate of a place: the one given before, or one made now (and kept, to be judged later). */
  private async estimateFor(eventId: string, requestId: string, position: number, entryTime: number): Promise<WaitEstimate | undefined> {
    const given = this.estimates.of(eventId, requestId);
    if (given) return given;
    if (this.estimates.pace(eventId, this.context.now() * 1000) === undefined) return undefined;
    const serving = await this.store.getServingCounter(eventId);
    const nowMs = this.context.now() * 1000;
    this.estimates.observe(eventId, serving, nowMs);
    const estimate = this.estimates.estimate(eventId, position, serving, nowMs);
    if (estimate && position > serving) this.estimates.given(eventId, requestId, entryTime * 1000, estimate);
    return estimate;
  }

  async servingNum(eventId: unknown): Promise<Answer<{ serving_counter: number }>> {
    const event = this.context.event(eventId);
    const serving = await this.store.getServingCounter(event.event_id);
    this.estimates.observe(event.event_id, serving, this.context.now() * 1000);
    return ok({ serving_counter: serving });
  }

  /** Both counters of a room in one store read, for the public counter stream (GET /stream). */
  async streamCounters(eventId: unknown): Promise<{ serving_counter: number; waiting_num: number; generation: number; phase: RoomPhase }> {
    const event = this.context.event(eventId);
    const counters = await this.store.getCounters(event.event_id);
    this.estimates.observe(event.event_id, counters.serving, this.context.now() * 1000);
    // The phase too: an open page follows the room (pause, close, the start) within a broadcast (issue 33).
    return { serving_counter: counters.serving, waiting_num: waitingOf(counters), generation: counters.generation ?? 0, phase: await this.context.phaseOf(event) };
  }

  async waitingNum(eventId: unknown): Promise<Answer<{ waiting_num: number }>> {
    const event = this.context.event(eventId);
    return ok({ waiting_num: waitingOf(await this.store.getCounters(event.event_id)) });
  }

  /**
   * The room's counters if this process holds them in memory fresh enough to answer a poll; undefined when they
   * are not (the caller then takes the ordinary path). Never reads the store and never blocks: the polling fast
   * path (src/http/fast-poll.ts) calls it for every poll. Undefined for an unknown room too.
   */
  countersInMemory(eventId: string): Counters | undefined {
    if (!this.store.peekCounters || !this.context.catalog.get(eventId)) return undefined;
    const counters = this.store.peekCounters(eventId);
    if (counters) this.estimates.observe(eventId, counters.serving, this.context.now() * 1000);
    return counters;
  }

  /**
   * GET /queue_num's 200 body for a lowercase request ID, from memory (../position-cache.ts), or undefined: the
   * caller then takes the ordinary path. Never reads the store and never blocks (the polling fast path).
   */
  queueNumInMemory(eventId: string, requestId: string, beat = false): string | undefined {
    const counters = this.store.peekCounters && this.context.catalog.get(eventId) ? this.store.peekCounters(eventId) : undefined;
    const seen = beat ? (position: number) => this.presence.seen(eventId, position) : undefined;
    return counters && positionAnswer(this.positions, this.estimates, eventId, requestId, counters, this.context.now() * 1000, this.peopleAhead, seen);
  }

  /** Whether the store can answer polls from memory at all (when not, the fast path is not installed). */
  get answersPollsFromMemory(): boolean {
    return this.store.peekCounters !== undefined;
  }

  /**
   * leave_queue (spec/rooms.md §4): the visitor gives their place up at once. It no longer counts as waiting, a
   * later generate_token answers 410, and under automatic admission the place goes to the next visitor at the
   * next tick. Unknown request ID → 404; left already → 410; a token set issued → 410 (that visitor's session
   * ends with update_session); a position already expired → 410. Emits queue_left.
   */
  /** `keyed`: the call carries an Idempotency-Key, so a place given up already answers 200 (a retry's answer). */
  async leaveQueue(eventId: unknown, requestId: unknown, options: { keyed?: boolean } = {}): Promise<Answer<Record<string, never>>> {
    const { event, requestId: id } = this.context.eventAndRequest(eventId, requestId);
    const result = await this.store.leaveQueue(event.event_id, id);
    switch (result.outcome) {
      case 'no-position':
        if (this.botDefence.parkedPlace(event, id)) return ok({});
        // In a room with a draw, a visitor of the pre-queue has no position yet: they leave the pre-queue.
        if (event.shuffle_at_event_start === true) return this.leavePrequeue(event.event_id, id, options);
        throw Errors.invalidRequestId();
      case 'already-left':
        if (options.keyed === true) return ok({});
        throw Errors.queuePositionLeft();
      case 'claimed':
        throw Errors.queuePositionClaimed();
      case 'expired':
        throw Errors.queuePositionExpired();
      case 'left':
        this.events.publish('queue_left', { event_id: event.event_id, request_id: id });
        return ok({});
    }
  }

  /** leave_queue of a visitor without a position in a room with a draw: out of the pre-queue, not drawn. */
  private async leavePrequeue(eventId: string, id: string, options: { keyed?: boolean }): Promise<Answer<Record<string, never>>> {
    switch (await this.store.leavePrequeue(eventId, id)) {
      case 'left':
        this.events.publish('queue_left', { event_id: eventId, request_id: id });
        return ok({});
      case 'already-left':
        if (options.keyed === true) return ok({});
        throw Errors.queuePositionLeft();
      case 'not-in-prequeue':
        throw Errors.invalidRequestId();
      case 'being-drawn':
        throw Errors.drawInProgress();
      case 'numbered':
        // Numbered between the two calls: it is an ordinary position now.
        return this.leaveQueue(eventId, id, options);
    }
  }

  /**
   * Numbers joins accepted earlier by an asynchronous intake (AWS: the SQS consumer). A join delivered twice
   * keeps its first position. One atomic store operation for the batch.
   */
  async numberIntakeJoins(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    // Both are idempotent for a redelivered join (the pre-queue lists a request ID once), and so is the binding
    // of an OpenID join's authorization (the same text again).
    if (this.context.routesToPrequeue(eventId)) return this.store.joinPrequeue(eventId, joins, newDrawCandidate());
    const positions = await this.store.assignPositionsIfAbsent(eventId, joins);
    await this.bindJoins(eventId, joins);
    return positions;
  }

  /** Answers every join waiting in the batcher (commits them first); call before closing the store. */
  drainJoins(): Promise<void> {
    return this.joins.drain();
  }

  /**
   * Where the join batcher commits a batch: the pre-queue while the room's draw is not done (its store call then
   * numbers the joins itself if the draw turns out done), positions otherwise. The seed is created and committed
   * with the first pre-queue join when nothing asked for it before.
   */
  private async commitJoins(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    if (this.context.routesToPrequeue(eventId)) return this.store.joinPrequeue(eventId, joins, newDrawCandidate());
    const positions = await this.store.assignPositions(eventId, joins);
    await this.bindJoins(eventId, joins);
    return positions;
  }

  /**
   * Binds the authorization requests the joins carry to their positions, once numbered. A join without a
   * position by now (reset meanwhile) stays unbound: the OpenID page learns it at /continue.
   */
  private async bindJoins(eventId: string, joins: readonly JoinRequest[]): Promise<void> {
    const bound = joins.filter((join) => join.authorization !== undefined);
    await Promise.all(bound.map((join) => this.store.saveAuthorization(eventId, join.requestId, join.authorization!)));
  }
}
