// Runs one load test: checks the target and the credentials, starts the visitors and the admission driver,
// samples once a second, stops at the end of every journey (or --duration, or an abort), then computes the
// verdicts and the summary. Printing and the report are the caller's.

import { performance } from 'node:perf_hooks';
import type { JWK } from 'jose';
import { AdmissionDriver } from './admission.ts';
import { PrivateApiClient, PrivateApiError } from '../client/private-api-client.ts';
import { ApiClient, parseJson, type Reply } from './http-client.ts';
import type { LoadTestOptions } from './options.ts';
import { ServerObserver } from './server-observer.ts';
import { Progress, type ProgressSink } from './progress.ts';
import { buildSummary, type EndedBy, type LoadTestSummary } from './summary.ts';
import { RunStats, type SecondSample } from './stats.ts';
import { TimerWheel } from './timer-wheel.ts';
import { PollConnections } from './poll-connections.ts';
import { computeVerdicts, type Verdict } from './verdicts.ts';
import { Journey } from './visitor.ts';
import { CounterLog } from './counter-log.ts';
import { admissionOf, claimWindowOf, RoomPlan, type RoomAdmission } from './room-plan.ts';
import { admissionCapacity, admissionRate, drawOrder, pausedHolds, type DrawAnswer, type PauseRecord } from './room-verdicts.ts';
import { ROOM_PROPAGATION_MS } from '../domain/room-sync.ts';
import { comingBackMs, measuresNoShows } from './options.ts';
import { noShowFigures, type NoShowResult } from './no-show-figures.ts';

/** The run could not start: target unreachable, unknown event, credentials refused. */
export class LoadTestSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoadTestSetupError';
  }
}

export interface LoadTestResult {
  summary: LoadTestSummary;
  /** How the room admitted: the run's admission driver, or the room itself (automatic). */
  admission: RoomAdmission;
  samples: SecondSample[];
  verdicts: Verdict[];
  /** --abandon: visitors in session and stayers waiting, one point a second, and the stayers' waits (no-show-figures.ts). */
  noShows: Pick<NoShowResult, 'series' | 'stayerWaits'> | null;
}

export interface RunIo {
  /** Where the progress line goes (stderr). */
  progress?: ProgressSink | undefined;
  /** Aborting ends the run early, as --duration would; the verdicts are still computed. */
  signal?: AbortSignal | undefined;
}

function describe(reply: Pick<Reply, 'status' | 'body'>): string {
  return reply.status === 0 ? `no answer (${reply.body})` : `${reply.status} ${reply.body.slice(0, 200)}`;
}

/** A set-up call of the private API: its status and body, or status 0 and why there was no answer. */
async function privateCall(api: PrivateApiClient, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Pick<Reply, 'status' | 'body'>> {
  try {
    const response = await api.send(method, path, body);
    return { status: response.status, body: await response.text() };
  } catch (error) {
    if (error instanceof PrivateApiError) return { status: 0, body: error.message };
    throw error;
  }
}

export async function runLoadTest(options: LoadTestOptions, io: RunIo = {}): Promise<LoadTestResult> {
  const origin = performance.now();
  const cpuAtStart = process.cpuUsage();
  const apiKey = options.publicApiKey ? { 'x-api-key': options.publicApiKey } : undefined;
  // The visitors' polls, pipelined on connections of their own (--pipelining 0: through publicApi instead).
  // Made first: its constructor is the one that may throw (a header with a line break), before anything opens.
  const polls =
    options.pipelining > 0
      ? new PollConnections(options.target, { connections: options.connections, pipelining: options.pipelining, origin, ...(apiKey ? { headers: apiKey } : {}) })
      : null;
  const publicApi = new ApiClient(options.target, { connections: options.connections, origin, ...(apiKey ? { headers: apiKey } : {}) });
  // Set-up and the public key go through their own connections, never queued behind visitors' polls.
  const controlApi = new ApiClient(options.target, { connections: 2, origin, ...(apiKey ? { headers: apiKey } : {}) });
  // The private API through the one private-API client, with the pools' 30 s for an answer, aborted at the end as
  // the pools are closed. Its calls (set-up, then one increment at a time) are few: fetch's connections carry them.
  const endOfRun = new AbortController();
  const privateApi = new PrivateApiClient({ baseUrl: options.privateTarget, credentials: options.auth, timeoutMs: 30_000, signal: endOfRun.signal });
  const eventQuery = `event_id=${encodeURIComponent(options.eventId)}`;
  const progress = io.progress ? new Progress(io.progress) : null;

  try {
    // Set-up: the public API knows the event, the private API accepts the credentials.
    const auth = await privateCall(privateApi, 'GET', `/num_active_tokens?${eventQuery}`);
    if (auth.status !== 200) {
      throw new LoadTestSetupError(`the private API at ${options.privateTarget} answered /num_active_tokens with ${describe(auth)}`);
    }
    if (options.reset) {
      const reset = await privateCall(privateApi, 'POST', '/reset_initial_state', { event_id: options.eventId });
      if (reset.status !== 200) throw new LoadTestSetupError(`reset_initial_state answered ${describe(reset)}`);
    }
    const first = await controlApi.get(`/serving_num?${eventQuery}`);
    const servingNow = Number((parseJson(first.body) as { serving_counter?: unknown } | null)?.serving_counter);
    if (first.status !== 200 || Number.isNaN(servingNow)) {
      throw new LoadTestSetupError(`${options.target}/serving_num?${eventQuery} answered ${describe(first)}`);
    }
    // After a reset the counter is 0 by contract: the FIFO verdict must not trust a /serving_num that says otherwise.
    const initialServing = options.reset ? 0 : servingNow;

    // The room: does it admit by itself? Then nobody here moves its counter, and its limits become verdicts.
    const room = new RoomPlan(privateApi, options.eventId);
    const before = await room.read();
    const admission = admissionOf(before);
    const setsPresence = options.presenceTimeout !== null || options.arrivalWindow !== null;
    if ((options.prequeue > 0 || options.pauseAtMs !== null || setsPresence) && before === null) {
      throw new LoadTestSetupError(
        `--prequeue, --pause-at, --presence-timeout and --arrival-window need the rooms API: GET ${options.privateTarget}/rooms/${options.eventId} found no room`,
      );
    }
    const settings = await room.setPresence(options.presenceTimeout, options.arrivalWindow).catch((error: Error) => {
      throw new LoadTestSetupError(`the room's presence settings could not be set: ${error.message}`);
    });
    const sessionTimeMs = options.sessionTimeGiven ? options.sessionTimeMs : admission.kind === 'automatic' ? 2000 : null;
    const journeyOptions = { ...options, sessionTimeMs };
    const counterLog = new CounterLog(initialServing);

    const wheel = new TimerWheel(() => performance.now() - origin);
    const stats = new RunStats();
    const driver = new AdmissionDriver({ privateApi, wheel, stats, eventId: options.eventId, admitRate: options.admitRate, initialServing });
    const endSession = async (requestId: string): Promise<Reply> => {
      const sentAt = wheel.now();
      let status = 0;
      let body: string;
      try {
        const response = await privateApi.send('POST', '/update_session', { event_id: options.eventId, request_id: requestId, status: 1 });
        status = response.status;
        body = await response.text();
      } catch (error) {
        if (!(error instanceof PrivateApiError)) throw error;
        body = error.message;
      }
      return { status, body, sentAt, receivedAt: wheel.now(), retryAfterMs: null };
    };
    let end: (by: EndedBy) => void = () => {};
    const ended = new Promise<EndedBy>((resolve) => (end = resolve));
    const journey = new Journey({
      api: publicApi,
      polls: polls ?? publicApi,
      wheel,
      stats,
      options: journeyOptions,
      onPlaced: (position) => driver.notePosition(position),
      onFinished: () => end('journey'),
      onServing: (sentAt, receivedAt, value) => counterLog.observe(sentAt, receivedAt, value),
      endSession,
    });
    const observer = new ServerObserver(controlApi, options.eventId, (sentAt, receivedAt, value) => counterLog.observe(sentAt, receivedAt, value));
    let elu = performance.eventLoopUtilization();
    const clientBusy = () => {
      const now = performance.eventLoopUtilization();
      const busy = performance.eventLoopUtilization(now, elu).utilization;
      elu = now;
      return Math.round(busy * 1000) / 1000;
    };
    const gauges = () => ({
      joined: journey.joined,
      waiting: journey.waiting,
      served: journey.served,
      servingCounter: admission.kind === 'automatic' ? counterLog.lowerAt(wheel.now()) : driver.counter,
      highestPosition: driver.highestPosition,
      serverWaitingNum: observer.waitingNum,
      clientBusy: clientBusy(),
      serverCpu: observer.cpu,
    });
    const counts = () => ({ planned: options.visitors, finished: journey.finished, failed: journey.failed });

    // A pre-queue closes once the first --prequeue visitors have joined (at the arrival rate), on a whole second.
    const wallClockAtZero = Date.now() - wheel.now();
    let prequeueStartsAt: number | null = null;
    if (options.prequeue > 0) {
      const startEpochMs = await room.openPrequeue(Date.now() + (options.prequeue / options.arrivalRate) * 1000 + 500);
      prequeueStartsAt = startEpochMs - wallClockAtZero;
      progress?.note(`pre-queue open; the draw starts at ${new Date(startEpochMs).toISOString()}`);
    }
    await observer.start();
    const startedAt = wheel.now();
    wheel.start();
    if (admission.kind === 'driver') driver.start();
    else progress?.note(`the room admits by itself: ${admission.newUsersPerMinute}/min, at most ${admission.totalActiveUsers} in at once (--admit-rate unused)`);
    journey.start(startedAt);
    const pause = schedulePause(options, room, wheel, startedAt, progress);
    const sampler = setInterval(() => progress?.update(stats.sample(wheel.now(), gauges()), counts()), 1000);
    // Node's timers may fire a millisecond early by the run's clock: re-armed until the duration has passed.
    const durationMs = durationOf(options, admission);
    let deadline: NodeJS.Timeout;
    const atDeadline = () => {
      const left = startedAt + durationMs - wheel.now();
      if (left > 0) deadline = setTimeout(atDeadline, Math.ceil(left));
      else end('duration');
    };
    deadline = setTimeout(atDeadline, durationMs);
    const onAbort = () => end('interrupted');
    io.signal?.addEventListener('abort', onAbort, { once: true });
    if (io.signal?.aborted) end('interrupted');

    const endedBy = await ended;
    const elapsedMs = wheel.now() - startedAt;
    journey.stop();
    driver.stop();
    const paused = await pause.finish();
    wheel.stop();
    observer.stop();
    clearInterval(sampler);
    clearTimeout(deadline);
    io.signal?.removeEventListener('abort', onAbort);
    stats.sample(wheel.now(), gauges());
    progress?.done();
    if (wheel.error) throw wheel.error;

    // Answers still in flight are dropped: the visitors who sent them count as unfinished.
    await Promise.all([publicApi.close(), polls?.close()]);
    progress?.note(`verifying ${journey.served * 3} tokens…`);
    const keyReply = await controlApi.get(`/public_key?${eventQuery}`);
    const publicKey: JWK | string = keyReply.status === 200 ? (parseJson(keyReply.body) as JWK) : `/public_key answered ${describe(keyReply)}`;
    const cutShort = endedBy !== 'journey';
    // One last look at the counter, so that its bounds reach the end of the run.
    const last = await controlApi.get(`/serving_num?${eventQuery}`);
    const lastValue = Number((parseJson(last.body) as { serving_counter?: unknown } | null)?.serving_counter);
    if (last.status === 200) counterLog.observe(last.sentAt, last.receivedAt, lastValue);
    const draw = prequeueStartsAt === null ? null : await readDraw(controlApi, eventQuery);
    const serverLateArrivals = measuresNoShows(options) && settings !== null ? await lateArrivals(privateApi, options.eventId) : null;
    await room.restore().catch((error: Error) => progress?.note(`could not put the room's settings back: ${error.message}`));
    const verdicts = await computeVerdicts(
      {
        eventId: options.eventId,
        visitors: journey.visitors,
        increments: driver.increments,
        initialServing,
        expectFirstPosition: options.reset ? 1 : null,
        joinsUnanswered: journey.joinsUnanswered,
        cutShort,
        ...(admission.kind === 'automatic' ? { bounds: counterLog } : {}),
      },
      publicKey,
    );
    const endedAt = wheel.now();
    if (admission.kind === 'automatic') {
      verdicts.push(
        admissionRate(counterLog, counterLog.endsAt, admission.newUsersPerMinute),
        admissionCapacity({
          visitors: journey.visitors,
          bounds: counterLog,
          totalActiveUsers: admission.totalActiveUsers,
          claimWindowMs: claimWindowOf(settings),
          wallClockAtZero,
          endedAt,
          arrivalWindowMs: (settings?.arrival_window ?? 0) * 1000,
          presenceTimeoutMs: (settings?.presence_timeout ?? 0) * 1000,
        }),
      );
    }
    if (paused !== null) verdicts.push(typeof paused === 'string' ? pauseFailed(paused) : pausedHolds(counterLog, paused, ROOM_PROPAGATION_MS));
    if (draw !== null && prequeueStartsAt !== null) verdicts.push(await drawOrder(journey.visitors, prequeueStartsAt, draw));
    const noShows =
      measuresNoShows(options)
        ? noShowFigures({
            visitors: journey.visitors,
            totalActiveUsers: admission.kind === 'automatic' ? admission.totalActiveUsers : null,
            endedAt,
            serverLateArrivals,
          })
        : null;
    const cpu = process.cpuUsage(cpuAtStart);
    const summary = buildSummary({
      options,
      admission,
      sessionTimeMs,
      visitors: journey.visitors,
      increments: driver.increments,
      stats,
      verdicts,
      endedBy,
      elapsedMs,
      cpuMicros: cpu.user + cpu.system,
      malformedResponses: polls?.protocolErrors ?? 0,
      noShows: noShows?.figures ?? null,
      room: settings,
    });
    return { summary, admission, samples: stats.samples, verdicts, noShows: noShows && { series: noShows.series, stayerWaits: noShows.stayerWaits } };
  } finally {
    endOfRun.abort();
    await Promise.all([publicApi.close(), polls?.close(), controlApi.close()]);
  }
}

/** The room's count of late arrivals (GET /private/rooms/{id}/figures, presence.late_arrivals), or null. */
async function lateArrivals(api: PrivateApiClient, eventId: string): Promise<number | null> {
  const reply = await privateCall(api, 'GET', `/rooms/${encodeURIComponent(eventId)}/figures`);
  const value = reply.status === 200 ? (parseJson(reply.body) as { presence?: { late_arrivals?: unknown } } | null)?.presence?.late_arrivals : undefined;
  return typeof value === 'number' ? value : null;
}

/** GET /draw after the run: the published draw, or why it could not be read. */
async function readDraw(api: ApiClient, eventQuery: string): Promise<DrawAnswer | string> {
  const reply = await api.get(`/draw?${eventQuery}`);
  const body = parseJson(reply.body) as Partial<DrawAnswer> | null;
  if (reply.status !== 200 || body === null) return `/draw answered ${describe(reply)}`;
  if (typeof body.seed !== 'string' || !Array.isArray(body.entries) || typeof body.first_position !== 'number') {
    return 'the draw had not taken place by the end of the run';
  }
  return body as DrawAnswer;
}

function pauseFailed(why: string): Verdict {
  return { name: 'paused_holds', rule: 'The room could be paused and resumed.', ok: false, detail: why, failures: 1, examples: [] };
}

/**
 * --pause-at/--pause-for: pauses the room at its time, resumes it after; `finish` resumes a room still paused
 * when the run ends, and tells when the pause was answered and the resume sent (or why it failed; null: none).
 */
function schedulePause(
  options: LoadTestOptions,
  room: RoomPlan,
  wheel: TimerWheel,
  startedAt: number,
  progress: Progress | null,
): { finish: () => Promise<PauseRecord | string | null> } {
  if (options.pauseAtMs === null || options.pauseForMs === null) return { finish: async () => null };
  const pauseFor = options.pauseForMs;
  const record: Partial<PauseRecord> = {};
  let failure: string | null = null;
  let resumed: Promise<void> | null = null;
  const resume = () =>
    (resumed ??= (async () => {
      record.resumeSentAt = wheel.now();
      await room.setState('open');
      progress?.note('room resumed');
    })().catch((error: Error) => {
      failure = `resuming failed: ${error.message}`;
    }));
  const paused = new Promise<void>((resolve) => {
    wheel.at(startedAt + options.pauseAtMs!, () => {
      room
        .setState('paused')
        .then(() => {
          record.ackedAt = wheel.now();
          progress?.note('room paused');
          wheel.after(pauseFor, () => void resume());
        })
        .catch((error: Error) => {
          failure = `pausing failed: ${error.message}`;
        })
        .finally(resolve);
    });
  });
  return {
    finish: async () => {
      if (record.ackedAt === undefined && failure === null) {
        // The run ended before the pause was sent (or answered).
        if (wheel.now() < startedAt + options.pauseAtMs!) return 'the run ended before --pause-at';
        await paused;
      }
      if (failure === null && record.ackedAt !== undefined) await resume();
      return failure ?? (record as PauseRecord);
    },
  };
}

/** --duration, or by default twice the planned journey + 30 s, at the room's own rate when it admits by itself. */
function durationOf(options: LoadTestOptions, admission: RoomAdmission): number {
  if (!options.durationIsDefault || admission.kind !== 'automatic') return options.durationMs;
  const admitPerSecond = admission.newUsersPerMinute / 60;
  const planned = Math.max(options.visitors / options.arrivalRate, options.visitors / admitPerSecond) * 1000;
  return Math.ceil(2 * planned + 30_000 + 4 * options.pollIntervalMs + (options.pauseForMs ?? 0) + comingBackMs(options.comeBack, options.comeBackAfterMs));
}
