// Options of `anteroom loadtest`: parsing of rates and durations, cross-option validation, and the
// loopback guard that keeps an accidental run away from a production waiting room.

import type { BotRunOptions } from './bots.ts';
import { ConfigErrors } from '../domain/errors.ts';
import { EVENT_ID_PATTERN } from '../domain/room-settings.ts';

import type { PrivateApiCredentials } from '../client/private-api-client.ts';

export interface LoadTestOptions {
  /** Public base URL without a trailing slash, e.g. http://127.0.0.1:8080 */
  target: string;
  /** Private base URL without a trailing slash, e.g. http://127.0.0.1:8080/private */
  privateTarget: string;
  eventId: string;
  visitors: number;
  /** Visitors joining per second. */
  arrivalRate: number;
  /** Positions the admission driver lets in per second. */
  admitRate: number;
  auth: PrivateApiCredentials;
  pollIntervalMs: number;
  /** Hard stop; the run ends earlier when every visitor has finished its journey. */
  durationMs: number;
  /** True when --duration was not given and durationMs is the computed safety bound. */
  durationIsDefault: boolean;
  /** Re-claims of the token after the first successful claim (idempotency check), 0–3. */
  reclaims: number;
  /** A visitor also polls waiting_num with its 1st, (n+1)-th, (2n+1)-th… serving_num poll (0 = never). */
  waitingNumEvery: number;
  /** Every n-th visitor sends its first claim twice at once, like a double click (0 = never). */
  doubleClaimEvery: number;
  /** Connections for the visitors' polls, and as many again (undici) for their joins and claims. */
  connections: number;
  /**
   * Polls (GETs) in flight per polling connection, HTTP/1.1 pipelining; 1 = keep-alive without pipelining;
   * 0 = polls go through undici with everything else (about 2.5× the client CPU per poll against a real server).
   */
  pipelining: number;
  /** Reset the event (reset_initial_state) before the run, so positions must be exactly 1..N. */
  reset: boolean;
  /**
   * How long a served visitor stays before ending its session (update_session, completed); null = never. By
   * default 2 s against a room that admits by itself (its capacity frees up only as sessions end), else never.
   */
  sessionTimeMs: number | null;
  /** The first N visitors join a pre-queue and are drawn at the start (0 = no pre-queue). Needs --reset. */
  prequeue: number;
  /** Pause the room this long after the start (state paused) … */
  pauseAtMs: number | null;
  /** … and resume it (state open) this long after. */
  pauseForMs: number | null;
  /** --session-time was given (else the run picks its default once it knows the room's admission). */
  sessionTimeGiven: boolean;
  /** Share of visitors (0–1) who close the tab at a random point (abandon-plan.ts); 0 = nobody. */
  abandon: number;
  /** Share (0–1) of those who come back later. */
  comeBack: number;
  /** A visitor who comes back does so after a random delay of 0.5–1.5 × this. */
  comeBackAfterMs: number;
  /** Seed of who abandons, when, and who comes back: the same seed picks the same visitors in every run. */
  seed: number;
  /** Sets the room's presence_timeout (seconds) for the run, put back at the end; null = leave it. */
  presenceTimeout: number | null;
  /** Sets the room's arrival_window (seconds) for the run, put back at the end; null = leave it. */
  arrivalWindow: number | null;
  /**
   * A waiting visitor also asks /queue_num with its request ID this often, as Anteroom's waiting page does (a sign
   * of life for presence); 0 = never. Default: 10 s when visitors abandon or the run sets presence, else never.
   */
  presenceBeatMs: number;
  publicApiKey?: string | undefined;
  reportPath?: string | undefined;
  json: boolean;
  allowRemote: boolean;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 };

/** "250ms", "1s", "1.5s", "2m", "1h", "1m30s"; a bare number is seconds. */
export function parseDuration(text: string): number {
  const value = text.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|min|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) {
    throw ConfigErrors.option(`"${text}" is not a duration (examples: 500ms, 1s, 2m, 1m30s)`);
  }
  return Math.round(parts.reduce((ms, p) => ms + Number(p[1]) * DURATION_UNITS[p[2]!]!, 0));
}

/** "300", "300/s", "18000/min", "60/m": returns per second. */
export function parseRate(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(?:\/(s|sec|m|min|h))?$/.exec(text.trim());
  if (!m) throw ConfigErrors.option(`"${text}" is not a rate (examples: 300, 300/s, 6000/min)`);
  const per = m[2] === undefined || m[2] === 's' || m[2] === 'sec' ? 1 : m[2] === 'h' ? 3600 : 60;
  return Number(m[1]) / per;
}

/** 127.0.0.0/8, ::1 and localhost: the only hosts a run may target without --allow-remote. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost') return true;
  if (host === '[::1]' || host === '::1') return true;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return v4 !== null && v4.slice(1).every((o) => Number(o) <= 255) && v4[1] === '127';
}

function baseUrl(flag: string, text: string, allowRemote: boolean): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw ConfigErrors.option(`${flag} must be a URL such as http://127.0.0.1:8080`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw ConfigErrors.option(`${flag} must be an http(s) URL`);
  if (url.search || url.hash) throw ConfigErrors.option(`${flag} must be a base URL without query or fragment`);
  if (!allowRemote && !isLoopbackHost(url.hostname)) {
    throw ConfigErrors.option(
      `${flag} ${url.host} is not a loopback address; a load test against another host needs --allow-remote ` +
        '(make sure it is not a production waiting room)',
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function count(flag: string, value: unknown, min: number, max: number): number {
  const n = typeof value === 'number' ? value : Number(String(value).trim());
  if (!Number.isInteger(n) || n < min || n > max) throw ConfigErrors.option(`${flag} must be a whole number from ${min} to ${max}`);
  return n;
}

function positiveRate(flag: string, value: unknown): number {
  const rate = parseRate(String(value));
  if (!(rate > 0) || rate > 1_000_000) throw ConfigErrors.option(`${flag} must be more than 0 and at most 1000000/s`);
  return rate;
}

/** Whether a run reports what visitors who leave cost (--abandon, or a run that sets the room's presence). */
export function measuresNoShows(o: Pick<LoadTestOptions, 'abandon' | 'presenceTimeout' | 'arrivalWindow'>): boolean {
  return o.abandon > 0 || o.presenceTimeout !== null || o.arrivalWindow !== null;
}

/** The longest a visitor who comes back stays away (0 when nobody comes back). */
export function comingBackMs(comeBack: number, comeBackAfterMs: number): number {
  return comeBack > 0 ? 1.5 * comeBackAfterMs : 0;
}

/** "30%", "0.3" → 0.3: a share from 0 to 1. */
function share(flag: string, value: unknown): number {
  const text = String(value).trim();
  const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(text);
  const n = m ? Number(m[1]) / (m[2] ? 100 : 1) : NaN;
  if (!(n >= 0 && n <= 1)) throw ConfigErrors.option(`${flag} must be a share from 0 to 1, or a percentage: 0.3, 30%`);
  return n;
}

function optionalString(value: unknown): string | undefined {
  return value === undefined || value === null || value === '' ? undefined : String(value);
}

/**
 * The raw values commander collected (strings, booleans) → validated options. Throws ConfigError with a
 * message naming the flag.
 */
export function parseLoadTestOptions(raw: Record<string, unknown>): LoadTestOptions {
  const allowRemote = raw.allowRemote === true;
  if (raw.target === undefined) throw ConfigErrors.option('--target is required (the public base URL)');
  const target = baseUrl('--target', String(raw.target), allowRemote);
  const privateTarget =
    raw.privateTarget === undefined ? `${target}/private` : baseUrl('--private-target', String(raw.privateTarget), allowRemote);

  const eventId = String(raw.eventId ?? 'Sample');
  if (!new RegExp(EVENT_ID_PATTERN).test(eventId)) throw ConfigErrors.option(`--event-id "${eventId}" is not a valid event ID`);

  const visitors = count('--visitors', raw.visitors ?? 1000, 1, 10_000_000);
  const arrivalRate = positiveRate('--arrival-rate', raw.arrivalRate ?? '100/s');
  const admitRate = positiveRate('--admit-rate', raw.admitRate ?? '100/s');

  const adminToken = optionalString(raw.adminToken);
  const accessKeyId = optionalString(raw.accessKeyId);
  const secretAccessKey = optionalString(raw.secretAccessKey);
  let auth: PrivateApiCredentials;
  if (adminToken !== undefined) {
    if (accessKeyId !== undefined || secretAccessKey !== undefined) {
      throw ConfigErrors.option('give either --admin-token or --access-key-id with --secret-access-key, not both');
    }
    auth = { adminToken };
  } else if (accessKeyId !== undefined && secretAccessKey !== undefined) {
    auth = {
      accessKeyId,
      secretAccessKey,
      region: optionalString(raw.region) ?? 'us-east-1',
      sessionToken: optionalString(raw.sessionToken),
    };
  } else if (accessKeyId !== undefined || secretAccessKey !== undefined) {
    throw ConfigErrors.option('--access-key-id and --secret-access-key go together');
  } else {
    throw ConfigErrors.option(
      'the admission driver needs the private API: give --admin-token (or ANTEROOM_ADMIN_TOKEN) or ' +
        '--access-key-id and --secret-access-key',
    );
  }

  const pollIntervalMs = parseDuration(String(raw.pollInterval ?? '1s'));
  if (pollIntervalMs < 10 || pollIntervalMs > 60_000) throw ConfigErrors.option('--poll-interval must be from 10ms to 60s');

  const abandon = share('--abandon', raw.abandon ?? 0);
  const comeBack = share('--come-back', raw.comeBack ?? 0);
  if (comeBack > 0 && abandon === 0) throw ConfigErrors.option('--come-back needs --abandon (a share of those who abandon comes back)');
  const comeBackAfterMs = parseDuration(String(raw.comeBackAfter ?? '30s'));
  if (comeBackAfterMs < 1000 || comeBackAfterMs > 3_600_000) throw ConfigErrors.option('--come-back-after must be from 1s to 1h');
  const presenceTimeout = raw.presenceTimeout === undefined ? null : count('--presence-timeout', raw.presenceTimeout, 0, 3600);
  const arrivalWindow = raw.arrivalWindow === undefined ? null : count('--arrival-window', raw.arrivalWindow, 0, 31_536_000);
  const beat = optionalString(raw.presenceBeat);
  const presenceBeatMs =
    beat === undefined ? (abandon > 0 || presenceTimeout !== null ? 10_000 : 0) : beat === 'never' || beat === '0' ? 0 : parseDuration(beat);
  if (presenceBeatMs !== 0 && (presenceBeatMs < 100 || presenceBeatMs > 3_600_000)) throw ConfigErrors.option('--presence-beat must be from 100ms to 1h (or "never")');
  // Without --duration the run is still bounded: twice the planned journey plus a margin.
  const planned = Math.max(visitors / arrivalRate, visitors / admitRate) * 1000;
  const durationIsDefault = raw.duration === undefined;
  const durationMs = durationIsDefault ? Math.ceil(2 * planned + 30_000 + 4 * pollIntervalMs + comingBackMs(comeBack, comeBackAfterMs)) : parseDuration(String(raw.duration));
  if (durationMs < 100 || durationMs > 24 * 3_600_000) throw ConfigErrors.option('--duration must be from 100ms to 24h');

  const sessionTime = optionalString(raw.sessionTime);
  const sessionTimeMs = sessionTime === undefined ? null : sessionTime === 'never' ? null : parseDuration(sessionTime);
  if (sessionTimeMs !== null && sessionTimeMs > 3_600_000) throw ConfigErrors.option('--session-time must be at most 1h (or "never")');
  const prequeue = count('--prequeue', raw.prequeue ?? 0, 0, visitors);
  if (prequeue > 0 && raw.reset !== true) throw ConfigErrors.option('--prequeue needs --reset (a draw happens once per reset of the room)');
  const pauseAtMs = raw.pauseAt === undefined ? null : parseDuration(String(raw.pauseAt));
  const pauseForMs = raw.pauseFor === undefined ? null : parseDuration(String(raw.pauseFor));
  if ((pauseAtMs === null) !== (pauseForMs === null)) throw ConfigErrors.option('--pause-at and --pause-for go together');

  return {
    target,
    privateTarget,
    eventId,
    visitors,
    arrivalRate,
    admitRate,
    auth,
    pollIntervalMs,
    durationMs,
    durationIsDefault,
    reclaims: count('--reclaims', raw.reclaims ?? 3, 0, 3),
    waitingNumEvery: count('--waiting-num-every', raw.waitingNumEvery ?? 10, 0, 1_000_000),
    doubleClaimEvery: count('--double-claim-every', raw.doubleClaimEvery ?? 10, 0, 1_000_000),
    connections: count('--connections', raw.connections ?? 128, 1, 4096),
    pipelining: count('--pipelining', raw.pipelining ?? 8, 0, 64),
    reset: raw.reset === true,
    sessionTimeMs: sessionTime === undefined ? null : sessionTimeMs,
    sessionTimeGiven: sessionTime !== undefined,
    prequeue,
    pauseAtMs,
    pauseForMs,
    abandon,
    comeBack,
    comeBackAfterMs,
    seed: count('--seed', raw.seed ?? 1, 0, 2 ** 32 - 1),
    presenceTimeout,
    arrivalWindow,
    presenceBeatMs,
    publicApiKey: optionalString(raw.publicApiKey),
    reportPath: optionalString(raw.report),
    json: raw.json === true,
    allowRemote,
  };
}

/** The options of `anteroom loadtest --bots` (src/loadtest/bots.ts): loopback targets only (source addresses are 127.x). */
export function parseBotRunOptions(raw: Record<string, unknown>): BotRunOptions {
  const target = baseUrl('--target', String(raw.target), false);
  const visitors = count('--visitors', raw.visitors ?? '1000', 0, 1_000_000);
  const bots = count('--bots', raw.bots, 1, 62_500);
  return {
    target,
    eventId: eventIdOption(raw.eventId),
    visitors,
    arrivalRate: positiveRate('--arrival-rate', raw.arrivalRate ?? '100/s'),
    bots,
    botJoins: raw.botJoins === undefined ? Math.max(1, Math.round(visitors / bots)) : count('--bot-joins', raw.botJoins, 1, 1_000_000),
    botsSolve: raw.botsSolve === true,
    first: count('--first', raw.first ?? '1000', 1, 100_000_000),
    publicApiKey: optionalString(raw.publicApiKey),
  };
}

function eventIdOption(value: unknown): string {
  const eventId = String(value ?? 'Sample');
  if (!new RegExp(EVENT_ID_PATTERN).test(eventId)) throw ConfigErrors.option('--event-id must be 1-128 letters, digits, ".", "_", "~" or "-"');
  return eventId;
}
