// The report's section on visitors who close the tab (--abandon; no-show-figures.ts), for one run (in the run's
// report) or several side by side — the same seed with the room's presence off and on (bench/no-shows.ts writes
// that page with renderNoShowComparison). The charts are the report's own (report-charts.ts).

import type { NoShowFigures, NoShowSample } from './no-show-figures.ts';
import type { LoadTestSummary } from './summary.ts';
import { escapeHtml, fmt, HOVER_SCRIPT, lineChart, STYLE, table, type Series } from './report-charts.ts';

export interface NoShowRun {
  /** e.g. "presence off", "presence on". */
  label: string;
  summary: LoadTestSummary;
  series: NoShowSample[];
  /** The served stayers' waits in seconds, ascending. */
  stayerWaits: number[];
}

const COLORS = ['#dc2626', '#16a34a', '#2563eb', '#9333ea'];

function roomOf(s: LoadTestSummary): string {
  const a = s.plan.abandon;
  if (a === null) return '';
  if (a.presence_timeout === 0 && a.arrival_window === 0) return 'both off';
  return `${a.presence_timeout ?? 'unset'} s / ${a.arrival_window ?? 'unset'} s`;
}

/** Share of the run's stayers served within each whole second of waiting (the unserved stay in the denominator). */
function waitCurve(run: NoShowRun, xs: number[]): Array<number | null> {
  const waits = run.stayerWaits;
  const stayers = run.summary.no_shows?.stayers ?? 0;
  if (stayers === 0) return xs.map(() => null);
  let i = 0;
  return xs.map((x) => {
    while (i < waits.length && waits[i]! <= x) i++;
    return Math.round((1000 * i) / stayers) / 10;
  });
}

export function noShowSection(runs: NoShowRun[]): string {
  const colored = runs.map((run, i) => ({ run, color: runs.length === 1 ? COLORS[2]! : COLORS[i % COLORS.length]! }));
  // One column per run, one row per figure: a few narrow columns fit a phone.
  const figures: Array<[string, (n: NoShowFigures, s: LoadTestSummary) => string]> = [
    ['presence_timeout / arrival_window', (_, s) => escapeHtml(roomOf(s))],
    ['Closed the tab (waiting / let in)', (n) => `${fmt(n.abandoned, 0)} (${fmt(n.left_waiting, 0)} / ${fmt(n.left_admitted, 0)})`],
    ['Came back (claimed)', (n) => `${fmt(n.came_back, 0)} (${fmt(n.came_back_claimed, 0)})`],
    ['Stayers served', (n) => `${fmt(n.stayers_served, 0)} / ${fmt(n.stayers, 0)}`],
    ['Stayer wait p50', (n) => `${fmt(n.stayer_wait_s.p50)} s`],
    ['Stayer wait p90', (n) => `${fmt(n.stayer_wait_s.p90)} s`],
    ['Capacity used while stayers waited', (n) => (n.capacity_used === null ? '–' : `<b>${fmt(n.capacity_used * 100)} %</b>`)],
    ['Stayers waited for', (n) => `${fmt(n.waited_over_s, 0)} s`],
    ['Most in session / overshoot', (n) => `${fmt(n.max_in_session, 0)} / ${fmt(n.overshoot, 0)}`],
    ['Late arrivals (the room\'s count)', (n) => (n.server_late_arrivals === null ? '–' : fmt(n.server_late_arrivals, 0))],
  ];
  const rows = figures.map(([name, value]) => [name, ...runs.map((run) => value(run.summary.no_shows!, run.summary))]);
  const longest = Math.max(0, ...runs.map((r) => r.series.length));
  const t = Array.from({ length: longest }, (_, i) => i);
  const total = runs[0]!.summary.plan.admission.by === 'room' ? runs[0]!.summary.plan.admission.total_active_users : null;
  const usedSeries: Series[] = colored.map(({ run, color }) => ({
    name: `${run.label}: in session (% of total_active_users)`,
    color,
    values: t.map((i) => {
      const point = run.series[i];
      return point === undefined || total === null ? null : Math.round((1000 * point.inSession) / total) / 10;
    }),
  }));
  const waitingSeries: Series[] = colored.map(({ run, color }) => ({
    name: `${run.label}: stayers waiting`,
    color,
    values: t.map((i) => run.series[i]?.stayersWaiting ?? null),
  }));
  const charts = [
    lineChart(
      'no-show-capacity',
      'Capacity in use',
      '% of total_active_users in session',
      t,
      usedSeries,
      'Visitors holding a token whose session has not ended, as a share of the room\'s <code>total_active_users</code>. Above 100 %: the room is over its capacity (late arrivals). Capacity used (the table) averages this, capped at 100 %, over the time stayers waited.',
    ),
    lineChart('no-show-waiting', 'Stayers waiting in line', 'visitors', t, waitingSeries, 'Visitors who never closed the tab, placed and not yet shown the counter at their position.'),
  ];
  const maxWait = Math.ceil(Math.max(1, ...runs.map((r) => r.stayerWaits.at(-1) ?? 0)));
  const xs = Array.from({ length: maxWait + 1 }, (_, i) => i);
  charts.push(
    lineChart(
      'no-show-waits',
      'Waits of the stayers',
      '% of stayers served within x seconds of joining',
      xs,
      colored.map(({ run, color }) => ({ name: run.label, color, values: waitCurve(run, xs) })),
      'Read across: the line further left waited less. The median is where a line crosses 50 %, the p90 where it crosses 90 %; stayers not served by the end keep a line below 100 %.',
    ),
  );
  return `
<h2>Visitors who closed the tab</h2>
${table(['Figure', ...runs.map((r) => escapeHtml(r.label))], rows, [false, ...runs.map(() => true)])}
<p class="note"><b>Capacity used</b>: over the time at least one visitor who stays is waiting in line, the mean share of
<code>total_active_users</code> in session (token set issued, session not ended). <b>Overshoot</b>: the most in session at once
minus <code>total_active_users</code>. docs/loadtest.md explains each figure.</p>
${charts.join('\n')}`;
}

export interface ComparisonContext {
  command?: string;
  date?: Date;
  /** Free text under the title: machine, load. */
  note?: string;
}

/** A page with the no-show section of several runs side by side (bench/no-shows.ts). */
export function renderNoShowComparison(runs: NoShowRun[], context: ComparisonContext = {}): string {
  const date = (context.date ?? new Date()).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  const s = runs[0]!.summary;
  const a = s.plan.abandon!;
  const room =
    s.plan.admission.by === 'room'
      ? `the room admits by itself (${fmt(s.plan.admission.new_users_per_minute, 0)}/min, at most ${fmt(s.plan.admission.total_active_users, 0)} in at once${s.plan.session_time_ms === null ? '' : `, sessions of ${fmt(s.plan.session_time_ms / 1000)} s`})`
      : `admitted at ${fmt(s.plan.admit_rate)}/s`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Anteroom load test — visitors who close the tab — ${date}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Visitors who close the tab: ${runs.map((r) => escapeHtml(r.label)).join(' vs ')}</h1>
<div class="meta">
  ${date} · event <code>${escapeHtml(s.event_id)}</code> · ${fmt(s.plan.visitors, 0)} visitors arriving at ${fmt(s.plan.arrival_rate)}/s, ${room},
  polling every ${fmt(s.plan.poll_interval_ms, 0)} ms; ${fmt(a.share * 100, 0)} % close the tab, ${fmt(a.come_back * 100, 0)} % of them come back after
  ${fmt((a.come_back_after_ms / 1000) * 0.5)}–${fmt((a.come_back_after_ms / 1000) * 1.5)} s; seed ${a.seed} (the same visitors leave in every run)<br>
  ${context.note ? `${escapeHtml(context.note)}<br>` : ''}
  ${context.command ? `command: <code>${escapeHtml(context.command)}</code>` : ''}
</div>
${noShowSection(runs)}
</main>
<script>${HOVER_SCRIPT}</script>
</body>
</html>
`;
}
