// Lambda functions of the sample inlet strategy stack (VWR's PeriodicInlet and MaxSizeInlet): transports of
// the admission rules of src/domain/admission, carried out through the private API (src/inlet). Like VWR's, they run outside the core stack and act only through the private API,
// signing with SigV4 the credentials of their own IAM role (execute-api:Invoke on three routes).
// - Periodic: an EventBridge schedule, every minute; paused while the CloudWatch alarm named by the stack's
//   CloudWatchAlarmName parameter is in ALARM (VWR's pause signal).
// - MaxSize: an SNS topic; each message is a site's report {"exited": n, "completed": [ids], "abandoned": [ids]}.

import type { ScheduledEvent, SNSEvent } from 'aws-lambda';
import { maxSizeReportProblem, type MaxSizeReport } from '../domain/admission/max-size.ts';
import type { PauseCheck, PauseVerdict, PeriodicInlet, PeriodicOutcome } from '../domain/admission/periodic.ts';
import { epochSeconds, systemClock, type Clock } from '../domain/clock.ts';
import { ConfigErrors } from '../domain/errors.ts';
import { applyMaxSizeReport, describeMaxSizeResult } from '../inlet/max-size.ts';
import { describePeriodicOutcome, runPeriodicTick } from '../inlet/periodic.ts';
import { PrivateApiClient } from '../client/private-api-client.ts';
import type { PrivateApi } from '../inlet/private-api.ts';
import { runtimeSdk, type SdkClient } from './runtime-sdk.ts';

type Env = Record<string, string | undefined>;
type Log = (message: string) => void;

function required(env: Env, name: string): string {
  const value = env[name];
  if (!value) throw ConfigErrors.awsEnvironment(`environment variable ${name} is required`);
  return value;
}

function wholeNumber(env: Env, name: string, fallback?: number): number {
  const text = env[name];
  if (!text) {
    if (fallback === undefined) throw ConfigErrors.awsEnvironment(`environment variable ${name} is required`);
    return fallback;
  }
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) throw ConfigErrors.awsEnvironment(`${name} must be a whole number ≥ 0 (got "${text}")`);
  return value;
}

/** The private API of the core stack, signed with this function's role credentials (Lambda sets them). */
export function privateApiFromEnv(env: Env = process.env): PrivateApi {
  return new PrivateApiClient({
    baseUrl: required(env, 'CORE_API_ENDPOINT'),
    credentials: {
      accessKeyId: required(env, 'AWS_ACCESS_KEY_ID'),
      secretAccessKey: required(env, 'AWS_SECRET_ACCESS_KEY'),
      sessionToken: env.AWS_SESSION_TOKEN,
      region: required(env, 'CORE_API_REGION'),
    },
    // The standalone inlets' default --request-timeout: a hung call fails the invocation, it does not hold it.
    timeoutMs: 10_000,
  });
}

// ---- Periodic ----

export interface PeriodicInletDeps {
  api: PrivateApi;
  inlet: PeriodicInlet;
  clock?: Clock;
  log?: Log;
}

export function createPeriodicInletHandler(deps: PeriodicInletDeps): (event: ScheduledEvent) => Promise<PeriodicOutcome> {
  const clock = deps.clock ?? systemClock;
  const log = deps.log ?? console.log;
  return async () => {
    const outcome = await runPeriodicTick(deps.api, deps.inlet, epochSeconds(clock));
    log(describePeriodicOutcome(deps.inlet.eventId, outcome, deps.inlet));
    return outcome;
  };
}

/** The part of the CloudWatch client the alarm check uses. */
export interface CloudWatchLike {
  describeAlarmState(alarmName: string): Promise<string | undefined>;
}

/**
 * VWR's pause signal: the named CloudWatch alarm. Fail-safe like src/inlet/pause-check.ts: an alarm that
 * cannot be read (missing, no permission, API error) counts as ALARM — admitting more visitors into a site
 * whose health is unknown is the riskier mistake.
 */
export function cloudWatchAlarmPauseCheck(alarmName: string, cloudWatch: CloudWatchLike): PauseCheck {
  return async (): Promise<PauseVerdict> => {
    try {
      const state = await cloudWatch.describeAlarmState(alarmName);
      if (state === undefined) return { state: 'ALARM', reason: `CloudWatch alarm ${alarmName} not found` };
      return state === 'ALARM'
        ? { state: 'ALARM', reason: `CloudWatch alarm ${alarmName} is in ALARM` }
        : { state: 'OK', reason: `CloudWatch alarm ${alarmName} is ${state}` };
    } catch (error) {
      return { state: 'ALARM', reason: `CloudWatch alarm ${alarmName} unreadable: ${(error as Error).message}` };
    }
  };
}

/** CloudWatch through the runtime's @aws-sdk/client-cloudwatch (src/aws/runtime-sdk.ts). */
export function runtimeCloudWatch(client?: SdkClient): CloudWatchLike {
  type Module = {
    CloudWatchClient: new (config: object) => SdkClient;
    DescribeAlarmsCommand: new (input: object) => unknown;
  };
  const load = runtimeSdk<Module>('@aws-sdk/client-cloudwatch', (module) => new module.CloudWatchClient({}), client);
  return {
    async describeAlarmState(alarmName) {
      const { module, client: cloudWatch } = await load();
      const reply = (await cloudWatch.send(new module.DescribeAlarmsCommand({ AlarmNames: [alarmName] }))) as {
        MetricAlarms?: { StateValue?: string }[];
      };
      return reply.MetricAlarms?.[0]?.StateValue;
    },
  };
}

export function periodicInletFromEnv(env: Env = process.env, cloudWatch: CloudWatchLike = runtimeCloudWatch()): PeriodicInlet {
  const alarm = env.CLOUDWATCH_ALARM;
  return {
    eventId: required(env, 'EVENT_ID'),
    incrementBy: wholeNumber(env, 'INCREMENT_BY'),
    startTime: wholeNumber(env, 'START_TIME', 0),
    endTime: wholeNumber(env, 'END_TIME', 0),
    pauseCheck: alarm ? cloudWatchAlarmPauseCheck(alarm, cloudWatch) : undefined,
  };
}

// ---- MaxSize ----

export interface MaxSizeInletDeps {
  api: PrivateApi;
  eventId: string;
  maxSize: number;
  log?: Log;
}

/** The report of one SNS message, or why it is not one. */
export function parseMaxSizeMessage(text: string): MaxSizeReport | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'message is not JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'message is not a JSON object';
  const { exited = 0, completed = [], abandoned = [] } = value as Record<string, unknown>;
  if (typeof exited !== 'number' || !Array.isArray(completed) || !Array.isArray(abandoned)) {
    return 'expected {"exited": number, "completed": [request IDs], "abandoned": [request IDs]}';
  }
  const report: MaxSizeReport = { exited, completed: completed as string[], abandoned: abandoned as string[] };
  return maxSizeReportProblem(report) ?? report;
}

export function createMaxSizeInletHandler(deps: MaxSizeInletDeps): (event: SNSEvent) => Promise<void> {
  const log = deps.log ?? console.log;
  return async (event) => {
    for (const record of event.Records) {
      const report = parseMaxSizeMessage(record.Sns.Message);
      // A malformed report cannot succeed on a retry: it is logged and skipped. A failing private API call
      // throws, and Lambda retries the asynchronous invocation.
      if (typeof report === 'string') {
        log(`${deps.eventId} max-size: message ${record.Sns.MessageId} ignored: ${report}`);
        continue;
      }
      const result = await applyMaxSizeReport(deps.api, deps.eventId, deps.maxSize, report);
      log(describeMaxSizeResult(deps.eventId, deps.maxSize, result));
    }
  };
}

// ---- the functions' entry points (configured from the environment on first use) ----

let periodic: ((event: ScheduledEvent) => Promise<PeriodicOutcome>) | undefined;
export const periodicHandler = (event: ScheduledEvent): Promise<PeriodicOutcome> =>
  (periodic ??= createPeriodicInletHandler({ api: privateApiFromEnv(), inlet: periodicInletFromEnv() }))(event);

let maxSize: ((event: SNSEvent) => Promise<void>) | undefined;
export const maxSizeHandler = (event: SNSEvent): Promise<void> =>
  (maxSize ??= createMaxSizeInletHandler({
    api: privateApiFromEnv(),
    eventId: required(process.env, 'EVENT_ID'),
    maxSize: wholeNumber(process.env, 'MAX_SIZE'),
  }))(event);
