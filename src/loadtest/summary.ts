// The result of a run as one JSON-able object (the `--json` line and the report's data), and its text form.

import { measuresNoShows, type LoadTestOptions } from './options.ts';
import type { RoomAdmission, RoomView } from './room-plan.ts';
import type { NoShowFigures } from './no-show-figures.ts';
import type { IncrementRecord, Visitor } from './records.ts';
import { ENDPOINTS, percentilesOf, round, statusLabel, type Endpoint, type LatencySummary, type RunStats } from './stats.ts';
import type { CoreVerdictName, RoomVerdictName, Verdict } from './verdicts.ts';

export type EndedBy = 'journey' | 'duration' | 'interrupted';

/** Event-loop utilisation from which the load generator counts as saturated. */
export const CLIENT_SATURATED = 0.9;

export interface LoadTestSummary {
  ok: boolean;
  target: string;
  private_target: string;
  event_id: string;
  plan: {
    visitors: number;
    arrival_rate: number;
    admit_rate: number;
    poll_interval_ms: number;
    reclaims: number;
    duration_limit_s: number;
    connections: number;
    /** Polls in flight per polling connection (0 = polls through undici). */
    pipelining: number;
    reset: boolean;
    /** Who moved the counter: the run's admission driver (at admit_rate), or the room itself (automatic). */
    admission: { by: 'driver' } | { by: 'room'; new_users_per_minute: number; total_active_users: number };
    /** How long a served visitor stayed before ending its session; null = it never did. */
    session_time_ms: number | null;
    /** Visitors planned into the pre-queue (drawn at the start); 0 = none. */
    prequeue: number;
    pause: { at_ms: number; for_ms: number } | null;
    /** --abandon and --come-back (abandon-plan.ts), and the room's presence settings during the run; null without --abandon or --presence-timeout/--arrival-window. */
    abandon: {
      share: number;
      come_back: number;
      come_back_after_ms: number;
      seed: number;
      presence_beat_ms: number;
      presence_timeout: number | null;
      arrival_window: number | null;
    } | null;
  };
  ended_by: EndedBy;
  elapsed_s: number;
  visitors: { planned: number; joined: number; placed: number; served: number; done: number; failed: number; unfinished: number };
  /** Joins answered per second, from the first join sent to the last join answered. */
  joins_per_s: number;
  /** First token sets per second, from the first increment of the counter to the last token set. */
  admissions_per_s: number;
  requests: { total: number; per_s: number; peak_per_s: number };
  latency_ms: Partial<Record<Endpoint, LatencySummary>>;
  errors: {
    total: number;
    by_status: Record<string, number>;
    by_endpoint: Partial<Record<Endpoint, Record<string, number>>>;
    /** Polling connections closed because an answer could not be framed as HTTP/1.1 (its requests count as "network"). */
    malformed_responses: number;
  };
  /** From the join's answer to the first token set. */
  time_in_queue_s: { count: number; p50: number; p95: number; p99: number; max: number };
  /** From the increment that let a visitor in (its answer) to that visitor's token set: the polling delay. */
  admission_to_token_ms: { count: number; p50: number; p95: number; p99: number; max: number };
  /** --abandon (or a run that sets the room's presence): what visitors who closed the tab cost the others (no-show-figures.ts); else null. */
  no_shows: NoShowFigures | null;
  /** Why visitors failed, most frequent first (at most 10 reasons). */
  failure_reasons: Array<{ reason: string; visitors: number }>;
  verdicts: Record<CoreVerdictName, Omit<Verdict, 'name'>> & Partial<Record<RoomVerdictName, Omit<Verdict, 'name'>>>;
  /**
   * The load generator itself. `busy_*` is its event-loop utilisation per second (0–1); `saturated_s` counts the
   * seconds at ≥ 90 %, when figures describe the generator's limit more than the server's.
   */
  client: { node: string; cpu_s: number; max_rss_mb: number; busy_mean: number; busy_max: number; saturated_s: number };
  /** The server's CPU use in cores (1 = one core), from its /metrics; null when it publishes none. */
  server_cpu: { mean: number; max: number } | null;
}

export interface SummaryInput {
  options: LoadTestOptions;
  admission: RoomAdmission;
  sessionTimeMs: number | null;
  visitors: readonly Visitor[];
  increments: readonly IncrementRecord[];
  stats: RunStats;
  verdicts: Verdict[];
  endedBy: EndedBy;
  elapsedMs: number;
  cpuMicros: number;
  /** Polling connections closed on an answer that could not be framed (src/loadtest/poll-connections.ts). */
  malformedResponses: number;
  noShows?: NoShowFigures | null;
  /** The room's settings during the run (null: no rooms API). */
  room?: RoomView | null;
}

function span(times: number[]): number {
  if (times.length < 2) return 0;
  let min = Infinity;
  let max = -Infinity;
  for (const t of times) {
    if (t < min) min = t;
    if (t > max) max = t;
  }
  return (max - min) / 1000;
}

/** Time from each token back to the answer of the increment that first reached the visitor's position. */
function admissionToToken(visitors: readonly Visitor[], increments: readonly IncrementRecord[]): number[] {
  const acked = increments.filter((i) => i.servingAfter !== null).sort((a, b) => a.receivedAt - b.receivedAt);
  const out: number[] = [];
  for (const v of visitors) {
    if (!v.tokens || v.position === null) continue;
    const inc = firstReaching(acked, v.position);
    if (inc) out.push(v.tokenAt - inc.receivedAt);
  }
  return out;
}

/** The first answered increment whose counter reached `position` (counters only grow during a run). */
function firstReaching(acked: readonly IncrementRecord[], position: number): IncrementRecord | undefined {
  let lo = 0;
  let hi = acked.length - 1;
  let found: IncrementRecord | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (acked[mid]!.servingAfter! >= position) {
      found = acked[mid];
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  return found;
}

function serverCpuSummary(stats: RunStats): LoadTestSummary['server_cpu'] {
  const readings = stats.samples.map((x) => x.serverCpu).filter((x): x is number => x !== null);
  if (readings.length === 0) return null;
  return {
    mean: round(readings.reduce((sum, x) => sum + x, 0) / readings.length, 3),
    max: round(readings.reduce((max, x) => Math.max(max, x), 0), 3),
  };
}

export function buildSummary(input: SummaryInput): LoadTestSummary {
  const { options: o, visitors, stats } = input;
  const joinedVisitors = visitors.filter((v) => v.requestId !== null);
  const served = visitors.filter((v) => v.tokens !== null);
  const failed = visitors.filter((v) => v.state === 'failed');
  const done = visitors.filter((v) => v.state === 'done').length;
  // Visitors who closed the tab for good finished their journey their way: neither done nor unfinished.
  const left = visitors.filter((v) => v.state === 'left').length;
  const joinSpan = span([...joinedVisitors.map((v) => v.joinSentAt), ...joinedVisitors.map((v) => v.joinedAt)]);
  // Admissions run from the first increment (or first claim, if the counter already covered someone) to the
  // last token set: measured from first to last token alone, tokens clumped by the poll interval inflate it.
  let admissionStart = input.increments[0]?.sentAt ?? Infinity;
  let lastToken = -Infinity;
  for (const v of served) {
    admissionStart = Math.min(admissionStart, v.claimSentAt);
    lastToken = Math.max(lastToken, v.tokenAt);
  }
  const tokenSpan = served.length > 0 ? (lastToken - admissionStart) / 1000 : 0;

  const latency: Partial<Record<Endpoint, LatencySummary>> = {};
  const byEndpoint: Partial<Record<Endpoint, Record<string, number>>> = {};
  for (const endpoint of ENDPOINTS) {
    const e = stats.endpoints.get(endpoint)!;
    if (e.latency.count === 0) continue;
    latency[endpoint] = e.latency.summary();
    const errors = Object.fromEntries([...e.statuses].filter(([label]) => label === statusLabel(0) || Number(label) >= 400));
    if (Object.keys(errors).length > 0) byEndpoint[endpoint] = errors;
  }

  const reasons = new Map<string, number>();
  for (const v of failed) {
    // Group by the reason without request IDs and numbers that make each message unique.
    const reason = (v.failure ?? 'unknown').replace(/[0-9a-f]{8}-[0-9a-f-]{27}/gi, '<id>');
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }

  return {
    ok: input.verdicts.every((v) => v.ok),
    target: o.target,
    private_target: o.privateTarget,
    event_id: o.eventId,
    plan: {
      visitors: o.visitors,
      arrival_rate: o.arrivalRate,
      admit_rate: o.admitRate,
      poll_interval_ms: o.pollIntervalMs,
      reclaims: o.reclaims,
      duration_limit_s: o.durationMs / 1000,
      connections: o.connections,
      pipelining: o.pipelining,
      reset: o.reset,
      admission:
        input.admission.kind === 'automatic'
          ? { by: 'room', new_users_per_minute: input.admission.newUsersPerMinute, total_active_users: input.admission.totalActiveUsers }
          : { by: 'driver' },
      session_time_ms: input.sessionTimeMs,
      prequeue: o.prequeue,
      pause: o.pauseAtMs !== null && o.pauseForMs !== null ? { at_ms: o.pauseAtMs, for_ms: o.pauseForMs } : null,
      abandon:
        measuresNoShows(o)
          ? {
              share: o.abandon,
              come_back: o.comeBack,
              come_back_after_ms: o.comeBackAfterMs,
              seed: o.seed,
              presence_beat_ms: o.presenceBeatMs,
              presence_timeout: input.room?.presence_timeout ?? null,
              arrival_window: input.room?.arrival_window ?? null,
            }
          : null,
    },
    ended_by: input.endedBy,
    elapsed_s: round(input.elapsedMs / 1000, 3),
    visitors: {
      planned: o.visitors,
      joined: joinedVisitors.length,
      placed: visitors.filter((v) => v.position !== null).length,
      served: served.length,
      done,
      failed: failed.length,
      unfinished: o.visitors - done - failed.length - left,
    },
    joins_per_s: joinSpan > 0 ? round(joinedVisitors.length / joinSpan, 1) : 0,
    admissions_per_s: tokenSpan > 0 ? round(served.length / tokenSpan, 1) : 0,
    requests: {
      total: stats.requests,
      per_s: round(stats.requests / Math.max(0.001, input.elapsedMs / 1000), 1),
      peak_per_s: stats.samples.reduce((peak, sample) => Math.max(peak, sample.requestsPerSec), 0),
    },
    latency_ms: latency,
    errors: { total: stats.errors, by_status: stats.errorsByStatus(), by_endpoint: byEndpoint, malformed_responses: input.malformedResponses },
    time_in_queue_s: percentilesOf(served.map((v) => (v.tokenAt - v.joinedAt) / 1000)),
    admission_to_token_ms: percentilesOf(admissionToToken(visitors, input.increments)),
    no_shows: input.noShows ?? null,
    failure_reasons: [...reasons]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([reason, n]) => ({ reason, visitors: n })),
    verdicts: Object.fromEntries(input.verdicts.map(({ name, ...rest }) => [name, rest])) as LoadTestSummary['verdicts'],
    client: {
      node: process.version,
      cpu_s: round(input.cpuMicros / 1e6, 2),
      max_rss_mb: round(process.resourceUsage().maxRSS / 1024, 1),
      busy_mean: round(stats.samples.reduce((sum, x) => sum + x.clientBusy, 0) / Math.max(1, stats.samples.length), 3),
      busy_max: stats.samples.reduce((max, x) => Math.max(max, x.clientBusy), 0),
      saturated_s: stats.samples.filter((x) => x.clientBusy >= CLIENT_SATURATED).length,
    },
    server_cpu: serverCpuSummary(stats),
  };
}

const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 1 });

/** --abandon: who left, the stayers' waits, the capacity used while they waited, the overshoot. */
function noShowLines(s: LoadTestSummary): string[] {
  const a = s.plan.abandon;
  const n = s.no_shows;
  if (a === null || n === null) return [];
  const room = `presence_timeout ${a.presence_timeout ?? 'unset'}, arrival_window ${a.arrival_window ?? 'unset'}`;
  return [
    `  abandon     ${fmt(n.abandoned)} closed the tab (${fmt(n.left_waiting)} waiting, ${fmt(n.left_admitted)} let in before claiming), ` +
      `${fmt(n.came_back)} came back (${fmt(n.came_back_claimed)} claimed); seed ${a.seed}; room ${room}`,
    `  stayers     ${fmt(n.stayers_served)} of ${fmt(n.stayers)} served; wait p50 ${n.stayer_wait_s.p50} s, p90 ${n.stayer_wait_s.p90} s, max ${n.stayer_wait_s.max} s`,
    `  capacity    ${n.capacity_used === null ? 'no limit (a driver admits)' : `${fmt(n.capacity_used * 100)} % used in session while stayers waited (${fmt(n.waited_over_s)} s)`}; ` +
      `at most ${fmt(n.max_in_session)} in session, overshoot ${fmt(n.overshoot)}` +
      (n.server_late_arrivals === null ? '' : `, late arrivals (the room's count) ${fmt(n.server_late_arrivals)}`),
  ];
}

/** The human summary printed at the end of a run. */
export function formatSummary(s: LoadTestSummary): string {
  const verdicts = Object.entries(s.verdicts);
  const failed = verdicts.filter(([, v]) => !v.ok).length;
  const lines = [
    '',
    `Anteroom load test — ${s.ok ? `PASS (all ${verdicts.length} verdicts hold)` : `FAIL (${failed} of ${verdicts.length} verdicts fail)`}`,
    `  target      ${s.target} (event ${s.event_id}), private ${s.private_target}`,
    `  ended by    ${s.ended_by === 'journey' ? 'the end of every journey' : s.ended_by === 'duration' ? `--duration (${s.plan.duration_limit_s} s)` : 'interruption'} after ${fmt(s.elapsed_s)} s`,
    `  visitors    ${fmt(s.visitors.planned)} planned, ${fmt(s.visitors.joined)} joined, ${fmt(s.visitors.served)} served, ` +
      `${fmt(s.visitors.done)} done, ${fmt(s.visitors.failed)} failed, ${fmt(s.visitors.unfinished)} unfinished`,
    `  rates       joins ${fmt(s.joins_per_s)}/s (planned ${fmt(s.plan.arrival_rate)}/s), admissions ${fmt(s.admissions_per_s)}/s ` +
      (s.plan.admission.by === 'room'
        ? `(the room admits by itself: ${fmt(s.plan.admission.new_users_per_minute)}/min, at most ${fmt(s.plan.admission.total_active_users)} in at once)`
        : `(planned ${fmt(s.plan.admit_rate)}/s)`),
    ...(s.plan.prequeue > 0 ? [`  pre-queue   the first ${fmt(s.plan.prequeue)} visitors joined a pre-queue drawn at the start`] : []),
    ...(s.plan.pause ? [`  pause       paused ${fmt(s.plan.pause.at_ms / 1000)} s after the start, for ${fmt(s.plan.pause.for_ms / 1000)} s`] : []),
    ...noShowLines(s),
    `  requests    ${fmt(s.requests.total)} total, ${fmt(s.requests.per_s)}/s average, ${fmt(s.requests.peak_per_s)}/s peak in one second`,
    `  errors      ${s.errors.total === 0 ? 'none' : Object.entries(s.errors.by_status).map(([k, n]) => `${k}: ${fmt(n)}`).join(', ')}` +
      (s.errors.malformed_responses > 0 ? ` (${fmt(s.errors.malformed_responses)} polling connections closed on a malformed answer)` : ''),
    `  in queue    p50 ${s.time_in_queue_s.p50} s, p95 ${s.time_in_queue_s.p95} s, p99 ${s.time_in_queue_s.p99} s, max ${s.time_in_queue_s.max} s` +
      // Measured from the driver's increments: a room that admits by itself has none, so there is no figure.
      (s.admission_to_token_ms.count > 0 ? ` (admission → token p50 ${fmt(s.admission_to_token_ms.p50)} ms, p99 ${fmt(s.admission_to_token_ms.p99)} ms)` : ''),
    `  client      ${s.client.cpu_s} s CPU, ${s.client.max_rss_mb} MB max RSS, event loop busy ${fmt(s.client.busy_mean * 100)} % ` +
      `on average (max ${fmt(s.client.busy_max * 100)} %), Node ${s.client.node}`,
    ...(s.server_cpu ? [`  server      CPU ${fmt(s.server_cpu.mean * 100)} % of a core on average (max ${fmt(s.server_cpu.max * 100)} %), from its /metrics`] : []),
    ...(s.client.saturated_s > 0 ? [`  WARNING     the load generator was saturated for ${s.client.saturated_s} s: rates and latencies then show its limit, not the server's`] : []),
    '',
    `  latency (ms)                   count       p50       p95       p99       max`,
  ];
  for (const [endpoint, l] of Object.entries(s.latency_ms)) {
    lines.push(
      `    ${endpoint.padEnd(26)} ${String(l.count).padStart(9)} ${l.p50.toFixed(2).padStart(9)} ${l.p95.toFixed(2).padStart(9)} ` +
        `${l.p99.toFixed(2).padStart(9)} ${l.max.toFixed(2).padStart(9)}`,
    );
  }
  if (s.failure_reasons.length > 0) {
    lines.push('', '  failed visitors');
    for (const f of s.failure_reasons) lines.push(`    ${fmt(f.visitors)} × ${f.reason}`);
  }
  lines.push('', '  verdicts');
  for (const [name, v] of verdicts) {
    lines.push(`    ${v.ok ? 'PASS' : 'FAIL'}  ${name}: ${v.detail}`);
    for (const example of v.examples) lines.push(`            - ${example}`);
  }
  lines.push('');
  return lines.join('\n');
}
