// The after-event report of a room: from the per-minute history samples (the counters at each minute), what
// happened in each minute — arrivals, admissions, claims, leaves, completions, abandons, expiries — and the
// state at its end (waiting, active sessions). A reset sets the counters back to zero: a counter lower than the
// minute before counts from zero again rather than as a negative number.

import type { Counters, HistorySample } from './ports/store.ts';

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
  active_sessions: number;
}

export const REPORT_COLUMNS = [
  'minute', 'arrivals', 'admissions', 'claims', 'leaves', 'completions', 'abandons', 'expiries', 'waiting', 'active_sessions',
] as const satisfies readonly (keyof ReportMinute)[];

// No sample before: the first minute counts from zero (the history starts with the room, or after a reset).
const moved = (now: number, before: number | undefined) => (before === undefined || now < before ? now : now - before);

export function reportMinutes(samples: readonly HistorySample[], previous?: HistorySample): ReportMinute[] {
  let last: Counters | undefined = previous?.counters;
  return samples.map((sample) => {
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
      active_sessions: sample.active,
    };
    last = c;
    return row;
  });
}

export function reportCsv(rows: readonly ReportMinute[]): string {
  const lines = [REPORT_COLUMNS.join(','), ...rows.map((row) => REPORT_COLUMNS.map((column) => row[column]).join(','))];
  return `${lines.join('\n')}\n`;
}
