// The waiting room's capabilities, wired together: one sealed service per capability — the queue, claims,
// sessions, admission, rooms, draws and reports (./*-service.ts) — over the parts they share in memory (the room
// lookups and phase of ./room-context.ts, the bot defence, the wait estimates and tallies, the draw runner).
// Each service validates its inputs against the room registry, decides with the rules of src/domain, changes
// state only through one atomic store operation of the store capabilities it is given, and publishes events
// after the change is durable. Drivers (HTTP, gate, OIDC, Lambda, jobs, inlets) call the capability they need
// and never reach the store or the registry. Every move of the serving counter goes through the one Admission
// (src/domain/admission/), which only the admission capability holds. Built by composeCore (src/compose/core.ts).

import { setTimeout as sleep } from 'node:timers/promises';
import { Admission, type CounterMovingStore } from '../admission/admission.ts';
import { BotDefence, type BotDefenceOutcome } from '../bot-defence.ts';
import type { Clock } from '../clock.ts';
import { DrawPublications } from '../draw-publication.ts';
import { DrawRunner, newDrawCandidate } from '../draw-runner.ts';
import { DrawTimes } from '../draw-times.ts';
import { Errors } from '../errors.ts';
import type { EventPublisher } from '../ports/events.ts';
import type { ProofOfWork } from '../ports/proof-of-work.ts';
import type { AuditStore, BotDefenceStore, DrawStore, HistoryStore, JoinRequest, QueueStore, RoomStore, Store } from '../ports/store.ts';
import type { SigningKeys, TokenSigning } from '../ports/tokens.ts';
import type { RoomRegistry } from '../room-registry.ts';
import type { RoomDefaults } from '../room-settings.ts';
import { RoomSync } from '../room-sync.ts';
import { PresenceTracker } from '../presence.ts';
import { WaitEstimates } from '../wait-estimates.ts';
import { WaitTally } from '../wait-histogram.ts';
import { AdmissionService } from './admission-service.ts';
import { ClaimService } from './claim-service.ts';
import { DrawService } from './draw-service.ts';
import { QueueService } from './queue-service.ts';
import { ReportService } from './report-service.ts';
import { RoomContext } from './room-context.ts';
import { RoomService } from './room-service.ts';
import { SessionService } from './session-service.ts';

export interface WaitingRoomDeps {
  store: QueueStore &
    DrawStore &
    RoomStore &
    BotDefenceStore &
    AuditStore &
    HistoryStore &
    Pick<Store, 'presence' | 'ping' | 'description' | 'saveAuthorization' | 'getAuthorization' | 'tryAcquireLock' | 'claimSecret' | 'replaceSecret'>;
  rooms: RoomRegistry;
  keys: SigningKeys;
  signer: TokenSigning;
  events: EventPublisher;
  clock: Clock;
  /** Issuer used when an event has none configured: the server's public base URL (known once listening). */
  defaultIssuer: () => string;
  joinBatch?: { maxBatch?: number; windowMs?: number; queueWaitMs?: number | undefined };
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

/** Every capability of the waiting room, and its lifecycle. */
export interface WaitingRoom {
  /** Join, place, counters a page polls, leave, the intake's numbering (./queue-service.ts). */
  queue: QueueService;
  /** Token sets, public keys, queue_pos_expiry, the hand-off, the OpenID binding (./claim-service.ts). */
  claims: ClaimService;
  /** update_session, the gate's last seen, active and expired tokens (./session-service.ts). */
  sessions: SessionService;
  /** Every move of the serving counter, the expiry and admission jobs, the reset (./admission-service.ts). */
  admission: AdmissionService;
  /** The rooms served, their settings and phases, the rooms API (./room-service.ts). */
  rooms: RoomService;
  /** The pre-queue's draw and its publication (./draw-service.ts). */
  draws: DrawService;
  /** Counters and figures, metrics, history and reports, the audit log, the store's health (./report-service.ts). */
  reports: ReportService;
  /** Who is still there (../presence.ts): this node's marks, merged into the store every few seconds (issue 34). */
  presence: PresenceTracker;
  /**
   * Brings the store in line with the rooms (expiry switch times), creates missing keys, and from then on does
   * the same for every room put in the registry (RoomService.start).
   */
  start(): Promise<void>;
  /** Stops following room changes and waits for the store writes of those already made; then drains the joins. */
  close(): Promise<void>;
}

/** Without a proof-of-work adapter: no challenge to offer, no solution accepted. */
const noProofOfWork: ProofOfWork = {
  issue: async () => {
    throw Errors.challengeNotEnabled();
  },
  verify: async () => ({ ok: false, reason: 'invalid' }),
};

export function buildWaitingRoom(deps: WaitingRoomDeps): WaitingRoom {
  const { store, events, clock } = deps;
  // When each commitment was published and each draw took place (../draw-times.ts).
  const drawTimes = new DrawTimes(store, clock);
  const draws = new DrawRunner({
    store,
    nowMs: clock,
    chunkSize: deps.drawChunkSize,
    onStarted: (eventId, draw) => drawTimes.drawn(eventId, draw.commitment),
  });
  const publications = new DrawPublications({ store, nowMs: clock, candidate: newDrawCandidate, times: drawTimes });
  const context = new RoomContext({ rooms: deps.rooms, clock, draws, store });
  const botDefence = new BotDefence({
    store,
    proofOfWork: deps.proofOfWork ?? noProofOfWork,
    clock,
    onOutcome: deps.onBotDefence,
    parkingSecret: deps.parkingSecret,
  });
  const estimates = new WaitEstimates();
  const waitTally = new WaitTally();
  const presence = new PresenceTracker({ store: store.presence, now: () => context.now(), room: (id) => context.catalog.get(id) });

  const queue = new QueueService({
    store,
    context,
    events,
    botDefence,
    estimates,
    presence,
    joinBatch: deps.joinBatch,
    intake: deps.intake,
    onJoinBatch: deps.onJoinBatch,
  });
  const claims = new ClaimService({
    store,
    context,
    keys: deps.keys,
    signer: deps.signer,
    events,
    botDefence,
    estimates,
    presence,
    waitTally: (deps.recordWaits ?? true) ? waitTally : undefined,
    defaultIssuer: deps.defaultIssuer,
  });
  const sessions = new SessionService({ store, context, events });
  const counterMovers: CounterMovingStore & Pick<QueueStore, 'countActiveTokens' | 'getServingCounter' | 'getAdmissionSnapshot'> = store;
  const admission = new AdmissionService({
    store,
    context,
    admission: new Admission({
      presence: store.presence,
      flushPresence: (eventId) => presence.flush(eventId),
      store: counterMovers,
      events,
      now: () => context.now(),
      closeSession: (eventId, requestId, status) => sessions.closeSession(eventId, requestId, status),
      phase: (room) => context.phaseOf(room),
    }),
    forgetRoomState: (eventId) => {
      estimates.forget(eventId);
      draws.forget(eventId);
      publications.forget(eventId);
    },
    afterReset: deps.afterReset,
  });
  const rooms = new RoomService({
    store,
    context,
    keys: deps.keys,
    roomSync: new RoomSync({ store, rooms: deps.rooms, onRefused: deps.onRoomRefused }),
    waitTally,
    roomDefaults: deps.roomDefaults ?? {},
    sleep: deps.sleep ?? sleep,
  });
  const drawService = new DrawService({ context, draws, publications });
  const reports = new ReportService({ store, context, events, botDefence, estimates, waitTally, presence });

  return {
    queue,
    claims,
    sessions,
    admission,
    rooms,
    draws: drawService,
    reports,
    presence,
    start: () => rooms.start(),
    close: async () => {
      await rooms.close();
      await queue.drainJoins();
      await presence.close();
    },
  };
}
