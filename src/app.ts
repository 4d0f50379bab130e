// Assembles one Anteroom node: the core (src/compose/core.ts) with the HTTP server, event sinks and background
// jobs around it.

import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ADMISSION_TICK_MS } from './domain/admission/automatic.ts';
import { cdnPurgeHook, type PurgeHook } from './cdn/purge-hook.ts';
import type { ServerConfig } from './config/config.ts';
import type { AdminCredentials } from './config/credentials.ts';
import { composeCore } from './compose/core.ts';
import { openStore } from './compose/open-store.ts';
import { systemClock, type Clock } from './domain/clock.ts';
import type { Store } from './domain/ports/store.ts';
import type { RoomRegistry } from './domain/room-registry.ts';
import type { WaitingRoom } from './domain/services/waiting-room.ts';
import { EventBus } from './events/bus.ts';
import { SseSink } from './events/sse-sink.ts';
import { roomMessages } from './domain/page-branding.ts';
import { CounterStreams } from './http/counter-stream.ts';
import { RoomWebhooks } from './events/room-webhooks.ts';
import { WebhookSink } from './events/webhook-sink.ts';
import { edgeConfigRoutes } from './gate/edge-config.ts';
import { buildGateServer, SWEEP_EVERY_MS, type GateServer } from './gate/server.ts';
import { buildHttpServer } from './http/server.ts';
import { clientErrorHandler } from './http/client-errors.ts';
import { followPeriodicInlets, maxSizeInletRoutes } from './inlet/in-server.ts';
import { JobScheduler, type JobSpec } from './jobs/scheduler.ts';
import { pollStoredRooms } from './jobs/room-polling.ts';
import { Metrics } from './observability/metrics.ts';
import { oidcAdapter } from './oidc/adapter.ts';

// The package's public API (`anteroom-server`): what an embedding program needs to build a config and start a node.
export type { ServerConfig, StoreLocation } from './config/config.ts';
export type { AdminCredentials } from './config/credentials.ts';
export { generateCredentials } from './config/credentials.ts';
export { defaultSettings, parseRoomSettings } from './domain/room-settings.ts';
export type { RoomSettings } from './domain/room-settings.ts';

export interface AnteroomNode {
  http: FastifyInstance;
  room: WaitingRoom;
  /** The rooms served; putting or removing one here is followed by every part of the node. */
  rooms: RoomRegistry;
  /** The store the node opened (tests inspect it). */
  store: Store;
  bus: EventBus;
  /** The webhooks of every room (a sink of the bus). */
  webhooks: RoomWebhooks;
  scheduler: JobScheduler;
  /** Base URL of the public API, e.g. http://127.0.0.1:8080 */
  publicUrl: string;
  /** Base URL of the private API, e.g. http://127.0.0.1:8080/private */
  privateUrl: string;
  port: number;
  /** The gate (--gate-port): its base URL and server; absent without a gate port. */
  gate?: { url: string; port: number; server: GateServer };
  /** Stops accepting requests, answers those in flight (joins are committed first), then closes the store. */
  close(): Promise<void>;
}

export interface StartOptions {
  credentials: AdminCredentials;
  clock?: Clock;
  /** Use this store instead of opening the configured one (tests). It is closed with the node. */
  store?: Store;
  /** Do not start interval jobs (tests drive them by hand). */
  jobs?: boolean;
  /** Extra HTTP routes (web pages, OIDC, inlets). */
  plugins?: Parameters<typeof buildHttpServer>[0]['plugins'];
  /** Extra routes of the private API (under its base path, authenticated): the page preview. */
  privatePlugins?: Parameters<typeof buildHttpServer>[0]['privatePlugins'];
  /** Where the server's log lines go (tests read them); standard output when absent. */
  logStream?: Parameters<typeof buildHttpServer>[0]['logStream'];
}

/** How often the history job samples every room: the history's resolution. */
export const HISTORY_INTERVAL_MS = 60_000;
/** How often every node adds its tallied waits to the store (src/domain/wait-histogram.ts). */
export const WAIT_FLUSH_INTERVAL_MS = 5_000;

export async function startNode(config: ServerConfig, options: StartOptions): Promise<AnteroomNode> {
  const clock = options.clock ?? systemClock;
  const store = options.store ?? (await openStore(config));
  const metrics = new Metrics();
  // Known for sure only once listening (port 0 picks a free port).
  let publicUrl = config.publicUrl ?? `http://${config.host}:${config.port}`;
  let purgeCdn: PurgeHook | undefined;
  // Stored rooms the schema refuses are logged by the server's logger, which exists only after the core:
  // those found while the core starts wait for it.
  const refusedAtStart: [eventId: string, problem: string][] = [];
  let logRefusedRoom = (eventId: string, problem: string) => void refusedAtStart.push([eventId, problem]);
  // --history-retention-days 0 turns the history off (no history job, no wait tallies).
  const keepHistorySeconds = (config.historyRetentionDays ?? 30) * 86_400;
  const historyOn = keepHistorySeconds > 0;
  const core = await composeCore({
    store,
    rooms: config.events,
    roomDefaults: config.roomDefaults,
    onRoomRefused: (eventId, problem) => logRefusedRoom(eventId, problem),
    clock,
    defaultIssuer: () => publicUrl,
    // On Redis a store call is bounded (0.5 s to get ready + 1 s): a join waits at most that long behind another
    // batch before it is answered 503 unsent, so a join answers within the one call's bound (src/domain/join-batcher.ts).
    joinBatch: { windowMs: config.joinBatchWindowMs, ...(config.store.kind === 'redis' ? { queueWaitMs: 500 } : {}) },
    // The hook logs through the HTTP server's logger, which exists by the time anyone can reset.
    afterReset: config.cdnPurgeUrl ? (eventId) => purgeCdn?.(eventId) ?? Promise.resolve() : undefined,
    onJoinBatch: (size) => metrics.joinBatchSize.observe(size),
    onBotDefence: (outcome, eventId) => metrics.botDefence.inc({ outcome, event_id: eventId ?? '' }),
    recordWaits: historyOn,
  });
  const { room, bus, rooms } = core;
  const sse = new SseSink();
  bus.subscribe(sse);
  // The adapters that hold something per room follow the registry (rooms can be put and removed while running).
  const webhooks = new RoomWebhooks(
    rooms,
    (eventId, target) =>
      new WebhookSink({ eventId, ...target, onOutcome: (outcome) => metrics.webhookDeliveries.inc({ outcome }) }),
  );
  bus.subscribe(webhooks);
  metrics.watchEvents(room);

  const oidc = oidcAdapter({ room, secrets: store, publicUrl: () => publicUrl, clock });
  const maxStreams = config.streamMaxConnections ?? 10_000;
  // The streams carry the room's branding messages too (from this node's registry), for open pages to follow.
  const messagesOf = (eventId: string) => {
    const settings = room.rooms.roomSettings(eventId);
    return settings && roomMessages(settings.branding);
  };
  const streams = maxStreams > 0 ? new CounterStreams({ room, maxConnections: maxStreams, messagesOf }) : undefined;
  const http = await buildHttpServer({
    room,
    sse,
    streams,
    metrics,
    credentials: {
      adminToken: options.credentials.adminToken,
      sigv4: {
        accessKeyId: options.credentials.accessKeyId,
        secretAccessKey: options.credentials.secretAccessKey,
        region: config.region,
      },
    },
    publicApiKey: config.publicApiKey,
    metricsToken: config.metricsToken,
    pollTtl: config.pollTtl,
    trustProxy: config.trustProxy,
    writesPerClientPerMinute: config.writesPerClientPerMinute,
    privateBasePath: config.privateBasePath,
    logLevel: config.logLevel,
    logRequests: config.logRequests,
    logStream: options.logStream,
    maxConnections: config.maxConnections,
    clockMs: clock,
    // The OpenID Connect adapter (/oidc, issuer = public URL + /oidc) serves the events configured for it.
    plugins: [...(options.plugins ?? []), oidc.routes],
    privatePlugins: [maxSizeInletRoutes({ room, metrics }), oidc.privateRoutes, edgeConfigRoutes({ rooms: () => room.rooms.roomsSnapshot(), secrets: store, nowMs: clock }), ...(options.privatePlugins ?? [])],
  });
  if (config.cdnPurgeUrl) purgeCdn = cdnPurgeHook({ url: config.cdnPurgeUrl, token: config.cdnPurgeToken, log: http.log });
  bus.onSinkError = (sink, error) => http.log.error({ err: error, sink: sink.name }, 'event sink failed');
  logRefusedRoom = (eventId, problem) => {
    http.log.warn({ event_id: eventId, problem }, 'stored room refused by the room-settings schema; skipped');
  };
  for (const [eventId, problem] of refusedAtStart) logRefusedRoom(eventId, problem);
  // Every node follows the rooms of the store (rooms API changes made on any node), jobs or not.
  const roomPolling = pollStoredRooms({ sync: () => room.rooms.syncRooms(), log: http.log });

  const scheduler = new JobScheduler({
    store,
    nodeId: randomUUID(),
    log: http.log,
    clockMs: clock,
    onRun: (job, outcome) => metrics.jobRuns.inc({ job, outcome }),
  });
  if (options.jobs !== false) {
    scheduler.start({
      name: 'expiry',
      intervalMs: config.expiryJobIntervalSec * 1000,
      run: async () => {
        for (const eventId of room.rooms.roomIds()) await room.admission.advanceExpiry(eventId);
      },
    });
    // The draw of every room with shuffle_at_event_start, at the first tick at or after its start (a draw that
    // outlasts a tick keeps running; later ticks find it running and return).
    scheduler.start({
      name: 'draw',
      intervalMs: 1000,
      run: () => room.draws.runDraws(),
    });
    scheduler.start({
      name: 'metrics',
      intervalMs: config.metricsJobIntervalSec * 1000,
      run: async () => {
        for (const eventId of room.rooms.roomIds()) await room.reports.emitMetrics(eventId);
      },
    });
    scheduler.start(admissionJob(room));
    // Each room's counters once a minute into its history (after-event reports; one node per tick).
    if (historyOn) {
      scheduler.start({
        name: 'history',
        intervalMs: HISTORY_INTERVAL_MS,
        run: () => room.reports.recordHistory(keepHistorySeconds),
      });
    }
  }
  // Every node adds the waits of the visitors it admitted to the store's histograms every few seconds (and at close).
  let waitFlushTimer: ReturnType<typeof setInterval> | undefined;
  const flushWaits = () => room.reports.flushWaits(keepHistorySeconds).catch((error: unknown) => http.log.error({ err: error }, 'wait histogram flush failed'));
  if (historyOn && options.jobs !== false) {
    waitFlushTimer = setInterval(() => void flushWaits(), WAIT_FLUSH_INTERVAL_MS);
    waitFlushTimer.unref();
  }
  const stopFollowingInlets =
    options.jobs !== false ? followPeriodicInlets(rooms, scheduler, { room, metrics, log: http.log, clock }) : () => {};

  await http.listen({ host: config.host, port: config.port });
  const address = http.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (!config.publicUrl) publicUrl = `http://${urlHost(config.host)}:${port}`;

  // The gate: a listener of its own in front of the rooms' gate.origin (src/gate/). Every node sweeps the
  // sessions it follows (idle, or past session_duration), so this runs outside the scheduler's once-per-tick lock.
  let gate: AnteroomNode['gate'];
  let sweepTimer: ReturnType<typeof setInterval> | undefined;
  if (config.gatePort !== undefined) {
    const server = await buildGateServer({
      room,
      secrets: store,
      defaultIssuer: () => publicUrl,
      trustProxy: config.trustProxy,
      writesPerClientPerMinute: config.writesPerClientPerMinute,
      limits: config.gateLimits,
      // Malformed or too slow requests: the API's answer (the contract's error shape, counted, never logged).
      clientErrorHandler: clientErrorHandler(metrics),
      forwardAuthUriHeader: config.forwardAuthUriHeader,
      logLevel: config.logLevel,
      logStream: options.logStream,
      clockMs: clock,
    });
    await server.app.listen({ host: config.host, port: config.gatePort });
    const gateAddress = server.app.server.address();
    const gatePort = typeof gateAddress === 'object' && gateAddress ? gateAddress.port : config.gatePort;
    gate = { url: `http://${urlHost(config.host)}:${gatePort}`, port: gatePort, server };
    if (options.jobs !== false) {
      sweepTimer = setInterval(() => {
        server.sweep().catch((error: unknown) => http.log.error({ err: error }, 'gate session sweep failed'));
      }, SWEEP_EVERY_MS);
      sweepTimer.unref();
    }
  }

  let closing: Promise<void> | null = null;
  return {
    http,
    room,
    rooms,
    store,
    bus,
    webhooks,
    scheduler,
    publicUrl,
    privateUrl: `${publicUrl}${config.privateBasePath}`,
    port,
    ...(gate ? { gate } : {}),
    close: () =>
      (closing ??= (async () => {
        clearInterval(sweepTimer);
        await gate?.server.app.close();
        stopFollowingInlets();
        await roomPolling.stop();
        await scheduler.stop();
        await http.close();
        clearInterval(waitFlushTimer);
        if (historyOn) await flushWaits();
        await core.close();
      })()),
  };
}

/**
 * The admission job (src/domain/admission/automatic.ts): every second, rooms with admission "automatic" admit
 * within their limits and rooms that are `off` admit everyone waiting. Each tick is claimed through the
 * scheduler's lock, so with N nodes it runs once; rooms with nothing to do cost no store call.
 */
export function admissionJob(room: WaitingRoom): JobSpec {
  return {
    name: 'admission',
    intervalMs: ADMISSION_TICK_MS,
    run: async () => {
      for (const eventId of room.rooms.roomIds()) await room.admission.admitAutomatically(eventId);
    },
  };
}

/** A host for URLs: wildcard listeners are reached through loopback; IPv6 literals need brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
