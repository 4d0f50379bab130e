// `anteroom inlet periodic|max-size`: the inlet strategies as a separate process. They decide with the
// admission rules of src/domain/admission and act on any Anteroom node (or VWR's own API) only through the
// private API, signed with SigV4 or carrying the admin token.

import { setTimeout as sleep } from 'node:timers/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigErrors } from '../domain/errors.ts';
import { MAX_EXITED, maxSizeReportProblem, type MaxSizeReport } from '../domain/admission/max-size.ts';
import type { PeriodicInlet, PeriodicOutcome } from '../domain/admission/periodic.ts';
import {
  DEFAULT_EVENT_ID,
  DEFAULT_PAUSE_TIMEOUT,
  DEFAULT_PERIODIC_INTERVAL,
  EVENT_ID_PATTERN,
  MaxSizeInletSchema,
  parsePauseCheck,
  PeriodicInletSchema,
} from '../domain/room-settings.ts';
import { integerRange } from '../domain/setting-problems.ts';
import { applyMaxSizeReport, describeMaxSizeResult } from '../inlet/max-size.ts';
import { pauseChecker } from '../inlet/pause-check.ts';
import { describePeriodicOutcome, periodicOutcomeRecord, runPeriodicTick } from '../inlet/periodic.ts';
import { PrivateApiClient, PrivateApiError, type PrivateApiCredentials } from '../client/private-api-client.ts';
import type { PrivateApi } from '../inlet/private-api.ts';
import { integerIn } from './option-parsers.ts';

const env = (name: string) => `ANTEROOM_${name}`;

function opt(flags: string, description: string, envName?: string): Option {
  const option = new Option(flags, description);
  return envName ? option.env(env(envName)) : option;
}

/** The flag of each pause-check setting, to name it in a message. */
const PAUSE_FLAGS = { url: '--pause-url', json_path: '--pause-json-path', threshold: '--pause-threshold', timeout: '--pause-timeout' };

/** A whole number in the range the events file's inlet accepts for the same setting. */
const settingRange = (schema: Parameters<typeof integerRange>[0]) => {
  const { min, max } = integerRange(schema);
  return integerIn(min, max);
};

/** Epoch seconds, or a date such as 2026-11-22T18:00:00Z. */
function epochSecondsValue(value: string): number {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new InvalidArgumentError('must be epoch seconds or a date like 2026-11-22T18:00:00Z.');
  return Math.floor(ms / 1000);
}

function numberValue(value: string): number {
  const n = Number(value.trim());
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number.');
  return n;
}

function timeoutSeconds(value: string): number {
  const n = numberValue(value);
  if (!(n > 0 && n <= 60)) throw new InvalidArgumentError('must be more than 0 and at most 60 seconds.');
  return n;
}

/** --completed a,b --completed c → [a, b, c] */
function idList(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((id) => id.trim()).filter((id) => id !== '')];
}

/** Options every inlet command shares: where the private API is, which event, and how to authenticate. */
function withConnectionOptions(command: Command): Command {
  return command
    // Exit code 2 for every invalid option, as for ConfigError (commander's own default is 1).
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .addOption(opt('--private-url <url>', 'base URL of the private API, e.g. http://127.0.0.1:8080/private', 'PRIVATE_URL'))
    .addOption(opt('--event-id <id>', 'the event (waiting room) whose serving counter moves', 'EVENT_ID').default(DEFAULT_EVENT_ID))
    .addOption(opt('--admin-token <token>', 'authenticate with the admin bearer token', 'ADMIN_TOKEN'))
    .addOption(opt('--access-key-id <id>', 'authenticate with SigV4: access key ID', 'ACCESS_KEY_ID'))
    .addOption(opt('--secret-access-key <secret>', 'authenticate with SigV4: secret access key', 'SECRET_ACCESS_KEY'))
    .addOption(opt('--session-token <token>', 'SigV4 session token (temporary AWS credentials)', 'SESSION_TOKEN'))
    .addOption(opt('--region <region>', 'SigV4 region of the credential scope', 'REGION').default('us-east-1'))
    .addOption(opt('--request-timeout <seconds>', 'give up on a private-API call after this long').default(10).argParser(timeoutSeconds))
    .addOption(opt('--json', 'print one JSON object per line instead of text'));
}

const AUTH_HELP = `
Authentication: give --admin-token, or --access-key-id with --secret-access-key (SigV4, service
execute-api, as VWR's inlets and control panel sign). The connection options also read the environment
variables shown (ANTEROOM_PRIVATE_URL, ANTEROOM_EVENT_ID, ANTEROOM_ADMIN_TOKEN, ANTEROOM_ACCESS_KEY_ID,
ANTEROOM_SECRET_ACCESS_KEY, ANTEROOM_SESSION_TOKEN, ANTEROOM_REGION). A flag on the command line wins
over the environment; when the environment holds both kinds of credentials, SigV4 is used.`;

function connection(command: Command, o: Record<string, unknown>): { api: PrivateApi; eventId: string } {
  if (o.privateUrl === undefined) throw ConfigErrors.option('--private-url is required (or ANTEROOM_PRIVATE_URL)');
  const privateUrl = String(o.privateUrl);
  if (!/^https?:\/\//.test(privateUrl) || !URL.canParse(privateUrl)) {
    throw ConfigErrors.option('--private-url must be an http(s) URL such as http://127.0.0.1:8080/private');
  }
  const eventId = String(o.eventId);
  if (!new RegExp(EVENT_ID_PATTERN).test(eventId)) throw ConfigErrors.option(`--event-id "${eventId}" is not a valid event ID`);
  return {
    api: new PrivateApiClient({
      baseUrl: privateUrl,
      credentials: credentialsFrom(command, o),
      timeoutMs: Math.round((o.requestTimeout as number) * 1000),
    }),
    eventId,
  };
}

/**
 * The private-API credentials given by the options --admin-token, --access-key-id, --secret-access-key,
 * --session-token and --region (also used by `anteroom verify-draw`).
 */
export function credentialsFrom(command: Command, o: Record<string, unknown>): PrivateApiCredentials {
  const given = (name: string) => (o[name] === undefined || o[name] === '' ? undefined : String(o[name]));
  const fromCli = (name: string) => given(name) !== undefined && command.getOptionValueSource(name) === 'cli';
  const token = given('adminToken');
  const keyId = given('accessKeyId');
  const secret = given('secretAccessKey');
  if ((keyId === undefined) !== (secret === undefined)) {
    throw ConfigErrors.option('--access-key-id and --secret-access-key go together');
  }
  const sigv4: PrivateApiCredentials | undefined =
    keyId !== undefined && secret !== undefined
      ? { accessKeyId: keyId, secretAccessKey: secret, region: String(o.region), sessionToken: given('sessionToken') }
      : undefined;
  const bearer: PrivateApiCredentials | undefined = token !== undefined ? { adminToken: token } : undefined;
  const keysOnCli = fromCli('accessKeyId') || fromCli('secretAccessKey');
  if (fromCli('adminToken') && keysOnCli) {
    throw ConfigErrors.option('give either --admin-token or --access-key-id with --secret-access-key, not both');
  }
  const chosen = fromCli('adminToken') ? bearer : keysOnCli ? sigv4 : (sigv4 ?? bearer);
  if (!chosen) {
    throw ConfigErrors.option(
      'credentials for the private API are required: --admin-token, or --access-key-id with --secret-access-key',
    );
  }
  return chosen;
}

function print(json: boolean, line: string, record: Record<string, unknown>): void {
  const time = new Date().toISOString();
  process.stdout.write(json ? `${JSON.stringify({ time, ...record })}\n` : `${time} ${line}\n`);
}

function printFailure(json: boolean, eventId: string, error: unknown): void {
  const message = (error as Error).message ?? String(error);
  if (json) process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), event_id: eventId, error: message })}\n`);
  process.stderr.write(`anteroom inlet: ${message}\n`);
}

export function inletCommand(): Command {
  return new Command('inlet')
    .description(
      'Run an inlet strategy as its own process: it moves the serving counter of a waiting room through the ' +
        'private API (Anteroom or VWR). Inlets can also run inside the server ("inlet" in the events file).',
    )
    .addCommand(periodicCommand())
    .addCommand(maxSizeCommand());
}

function periodicCommand(): Command {
  const command = new Command('periodic')
    .description(
      'Every interval, add --increment-by to the serving counter while start time < now < end time, unless the ' +
        'pause check says the site is struggling. Runs until the end time, SIGINT or SIGTERM; prints a line per tick.',
    )
    .addOption(opt('--increment-by <n>', 'visitors let in per tick').makeOptionMandatory().argParser(settingRange(PeriodicInletSchema.properties.increment_by)))
    .addOption(opt('--interval <seconds>', 'time between ticks').default(DEFAULT_PERIODIC_INTERVAL).argParser(settingRange(PeriodicInletSchema.properties.interval)))
    .addOption(opt('--start-time <time>', 'first tick that admits is after this (epoch seconds or ISO date; 0 = now)').default(0).argParser(epochSecondsValue))
    .addOption(opt('--end-time <time>', 'stop admitting and exit at this time (epoch seconds or ISO date; 0 = no end)').default(0).argParser(epochSecondsValue))
    .addOption(opt('--pause-url <url>', 'health check: skip a tick when this URL answers non-2xx, times out or is unreachable'))
    .addOption(opt('--pause-json-path <path>', 'health check: number in the JSON answer, e.g. $.cpu.load or /cpu/load (needs --pause-threshold)'))
    .addOption(opt('--pause-threshold <n>', 'health check: skip a tick when the number at --pause-json-path is over this').argParser(numberValue))
    .addOption(opt('--pause-timeout <seconds>', 'health check: answer time limit').default(DEFAULT_PAUSE_TIMEOUT).argParser(timeoutSeconds))
    .addOption(opt('--once', 'run one tick and exit (exit code 1 if it failed)'));
  withConnectionOptions(command)
    .addHelpText(
      'after',
      `${AUTH_HELP}

A private-API answer of 4xx (credentials, unknown event) stops the run with exit code 1; a 5xx or a
network error is printed and the next tick tries again. Run one periodic inlet per event: two of them
would both add to the counter.

Example:
  anteroom inlet periodic --private-url http://127.0.0.1:8080/private --event-id Sample \\
    --increment-by 50 --interval 60 --end-time 2026-11-22T20:00:00Z --pause-url https://shop.example/health`,
    )
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await runPeriodic(cmd, o);
    });
  return command;
}

function periodicInletFromOptions(eventId: string, o: Record<string, unknown>): PeriodicInlet {
  const startTime = o.startTime as number;
  const endTime = o.endTime as number;
  if (endTime !== 0 && endTime <= startTime) throw ConfigErrors.option('--end-time must be after --start-time (or 0 for no end)');
  if (o.pauseUrl === undefined && (o.pauseJsonPath !== undefined || o.pauseThreshold !== undefined)) {
    throw ConfigErrors.option('--pause-json-path and --pause-threshold need --pause-url');
  }
  if ((o.pauseJsonPath === undefined) !== (o.pauseThreshold === undefined)) {
    throw ConfigErrors.option('--pause-json-path and --pause-threshold go together');
  }
  let pauseCheck: PeriodicInlet['pauseCheck'];
  if (o.pauseUrl !== undefined) {
    const checked = parsePauseCheck({
      url: String(o.pauseUrl),
      timeout: o.pauseTimeout,
      ...(o.pauseJsonPath !== undefined ? { json_path: String(o.pauseJsonPath), threshold: o.pauseThreshold } : {}),
    });
    if (!checked.ok) {
      const [field = ''] = checked.problem.path;
      throw ConfigErrors.option(`${PAUSE_FLAGS[field as keyof typeof PAUSE_FLAGS] ?? 'pause check'}: ${checked.problem.rule}`);
    }
    pauseCheck = pauseChecker(checked.settings);
  }
  return { eventId, incrementBy: o.incrementBy as number, startTime, endTime, pauseCheck };
}

async function runPeriodic(command: Command, o: Record<string, unknown>): Promise<void> {
  const { api, eventId } = connection(command, o);
  const inlet = periodicInletFromOptions(eventId, o);
  const json = o.json === true;
  const intervalMs = (o.interval as number) * 1000;

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const firstTick = Date.now();
    let tick = 0;
    for (;;) {
      let outcome: PeriodicOutcome | null = null;
      try {
        outcome = await runPeriodicTick(api, inlet, Math.floor(Date.now() / 1000));
        const record = { event_id: eventId, strategy: 'periodic', ...periodicOutcomeRecord(outcome) };
        print(json, describePeriodicOutcome(eventId, outcome, inlet), record);
      } catch (error) {
        printFailure(json, eventId, error);
        // A tick in flight is never cut short by a signal: the increment either happened or not, and we said which.
        if (o.once === true || (error instanceof PrivateApiError && error.permanent)) {
          process.exitCode = 1;
          return;
        }
      }
      if (o.once === true || outcome?.kind === 'ended' || stop.signal.aborted) return;
      // Ticks stay on the grid of the first one; ticks missed by a slow call are skipped, not bunched. The tick
      // number only goes up, so a timer that fires a millisecond early never makes a second tick on one point.
      tick = Math.max(tick + 1, Math.floor((Date.now() - firstTick) / intervalMs) + 1);
      const wait = Math.max(0, firstTick + tick * intervalMs - Date.now());
      try {
        await sleep(wait, undefined, { signal: stop.signal });
      } catch {
        return;
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function maxSizeCommand(): Command {
  const command = new Command('max-size')
    .description(
      'Report visitors who left the site: close the listed sessions, then move the serving counter by ' +
        'min(max size - active tokens, exited + sessions closed now), never backwards. One report per run.',
    )
    .addOption(opt('--max-size <n>', 'how many visitors may hold an active token at once').makeOptionMandatory().argParser(settingRange(MaxSizeInletSchema.properties.max_size)))
    .addOption(opt('--exited <n>', 'visitors who left without a known request ID').default(0).argParser(integerIn(0, MAX_EXITED)))
    .addOption(opt('--completed <ids>', 'request IDs whose sessions completed, comma-separated (repeatable)').argParser(idList).default([]))
    .addOption(opt('--abandoned <ids>', 'request IDs whose sessions were abandoned, comma-separated (repeatable)').argParser(idList).default([]));
  withConnectionOptions(command)
    .addHelpText(
      'after',
      `${AUTH_HELP}

A session already closed (or unknown) is not counted. Exit code 0 when the report was applied, 1 when
a private-API call failed: sessions may have been closed by then, and sending the same IDs again does
not count them twice (--exited would be counted again).

Example:
  anteroom inlet max-size --private-url http://127.0.0.1:8080/private --event-id Sample --max-size 100 \\
    --exited 3 --completed 6f1c...,9a2b... --abandoned 0d4e...`,
    )
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await runMaxSize(cmd, o);
    });
  return command;
}

async function runMaxSize(command: Command, o: Record<string, unknown>): Promise<void> {
  const { api, eventId } = connection(command, o);
  const report: MaxSizeReport = {
    exited: o.exited as number,
    completed: o.completed as string[],
    abandoned: o.abandoned as string[],
  };
  const problem = maxSizeReportProblem(report);
  if (problem) throw ConfigErrors.option(problem.replace(/^(completed|abandoned|exited)/, '--$1'));
  const maxSize = o.maxSize as number;
  const json = o.json === true;
  try {
    const result = await applyMaxSizeReport(api, eventId, maxSize, report);
    print(json, describeMaxSizeResult(eventId, maxSize, result), { event_id: eventId, strategy: 'max_size', max_size: maxSize, ...result });
  } catch (error) {
    printFailure(json, eventId, error);
    process.exitCode = 1;
  }
}
