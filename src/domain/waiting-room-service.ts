// The waiting-room service: every operation of the public and private API for every room, independent of
// HTTP, Lambda or the store behind it. Validates its inputs against the room registry, decides with the rules
// of src/domain, changes state only through one atomic store operation, and publishes events after the change
// is durable. It is sealed: adapters (HTTP, OIDC, Lambda, jobs, inlets) call its methods and never reach the
// store or the registry through it. Every move of the serving counter goes through its Admission
// (src/domain/admission/): admit(), advanceExpiry() and admitAutomatically().

import { setTimeout as sleep } from 'node:timers/promises';
import { Admission, type AdmissionRequest, type AdmissionResults, type CounterMovingStore } from './admission/admission.ts';
import { rateWindowStart, type AutomaticTickOutcome } from './admission/automatic.ts';
import { epochSeconds, type Clock } from './clock.ts';
import { decideClaim, decideExpiry, type ClaimDecision, type ClaimRoom, type ExpiryRule } from './claim-decision.ts';
import { newTokenRecord, sameTokenSet, signaturesOf, type TokenRecord } from './claims.ts';
import { Errors, OidcErrors, Pending } from './errors.ts';
import type { RoomChange, RoomRegistry } from './room-registry.ts';
import { isRequestId, newRequestId, normaliseRequestId } from './ids.ts';
import { requestIdForIdempotencyKey } from './idempotency-key.ts';
import { allowedReturnUrl, handoffLocation, handoffStoreName, HANDOFF_CODE_TTL_SEC, HANDOFF_UNUSED, newHandoffCode, readHandoffCode } from './handoff.ts';
import { JoinBatcher } from './join-batcher.ts';
import { joinRefusal, roomPhase, roomScheduleOf, type RoomPhase } from './room-phase.ts';
import { drawPage, DrawPublications } from './draw-publication.ts';
import { DrawRunner, newDrawCandidate } from './draw-runner.ts';
import { drawIsDue, roomDraws } from './prequeue.ts';
import { EVENT_ID_PATTERN, parseRoomSettings, type RoomDefaults, type RoomSettings } from './room-settings.ts';
import { isJsonObject, mergePatch, roomView, withoutReadOnlyFields, withStoredSecrets, type RoomView } from './room-edits.ts';
import { roomFigures, type RoomFigures } from './room-figures.ts';
import { WaitEstimates, type EstimateAccuracy, type WaitEstimate } from './wait-estimates.ts';
import { WaitTally } from './wait-histogram.ts';
import { parseStoredRoom, ROOM_PROPAGATION_MS, RoomSync } from './room-sync.ts';
import { describeProblem } from './setting-problems.ts';
import type { EventPublisher } from './ports/events.ts';
import type { AuditEntry, AuditStore, BotDefenceStore, Counters, DrawStore, HistoryStore, JoinRequest, QueueStore, RoomStore, SessionRenewal, Store, StoredRoom } from './ports/store.ts';
import type { ProofOfWork } from './ports/proof-of-work.ts';
import { BotDefence, type BotDefenceOutcome, type JoinCredentials } from './bot-defence.ts';
import { reportMinutes, reportTotals, type ReportMinute, type ReportTotals } from './room-report.ts';
import type { PublicJwk, SigningKeys, TokenSet, TokenSigning } from './ports/tokens.ts';

export type Answer<T> = { status: 200; body: T } | { status: 202; body: { error: string } };

/** A change made through the rooms API: the answer (201 for a room created), and the room as it was before. */
export type RoomChangeAnswer<T> = { status: 200 | 201; body: T; before: RoomView | null };

export interface TokenResponse extends TokenSet {
  token_type: 'Bearer';
  expires_in: number;
}

export interface TokenOverrides {
  issuer?: string | undefined;
  validityPeriod?: number | undefined;
  /** OpenID Connect nonce for the id token. */
  nonce?: string | undefined;
}

export interface WaitingRoomServiceDeps {
  store: QueueStore &
    DrawStore &
    RoomStore &
    BotDefenceStore &
    AuditStore &
    HistoryStore &
    Pick<Store, 'ping' | 'description' | 'saveAuthorization' | 'getAuthorization' | 'tryAcquireLock' | 'claimSecret' | 'replaceSecret'>;
  rooms: RoomRegistry;
  keys: SigningKeys;
  signer: TokenSigning;
  events: EventPublisher;
  clock: Clock;
  /** Issuer used when an event has none configured: the server's public base URL (known once listening). */
  defaultIssuer: () => string;
  joinBatch?: { maxBatch?: number; windowMs?: number };
  /**
   * Asynchronous intake (AWS: an SQS queue and a worker that numbers the joins later). When set, a join is
   * answered once `intake` has accepted it, before it has a position: clients handle that through
   * /queue_num's 202 (spec: "A runtime with asynchronous intake may answer before the position exists").
   * Default: positions are stored before the join is answered.
   */
  intake?: (eventId: string, joins: readonly JoinRequest[]) => Promise<void>;
  /** Called after a reset is durable (the CDN purge hook); its failures are its own business. */
  afterReset?: (eventId: string) => Promise<void>;
  /** Told the size of every committed batch of joins (a metric). */
  onJoinBatch?: (size: number) => void;
  /** Entries per store call of the draw, fixed (tests use a few to see several chunks); default: sized to ~10 ms, ≤ 5,000. */
  drawChunkSize?: number;
  /** Defaults of the settings a room put through the rooms API leaves out (the serve flags); else the schema's. */
  roomDefaults?: RoomDefaults;
  /** Told once of each stored room settings text the schema refuses (the room is skipped; see RoomSync). */
  onRoomRefused?: (eventId: string, problem: string) => void;
  /** Makes and checks the proof-of-work challenges of bot_defence; without it, no challenge is issued or accepted. */
  proofOfWork?: ProofOfWork;
  /** Told what the bot defence did (metrics). */
  onBotDefence?: (outcome: BotDefenceOutcome, eventId: string | undefined) => void;
  /** Keys the request IDs of the infinite queue (shared by every node); without it, no room parks joins. */
  parkingSecret?: string;
  /** Tally each admitted visitor's wait for the history (flushWaits); default true. Off with the history off. */
  recordWaits?: boolean;
  /** Waits `ms` milliseconds (a DELETE of a room waits ROOM_PROPAGATION_MS); default: a timer. Tests hold it. */
  sleep?: (ms: number) => Promise<unknown>;
}

/** Without a proof-of-work adapter: no challenge to offer, no solution accepted. */
const noProofOfWork: ProofOfWork = {
  issue: async () => {
    throw Errors.challengeNotEnabled();
  },
  verify: async () => ({ ok: false, reason: 'invalid' }),
};

/** Upper bound of the expired_tokens list, so one call stays a bounded response. */
export const EXPIRED_TOKENS_LIMIT = 10_000;

const ok = <T>(body: T): Answer<T> => ({ status: 200, body });

export class WaitingRoomService {
  /** Without the operations that move the serving counter: those are the Admission's. */
  private readonly store: Omit<WaitingRoomServiceDeps['store'], keyof CounterMovingStore>;
  private readonly catalog: RoomRegistry;
  private readonly keys: SigningKeys;
  private readonly signer: TokenSigning;
  private readonly events: EventPublisher;
  private readonly clock: Clock;
  private readonly defaultIssuer: () => string;
  private readonly afterReset: ((eventId: string) => Promise<void>) | undefined;
  private readonly joins: JoinBatcher;
  private readonly botDefence: BotDefence;
  private readonly admission: Admission;
  private readonly draws: DrawRunner;
  private readonly drawPublications: DrawPublications;
  private readonly intake: boolean;
  /** When this process last asked the store whether a room's due draw is done, to route joins (ms). */
  private readonly drawCheckedAt = new Map<string, number>();
  private readonly roomSync: RoomSync;
  private readonly roomDefaults: RoomDefaults;
  private readonly sleep: (ms: number) => Promise<unknown>;
  private stopFollowingRooms: (() => void) | undefined;
  /** The store writes for room changes, one after the other: two quick changes land in their order. */
  private roomWrites: Promise<void> = Promise.resolve();

  /** The wait estimates given at the first lookup of a place, judged at admission (./wait-estimates.ts). */
  readonly estimates = new WaitEstimates();
  /** Waits and estimate errors of the visitors admitted here, not yet added to the store (./wait-histogram.ts). */
  private readonly waitTally = new WaitTally();
  private readonly recordWaits: boolean;

  constructor(deps: WaitingRoomServiceDeps) {
    this.store = deps.store;
    this.catalog = deps.rooms;
    this.keys = deps.keys;
    this.signer = deps.signer;
    this.events = deps.events;
    this.clock = deps.clock;
    this.defaultIssuer = deps.defaultIssuer;
    this.recordWaits = deps.recordWaits ?? true;
    this.afterReset = deps.afterReset;
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
    this.draws = new DrawRunner({ store: deps.store, nowMs: this.clock, chunkSize: deps.drawChunkSize });
    this.drawPublications = new DrawPublications({ store: deps.store, nowMs: this.clock, candidate: newDrawCandidate });
    this.admission = new Admission({
      store: deps.store,
      events: deps.events,
      now: () => this.now(),
      closeSession: (eventId, requestId, status) => this.closeSession(eventId, requestId, status),
      phase: (room) => this.phaseOf(room),
    });
    this.roomSync = new RoomSync({ store: deps.store, rooms: deps.rooms, onRefused: deps.onRoomRefused });
    this.roomDefaults = deps.roomDefaults ?? {};
    this.sleep = deps.sleep ?? sleep;
    this.botDefence = new BotDefence({
      store: deps.store,
      proofOfWork: deps.proofOfWork ?? noProofOfWork,
      clock: this.clock,
      onOutcome: deps.onBotDefence,
      parkingSecret: deps.parkingSecret,
    });
  }

  private now(): number {
    return epochSeconds(this.clock);
  }

  /**
   * Brings the store in line with the rooms (expiry switch times), creates missing keys, and from then on does
   * the same for every room put in the registry: a room put later is served like one configured at start.
   */
  async start(): Promise<void> {
    this.stopFollowingRooms ??= this.catalog.onChange((change) => this.followRoom(change));
    for (const event of this.catalog.all()) await this.prepareRoom(event);
  }

  private followRoom(change: RoomChange): Promise<void> {
    // A room removed is gone from the store, its keys with it (deleteRoom): one created again gets its own.
    if (change.kind === 'removed') {
      this.keys.forget(change.eventId);
      this.waitTally.forget(change.eventId);
    }
    if (!change.after) return Promise.resolve();
    const room = change.after;
    const write = this.roomWrites.then(() => this.prepareRoom(room));
    this.roomWrites = write.catch(() => {});
    return write;
  }

  private async prepareRoom(event: RoomSettings): Promise<void> {
    await this.store.syncExpirySwitch(event.event_id, event.enable_queue_position_expiry, this.now());
    await this.keys.current(event.event_id, event.signing_algorithm);
  }

  /** Stops following room changes and waits for the store writes of those already made; then drains the joins. */
  async close(): Promise<void> {
    this.stopFollowingRooms?.();
    await this.roomWrites;
    await this.drainJoins();
  }

  private event(eventId: unknown, invalid: () => Error = Errors.invalidEventId): RoomSettings {
    const event = this.catalog.get(eventId);
    if (!event) throw invalid();
    return event;
  }

  private eventAndRequest(eventId: unknown, requestId: unknown): { event: RoomSettings; requestId: string } {
    const event = this.event(eventId, Errors.invalidEventOrRequestId);
    if (!isRequestId(requestId)) throw Errors.invalidEventOrRequestId();
    return { event, requestId: normaliseRequestId(requestId) };
  }

  private expiryRule(event: RoomSettings): ExpiryRule {
    return { enabled: event.enable_queue_position_expiry, period: event.queue_position_expiry_period };
  }

  // ---- the room's phase (src/domain/room-phase.ts) ----

  /** The room's phase now. Asks whether the draw has run only where that can change the answer. */
  private async phaseOf(room: RoomSettings): Promise<RoomPhase> {
    const schedule = roomScheduleOf(room);
    const now = this.now();
    const drawMatters = schedule.shuffleAtEventStart && schedule.eventStart !== undefined && now >= schedule.eventStart;
    return roomPhase(schedule, now, { pending: drawMatters && !(await this.drawDone(room.event_id)) });
  }

  /** Whether claims in this room are decided as if every position were served (state `off`). */
  private async claimRoom(room: RoomSettings): Promise<ClaimRoom> {
    return { servesEveryone: (await this.phaseOf(room)) === 'off' };
  }

  // ---- public API ----

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
    const event = this.event(eventId);
    // Joins depend on the schedule and the state only, never on the draw: no store call on this hot path.
    switch (joinRefusal(roomPhase(roomScheduleOf(event), this.now()))) {
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
      return this.keyedJoin(event.event_id, requestIdForIdempotencyKey(event.event_id, credentials.idempotencyKey), authorization);
    }
    // The pre-queue has no position to bind an authorization to (a draw numbers it later, unbound).
    if (authorization !== undefined && this.routesToPrequeue(event.event_id)) throw OidcErrors.joinInterrupted();
    const requestId = newRequestId();
    await this.joins.join(event.event_id, { requestId, entryTime: this.now(), ...(authorization !== undefined ? { authorization } : {}) });
    return ok({ api_request_id: requestId });
  }

  /** A join whose request ID a key names (an enqueue key, an Idempotency-Key): numbered once, whoever asks. */
  private async keyedJoin(eventId: string, requestId: string, authorization: string | undefined): Promise<Answer<{ api_request_id: string }>> {
    const join = { requestId, entryTime: this.now(), authorization };
    await this.store.assignPositionsIfAbsent(eventId, [join]);
    await this.bindJoins(eventId, [join]);
    return ok({ api_request_id: requestId });
  }

  /** GET /challenge: a proof-of-work challenge for the room, as hard as its join rate makes it now. */
  async challenge(eventId: unknown): Promise<Answer<unknown>> {
    return ok(await this.botDefence.challenge(this.event(eventId)));
  }

  /** The server-wide per-client limit of public writes (--writes-per-client-per-minute): throws 429 over it. */
  limitPublicWrite(client: string, perMinute: number): Promise<void> {
    return this.botDefence.limitWrite(client, perMinute);
  }

  async queueNum(
    eventId: unknown,
    requestId: unknown,
  ): Promise<Answer<{ queue_number: number; entry_time: number; event_id: string; status: 1; wait_estimate_s?: [number, number] }>> {
    const { event, requestId: id } = this.eventAndRequest(eventId, requestId);
    const position = await this.store.getPosition(event.event_id, id);
    if (!position) {
      const parked = this.botDefence.parkedPlace(event, id);
      if (parked) return ok({ queue_number: parked.position, entry_time: parked.entryTime, event_id: event.event_id, status: 1 });
      return (await this.waitsForDraw(event, id)) ? Pending.awaitingDraw : Pending.requestIdNotFound;
    }
    const estimate = await this.estimateFor(event.event_id, id, position.position, position.entryTime);
    return ok({
      queue_number: position.position,
      entry_time: position.entryTime,
      event_id: event.event_id,
      status: 1,
      // Beyond VWR's answer: the estimated wait (seconds, early and late end), once the pace is known.
      ...(estimate ? { wait_estimate_s: [estimate.lowSec, estimate.highSec] as [number, number] } : {}),
    });
  }

  /** The wait estimate of a place: the one given before, or one made now (and kept, to be judged later). */
  private async estimateFor(eventId: string, requestId: string, position: number, entryTime: number): Promise<WaitEstimate | undefined> {
    const given = this.estimates.of(eventId, requestId);
    if (given) return given;
    if (this.estimates.pace(eventId, this.now() * 1000) === undefined) return undefined;
    const serving = await this.store.getServingCounter(eventId);
    const nowMs = this.now() * 1000;
    this.estimates.observe(eventId, serving, nowMs);
    const estimate = this.estimates.estimate(eventId, position, serving, nowMs);
    if (estimate && position > serving) this.estimates.given(eventId, requestId, entryTime * 1000, estimate);
    return estimate;
  }

  async servingNum(eventId: unknown): Promise<Answer<{ serving_counter: number }>> {
    const event = this.event(eventId);
    const serving = await this.store.getServingCounter(event.event_id);
    this.estimates.observe(event.event_id, serving, this.now() * 1000);
    return ok({ serving_counter: serving });
  }

  /** Both counters of a room in one store read, for the public counter stream (GET /stream). */
  async streamCounters(eventId: unknown): Promise<{ serving_counter: number; waiting_num: number; generation: number }> {
    const event = this.event(eventId);
    const counters = await this.store.getCounters(event.event_id);
    this.estimates.observe(event.event_id, counters.serving, this.now() * 1000);
    return { serving_counter: counters.serving, waiting_num: waitingOf(counters), generation: counters.generation ?? 0 };
  }

  async waitingNum(eventId: unknown): Promise<Answer<{ waiting_num: number }>> {
    const event = this.event(eventId);
    return ok({ waiting_num: waitingOf(await this.store.getCounters(event.event_id)) });
  }

  async publicKey(eventId: unknown): Promise<Answer<PublicJwk>> {
    const event = this.event(eventId, Errors.unknownEventKey);
    return ok((await this.keys.current(event.event_id, event.signing_algorithm)).publicJwk);
  }

  /** Every public key of the event, as a JWKS. */
  async jwks(eventId: unknown): Promise<Answer<{ keys: PublicJwk[] }>> {
    const event = this.event(eventId, Errors.unknownEventKey);
    return ok({ keys: (await this.keys.all(event.event_id)).map((k) => k.publicJwk) });
  }

  async generateToken(
    eventId: unknown,
    requestId: unknown,
    overrides: TokenOverrides = {},
  ): Promise<Answer<TokenResponse>> {
    const { event, requestId: id } = this.eventAndRequest(eventId, requestId);
    const now = this.now();
    const [ctx, room] = await Promise.all([this.store.getClaimContext(event.event_id, id), this.claimRoom(event)]);
    const decision = decideClaim(ctx, this.expiryRule(event), now, room);
    switch (decision.kind) {
      case 'no-position':
        // A parked place (infinite queue) is never served, like a place in the pre-queue before the draw.
        if (this.botDefence.parkedPlace(event, id) || (await this.waitsForDraw(event, id))) return Pending.notServedYet;
        throw Errors.invalidRequestId();
      case 'position-left':
        throw Errors.queuePositionLeft();
      case 'not-served-yet':
        return Pending.notServedYet;
      case 'session-closed':
        throw Errors.tokenSessionClosed();
      case 'position-expired':
        throw Errors.queuePositionExpired();
      case 'reissue':
        return ok(await this.tokenResponse(event.event_id, decision.record, now));
      case 'issue': {
        const answer = await this.issue(event, id, decision.position, now, overrides);
        if (answer.issued && this.recordWaits) {
          // The wait it had (join → admission; the claim when the admission time is unknown), against the
          // estimate it was given (when this node gave it one): the room's wait histogram of that minute.
          const admittedAt = Math.max(ctx?.servedAt ?? now, ctx?.entryTime ?? 0);
          const error = this.estimates.admitted(event.event_id, id, admittedAt * 1000);
          this.waitTally.add(event.event_id, admittedAt, admittedAt - (ctx?.entryTime ?? admittedAt), error);
        }
        return ok(answer.response);
      }
    }
  }

  private async issue(
    event: RoomSettings,
    requestId: string,
    position: number,
    now: number,
    overrides: TokenOverrides,
  ): Promise<{ response: TokenResponse; issued: boolean }> {
    const key = await this.keys.current(event.event_id, event.signing_algorithm);
    const record = newTokenRecord({
      requestId,
      position,
      now,
      validityPeriod: overrides.validityPeriod ?? event.validity_period,
      issuer: overrides.issuer ?? event.issuer ?? this.defaultIssuer(),
      kid: key.kid,
      nonce: overrides.nonce,
    });
    // Signed before it is stored, so the signatures are stored with the record in the same atomic write and a
    // re-claim never signs again (issue 15). A claim refused below wasted one signing: rare.
    const signed = await this.signer.signNew(event.event_id, record);
    const stored: TokenRecord = { ...record, signatures: signaturesOf(signed) };
    const result = await this.store.issueTokenIfAbsent(event.event_id, stored);
    switch (result.outcome) {
      case 'no-position':
        throw Errors.invalidRequestId();
      case 'expired':
        throw Errors.queuePositionExpired();
      case 'left':
        // The visitor left between the claim context read and this atomic issue.
        throw Errors.queuePositionLeft();
      case 'existing':
        // A concurrent first claim won: answer with its tokens (same rules as a re-claim).
        if (result.record.status !== 0) throw Errors.tokenSessionClosed();
        return { response: await this.tokenResponse(event.event_id, result.record, now), issued: false };
      case 'issued': {
        // The set just signed, unless the store's record differs in anything the tokens are built from.
        const response = sameTokenSet(result.record, stored)
          ? tokenAnswer(signed, stored, now)
          : await this.tokenResponse(event.event_id, result.record, now);
        this.events.publish('token_generated', { event_id: event.event_id, request_id: requestId });
        return { response, issued: true };
      }
    }
  }

  private async tokenResponse(eventId: string, record: TokenRecord, now: number): Promise<TokenResponse> {
    return tokenAnswer(await this.signer.sign(eventId, record), record, now);
  }

  async queuePosExpiry(eventId: unknown, requestId: unknown): Promise<Answer<{ expires_in: number }>> {
    const { event, requestId: id } = this.eventAndRequest(eventId, requestId);
    const ctx = await this.store.getClaimContext(event.event_id, id);
    const decision = decideExpiry(ctx, this.expiryRule(event), this.now());
    switch (decision.kind) {
      case 'no-position':
        // Waiting for the draw, or parked, is not being served yet: answered as for a position not reached.
        if (this.botDefence.parkedPlace(event, id) || (await this.waitsForDraw(event, id))) {
          return event.enable_queue_position_expiry ? Pending.notServedYet : Pending.expiryNotEnabled;
        }
        throw Errors.invalidRequestId();
      case 'position-left':
        throw Errors.queuePositionLeft();
      case 'expiry-not-enabled':
        return Pending.expiryNotEnabled;
      case 'not-served-yet':
        return Pending.notServedYet;
      case 'position-expired':
        throw Errors.queuePositionExpired();
      case 'expires-in':
        return ok({ expires_in: decision.seconds });
    }
  }

  /**
   * leave_queue (spec/rooms.md §4): the visitor gives their place up at once. It no longer counts as waiting, a
   * later generate_token answers 410, and under automatic admission the place goes to the next visitor at the
   * next tick. Unknown request ID → 404; left already → 410; a token set issued → 410 (that visitor's session
   * ends with update_session); a position already expired → 410. Emits queue_left.
   */
  async leaveQueue(eventId: unknown, requestId: unknown): Promise<Answer<Record<string, never>>> {
    const { event, requestId: id } = this.eventAndRequest(eventId, requestId);
    const result = await this.store.leaveQueue(event.event_id, id);
    switch (result.outcome) {
      case 'no-position':
        if (this.botDefence.parkedPlace(event, id)) return ok({});
        // In a room with a draw, a visitor of the pre-queue has no position yet: they leave the pre-queue.
        if (event.shuffle_at_event_start === true) return this.leavePrequeue(event.event_id, id);
        throw Errors.invalidRequestId();
      case 'already-left':
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
  private async leavePrequeue(eventId: string, id: string): Promise<Answer<Record<string, never>>> {
    switch (await this.store.leavePrequeue(eventId, id)) {
      case 'left':
        this.events.publish('queue_left', { event_id: eventId, request_id: id });
        return ok({});
      case 'already-left':
        throw Errors.queuePositionLeft();
      case 'not-in-prequeue':
        throw Errors.invalidRequestId();
      case 'being-drawn':
        throw Errors.drawInProgress();
      case 'numbered':
        // Numbered between the two calls: it is an ordinary position now.
        return this.leaveQueue(eventId, id);
    }
  }

  // ---- private API ----

  /** A manual admission: `by` may be negative (VWR); the counter never goes below 0. */
  async incrementServingCounter(eventId: unknown, by: number): Promise<Answer<{ serving_num: number }>> {
    return ok(await this.admit(eventId, { kind: 'manual', by }));
  }

  async numActiveTokens(eventId: unknown): Promise<Answer<{ active_tokens: number }>> {
    const event = this.event(eventId, Errors.unknownEventKey);
    return ok({ active_tokens: await this.store.countActiveTokens(event.event_id, this.now()) });
  }

  async expiredTokens(eventId: unknown): Promise<Answer<string[]>> {
    const event = this.event(eventId);
    return ok(await this.store.listExpiredTokens(event.event_id, this.now(), EXPIRED_TOKENS_LIMIT));
  }

  async updateSession(eventId: unknown, requestId: unknown, status: unknown): Promise<Answer<Record<string, never>>> {
    if (!(await this.closeSession(eventId, requestId, status))) throw Errors.sessionNotFound();
    return ok({});
  }

  /**
   * The gate's shared "last seen" of a session (store.renewSession): records a request (`touch`) and ends the
   * session as abandoned when it was last seen before `idleBeforeMs` on any node. An ended session emits
   * session_updated, as update_session does.
   */
  async renewGateSession(eventId: string, requestId: string, nowMs: number, idleBeforeMs: number | null, touch: boolean): Promise<SessionRenewal> {
    const result = await this.store.renewSession(eventId, requestId, nowMs, idleBeforeMs, touch);
    if (result.outcome === 'ended') this.events.publish('session_updated', { event_id: eventId, request_id: requestId, status: 'abandoned' });
    return result;
  }

  /**
   * update_session without its 404: false when the request ID has no token set or its session is closed
   * already. Closing emits session_updated.
   */
  private async closeSession(eventId: unknown, requestId: unknown, status: unknown): Promise<boolean> {
    const { event, requestId: id } = this.eventAndRequest(eventId, requestId);
    if (status !== 1 && status !== -1) throw Errors.invalidEventOrRequestId();
    if (!(await this.store.closeSession(event.event_id, id, status))) return false;
    this.events.publish('session_updated', {
      event_id: event.event_id,
      request_id: id,
      status: status === 1 ? 'completed' : 'abandoned',
    });
    return true;
  }

  // ---- the hand-off without a gate (src/domain/handoff.ts) ----

  /**
   * POST /handoff_code: for a served visitor, a one-time code and where to send them — `return_to` with
   * `anteroom_handoff=<code>` — when `return_to` is on one of the room's allowed_return_origins (else 400).
   * Not served yet → 202, as generate_token; a place that cannot be served (expired, left, closed) → its error.
   */
  async handoffCode(eventId: unknown, requestId: unknown, returnTo: unknown): Promise<Answer<{ location: string; expires_in: number }>> {
    const { event, requestId: id } = this.eventAndRequest(eventId, requestId);
    const url = allowedReturnUrl(returnTo, event.allowed_return_origins);
    if (!url) throw Errors.returnToNotAllowed();
    // The same rules as a claim: only a visitor generate_token would serve gets a code.
    const claim = await this.generateToken(event.event_id, id);
    if (claim.status === 202) return claim;
    const made = newHandoffCode(event.event_id, id, this.now());
    await this.store.claimSecret(made.storeName, HANDOFF_UNUSED);
    return ok({ location: handoffLocation(url, made.code), expires_in: HANDOFF_CODE_TTL_SEC });
  }

  /** POST /handoff: the token set for a code, exactly once (a second exchange → 410; unknown or stale → 404). */
  async exchangeHandoff(eventId: unknown, code: unknown): Promise<Answer<TokenResponse>> {
    const event = this.event(eventId);
    const named = readHandoffCode(code);
    if (!named || !isRequestId(named.requestId) || this.now() - named.createdSec > HANDOFF_CODE_TTL_SEC) throw Errors.invalidHandoffCode();
    const spent = `used:${newRequestId()}`;
    const after = await this.store.replaceSecret(handoffStoreName(event.event_id, code as string), HANDOFF_UNUSED, spent);
    if (after === null) throw Errors.invalidHandoffCode();
    if (after !== spent) throw Errors.handoffCodeUsed();
    return this.generateToken(event.event_id, named.requestId);
  }

  async resetInitialState(eventId: unknown): Promise<Answer<{ message: string }>> {
    const event = this.event(eventId);
    await this.store.resetEvent(event.event_id);
    this.estimates.forget(event.event_id);
    this.draws.forget(event.event_id);
    this.drawPublications.forget(event.event_id);
    await this.afterReset?.(event.event_id);
    // The text VWR's clients know (its reset recreated a DynamoDB table).
    return ok({ message: 'Counters reset. DynamoDB table recreated.' });
  }

  async counters(eventId: string): Promise<Counters & { waiting: number; activeTokens: number }> {
    const counters = await this.store.getCounters(eventId);
    const activeTokens = await this.store.countActiveTokens(eventId, this.now());
    return { ...counters, waiting: waitingOf(counters), activeTokens };
  }

  // ---- rooms at runtime: the rooms API (/private/rooms) and the rooms every node serves ----

  /**
   * Writes the configured rooms (events file, --event-id, the AWS environment) to the store as puts — the
   * configuration wins for the rooms it lists — and serves every stored room. Called once, after start().
   */
  openRooms(configured: readonly RoomSettings[]): Promise<void> {
    return this.roomSync.open(configured);
  }

  /** Serves the rooms as stored now, if they changed since the last look (one cheap read when not). Every second. */
  syncRooms(): Promise<void> {
    return this.roomSync.check();
  }

  /** Every stored room (GET /private/rooms), in the order they were created; one the schema refuses is left out. */
  async listRooms(): Promise<Answer<{ rooms: RoomView[] }>> {
    const { rooms } = await this.store.listRooms();
    const views = await Promise.all(
      rooms.map(async (room) => {
        const parsed = parseStoredRoom(room);
        return parsed.ok ? [roomView(parsed.settings, await this.phaseOf(parsed.settings))] : [];
      }),
    );
    return ok({ rooms: views.flat() });
  }

  /** One stored room with its phase (GET /private/rooms/{event_id}). Unknown → 404. */
  async getRoom(eventId: unknown): Promise<Answer<RoomView>> {
    return ok(await this.viewOf(await this.storedRoom(eventId)));
  }

  /**
   * The room's figures for the control panel (GET /private/rooms/{event_id}/figures, ./room-figures.ts): the
   * counters and the admission snapshot, read now. A room this node does not serve → 404.
   */
  async roomFigures(
    eventId: unknown,
  ): Promise<Answer<RoomFigures & { estimate_accuracy: EstimateAccuracy; bot_defence?: Record<BotDefenceOutcome, number> }>> {
    const room = this.catalog.get(eventId);
    if (!room) throw Errors.unknownRoom();
    const now = this.now();
    const [counters, snapshot, phase] = await Promise.all([
      this.store.getCounters(room.event_id),
      this.store.getAdmissionSnapshot(room.event_id, now, rateWindowStart(now)),
      this.phaseOf(room),
    ]);
    return ok({
      ...roomFigures(room.event_id, phase, counters, snapshot),
      estimate_accuracy: this.estimates.accuracy(room.event_id),
      // What the bot defence did here (this node, since it started), for a room that has one.
      ...(room.bot_defence ? { bot_defence: this.botDefence.tally(room.event_id) } : {}),
    });
  }

  /** Creates (201) or replaces (200) a room with the body's settings (PUT /private/rooms/{event_id}). */
  async putRoom(eventId: unknown, body: unknown): Promise<RoomChangeAnswer<RoomView>> {
    const id = this.roomIdForPut(eventId);
    const input = this.roomInput(id, body);
    const stored = await this.store.getRoom(id);
    return this.writeRoom(id, this.withStoredSecrets(input, stored && jsonOf(stored)), stored);
  }

  /** Merges the body into a room's settings (PATCH /private/rooms/{event_id}). Unknown → 404. */
  async patchRoom(eventId: unknown, body: unknown): Promise<RoomChangeAnswer<RoomView>> {
    const stored = await this.storedRoom(eventId);
    const patch = this.roomInput(stored.eventId, body);
    const current = jsonOf(stored);
    // The patch's "[redacted]" and left-out secrets are resolved before the merge, so that a null in the patch
    // still removes a secret.
    const merged = { ...(mergePatch(current, this.withStoredSecrets(patch, current)) as Record<string, unknown>), event_id: stored.eventId };
    return this.writeRoom(stored.eventId, merged, stored);
  }

  /** The body with the stored secrets it refers to (room-edits.ts); "[redacted]" where none is stored: 400. */
  private withStoredSecrets(input: Record<string, unknown>, stored: unknown): Record<string, unknown> {
    const restored = withStoredSecrets(input, stored);
    if (!restored.ok) throw Errors.invalidRoomSettings(describeProblem(restored.problem));
    return restored.value;
  }

  /**
   * Deletes a room, its settings and all its data (DELETE /private/rooms/{event_id}). Unknown → 404.
   *
   * The settings go first: this node stops serving the room at once, every other node within
   * ROOM_PROPAGATION_MS. Only then does the data go — a node still serving the room in between (or a join
   * batch of it still committing) would otherwise write positions after the data was deleted, and a room
   * created again later would find them. So a DELETE takes about two seconds. A room created again under the
   * same ID during that wait keeps what it has. A DELETE of an ID without settings deletes whatever data is
   * left under it (a DELETE interrupted between its two steps) and answers 404.
   */
  async deleteRoom(eventId: unknown): Promise<RoomChangeAnswer<Record<string, never>>> {
    if (!isRoomId(eventId)) throw Errors.unknownRoom();
    const stored = await this.store.getRoom(eventId);
    const existed = await this.store.deleteRoomSettings(eventId);
    await this.roomSync.check();
    if (existed) await this.sleep(ROOM_PROPAGATION_MS);
    if (!(await this.store.getRoom(eventId))) await this.store.deleteRoomData(eventId);
    if (!existed) throw Errors.unknownRoom();
    return { status: 200, body: {}, before: await this.auditView(stored) };
  }

  /** The stored room named by the path, or 404 (an ID no room can have is not looked up). */
  private async storedRoom(eventId: unknown): Promise<StoredRoom> {
    const stored = isRoomId(eventId) ? await this.store.getRoom(eventId) : null;
    if (!stored) throw Errors.unknownRoom();
    return stored;
  }

  /** A PUT may create a room, so its ID must be one a room can have: 400 naming event_id otherwise. */
  private roomIdForPut(eventId: unknown): string {
    if (isRoomId(eventId)) return eventId;
    const problem = parseRoomSettings({ event_id: eventId });
    throw Errors.invalidRoomSettings(problem.ok ? 'event_id: is not a valid room ID' : describeProblem(problem.problem));
  }

  /** The body as settings input: an object, without read-only fields, whose event_id (if any) is the path's. */
  private roomInput(eventId: string, body: unknown): Record<string, unknown> {
    if (!isJsonObject(body)) throw Errors.invalidRoomSettings('the settings must be a JSON object');
    if ('event_id' in body && body.event_id !== eventId) {
      throw Errors.invalidRoomSettings("event_id: differs from the room's ID in the path");
    }
    return { ...withoutReadOnlyFields(body), event_id: eventId };
  }

  private async writeRoom(eventId: string, input: unknown, stored: StoredRoom | null): Promise<RoomChangeAnswer<RoomView>> {
    const parsed = parseRoomSettings(input, this.roomDefaults);
    if (!parsed.ok) throw Errors.invalidRoomSettings(describeProblem(parsed.problem));
    const outcome = await this.store.putRoom(eventId, JSON.stringify(parsed.settings));
    await this.roomSync.check();
    return {
      status: outcome === 'created' ? 201 : 200,
      body: roomView(parsed.settings, await this.phaseOf(parsed.settings)),
      before: await this.auditView(stored),
    };
  }

  /** A room as it was before a change, for the audit log; settings this version refuses are not shown (a PUT fixes them). */
  private async auditView(stored: StoredRoom | null): Promise<RoomView | null> {
    const parsed = stored && parseStoredRoom(stored);
    return parsed?.ok ? roomView(parsed.settings, await this.phaseOf(parsed.settings)) : null;
  }

  /** A stored room as answered; its stored settings are read through the schema (refused: a failure of ours). */
  private async viewOf(stored: StoredRoom): Promise<RoomView> {
    const parsed = parseStoredRoom(stored);
    if (!parsed.ok) throw new Error(`the stored settings of room "${stored.eventId}" are refused: ${describeProblem(parsed.problem)}`);
    return roomView(parsed.settings, await this.phaseOf(parsed.settings));
  }

  // ---- admission: every move of the serving counter ----

  /**
   * Moves the room's serving counter as the request asks (src/domain/admission/admission.ts): the manual
   * increment of the private API, a periodic inlet's tick, a MaxSize report. Unknown room → 400.
   */
  async admit<R extends AdmissionRequest>(eventId: unknown, request: R): Promise<AdmissionResults[R['kind']]> {
    const event = this.event(eventId);
    return this.admission.admit(event, request);
  }

  // ---- background jobs ----

  /** One tick of the expiry job for one event (with incr_serving_on_expiry, an admission); nothing for a room
   * removed since the job listed the rooms. */
  async advanceExpiry(eventId: string): Promise<void> {
    const event = this.catalog.get(eventId);
    if (!event?.enable_queue_position_expiry) return;
    await this.admission.advanceExpiry(event);
  }

  /**
   * One tick of the admission job for one room (src/domain/admission/automatic.ts): a room with admission
   * "automatic" admits within its limits, a room that is `off` admits everyone waiting; any other room is left
   * alone without a store call. Undefined for a room removed since the job listed the rooms.
   */
  async admitAutomatically(eventId: string): Promise<AutomaticTickOutcome | undefined> {
    const event = this.catalog.get(eventId);
    return event && this.admission.admitAutomatically(event);
  }

  /** One tick of the metrics job for one event (only when events generation is on, and the room still served). */
  async emitMetrics(eventId: string): Promise<void> {
    const event = this.catalog.get(eventId);
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

  // ---- the pre-queue and the draw (spec rooms.md §3; ./prequeue.ts, ./draw-runner.ts) ----

  /**
   * Where the join batcher commits a batch: the pre-queue while the room's draw is not done (its store call then
   * numbers the joins itself if the draw turns out done), positions otherwise. The seed is created and committed
   * with the first pre-queue join when nothing asked for it before.
   */
  private async commitJoins(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    if (this.routesToPrequeue(eventId)) return this.store.joinPrequeue(eventId, joins, newDrawCandidate());
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

  /** Whether a join of the room goes to the pre-queue now, by what this process knows of its draw. */
  private routesToPrequeue(eventId: string): boolean {
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
  private async waitsForDraw(room: RoomSettings, requestId: string): Promise<boolean> {
    if (!roomDraws(room)) return false;
    const entry = await this.store.getPrequeueEntry(room.event_id, requestId);
    return entry !== null && !entry.left;
  }

  /**
   * Whether the room may admit as far as the draw is concerned: true for a room without a draw, and for one
   * whose draw is done. The admission tick waits for it; nobody has a position to admit before anyway.
   */
  async drawDone(eventId: string): Promise<boolean> {
    const room = this.catalog.get(eventId);
    if (!room || !roomDraws(room)) return true;
    return this.draws.isDone(eventId);
  }

  /**
   * One tick of the draw job: runs the draw of every room whose start has come and whose draw is not done (to
   * its end, which for 100,000 entries takes a few seconds; a tick that finds it running on this process or
   * another node returns at once).
   */
  async runDraws(): Promise<void> {
    const now = this.now();
    for (const room of this.catalog.all()) {
      if (drawIsDue(room, now) && !this.draws.knownDone(room.event_id)) await this.draws.run(room.event_id);
    }
  }

  /**
   * GET /draw: the room's draw as published, JSON bytes (./draw-publication.ts): the commitment before the draw,
   * the seed and the entries after it. Unknown room → 400; a room without a draw → 404.
   */
  /** GET /draw: the whole publication, or page `page` (from 1) of its entries (draw-publication.ts, drawPage). */
  async drawPublication(eventId: unknown, page?: number): Promise<Answer<Buffer>> {
    const room = this.event(eventId);
    if (!roomDraws(room)) throw Errors.drawNotEnabled();
    const publication = await this.drawPublications.current(room.event_id);
    if (page === undefined) return ok(publication.json);
    const json = drawPage(publication, page);
    if (json === null) throw Errors.drawPageNotFound();
    return ok(json);
  }

  /**
   * The drawn entries and the positions they got, in join order, from `offset`, at most `limit`: what the room
   * drew, for the operator's check of the publication and of every place (`anteroom verify-draw --check-all`).
   * 202 before the draw is done.
   */
  async drawPositions(
    eventId: unknown,
    offset: number,
    limit: number,
  ): Promise<Answer<{ first_position: number; total: number; entries: string[]; positions: number[] }>> {
    const room = this.event(eventId);
    if (!roomDraws(room)) throw Errors.drawNotEnabled();
    const { drawn } = await this.drawPublications.current(room.event_id);
    if (!drawn) return Pending.drawNotDone;
    const positions = [...drawn.positions.subarray(offset, offset + limit)];
    return ok({
      first_position: drawn.firstPosition,
      total: drawn.positions.length,
      entries: positions.map((_, i) => drawn.entryHexes.slice((offset + i) * 64, (offset + i + 1) * 64)),
      positions,
    });
  }

  // ---- for the adapters: what they may know, without reaching the store or the registry ----

  /** The settings of every room this service serves. */
  rooms(): RoomSettings[] {
    return this.catalog.all();
  }

  /** The rooms as one read-only array, the same one until a room changes (the gate caches its routes by it). */
  roomsSnapshot(): readonly RoomSettings[] {
    return this.catalog.snapshotAll();
  }

  /** The IDs of every room this service serves. */
  roomIds(): string[] {
    return this.catalog.ids();
  }

  /** The room's phase now (spec/rooms.md §2: the rooms API reports it). Unknown room → 400. */
  async roomPhase(eventId: unknown): Promise<RoomPhase> {
    return this.phaseOf(this.event(eventId));
  }

  /** The settings of a room, or undefined for an ID that names none (any value: callers pass raw input). */
  roomSettings(eventId: unknown): RoomSettings | undefined {
    return this.catalog.get(eventId);
  }

  /**
   * The room's counters if this process holds them in memory fresh enough to answer a poll; undefined when they
   * are not (the caller then takes the ordinary path). Never reads the store and never blocks: the polling fast
   * path (src/http/fast-poll.ts) calls it for every poll. Undefined for an unknown room too.
   */
  countersInMemory(eventId: string): Counters | undefined {
    if (!this.store.peekCounters || !this.catalog.get(eventId)) return undefined;
    const counters = this.store.peekCounters(eventId);
    if (counters) this.estimates.observe(eventId, counters.serving, this.now() * 1000);
    return counters;
  }

  /** Whether the store can answer polls from memory at all (when not, the fast path is not installed). */
  get answersPollsFromMemory(): boolean {
    return this.store.peekCounters !== undefined;
  }

  /** Throws when the store cannot be reached (/readyz). */
  async checkStore(): Promise<void> {
    await this.store.ping();
  }

  /**
   * Keeps every room's counters at the current minute in its history (the history job, once a minute across
   * nodes), dropping samples older than `keepSeconds`.
   */
  async recordHistory(keepSeconds: number): Promise<void> {
    const now = this.now();
    const minute = now - (now % 60);
    for (const eventId of this.roomIds()) {
      const [counters, active] = await Promise.all([this.store.getCounters(eventId), this.store.countActiveTokens(eventId, now)]);
      await this.store.recordHistory(eventId, { minute, counters, active }, keepSeconds);
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
    if (!this.roomSettings(eventId)) throw Errors.unknownRoom();
    const first = from - (from % 60);
    // One sample before the range gives its first minute's movements.
    const [samples, waits] = await Promise.all([this.store.readHistory(eventId, first - 60, to), this.store.readWaits(eventId, first, to)]);
    const previous = samples[0] && samples[0].minute < first ? samples.shift() : undefined;
    const minutes = reportMinutes(samples, previous, waits);
    return { status: 200, body: { event_id: eventId, from, to, totals: reportTotals(minutes, waits), minutes } };
  }

  /** Keeps one private-API change in the audit log (who, from where, what, before and after). */
  async recordChange(entry: Omit<AuditEntry, 'at'>): Promise<void> {
    await this.store.appendAudit({ at: this.clock(), ...entry });
  }

  /** The audit log, newest first: at most `limit` entries older than `beforeSeq`. */
  auditLog(limit: number, beforeSeq?: number): Promise<(AuditEntry & { seq: number })[]> {
    return this.store.listAudit(limit, beforeSeq);
  }

  /** The store's name for logs and /readyz (no credentials). */
  get storeDescription(): string {
    return this.store.description;
  }

  /**
   * What generate_token would decide now for this visitor, without issuing anything (the OpenID Connect login
   * page asks before it sends the visitor back to the relying party). Unknown room → 400.
   */
  async claimReadiness(eventId: unknown, requestId: string): Promise<ClaimDecision['kind']> {
    const event = this.event(eventId, Errors.invalidEventOrRequestId);
    const [ctx, room] = await Promise.all([this.store.getClaimContext(event.event_id, requestId), this.claimRoom(event)]);
    return decideClaim(ctx, this.expiryRule(event), this.now(), room).kind;
  }

  /**
   * Binds an OpenID Connect authorization request (opaque text) to a visitor's position; false, storing
   * nothing, when the request ID has no position.
   */
  bindAuthorization(eventId: string, requestId: string, authorization: string): Promise<boolean> {
    return this.store.saveAuthorization(eventId, requestId, authorization);
  }

  /** The authorization request bound to a visitor's position, or null. */
  boundAuthorization(eventId: string, requestId: string): Promise<string | null> {
    return this.store.getAuthorization(eventId, requestId);
  }

  /**
   * Numbers joins accepted earlier by an asynchronous intake (AWS: the SQS consumer). A join delivered twice
   * keeps its first position. One atomic store operation for the batch.
   */
  async numberIntakeJoins(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    // Both are idempotent for a redelivered join (the pre-queue lists a request ID once), and so is the binding
    // of an OpenID join's authorization (the same text again).
    if (this.routesToPrequeue(eventId)) return this.store.joinPrequeue(eventId, joins, newDrawCandidate());
    const positions = await this.store.assignPositionsIfAbsent(eventId, joins);
    await this.bindJoins(eventId, joins);
    return positions;
  }

  /** Answers every join waiting in the batcher (commits them first); call before closing the store. */
  drainJoins(): Promise<void> {
    return this.joins.drain();
  }
}

const ROOM_ID = new RegExp(EVENT_ID_PATTERN);

/** Whether the value is an ID a room can have (anything else names no room, stored or not). */
/** The answer to a claim: the set, and how long it stays valid (never more than its validity, whatever the clock did). */
function tokenAnswer(tokens: TokenSet, record: TokenRecord, now: number): TokenResponse {
  return { ...tokens, token_type: 'Bearer', expires_in: Math.min(record.exp - record.iat, Math.max(0, record.exp - now)) };
}

function isRoomId(value: unknown): value is string {
  return typeof value === 'string' && ROOM_ID.test(value);
}

/** A stored room's settings as the JSON value they spell (undefined when they spell none). */
function jsonOf(stored: StoredRoom): unknown {
  try {
    return JSON.parse(stored.settings);
  } catch {
    return undefined;
  }
}

/** People who joined and have neither claimed a token, lost their place nor given it up (VWR #208: always subtract). */
export function waitingOf(counters: Counters): number {
  return Math.max(0, counters.queue - counters.tokens - counters.expired - counters.left);
}
