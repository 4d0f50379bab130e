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

/** The run could not start: target unreachable, unknown event, credentials refused. */
export class LoadTestSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoadTestSetupError';
  }
}

export interface LoadTestResult {
  summary: LoadTestSummary;
  samples: SecondSample[];
  verdicts: Verdict[];
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

    const wheel = new TimerWheel(() => performance.now() - origin);
    const stats = new RunStats();
    const driver = new AdmissionDriver({ privateApi, wheel, stats, eventId: options.eventId, admitRate: options.admitRate, initialServing });
    let end: (by: EndedBy) => void = () => {};
    const ended = new Promise<EndedBy>((resolve) => (end = resolve));
    const journey = new Journey({
      api: publicApi,
      polls: polls ?? publicApi,
      wheel,
      stats,
      options,
      onPlaced: (position) => driver.notePosition(position),
      onFinished: () => end('journey'),
    });
    const observer = new ServerObserver(controlApi, options.eventId);
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
      servingCounter: driver.counter,
      highestPosition: driver.highestPosition,
      serverWaitingNum: observer.waitingNum,
      clientBusy: clientBusy(),
      serverCpu: observer.cpu,
    });
    const counts = () => ({ planned: options.visitors, finished: journey.finished, failed: journey.failed });

    await observer.start();
    const startedAt = wheel.now();
    wheel.start();
    driver.start();
    journey.start(startedAt);
    const sampler = setInterval(() => progress?.update(stats.sample(wheel.now(), gauges()), counts()), 1000);
    const deadline = setTimeout(() => end('duration'), options.durationMs);
    const onAbort = () => end('interrupted');
    io.signal?.addEventListener('abort', onAbort, { once: true });
    if (io.signal?.aborted) end('interrupted');

    const endedBy = await ended;
    const elapsedMs = wheel.now() - startedAt;
    journey.stop();
    driver.stop();
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
    const verdicts = await computeVerdicts(
      {
        eventId: options.eventId,
        visitors: journey.visitors,
        increments: driver.increments,
        initialServing,
        expectFirstPosition: options.reset ? 1 : null,
        joinsUnanswered: journey.joinsUnanswered,
        cutShort,
      },
      publicKey,
    );
    const cpu = process.cpuUsage(cpuAtStart);
    const summary = buildSummary({
      options,
      visitors: journey.visitors,
      increments: driver.increments,
      stats,
      verdicts,
      endedBy,
      elapsedMs,
      cpuMicros: cpu.user + cpu.system,
      malformedResponses: polls?.protocolErrors ?? 0,
    });
    return { summary, samples: stats.samples, verdicts };
  } finally {
    endOfRun.abort();
    await Promise.all([publicApi.close(), polls?.close(), controlApi.close()]);
  }
}
