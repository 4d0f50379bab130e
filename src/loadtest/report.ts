// The HTML report of a run: one self-contained file (inline CSS, SVG charts drawn here, a few lines of
// inline script for hover read-outs; no external URL), so it can be mailed or attached to a ticket.

import type { LoadTestResult } from './run.ts';
import type { SecondSample } from './stats.ts';
import { CLIENT_SATURATED } from './summary.ts';
import { noShowSection } from './no-show-report.ts';
import { escapeHtml, fmt, HOVER_SCRIPT, lineChart, STYLE, table } from './report-charts.ts';

export { escapeHtml } from './report-charts.ts';

export interface ReportContext {
  /** The command line, secrets already redacted. */
  command?: string;
  /** When the run ended (default: now). */
  date?: Date;
}

const SECRET_FLAGS = ['--admin-token', '--secret-access-key', '--session-token', '--public-api-key'];

/** Replaces the values of secret flags in an argument list (both "--flag value" and "--flag=value"). */
export function redactArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf('=');
    if (eq > 0 && SECRET_FLAGS.includes(arg.slice(0, eq))) {
      out.push(`${arg.slice(0, eq)}=***`);
    } else if (SECRET_FLAGS.includes(arg) && i + 1 < args.length) {
      out.push(arg, '***');
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

function charts(samples: SecondSample[]): string {
  const t = samples.map((s) => s.t);
  const col = (f: (s: SecondSample) => number | null) => samples.map(f);
  return [
    lineChart('queue', 'Queue length', 'visitors', t, [
      { name: 'waiting (placed, no token yet)', color: '#2563eb', values: col((s) => s.waiting) },
      { name: 'waiting_num answered by the server', color: '#f59e0b', values: col((s) => s.serverWaitingNum) },
    ], 'The tester counts visitors it has placed that hold no token yet; <code>waiting_num</code> is the server\'s own count (it also includes visitors placed but not yet known to the tester).'),
    lineChart('serving', 'Serving counter', 'position', t, [
      { name: 'serving counter', color: '#16a34a', values: col((s) => s.servingCounter) },
      { name: 'highest position handed out', color: '#9333ea', values: col((s) => s.highestPosition) },
      { name: 'visitors holding a token', color: '#0891b2', values: col((s) => s.served) },
    ], 'The gap between the counter and the tokens is the time visitors take to notice they are served (their poll interval).'),
    lineChart('flow', 'Joins and admissions', 'per second', t, [
      { name: 'joins/s', color: '#2563eb', values: col((s) => s.joinsPerSec) },
      { name: 'admissions/s (first token sets)', color: '#16a34a', values: col((s) => s.admissionsPerSec) },
    ]),
    lineChart('requests', 'Request rate', 'requests per second', t, [
      { name: 'requests/s', color: '#334155', values: col((s) => s.requestsPerSec) },
      { name: 'errors/s', color: '#dc2626', values: col((s) => s.errorsPerSec) },
    ]),
    lineChart('latency', 'Latency of the public API', 'milliseconds', t, [
      { name: 'p50', color: '#16a34a', values: col((s) => (s.requestsPerSec > 0 ? s.p50 : null)) },
      { name: 'p95', color: '#f59e0b', values: col((s) => (s.requestsPerSec > 0 ? s.p95 : null)) },
      { name: 'p99', color: '#dc2626', values: col((s) => (s.requestsPerSec > 0 ? s.p99 : null)) },
    ], 'All public requests answered in each second, measured from the moment the visitor issued them (time waiting for a free connection included).'),
    lineChart('cpu', 'Load generator and server', '% of one core', t, [
      { name: 'load generator event loop busy', color: '#64748b', values: col((s) => Math.round(s.clientBusy * 1000) / 10) },
      { name: 'server CPU (from its /metrics)', color: '#dc2626', values: col((s) => (s.serverCpu === null ? null : Math.round(s.serverCpu * 1000) / 10)) },
    ], `Above ${CLIENT_SATURATED * 100} % busy the load generator, not the server, limits the request rate and adds to the latency. ` +
      'A Node server near 100 % is CPU-bound (its signing threads can add more). If neither is near its limit while latency is high, the machine is short of CPU for both.'),
  ].join('\n');
}




/** "admitted at 250/s", or how the room admitted by itself, with its pre-queue and pause. */
function admittedHow(s: LoadTestResult['summary']): string {
  const parts = [
    s.plan.admission.by === 'room'
      ? `admitted by the room itself (${fmt(s.plan.admission.new_users_per_minute, 0)}/min, at most ${fmt(s.plan.admission.total_active_users, 0)} in at once${s.plan.session_time_ms === null ? '' : `, sessions of ${fmt(s.plan.session_time_ms / 1000)} s`})`
      : `admitted at ${fmt(s.plan.admit_rate)}/s`,
  ];
  if (s.plan.prequeue > 0) parts.push(`the first ${fmt(s.plan.prequeue, 0)} in a pre-queue drawn at the start`);
  if (s.plan.pause) parts.push(`paused ${fmt(s.plan.pause.at_ms / 1000)} s in, for ${fmt(s.plan.pause.for_ms / 1000)} s`);
  return parts.join(', ');
}

export function renderReport(result: LoadTestResult, context: ReportContext = {}): string {
  const s = result.summary;
  const date = (context.date ?? new Date()).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  const verdictRows = result.verdicts.map((v) => [
    `<span class="badge ${v.ok ? 'pass' : 'fail'}">${v.ok ? 'PASS' : 'FAIL'}</span>`,
    `<b>${escapeHtml(v.rule)}</b><br><span class="note">${escapeHtml(v.detail)}</span>` +
      (v.examples.length ? `<ul class="examples">${v.examples.map((e) => `<li>${escapeHtml(e)}</li>`).join('')}</ul>` : ''),
  ]);
  const latencyRows = Object.entries(s.latency_ms).map(([endpoint, l]) => [
    `<code>${endpoint}</code>`,
    fmt(l.count, 0),
    fmt(l.p50, 2),
    fmt(l.p95, 2),
    fmt(l.p99, 2),
    fmt(l.max, 2),
  ]);
  const errorRows = Object.entries(s.errors.by_endpoint).flatMap(([endpoint, statuses]) =>
    Object.entries(statuses ?? {}).map(([status, n]) => [`<code>${endpoint}</code>`, escapeHtml(status), fmt(n, 0)]),
  );
  const q = s.time_in_queue_s;
  const a = s.admission_to_token_ms;
  const ended = s.ended_by === 'journey' ? 'every journey finished' : s.ended_by === 'duration' ? 'stopped by --duration' : 'interrupted';
  const cards = [
    [fmt(s.visitors.served, 0), `of ${fmt(s.visitors.planned, 0)} visitors served`],
    [fmt(s.joins_per_s), `joins/s (planned ${fmt(s.plan.arrival_rate)})`],
    [
      fmt(s.admissions_per_s),
      s.plan.admission.by === 'room'
        ? `admissions/s (the room: ${fmt(s.plan.admission.new_users_per_minute, 0)}/min, ≤ ${fmt(s.plan.admission.total_active_users, 0)} in)`
        : `admissions/s (planned ${fmt(s.plan.admit_rate)})`,
    ],
    [fmt(s.requests.per_s, 0), `requests/s average (peak ${fmt(s.requests.peak_per_s, 0)})`],
    [fmt(s.latency_ms.serving_num?.p99 ?? 0, 2), 'ms p99 of /serving_num'],
    [fmt(s.errors.total, 0), 'errors'],
    [`${fmt(q.p50)} s`, `median time in queue (p99 ${fmt(q.p99)} s)`],
    [fmt(s.elapsed_s), `seconds (${ended})`],
  ];

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Anteroom load test — ${s.ok ? 'PASS' : 'FAIL'} — ${escapeHtml(s.event_id)} — ${date}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Anteroom load test <span class="badge ${s.ok ? 'pass' : 'fail'}">${s.ok ? 'PASS' : 'FAIL'}</span></h1>
<div class="meta">
  ${date} · event <code>${escapeHtml(s.event_id)}</code> at <code>${escapeHtml(s.target)}</code> (private <code>${escapeHtml(s.private_target)}</code>)<br>
  ${fmt(s.plan.visitors, 0)} visitors arriving at ${fmt(s.plan.arrival_rate)}/s, ${admittedHow(s)}, polling every ${fmt(s.plan.poll_interval_ms, 0)} ms,
  ${s.plan.reclaims} re-claims each, ${s.plan.connections} connections${s.plan.pipelining > 1 ? ` (polls pipelined ${s.plan.pipelining} deep)` : s.plan.pipelining === 1 ? ' (polls on their own connections, not pipelined)' : ''}${s.plan.reset ? ', event reset first' : ''}<br>
  ${context.command ? `command: <code>${escapeHtml(context.command)}</code><br>` : ''}
  load generator: Node ${escapeHtml(s.client.node)}, ${fmt(s.client.cpu_s)} s CPU, ${fmt(s.client.max_rss_mb)} MB max RSS, event loop ${fmt(s.client.busy_mean * 100, 0)} % busy on average${s.server_cpu ? ` · server CPU ${fmt(s.server_cpu.mean * 100, 0)} % of a core on average (max ${fmt(s.server_cpu.max * 100, 0)} %)` : ''}
</div>
${s.client.saturated_s > 0 ? `<p class="warning">The load generator was saturated for ${s.client.saturated_s} s (event loop ≥ ${CLIENT_SATURATED * 100} % busy): during those seconds rates and latencies show its limit rather than the server's. Run it on another machine or with fewer visitors to measure the server.</p>` : ''}
<div class="cards">${cards.map(([v, l]) => `<div class="card"><b>${v}</b><span>${l}</span></div>`).join('')}</div>

<h2>Correctness verdicts</h2>
${table(['Verdict', 'Rule and outcome'], verdictRows)}

<h2>Over time</h2>
${charts(result.samples)}

${result.noShows && s.no_shows ? noShowSection([{ label: 'this run', summary: s, ...result.noShows }]) : ''}
<h2>Latency by endpoint (ms)</h2>
${table(['Endpoint', 'Requests', 'p50', 'p95', 'p99', 'max'], latencyRows, [false, true, true, true, true, true])}
<p class="note"><code>generate_token</code> counts first claims (they sign a token set); <code>generate_token_reclaim</code> the re-claims, which return the stored set.</p>

<h2>Errors</h2>
${errorRows.length === 0 ? '<p>No errors: every answer was a 200 or an expected 202.</p>' : table(['Endpoint', 'Status', 'Count'], errorRows, [false, false, true])}
${s.errors.malformed_responses > 0 ? `<p class="note">${fmt(s.errors.malformed_responses, 0)} polling connections were closed because an answer could not be read as HTTP/1.1; the requests on them count as <code>network</code> errors.</p>` : ''}
${s.failure_reasons.length ? `<h3>Why visitors failed</h3>${table(['Visitors', 'Reason'], s.failure_reasons.map((f) => [fmt(f.visitors, 0), escapeHtml(f.reason)]), [true, false])}` : ''}

<h2>Time in queue</h2>
${table(
  ['Measure', 'count', 'p50', 'p95', 'p99', 'max'],
  [
    ['join answered → token set (s)', fmt(q.count, 0), fmt(q.p50, 3), fmt(q.p95, 3), fmt(q.p99, 3), fmt(q.max, 3)],
    // From the driver's increments: a room that admits by itself has none (no row rather than zeros).
    ...(a.count > 0 ? [['counter reached the position → token set (ms)', fmt(a.count, 0), fmt(a.p50), fmt(a.p95), fmt(a.p99), fmt(a.max)]] : []),
  ],
  [false, true, true, true, true, true],
)}

<h2>How to read this report</h2>
<div class="help">
<p>Each simulated visitor joins, polls its position, polls the serving counter until it is let in, claims its token set and
claims it again (the answer must not change). ${
    s.plan.admission.by === 'room'
      ? 'The room admits by itself (automatic admission) within its rate and capacity; each served visitor ends its session after the session time, which frees its place. Where the counter stood is known from every <code>/serving_num</code> answer (at most its value when sent, at least when answered).'
      : 'An admission driver moves the serving counter through the private API at the admit rate, never past the highest position handed out.'
  } The <b>verdicts</b> are the point of the run: a fast waiting room
that hands out a position twice or lets someone in ahead of the counter has failed, however good its latency.</p>
<p><b>Joins/s</b> below the planned arrival rate means the server (or this load generator) could not keep up with intake.
<b>Admissions/s</b> is bounded by the admit rate and by how many visitors were waiting. A widening gap between the
<i>serving counter</i> and <i>visitors holding a token</i> means visitors notice late (poll interval) or token signing is the bottleneck.
Latency includes time spent waiting for one of the load generator's connections, so p99 grows when the client saturates; compare
the <i>requests/s</i> chart with the planned poll rate (waiting visitors ÷ poll interval).</p>
<p>Full explanation of every figure and verdict: <code>docs/loadtest.md</code> in the Anteroom repository.</p>
</div>
</main>
<script>${HOVER_SCRIPT}</script>
</body>
</html>
`;
}
