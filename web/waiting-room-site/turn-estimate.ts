// Estimates the time until a visitor's turn from the serving counter the page observes, as a range.
//
// VWR fitted a line through the last 50 samples and showed one instant ("in 3 minutes"), which jumped back and
// forth with every burst of admissions. Here:
// - the admission rate is measured between the polls that saw the counter rise, over a sliding window of a
//   few minutes: operators and inlet strategies let people in by bursts, and measuring from burst to burst
//   (rather than from an arbitrary poll) gives the same rate whichever moment of the cycle the page is in;
// - a pause longer than the usual gap between bursts counts against the rate, so a line that stops is seen
//   to stop; nothing at all within the window is "stalled";
// - each end of the shown range may get shorter at any poll, but longer only for a cause: a clearly longer
//   estimate (beyond the estimate's own noise) persisted for several polls — admissions really slowed down —
//   or the shown time ran out while the visitor still waits. The serving counter moving backwards (a reset)
//   starts afresh. A single slow poll never makes the wait look longer.

export interface EstimatorOptions {
  /** Sliding window of the rate (ms). */
  windowMs: number;
  /** With no rise of the counter over this long (ms), the line is reported as stalled. */
  stallMs: number;
  /** Consecutive clearly-later estimates needed before a deadline moves back. */
  holdPolls: number;
}

export const DEFAULT_ESTIMATOR_OPTIONS: EstimatorOptions = {
  windowMs: 5 * 60_000,
  stallMs: 15_000,
  holdPolls: 4,
};

export type TurnEstimate =
  | { kind: 'served' }
  /** Not enough history yet. */
  | { kind: 'estimating' }
  /** Nobody was let in for a while. */
  | { kind: 'stalled' }
  | { kind: 'range'; lowSec: number; highSec: number; perMinute: number };

interface Sample {
  atMs: number;
  serving: number;
}

/** The early end assumes a pace this much faster than measured. */
const EARLY_FACTOR = 0.8;
/** Relative uncertainty of the measured pace: 1/sqrt(intervals measured), within these bounds. */
const MIN_UNCERTAINTY = 0.15;
const MAX_UNCERTAINTY = 0.5;
/** A longer estimate counts as "clearly longer" beyond max(this many seconds, the pace's uncertainty × the time shown). */
const MIN_SHIFT_SEC = 5;

/** One end of the shown range, in seconds left. */
class Bound {
  shownSec: number | null = null;
  private laterPolls = 0;

  /** Takes a new raw estimate; returns what to show. `tolerance`: relative noise of the estimate. */
  update(rawSec: number, holdPolls: number, tolerance: number): number {
    const shown = this.shownSec;
    let next = shown ?? rawSec;
    if (shown === null || shown <= 0) {
      // First estimate, or the shown time ran out while the visitor still waits: that is a cause.
      next = rawSec;
      this.laterPolls = 0;
    } else if (rawSec <= shown) {
      // Shorter: shown at once, half-way per poll so that noise does not ratchet it down.
      next = rawSec + (shown - rawSec) / 2;
      this.laterPolls = 0;
    } else if (rawSec - shown > Math.max(MIN_SHIFT_SEC, tolerance * shown)) {
      if (++this.laterPolls >= holdPolls) {
        next = rawSec;
        this.laterPolls = 0;
      }
    } else {
      // Longer, but within the estimate's own noise: keep what is shown.
      this.laterPolls = 0;
    }
    this.shownSec = next;
    return next;
  }

  reset(): void {
    this.shownSec = null;
    this.laterPolls = 0;
  }
}

export class TurnEstimator {
  private readonly options: EstimatorOptions;
  private samples: Sample[] = [];
  private readonly early = new Bound();
  private readonly late = new Bound();

  constructor(options: Partial<EstimatorOptions> = {}) {
    this.options = { ...DEFAULT_ESTIMATOR_OPTIONS, ...options };
  }

  /** Records one observation of the serving counter. */
  observe(atMs: number, serving: number): void {
    const last = this.samples.at(-1);
    if (last && (serving < last.serving || atMs < last.atMs)) {
      // The counter moved backwards (a reset or a correction): the history no longer describes this queue.
      this.samples = [];
      this.early.reset();
      this.late.reset();
    }
    this.samples.push({ atMs, serving });
    const start = atMs - this.options.windowMs;
    while (this.samples.length > 1 && this.samples[0]!.atMs < start) this.samples.shift();
  }

  /** The estimate for `position`, given what was observed so far. */
  estimate(nowMs: number, position: number): TurnEstimate {
    const last = this.samples.at(-1);
    const first = this.samples[0];
    if (!last || !first) return { kind: 'estimating' };
    const ahead = position - last.serving;
    if (ahead <= 0) return { kind: 'served' };

    // The polls that saw the counter rise.
    const rises = this.samples.filter((sample, i) => i > 0 && sample.serving > this.samples[i - 1]!.serving);
    const lastRise = rises.at(-1);
    const quietSince = lastRise?.atMs ?? first.atMs;
    if (nowMs - quietSince >= this.options.stallMs && (rises.length === 0 || nowMs - quietSince >= this.options.windowMs / 2)) {
      this.early.reset();
      this.late.reset();
      return { kind: 'stalled' };
    }
    const firstRise = rises[0];
    if (!firstRise || !lastRise || rises.length < 2) return { kind: 'estimating' };

    const intervals = rises.length - 1;
    const usualGap = (lastRise.atMs - firstRise.atMs) / intervals;
    // The projection starts at the last rise: until the usual gap has passed, waiting for the next burst is
    // part of the estimate already. A longer pause moves the start along and lowers the measured rate.
    const from = Math.max(lastRise.atMs, nowMs - usualGap);
    const rate = (lastRise.serving - firstRise.serving) / (from - firstRise.atMs);
    const uncertainty = Math.min(MAX_UNCERTAINTY, Math.max(MIN_UNCERTAINTY, 1 / Math.sqrt(intervals)));

    const { holdPolls } = this.options;
    const rawLowSec = Math.max(0, (from + (ahead / rate) * EARLY_FACTOR - nowMs) / 1000);
    const rawHighSec = Math.max(0, (from + ahead / (rate * (1 - uncertainty)) - nowMs) / 1000);
    const lowSec = this.early.update(rawLowSec, holdPolls, uncertainty);
    const highSec = Math.max(lowSec, this.late.update(rawHighSec, holdPolls, uncertainty));
    return { kind: 'range', lowSec, highSec, perMinute: rate * 60_000 };
  }
}

/** "less than a minute", "about 3 minutes", "4–7 minutes", "1–2 hours". */
/** Words a range needs besides Intl's units ("less than {t}", "about {t}"), in the page's language. */
type Words = (key: 'less_than' | 'about', values: { t: string }) => string;
const ENGLISH: Words = (key, values) => (key === 'less_than' ? `less than ${values.t}` : `about ${values.t}`);

/** A wait range for people, in `lang`, its units by Intl ("4–7 minutes", "less than a minute", "about 2 hours"). */
export function formatRange(lowSec: number, highSec: number, lang = 'en', words: Words = ENGLISH): string {
  const unit = (name: 'minute' | 'hour') => new Intl.NumberFormat(lang, { style: 'unit', unit: name, unitDisplay: 'long' });
  if (highSec < 60) return words('less_than', { t: unit('minute').format(1) });
  if (highSec >= 90 * 60) {
    const low = Math.max(1, Math.floor(lowSec / 3600));
    const high = Math.max(low, Math.ceil(highSec / 3600));
    return low === high ? words('about', { t: unit('hour').format(low) }) : unit('hour').formatRange(low, high);
  }
  const low = Math.floor(lowSec / 60);
  const high = Math.max(1, Math.ceil(highSec / 60));
  if (low === 0) return words('less_than', { t: unit('minute').format(high) });
  return low >= high ? words('about', { t: unit('minute').format(high) }) : unit('minute').formatRange(low, high);
}
