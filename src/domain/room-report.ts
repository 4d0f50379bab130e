// The after-event report of a room: from the per-minute history samples (the counters at each minute), what
// happened in each minute — arrivals, admissions, claims, leaves, completions, abandons, expiries — and the
// state at its end (waiting, active sessions). A reset sets the counters back to zero: a counter lower than the
// minute before counts from zero again rather than as a negative number. Presence (issue 34): present and absent
// waiting and no-shows at the minute's end, and the late arrivals of the minute (0 in samples from before).

import type { Counters, HistorySample, MinuteWaits } from './ports/store.ts';
import { countOf, percentile } from './wait-histogram.ts';

export interface ReportMinute {
  minute: number;
  arrivals: number;
  admissions: number;
  claims: number;
  leaves: number;
  completions: number;
  abandons: number;
  expiries: number;
  /** Positions handed out and not yet served (serving counter below the queue), at the end of the minute. */
  waiting: number;
  /** In the pre-queue of a room that draws (no position yet, not in `waiting`), at the end of the minute. */
  prequeue: number;
  active_sessions: number;
  /** The serving counter at the sample (charts draw it; a reset sets it back to zero). */
  serving_counter: number;
  /** Visitors admitted this minute whose wait was measured (at their first token set), and its percentiles (s). */
  waits_measured: number;
  wait_p50_s: number | null;
  wait_p90_s: number | null;
  wait_p99_s: number | null;
  /** Of those, the ones this deployment gave a turn estimate, and percentiles of |actual − estimate| (s). */
  estimates_judged: number;
  estimate_error_p50_s: number | null;
  estimate_error_p90_s: number | null;
  /** In line and present / absent (src/domain/presence-figures.ts), at the end of the minute. */
  present_waiting: number;
  absent_waiting: number;
  /** Let in, not claimed, past their arrival window, at the end of the minute. */
  no_shows: number;
  /** Claims this minute by visitors who had stopped counting (passed while absent, or past the arrival window). */
  late_arrivals: number;
}

export const REPORT_COLUMNS = [
  'minute', 'arrivals', 'admissions', 'claims', 'leaves', 'completions', 'abandons', 'expiries', 'waiting', 'active_sessions', 'serving_counter',
  'waits_measured', 'wait_p50_s', 'wait_p90_s', 'wait_p99_s', 'estimates_judged', 'estimate_error_p50_s', 'estimate_error_p90_s', 'prequeue',
  'present_waiting', 'absent_waiting', 'no_shows', 'late_arrivals',
] as const satisfies readonly (keyof ReportMinute)[];

// No sample before: the first minute counts from zero (the history starts with the room, or after a reset).
const moved = (now: number, before: number | undefined) => (before === undefined || now < before ? now : now - before);

/**
 * The report's minutes: one per counter sample, plus one for each minute with waits but no sample (a
 * visitor admitted in a minute the history job missed), in order.
 */
export function reportMinutes(samples: readonly HistorySample[], previous?: HistorySample, waits: readonly MinuteWaits[] = []): ReportMinute[] {
  let last: Counters | undefined = previous?.counters;
  let lastLate: number | undefined = previous?.presence?.late_arrivals;
  const waitsOf = new Map(waits.map((w) => [w.minute, w.counts]));
  const rows = samples.map((sample): ReportMinute => {
    const c = sample.counters;
    const row: ReportMinute = {
      minute: sample.minute,
      arrivals: moved(c.queue, last?.queue),
      admissions: moved(c.serving, last?.serving),
      claims: moved(c.tokens, last?.tokens),
      leaves: moved(c.left, last?.left),
      completions: moved(c.completed, last?.completed),
      abandons: moved(c.abandoned, last?.abandoned),
      expiries: moved(c.expired, last?.expired),
      waiting: Math.max(0, c.queue - Math.min(c.serving, c.queue) - c.left),
      prequeue: sample.prequeue ?? 0,
      active_sessions: sample.active,
      serving_counter: c.serving,
      ...waitColumns(waitsOf.get(sample.minute) ?? {}),
      present_waiting: sample.presence?.present_waiting ?? 0,
      absent_waiting: sample.presence?.absent_waiting ?? 0,
      no_shows: sample.presence?.no_shows ?? 0,
      late_arrivals: sample.presence ? moved(sample.presence.late_arrivals, lastLate) : 0,
    };
    waitsOf.delete(sample.minute);
    last = c;
    if (sample.presence) lastLate = sample.presence.late_arrivals;
    return row;
  });
  if (waitsOf.size === 0) return rows;
  // Minutes with waits and no sample: no movement known, the state of the sample before (a sample's row, not
  // one added here: with two such minutes after a sample, the second would otherwise take the first's).
  const latestFirst = [...rows].reverse();
  for (const [minute, counts] of waitsOf) {
    const before = latestFirst.find((row) => row.minute < minute);
    rows.push({
      minute, arrivals: 0, admissions: 0, claims: 0, leaves: 0, completions: 0, abandons: 0, expiries: 0,
      waiting: before?.waiting ?? 0, prequeue: before?.prequeue ?? 0, active_sessions: before?.active_sessions ?? 0,
      serving_counter: before?.serving_counter ?? 0, ...waitColumns(counts),
      present_waiting: before?.present_waiting ?? 0, absent_waiting: before?.absent_waiting ?? 0, no_shows: before?.no_shows ?? 0,
      late_arrivals: 0,
    });
  }
  return rows.sort((a, b) => a.minute - b.minute);
}

function waitColumns(counts: Readonly<Record<string, number>>): Pick<ReportMinute, 'waits_measured' | 'wait_p50_s' | 'wait_p90_s' | 'wait_p99_s' | 'estimates_judged' | 'estimate_error_p50_s' | 'estimate_error_p90_s'> {
  return {
    waits_measured: countOf(counts, 'w'),
    wait_p50_s: percentile(counts, 'w', 50),
    wait_p90_s: percentile(counts, 'w', 90),
    wait_p99_s: percentile(counts, 'w', 99),
    estimates_judged: countOf(counts, 'e'),
    estimate_error_p50_s: percentile(counts, 'e', 50),
    estimate_error_p90_s: percentile(counts, 'e', 90),
  };
}

/** The whole range at a glance: sums of the movements, the peaks, and percentiles over every wait measured. */
export interface ReportTotals {
  arrivals: number;
  admissions: number;
  claims: number;
  leaves: number;
  completions: number;
  abandons: number;
  expiries: number;
  peak_waiting: number;
  /** The minute of the peak (the first one), or null without minutes. */
  peak_waiting_minute: number | null;
  peak_active_sessions: number;
  /** The most people in the pre-queue at a minute's end (0 for a room without a draw). */
  peak_prequeue: number;
  /** Presence (issue 34): the most absent in line and the most no-shows at a minute's end, the late arrivals. */
  peak_absent_waiting: number;
  peak_no_shows: number;
  late_arrivals: number;
  waits_measured: number;
  wait_p50_s: number | null;
  wait_p90_s: number | null;
  wait_p99_s: number | null;
  estimates_judged: number;
  estimate_error_p50_s: number | null;
  estimate_error_p90_s: number | null;
}

export function reportTotals(rows: readonly ReportMinute[], waits: readonly MinuteWaits[]): ReportTotals {
  const sum = (column: 'arrivals' | 'admissions' | 'claims' | 'leaves' | 'completions' | 'abandons' | 'expiries' | 'late_arrivals') =>
    rows.reduce((total, row) => total + row[column], 0);
  // The buckets of every minute added up: the percentiles of the whole range, as exact as a minute's.
  const merged: Record<string, number> = {};
  for (const minute of waits) for (const [field, count] of Object.entries(minute.counts)) merged[field] = (merged[field] ?? 0) + count;
  let peak: ReportMinute | undefined;
  for (const row of rows) if (!peak || row.waiting > peak.waiting) peak = row;
  return {
    arrivals: sum('arrivals'),
    admissions: sum('admissions'),
    claims: sum('claims'),
    leaves: sum('leaves'),
    completions: sum('completions'),
    abandons: sum('abandons'),
    expiries: sum('expiries'),
    peak_waiting: peak?.waiting ?? 0,
    peak_waiting_minute: peak?.minute ?? null,
    peak_active_sessions: rows.reduce((most, row) => Math.max(most, row.active_sessions), 0),
    peak_prequeue: rows.reduce((most, row) => Math.max(most, row.prequeue), 0),
    peak_absent_waiting: rows.reduce((most, row) => Math.max(most, row.absent_waiting), 0),
    peak_no_shows: rows.reduce((most, row) => Math.max(most, row.no_shows), 0),
    late_arrivals: sum('late_arrivals'),
    ...waitColumns(merged),
  };
}

export function reportCsv(rows: readonly ReportMinute[]): string {
  // An empty cell where a percentile has no sample.
  const lines = [REPORT_COLUMNS.join(','), ...rows.map((row) => REPORT_COLUMNS.map((column) => row[column] ?? '').join(','))];
  return `${lines.join('\n')}\n`;
}
