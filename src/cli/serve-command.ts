// `anteroom serve`: runs one waiting-room node. Every option is also an ANTEROOM_* environment variable.

import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { startNode } from '../app.ts';
import {
  ConfigError,
  defaultEventDefaults,
  parseStoreLocation,
  readEventsFile,
  type EventDefaults,
  type ServerConfig,
} from '../config/config.ts';
import { loadOrCreateCredentials, type AdminCredentials } from '../config/credentials.ts';
import { DEFAULT_EVENT_ID, EVENT_ID_PATTERN } from '../domain/settings.ts';
import { booleanValue, integerIn, nonEmpty, oneOf } from './option-parsers.ts';

const env = (name: string) => `ANTEROOM_${name}`;
const defaults = defaultEventDefaults();

function opt(flags: string, description: string, envName: string) {
  return new Option(flags, description).env(env(envName));
}

export function serveCommand(): Command {
  return new Command('serve')
    .description('Run a waiting-room node (public API, private API under /private, health and metrics).')
    .addOption(opt('--host <host>', 'address to listen on', 'HOST').default('127.0.0.1'))
    .addOption(opt('--port <port>', 'port to listen on (0 = any free port)', 'PORT').default(8080).argParser(integerIn(0, 65535)))
    .addOption(opt('--data-dir <dir>', 'directory for the database and generated credentials', 'DATA_DIR').default('./data'))
    .addOption(opt('--store <location>', 'sqlite:<path> (default <data-dir>/anteroom.db) or memory', 'STORE'))
    .addOption(
      opt('--sqlite-synchronous <mode>', 'full: an acknowledged write survives power loss; normal: survives a crash only', 'SQLITE_SYNCHRONOUS')
        .default('full')
        .argParser(oneOf('full', 'normal')),
    )
    .addOption(opt('--event-id <id>', 'the event (waiting room) to serve when no --config is given', 'EVENT_ID').default(DEFAULT_EVENT_ID))
    .addOption(opt('--config <file>', 'JSON file listing events and their settings: {"events": [{"event_id": ...}]}', 'CONFIG'))
    .addOption(opt('--admin-token <token>', 'bearer token of the private API (default: generated, kept in the data dir)', 'ADMIN_TOKEN').argParser(nonEmpty('--admin-token', 16)))
    .addOption(opt('--access-key-id <id>', 'SigV4 access key ID of the private API (default: generated)', 'ACCESS_KEY_ID').argParser(nonEmpty('--access-key-id', 4)))
    .addOption(opt('--secret-access-key <secret>', 'SigV4 secret access key of the private API (default: generated)', 'SECRET_ACCESS_KEY').argParser(nonEmpty('--secret-access-key', 16)))
    .addOption(opt('--region <region>', 'accept SigV4 signatures only for this region (default: any)', 'REGION'))
    .addOption(opt('--validity-period <seconds>', 'lifetime of issued tokens', 'VALIDITY_PERIOD').default(defaults.validity_period).argParser(integerIn(1, 31_536_000)))
    .addOption(opt('--enable-queue-position-expiry [bool]', 'expire positions not claimed in time', 'ENABLE_QUEUE_POSITION_EXPIRY').default(defaults.enable_queue_position_expiry).argParser(booleanValue))
    .addOption(opt('--queue-position-expiry-period <seconds>', 'time a served visitor has to claim a token', 'QUEUE_POSITION_EXPIRY_PERIOD').default(defaults.queue_position_expiry_period).argParser(integerIn(1, 31_536_000)))
    .addOption(opt('--incr-serving-on-expiry [bool]', 'give the places of expired positions to the next visitors', 'INCR_SERVING_ON_EXPIRY').default(defaults.incr_serving_on_expiry).argParser(booleanValue))
    .addOption(opt('--enable-events-generation [bool]', 'emit waiting_room_metrics events every metrics interval', 'ENABLE_EVENTS_GENERATION').default(defaults.enable_events_generation).argParser(booleanValue))
    .addOption(opt('--expiry-job-interval <seconds>', 'how often the expiry job runs', 'EXPIRY_JOB_INTERVAL').default(60).argParser(integerIn(1, 86_400)))
    .addOption(opt('--metrics-job-interval <seconds>', 'how often waiting_room_metrics events are emitted', 'METRICS_JOB_INTERVAL').default(60).argParser(integerIn(1, 86_400)))
    .addOption(opt('--public-api-key <key>', 'require this x-api-key on every public request (as VWR behind CloudFront)', 'PUBLIC_API_KEY').argParser(nonEmpty('--public-api-key', 8)))
    .addOption(opt('--issuer <url>', 'token issuer (default: the public URL)', 'ISSUER'))
    .addOption(opt('--public-url <url>', 'base URL visitors reach this server at (default: http://<host>:<port>)', 'PUBLIC_URL'))
    .addOption(opt('--private-base-path <path>', 'path prefix of the private API', 'PRIVATE_BASE_PATH').default('/private'))
    .addOption(opt('--poll-ttl <seconds>', 'Cache-Control max-age of serving_num, waiting_num and queue_pos_expiry', 'POLL_TTL').default(1).argParser(integerIn(0, 5)))
    .addOption(opt('--join-batch-window-ms <ms>', 'extra time to gather joins into one commit (0 = one event-loop turn)', 'JOIN_BATCH_WINDOW_MS').default(0).argParser(integerIn(0, 50)))
    .addOption(opt('--log-level <level>', 'fatal, error, warn, info, debug or trace', 'LOG_LEVEL').default('info').argParser(oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent')))
    .addOption(opt('--log-requests [bool]', 'log one line per request', 'LOG_REQUESTS').default(false).argParser(booleanValue))
    .action(async (raw: Record<string, unknown>) => {
      await runServe(raw);
    });
}

export function configFromOptions(o: Record<string, unknown>): ServerConfig {
  const dataDir = resolve(String(o.dataDir));
  const eventDefaults: EventDefaults = {
    validity_period: o.validityPeriod as number,
    enable_queue_position_expiry: o.enableQueuePositionExpiry as boolean,
    queue_position_expiry_period: o.queuePositionExpiryPeriod as number,
    incr_serving_on_expiry: o.incrServingOnExpiry as boolean,
    enable_events_generation: o.enableEventsGeneration as boolean,
    ...(o.issuer ? { issuer: String(o.issuer) } : {}),
  };
  const eventId = String(o.eventId);
  if (!new RegExp(EVENT_ID_PATTERN).test(eventId)) {
    throw new ConfigError(`--event-id "${eventId}" must be 1–128 letters, digits, '.', '_', '~' or '-'`);
  }
  const events = o.config
    ? readEventsFile(resolve(String(o.config)), eventDefaults)
    : [{ ...eventDefaults, event_id: eventId, webhooks: [] }];
  const basePath = String(o.privateBasePath);
  if (!/^\/[A-Za-z0-9._~-]+$/.test(basePath)) throw new ConfigError('--private-base-path must look like /private');
  for (const [flag, value] of [['--public-url', o.publicUrl], ['--issuer', o.issuer]] as const) {
    if (value !== undefined && !URL.canParse(String(value))) throw new ConfigError(`${flag} must be a URL`);
  }
  return {
    host: String(o.host),
    port: o.port as number,
    dataDir,
    store: parseStoreLocation(o.store as string | undefined, dataDir),
    sqliteSynchronous: o.sqliteSynchronous as 'full' | 'normal',
    events,
    adminToken: o.adminToken as string | undefined,
    accessKeyId: o.accessKeyId as string | undefined,
    secretAccessKey: o.secretAccessKey as string | undefined,
    region: o.region as string | undefined,
    publicApiKey: o.publicApiKey as string | undefined,
    publicUrl: o.publicUrl ? String(o.publicUrl).replace(/\/$/, '') : undefined,
    privateBasePath: basePath,
    pollTtl: o.pollTtl as number,
    expiryJobIntervalSec: o.expiryJobInterval as number,
    metricsJobIntervalSec: o.metricsJobInterval as number,
    joinBatchWindowMs: o.joinBatchWindowMs as number,
    logLevel: String(o.logLevel),
    logRequests: o.logRequests as boolean,
  };
}

function banner(config: ServerConfig, node: { publicUrl: string; privateUrl: string }, creds: {
  credentials: AdminCredentials;
  generated: boolean;
  file: string;
}): string {
  const lines = [
    '',
    'Anteroom waiting room is running',
    `  public API     ${node.publicUrl}`,
    `  private API    ${node.privateUrl}`,
    `  events         ${config.events.map((e) => e.event_id).join(', ')}`,
    `  store          ${config.store.kind === 'sqlite' ? `sqlite:${config.store.path}` : config.store.kind}`,
  ];
  if (creds.generated) {
    lines.push(
      '',
      `Admin credentials were generated and saved to ${creds.file} (mode 0600).`,
      'They are shown this once; later starts only name the file.',
      `  admin token        ${creds.credentials.adminToken}`,
      `  access key ID      ${creds.credentials.accessKeyId}`,
      `  secret access key  ${creds.credentials.secretAccessKey}`,
    );
  } else {
    lines.push('', `Admin credentials: see ${creds.file} (or the --admin-token / --access-key-id flags).`);
  }
  lines.push('', `Try: curl -s -X POST ${node.publicUrl}/assign_queue_num -d '{"event_id":"${config.events[0]?.event_id}"}'`, '');
  return lines.join('\n');
}

async function runServe(raw: Record<string, unknown>): Promise<void> {
  const config = configFromOptions(raw);
  const creds = loadOrCreateCredentials(config.dataDir, {
    adminToken: config.adminToken,
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
  });
  const node = await startNode(config, { credentials: creds.credentials });
  process.stdout.write(`${banner(config, node, creds)}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    node.http.log.info({ signal }, 'shutting down: answering requests in flight');
    node.close().then(
      () => process.exit(0),
      (error: unknown) => {
        node.http.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
