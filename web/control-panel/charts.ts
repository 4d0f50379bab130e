// Charts of the control panel (uPlot: ~50 KB, canvas, no dependencies): queue length (and how many of those
// waiting are absent: presence, issue 34) and serving counter, and
// the admission rate derived from the serving counter. The room's history (GET /private/rooms/{id}/report, one
// sample a minute, kept by the server) is loaded for the range picked, so the charts survive a reload and show
// past events; while the range ends now, the panel's own samples (every 2 s) are added as they come.

import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface CounterSample {
  atMs: number;
  serving: number;
  waiting: number;
  /** In the pre-queue (no position yet, not in `waiting`); 0 without a draw. */
  prequeue: number;
  /** Of those waiting, absent (presence, issue 34); 0 where nobody beats or the server has no presence. */
  absent: number;
}

export const HISTORY_MS = 10 * 60_000;
/** The admission rate at a sample is what was admitted over this trailing window. */
const RATE_WINDOW_MS = 60_000;
/** The time axis spans at least this much, so the first samples do not stretch across the whole chart. */
const MIN_SPAN_S = 120;
const HEIGHT = 220;

export class CounterHistory {
  samples: CounterSample[] = [];
  /** How far back the live samples are kept (the range picked). */
  spanMs = HISTORY_MS;

  add(sample: CounterSample): void {
    this.samples.push(sample);
    const oldest = sample.atMs - this.spanMs;
    while (this.samples.length > 0 && this.samples[0]!.atMs < oldest) this.samples.shift();
  }

  /**
   * The server's samples (one a minute): they go before the live ones taken since, replacing any live sample
   * they overlap (the history is the record; a live sample is only newer).
   */
  load(recorded: readonly CounterSample[]): void {
    const lastRecorded = recorded.at(-1)?.atMs ?? -Infinity;
    this.samples = [...recorded, ...this.samples.filter((s) => s.atMs > lastRecorded)];
  }

  clear(): void {
    this.samples = [];
  }

  /**
   * People let in per minute at sample i: the serving counter's rise over the trailing minute. While less
   * than a minute of history exists, the rise so far (not extrapolated: one increment must not read as a
   * spike of hundreds per minute). Null for the first sample.
   */
  rateAt(i: number): number | null {
    const current = this.samples[i];
    if (!current || i === 0) return null;
    let from = this.samples[0]!;
    for (let j = i - 1; j >= 0; j--) {
      from = this.samples[j]!;
      if (current.atMs - from.atMs >= RATE_WINDOW_MS) break;
    }
    // A reset moves the counter backwards: that is not a negative admission.
    const rise = Math.max(0, current.serving - from.serving);
    return (rise * RATE_WINDOW_MS) / Math.max(RATE_WINDOW_MS, current.atMs - from.atMs);
  }
}

function chartWidth(element: HTMLElement): number {
  return Math.max(260, Math.floor(element.getBoundingClientRect().width));
}

export class LiveCharts {
  private readonly queue: uPlot;
  private readonly rate: uPlot;
  private readonly queueSummary: HTMLElement;
  private readonly rateSummary: HTMLElement;
  private readonly queueElement: HTMLElement;

  constructor(options: { queue: HTMLElement; rate: HTMLElement; queueSummary: HTMLElement; rateSummary: HTMLElement }) {
    this.queueSummary = options.queueSummary;
    this.rateSummary = options.rateSummary;
    this.queueElement = options.queue;
    const axisStyle = { stroke: '#1b1f24', grid: { stroke: '#e3e6ea' }, ticks: { stroke: '#c9ced6' } };
    const time: uPlot.Scale = {
      time: true,
      range: (_u, min, max) => (min === null || max === null ? [min, max] : [Math.min(min, max - MIN_SPAN_S), max]),
    };
    // Clock times only (uPlot's default adds the date under the first tick, which collides with the next).
    // Over more than a day (a past event, a week's range): the day and the time.
    const clockFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
    const dayFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
    const timeAxis: uPlot.Axis = {
      ...axisStyle,
      space: 90,
      values: (u, splits) => {
        const span = (u.scales.x?.max ?? 0) - (u.scales.x?.min ?? 0);
        return splits.map((s) => (span > 86_400 ? dayFormat : clockFormat).format(s * 1000));
      },
    };
    this.queue = new uPlot(
      {
        width: chartWidth(options.queue),
        height: HEIGHT,
        scales: { x: time, people: { range: (_u, _min, max) => [0, Math.max(5, max * 1.1)] }, counter: {} },
        series: [
          {},
          { label: 'Waiting', scale: 'people', stroke: '#0b5cad', width: 2, fill: 'rgba(11, 92, 173, 0.08)' },
          { label: 'Pre-queue', scale: 'people', stroke: '#6b3fa0', width: 2, dash: [2, 3] },
          { label: 'Absent (of those waiting)', scale: 'people', stroke: '#8a8f98', width: 2, dash: [1, 3] },
          { label: 'Serving counter', scale: 'counter', stroke: '#b3470a', width: 2, dash: [6, 3] },
        ],
        axes: [
          timeAxis,
          { ...axisStyle, scale: 'people', label: 'waiting' },
          { ...axisStyle, scale: 'counter', side: 1, label: 'serving counter', grid: { show: false } },
        ],
      },
      [[], [], [], [], []],
      options.queue,
    );
    this.rate = new uPlot(
      {
        width: chartWidth(options.rate),
        height: HEIGHT,
        scales: { x: time, y: { range: (_u, _min, max) => [0, Math.max(5, max * 1.1)] } },
        series: [{}, { label: 'Admitted per minute', stroke: '#1a6b32', width: 2, fill: 'rgba(26, 107, 50, 0.12)', spanGaps: false }],
        axes: [timeAxis, { ...axisStyle, label: 'people / min' }],
      },
      [[], []],
      options.rate,
    );
    const resize = new ResizeObserver(() => {
      this.queue.setSize({ width: chartWidth(options.queue), height: HEIGHT });
      this.rate.setSize({ width: chartWidth(options.rate), height: HEIGHT });
    });
    resize.observe(options.queue);
  }

  update(history: CounterHistory): void {
    const samples = history.samples;
    const times = samples.map((s) => s.atMs / 1000);
    const rates = samples.map((_s, i) => history.rateAt(i));
    this.queue.setData([times, samples.map((s) => s.waiting), samples.map((s) => s.prequeue), samples.map((s) => s.absent), samples.map((s) => s.serving)]);
    this.rate.setData([times, rates]);
    const last = samples.at(-1);
    const lastRate = rates.at(-1);
    this.queueElement.dataset.samples = String(samples.length);
    const peak = samples.reduce((most, s) => Math.max(most, s.waiting), 0);
    const prequeue = last && last.prequeue > 0 ? ` ${last.prequeue} in the pre-queue;` : '';
    const absent = last && last.absent > 0 ? ` (${last.absent} of them absent)` : '';
    this.queueSummary.textContent = last
      ? `Latest: ${last.waiting} waiting${absent};${prequeue} serving counter ${last.serving}. Most waiting in the range: ${peak}.`
      : 'No data yet.';
    this.rateSummary.textContent =
      lastRate === null || lastRate === undefined ? 'No data yet.' : `Latest: about ${Math.round(lastRate)} people let in per minute.`;
  }
}
