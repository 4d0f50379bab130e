// `anteroom serve`: runs one waiting-room node. Every option is also an ANTEROOM_* environment variable.

import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { startNode, type AnteroomNode } from '../app.ts';
import { OIDC_BASE_PATH } from '../oidc/adapter.ts';
import {
  defaultEventDefaults,
  parseStoreLocation,
  DEFAULT_FORWARD_AUTH_URI_HEADER,
  parseForwardAuthUriHeader,
  parseTrustProxy,
  readEventsFile,
  type EventDefaults,
  type ServerConfig,
} from '../config/config.ts';
import {
  STORED_CREDENTIALS_NAME,
  claimStoredCredentials,
  loadOrCreateCredentials,
  type AdminCredentials,
} from '../config/credentials.ts';
import { ConfigErrors } from '../domain/errors.ts';
import { DEFAULT_EVENT_ID, parseRoomSettings, RoomSettingsSchema, type RoomSettings, type ScalarSettingName } from '../domain/room-settings.ts';
import { DEFAULT_HOT_READ_TTL_MS, MAX_HOT_READ_TTL_MS } from '../store/hot-read-cache.ts';
import { DEFAULT_MAX_CONNECTIONS } from '../http/server.ts';
import { GATE_MAX_CONNECTIONS_CEILING, GATE_MAX_CONNECTIONS_PER_CLIENT, GATE_REQUEST_TIMEOUT_MS } from '../gate/listener-limits.ts';
import {
  DEFAULT_REDIS_KEY_PREFIX,
  DEFAULT_REPLICA_TIMEOUT_MS,
  MAX_REPLICA_TIMEOUT_MS,
  checkRedisKeyPrefix,
  describeStoreLocation,
  openStore,
} from '../compose/open-store.ts';
import type { Store } from '../domain/ports/store.ts';
import { pageUrls, webPlugins, webPrivatePlugins } from '../web/index.ts';
import { booleanValue, integerIn, nonEmpty, oneOf, wholeNumberSetting } from './option-parsers.ts';
import { MAX_WORKERS, checkWorkersStore, isWorkerProcess, reportListening, runPrimary, shouldStartWorkers } from './workers.ts';

const env = (name: string) => `ANTEROOM_${name}`;
const defaults = defaultEventDefaults();

function opt(flags: string, description: string, envName: string) {
  return new Option(flags, description).env(env(envName));
}

/** A room setting's flag: its description and default come from the room-settings schema. */
function roomOpt(flags: string, name: ScalarSettingName): Option {
  const option = opt(flags, String(RoomSettingsSchema.properties[name].description), name.toUpperCase());
  const fallback = defaults[name];
  return fallback === undefined ? option : option.default(fallback);
}

/** The flag that sets a room setting: validity_period → --validity-period. */
const flagOf = (setting: string) => `--${setting.replaceAll('_', '-')}`;

export function serveCommand(): Command {
  return new Command('serve')
    .description('Run a waiting-room node (public API, private API under /private, health and metrics).')
    .addOption(opt('--host <host>', 'address to listen on', 'HOST').default('127.0.0.1'))
    .addOption(opt('--port <port>', 'port to listen on (0 = any free port)', 'PORT').default(8080).argParser(integerIn(0, 65535)))
    .addOption(opt('--data-dir <dir>', 'directory for the database and generated credentials', 'DATA_DIR').default('./data'))
    .addOption(opt('--store <location>', 'sqlite:<path> (default <data-dir>/anteroom.db), memory, redis[s]://[user:password@]host:port[/db], redis[s]-cluster://host:port,host:port or redis[s]-sentinel://[user:password@]host:port,host:port/<master name> (Sentinel: follows failovers)', 'STORE'))
    .addOption(opt('--redis-key-prefix <prefix>', 'Redis store: prefix of every key, to share one Redis between deployments', 'REDIS_KEY_PREFIX').default(DEFAULT_REDIS_KEY_PREFIX))
    .addOption(opt('--hot-read-ttl-ms <ms>', 'Redis store: serve serving_num/waiting_num from memory for this long (0 = read Redis every time)', 'HOT_READ_TTL_MS').default(DEFAULT_HOT_READ_TTL_MS).argParser(integerIn(0, MAX_HOT_READ_TTL_MS)))
    .addOption(opt('--redis-min-replicas <n>', 'Redis store: acknowledge a write only once it reached this many replicas (WAIT after each write; too few in time = 503); 0 = no WAIT', 'REDIS_MIN_REPLICAS').default(0).argParser(integerIn(0, 16)))
    .addOption(opt('--redis-replica-timeout-ms <ms>', 'Redis store: how long a write waits for --redis-min-replicas replicas', 'REDIS_REPLICA_TIMEOUT_MS').default(DEFAULT_REPLICA_TIMEOUT_MS).argParser(integerIn(1, MAX_REPLICA_TIMEOUT_MS)))
    .addOption(opt('--workers <n>', 'worker processes sharing the port (needs a Redis store)', 'WORKERS').default(1).argParser(integerIn(1, MAX_WORKERS)))
    .addOption(
      opt('--sqlite-synchronous <mode>', 'full: an acknowledged write survives power loss; normal: survives a crash only', 'SQLITE_SYNCHRONOUS')
        .default('full')
        .argParser(oneOf('full', 'normal')),
    )
    .addOption(opt('--event-id <id>', 'the event (waiting room) to serve when no --config is given; written to the store at every start', 'EVENT_ID').default(DEFAULT_EVENT_ID))
    .addOption(opt('--config <file>', 'JSON file listing events and their settings: {"events": [{"event_id": ...}]}; written to the store at every start (the file wins over rooms API edits for its rooms)', 'CONFIG'))
    .addOption(opt('--admin-token <token>', 'bearer token of the private API (default: generated, kept in the data dir)', 'ADMIN_TOKEN').argParser(nonEmpty('--admin-token', 16)))
    .addOption(opt('--access-key-id <id>', 'SigV4 access key ID of the private API (default: generated)', 'ACCESS_KEY_ID').argParser(nonEmpty('--access-key-id', 4)))
    .addOption(opt('--secret-access-key <secret>', 'SigV4 secret access key of the private API (default: generated)', 'SECRET_ACCESS_KEY').argParser(nonEmpty('--secret-access-key', 16)))
    .addOption(opt('--region <region>', 'accept SigV4 signatures only for this region (default: any)', 'REGION'))
    .addOption(roomOpt('--validity-period <seconds>', 'validity_period').argParser(wholeNumberSetting('validity_period')))
    .addOption(roomOpt('--enable-queue-position-expiry [bool]', 'enable_queue_position_expiry').argParser(booleanValue))
    .addOption(roomOpt('--queue-position-expiry-period <seconds>', 'queue_position_expiry_period').argParser(wholeNumberSetting('queue_position_expiry_period')))
    .addOption(roomOpt('--incr-serving-on-expiry [bool]', 'incr_serving_on_expiry').argParser(booleanValue))
    .addOption(roomOpt('--enable-events-generation [bool]', 'enable_events_generation').argParser(booleanValue))
    .addOption(opt('--expiry-job-interval <seconds>', 'how often the expiry job runs', 'EXPIRY_JOB_INTERVAL').default(60).argParser(integerIn(1, 86_400)))
    .addOption(opt('--max-connections <n>', 'open HTTP connections at most; more are closed at once (requests must also send their headers within 10 s and their whole body within 30 s)', 'MAX_CONNECTIONS').default(DEFAULT_MAX_CONNECTIONS).argParser(integerIn(1, 10_000_000)))
    .addOption(opt('--drain-timeout <seconds>', 'on SIGTERM/SIGINT: answer the requests in flight (new ones get 503 + Retry-After) and exit within this time (exit code 1 if it was not enough)', 'DRAIN_TIMEOUT').default(DEFAULT_DRAIN_TIMEOUT_SEC).argParser(integerIn(2, 3600)))
    .addOption(opt('--metrics-job-interval <seconds>', 'how often waiting_room_metrics events are emitted', 'METRICS_JOB_INTERVAL').default(60).argParser(integerIn(1, 86_400)))
    .addOption(opt('--public-api-key <key>', 'require this x-api-key on every public request (as VWR behind CloudFront)', 'PUBLIC_API_KEY').argParser(nonEmpty('--public-api-key', 8)))
    .addOption(opt('--history-retention-days <days>', "how long each room's per-minute history (GET /private/rooms/{id}/report) is kept; 0 records none", 'HISTORY_RETENTION_DAYS').default(30).argParser(integerIn(0, 3650)))
    .addOption(opt('--metrics-token <token>', 'require Authorization: Bearer <token> on GET /metrics (default: open)', 'METRICS_TOKEN').argParser(nonEmpty('--metrics-token', 16)))
    .addOption(roomOpt('--issuer <url>', 'issuer'))
    .addOption(roomOpt('--signing-algorithm <alg>', 'signing_algorithm'))
    .addOption(opt('--public-url <url>', 'base URL visitors reach this server at (default: http://<host>:<port>)', 'PUBLIC_URL'))
    .addOption(opt('--private-base-path <path>', 'path prefix of the private API', 'PRIVATE_BASE_PATH').default('/private'))
    .addOption(opt('--poll-ttl <seconds>', 'Cache-Control max-age of serving_num, waiting_num and queue_pos_expiry', 'POLL_TTL').default(1).argParser(integerIn(0, 5)))
    .addOption(
      opt('--stream-max-connections <n>', 'public counter streams (GET /stream) one process keeps open at most; past it pages poll (0 = no stream)', 'STREAM_MAX_CONNECTIONS')
        .default(10_000)
        .argParser(integerIn(0, 1_000_000)),
    )
    .addOption(opt('--join-batch-window-ms <ms>', 'extra time to gather joins into one commit (0 = one event-loop turn)', 'JOIN_BATCH_WINDOW_MS').default(0).argParser(integerIn(0, 50)))
    .addOption(opt('--log-level <level>', 'fatal, error, warn, info, debug or trace', 'LOG_LEVEL').default('info').argParser(oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent')))
    .addOption(opt('--cdn-purge-url <url>', 'after reset_initial_state, POST {event_id, paths} here so a CDN drops cached answers', 'CDN_PURGE_URL'))
    .addOption(opt('--cdn-purge-token <token>', 'bearer token sent to --cdn-purge-url', 'CDN_PURGE_TOKEN'))
    .addOption(opt('--gate-port <port>', 'also listen here as the gate: a reverse proxy in front of each room\'s gate.origin, queueing visitors (docs/gate.md); 0 = any free port', 'GATE_PORT').argParser(integerIn(0, 65535)))
    .addOption(opt('--gate-max-connections <n>', `gate listener: open connections at most, all clients together; more are closed at once (default: a quarter of the open-file limit, ulimit -n, at most ${GATE_MAX_CONNECTIONS_CEILING})`, 'GATE_MAX_CONNECTIONS').argParser(integerIn(1, 10_000_000)))
    .addOption(
      opt('--gate-max-connections-per-client <n>', 'gate listener: open connections one client (IPv4 address, IPv6 /64) may hold; more are closed at once; proxies trusted by --trust-proxy are not capped (0 = no cap)', 'GATE_MAX_CONNECTIONS_PER_CLIENT')
        .default(GATE_MAX_CONNECTIONS_PER_CLIENT)
        .argParser(integerIn(0, 1_000_000)),
    )
    .addOption(
      opt('--gate-request-timeout <seconds>', 'gate listener: a request, body included, must arrive within this (answers, downloads and WebSockets are not limited; 0 = no limit)', 'GATE_REQUEST_TIMEOUT')
        .default(GATE_REQUEST_TIMEOUT_MS / 1000)
        .argParser(integerIn(0, 86_400)),
    )
    .addOption(
      opt('--forward-auth-uri-header <name>', 'the one header GET /_anteroom/check reads the original URI from; your proxy must overwrite it (Traefik: X-Forwarded-Uri)', 'FORWARD_AUTH_URI_HEADER')
        .default(DEFAULT_FORWARD_AUTH_URI_HEADER)
        .argParser(parseForwardAuthUriHeader),
    )
    .addOption(opt('--trust-proxy <value>', 'believe X-Forwarded-For/-Proto/-Host from proxies in front of Anteroom: true, a hop count, or comma-separated IPs/CIDRs (default: none)', 'TRUST_PROXY').argParser(parseTrustProxy))
    .addOption(
      opt('--writes-per-client-per-minute <n>', 'public writes (joins, token claims, leaves, challenges) one client may make a minute across all nodes, then 429 (0 = no limit)', 'WRITES_PER_CLIENT_PER_MINUTE')
        .default(0)
        .argParser(integerIn(0, 1_000_000)),
    )
    .addOption(opt('--log-requests [bool]', 'log one line per request', 'LOG_REQUESTS').default(false).argParser(booleanValue))
    .action(async (raw: Record<string, unknown>) => {
      await runServe(raw);
    });
}

function eventDefaultsOf(room: RoomSettings): EventDefaults {
  const { event_id: _id, webhooks: _w, inlet: _i, ...rest } = room;
  return rest;
}

export function configFromOptions(o: Record<string, unknown>): ServerConfig {
  const dataDir = resolve(String(o.dataDir));
  // The room the flags describe: served alone without --config, the defaults of every event of the file with it.
  const flagged = parseRoomSettings({
    event_id: String(o.eventId),
    validity_period: o.validityPeriod,
    enable_queue_position_expiry: o.enableQueuePositionExpiry,
    queue_position_expiry_period: o.queuePositionExpiryPeriod,
    incr_serving_on_expiry: o.incrServingOnExpiry,
    enable_events_generation: o.enableEventsGeneration,
    ...(o.issuer ? { issuer: String(o.issuer) } : {}),
    signing_algorithm: o.signingAlgorithm,
  });
  if (!flagged.ok) {
    const [setting = ''] = flagged.problem.path;
    const given = o[setting.replace(/_(.)/g, (_m, c: string) => c.toUpperCase())];
    throw ConfigErrors.option(`${flagOf(setting)} "${String(given)}" ${flagged.problem.rule}`);
  }
  const events: RoomSettings[] = o.config
    ? readEventsFile(resolve(String(o.config)), eventDefaultsOf(flagged.settings))
    : [flagged.settings];
  const basePath = String(o.privateBasePath);
  if (!/^\/[A-Za-z0-9._~-]+$/.test(basePath)) throw ConfigErrors.option('--private-base-path must look like /private');
  for (const [flag, value] of [['--public-url', o.publicUrl], ['--issuer', o.issuer], ['--cdn-purge-url', o.cdnPurgeUrl]] as const) {
    if (value !== undefined && !URL.canParse(String(value))) throw ConfigErrors.option(`${flag} must be a URL`);
  }
  return {
    host: String(o.host),
    port: o.port as number,
    dataDir,
    store: parseStoreLocation(o.store as string | undefined, dataDir),
    sqliteSynchronous: o.sqliteSynchronous as 'full' | 'normal',
    events,
    roomDefaults: eventDefaultsOf(flagged.settings),
    adminToken: o.adminToken as string | undefined,
    accessKeyId: o.accessKeyId as string | undefined,
    secretAccessKey: o.secretAccessKey as string | undefined,
    region: o.region as string | undefined,
    publicApiKey: o.publicApiKey as string | undefined,
    metricsToken: o.metricsToken as string | undefined,
    historyRetentionDays: o.historyRetentionDays as number | undefined,
    publicUrl: o.publicUrl ? String(o.publicUrl).replace(/\/$/, '') : undefined,
    privateBasePath: basePath,
    pollTtl: o.pollTtl as number,
    expiryJobIntervalSec: o.expiryJobInterval as number,
    metricsJobIntervalSec: o.metricsJobInterval as number,
    drainTimeoutSec: (o.drainTimeout as number | undefined) ?? DEFAULT_DRAIN_TIMEOUT_SEC,
    maxConnections: (o.maxConnections as number | undefined) ?? DEFAULT_MAX_CONNECTIONS,
    joinBatchWindowMs: o.joinBatchWindowMs as number,
    streamMaxConnections: o.streamMaxConnections as number,
    logLevel: String(o.logLevel),
    logRequests: o.logRequests as boolean,
    cdnPurgeUrl: o.cdnPurgeUrl as string | undefined,
    cdnPurgeToken: o.cdnPurgeToken as string | undefined,
    redisKeyPrefix: checkRedisKeyPrefix(String(o.redisKeyPrefix ?? DEFAULT_REDIS_KEY_PREFIX)),
    hotReadTtlMs: (o.hotReadTtlMs as number | undefined) ?? DEFAULT_HOT_READ_TTL_MS,
    workers: (o.workers as number | undefined) ?? 1,
    gatePort: o.gatePort as number | undefined,
    gateLimits: {
      maxConnections: o.gateMaxConnections as number | undefined,
      maxConnectionsPerClient: o.gateMaxConnectionsPerClient as number | undefined,
      requestTimeoutMs: o.gateRequestTimeout === undefined ? undefined : (o.gateRequestTimeout as number) * 1000,
    },
    trustProxy: o.trustProxy as ServerConfig['trustProxy'],
    forwardAuthUriHeader: (o.forwardAuthUriHeader as string | undefined) ?? DEFAULT_FORWARD_AUTH_URI_HEADER,
    redisMinReplicas: (o.redisMinReplicas as number | undefined) ?? 0,
    redisReplicaTimeoutMs: (o.redisReplicaTimeoutMs as number | undefined) ?? DEFAULT_REPLICA_TIMEOUT_MS,
    writesPerClientPerMinute: (o.writesPerClientPerMinute as number | undefined) ?? 0,
  };
}

interface CredentialsSource {
  credentials: AdminCredentials;
  generated: boolean;
  /** Where they are kept: the data-dir file (SQLite) or the shared store (Redis). */
  file?: string;
  location?: string;
}

/** What a starting node prints; `rooms` are those served at the moment it is printed. */
function banner(
  config: ServerConfig,
  rooms: RoomSettings[],
  node: { publicUrl: string; privateUrl: string; gate?: { url: string } | undefined },
  creds: CredentialsSource,
): string {
  const lines = [
    '',
    'Anteroom waiting room is running',
    `  public API     ${node.publicUrl}`,
    `  private API    ${node.privateUrl}`,
    ...pageLines(config, rooms, node.publicUrl),
    `  events         ${rooms.map((e) => e.event_id).join(', ')}`,
    ...gateLines(rooms, node.gate?.url),
    ...(rooms.some((e) => e.oidc)
      ? [`  OIDC issuer    ${node.publicUrl}${OIDC_BASE_PATH} (client secrets: GET ${node.privateUrl}/oidc/client?event_id=…)`]
      : []),
    `  store          ${describeStoreLocation(config)}`,
    ...((config.workers ?? 1) > 1 ? [`  workers        ${config.workers} processes`] : []),
  ];
  if (creds.generated) {
    lines.push(
      '',
      creds.file
        ? `Admin credentials were generated and saved to ${creds.file} (mode 0600).`
        : `Admin credentials were generated and saved in ${creds.location}, shared by every node.`,
      `They are shown this once; later starts only name ${creds.file ? 'the file' : 'where they are'}.`,
      `  admin token        ${shownUnlessGiven(config.adminToken, creds.credentials.adminToken)}`,
      `  access key ID      ${shownUnlessGiven(config.accessKeyId, creds.credentials.accessKeyId)}`,
      `  secret access key  ${shownUnlessGiven(config.secretAccessKey, creds.credentials.secretAccessKey)}`,
    );
  } else {
    lines.push('', `Admin credentials: see ${creds.file ?? creds.location} (or the --admin-token / --access-key-id flags).`);
  }
  lines.push('', `Try: curl -s -X POST ${node.publicUrl}/assign_queue_num -d '{"event_id":"${rooms[0]?.event_id}"}'`, '');
  return lines.join('\n');
}

/** The gate's URL and, per room it protects, the first address to open in a browser. */
function gateLines(rooms: RoomSettings[], gateUrl: string | undefined): string[] {
  if (!gateUrl) return [];
  const gated = rooms.filter((room) => room.gate);
  if (gated.length === 0) return [`  gate           ${gateUrl} (no room has a "gate" setting yet: see docs/gate.md)`];
  return gated.map((room, index) => {
    const route = room.gate!.routes[0]!;
    const open = route.host ? `http://${route.host}${route.path}` : `${gateUrl}${route.path}`;
    return `  ${index === 0 ? 'gate          ' : '              '} ${open} → ${room.gate!.origin} (room ${room.event_id}; open it in a browser)`;
  });
}

/** A generated value is shown once; one given by flag or environment variable never is (the operator has it). */
function shownUnlessGiven(given: string | undefined, value: string): string {
  return given === undefined ? value : '(given by flag or environment variable)';
}

function pageLines(config: ServerConfig, rooms: RoomSettings[], publicUrl: string): string[] {
  const pages = pageUrls(publicUrl, { events: rooms, privateBasePath: config.privateBasePath });
  return [
    pages.built ? `  waiting room   ${pages.waitingRoom}` : '  pages          not built: run `npm run build:web`, then restart',
    ...(pages.built ? [`  control panel  ${pages.controlPanel}`] : []),
    `  sample API     ${pages.store} (needs a waiting-room access token)`,
  ];
}

/**
 * Opens the store and finds the admin credentials: in the data-dir file for the embedded store, in the store
 * itself when it is shared (Redis), so that every node uses the same ones.
 */
async function openStoreAndCredentials(config: ServerConfig): Promise<{ store: Store; creds: CredentialsSource }> {
  const given = { adminToken: config.adminToken, accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey };
  const store = await openStore(config);
  if (config.store.kind !== 'redis') return { store, creds: loadOrCreateCredentials(config.dataDir, given) };
  try {
    const claimed = await claimStoredCredentials(store, given);
    const location = `Redis ${store.description}, key ${config.redisKeyPrefix ?? DEFAULT_REDIS_KEY_PREFIX}secret:${STORED_CREDENTIALS_NAME}`;
    return { store, creds: { ...claimed, location } };
  } catch (error) {
    await store.close();
    throw error;
  }
}

async function runServe(raw: Record<string, unknown>): Promise<void> {
  const config = configFromOptions(raw);
  checkWorkersStore(config);
  const { store, creds } = await openStoreAndCredentials(config);
  if (shouldStartWorkers(config)) {
    // The primary only checked the store and settled the credentials; each worker opens its own connection.
    await store.close();
    await runPrimary({
      count: config.workers ?? 1,
      logLevel: config.logLevel,
      // The primary serves no room itself: it lists those the workers started with.
      onListening: (urls) => process.stdout.write(`${banner(config, config.events, urls, creds)}\n`),
    });
    return;
  }
  // Signal handlers come first: a supervisor may send SIGTERM as soon as it sees the banner (or before).
  const running: { node?: AnteroomNode } = {};
  let stopSignal: string | undefined;
  const stop = (signal: string) => {
    if (stopSignal) return;
    stopSignal = signal;
    if (running.node) shutDown(running.node, signal, config.drainTimeoutSec);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  // The sample store verifies tokens issued by this server, whose URL is known once it listens.
  let publicUrl = '';
  // The waiting-room page is rendered per room (its `page` template, its phase), read from the node once up.
  const roomSettings = (eventId: string) => running.node?.room.rooms.roomSettings(eventId);
  const node = await startNode(config, {
    credentials: creds.credentials,
    store,
    plugins: webPlugins(config, () => publicUrl, { roomSettings }),
    privatePlugins: webPrivatePlugins(roomSettings),
  });
  running.node = node;
  publicUrl = node.publicUrl;
  if (stopSignal) return shutDown(node, stopSignal, config.drainTimeoutSec);
  // A worker of --workers N reports to the primary, which prints the banner once for all of them.
  if (isWorkerProcess()) reportListening(node, stop);
  else process.stdout.write(`${banner(config, node.room.rooms.rooms(), node, creds)}\n`);
}

/** --drain-timeout default: the grace of Kubernetes (30 s) leaves room for it. */
const DEFAULT_DRAIN_TIMEOUT_SEC = 10;

function shutDown(node: AnteroomNode, signal: string, drainTimeoutSec = DEFAULT_DRAIN_TIMEOUT_SEC): void {
  node.http.log.info({ signal }, 'shutting down: answering requests in flight');
  setTimeout(() => {
    node.http.log.error({ drain_timeout_s: drainTimeoutSec }, 'shutdown did not finish within the drain timeout: exiting');
    process.exit(1);
  }, drainTimeoutSec * 1000).unref();
  node.close().then(
    () => process.exit(0),
    (error: unknown) => {
      node.http.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
}
