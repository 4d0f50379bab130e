// What a load test measures: latency histograms per endpoint, status counts, and one sample per second
// for the charts. Recording is O(1) and allocation-free so it costs little next to the requests.

/**
 * Latency histogram with logarithmic buckets: 32 per power of two, so a percentile is within ~2.2 % of the
 * true value, from 1 µs to ~35 minutes in 4 KiB. Count, sum, min and max are exact.
 */
export class LatencyHistogram {
  private static readonly PER_OCTAVE = 32;
  private static readonly BUCKETS = 32 * 32;
  private readonly counts = new Uint32Array(LatencyHistogram.BUCKETS);
  count = 0;
  sumMs = 0;
  minMs = Infinity;
  maxMs = 0;

  record(ms: number): void {
    const micros = Math.max(1, Math.round(ms * 1000));
    const index = Math.min(LatencyHistogram.BUCKETS - 1, Math.floor(Math.log2(micros) * LatencyHistogram.PER_OCTAVE));
    this.counts[index]!++;
    this.count++;
    this.sumMs += ms;
    if (ms < this.minMs) this.minMs = ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  /** The value below which `p` percent of the recorded values fall (0 when empty). */
  percentile(p: number): number {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) {
        // Geometric middle of the bucket, kept within the exact extremes.
        const micros = 2 ** ((i + 0.5) / LatencyHistogram.PER_OCTAVE);
        return Math.min(this.maxMs, Math.max(this.minMs, micros / 1000));
      }
    }
    return this.maxMs;
  }

  merge(other: LatencyHistogram): void {
    for (let i = 0; i < this.counts.length; i++) this.counts[i]! += other.counts[i]!;
    this.count += other.count;
    this.sumMs += other.sumMs;
    this.minMs = Math.min(this.minMs, other.minMs);
    this.maxMs = Math.max(this.maxMs, other.maxMs);
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.sumMs = 0;
    this.minMs = Infinity;
    this.maxMs = 0;
  }

  summary(): LatencySummary {
    return {
      count: this.count,
      mean: this.count === 0 ? 0 : round(this.sumMs / this.count),
      p50: round(this.percentile(50)),
      p95: round(this.percentile(95)),
      p99: round(this.percentile(99)),
      max: round(this.maxMs),
    };
  }
}

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Milliseconds with 0.01 ms precision: enough for a report, short in JSON. */
export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Each API call of the journey, named after its path (re-claims apart from first claims). */
export const ENDPOINTS = [
  'assign_queue_num',
  'queue_num',
  'serving_num',
  'waiting_num',
  'generate_token',
  'generate_token_reclaim',
  'increment_serving_counter',
  'update_session',
] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

/** Status 0 stands for a network error (no HTTP answer); shown as "network". */
export function statusLabel(status: number): string {
  return status === 0 ? 'network' : String(status);
}

/** The journey expects only 200 and 202: anything else is an error. */
export function isError(status: number): boolean {
  return status === 0 || status >= 400;
}

export interface EndpointStats {
  latency: LatencyHistogram;
  statuses: Map<string, number>;
}

/** Gauges the run knows at sampling time (the recorder only counts). */
export interface Gauges {
  joined: number;
  /** Visitors placed in the queue and not yet holding a token (the tester's view of the queue). */
  waiting: number;
  served: number;
  servingCounter: number;
  highestPosition: number;
  /** The server's waiting_num, read once a second; null before the first answer. */
  serverWaitingNum: number | null;
  /**
   * Share of the interval the load generator's event loop was busy (0–1). Near 1 the generator itself is the
   * bottleneck: latencies then include its own queueing and the request rate is its limit, not the server's.
   */
  clientBusy: number;
  /** The server's CPU use (1 = one core), when it publishes /metrics; else null. */
  serverCpu: number | null;
}

export interface SecondSample extends Gauges {
  /** Seconds since the start of the run, at the end of the interval. */
  t: number;
  joinsPerSec: number;
  admissionsPerSec: number;
  requestsPerSec: number;
  errorsPerSec: number;
  /** Latency of the public API requests answered in this interval (0 when none). */
  p50: number;
  p95: number;
  p99: number;
}

export class RunStats {
  readonly endpoints = new Map<Endpoint, EndpointStats>(
    ENDPOINTS.map((e) => [e, { latency: new LatencyHistogram(), statuses: new Map<string, number>() }]),
  );
  readonly samples: SecondSample[] = [];
  requests = 0;
  errors = 0;
  joins = 0;
  admissions = 0;
  private readonly window = new LatencyHistogram();
  private last = { t: 0, requests: 0, errors: 0, joins: 0, admissions: 0 };

  record(endpoint: Endpoint, status: number, ms: number): void {
    const stats = this.endpoints.get(endpoint)!;
    stats.latency.record(ms);
    const label = statusLabel(status);
    stats.statuses.set(label, (stats.statuses.get(label) ?? 0) + 1);
    this.requests++;
    if (isError(status)) this.errors++;
    if (endpoint !== 'increment_serving_counter') this.window.record(ms);
  }

  /** Closes the interval since the previous sample; `tMs` is milliseconds since the start of the run. */
  sample(tMs: number, gauges: Gauges): SecondSample {
    const dt = Math.max(0.001, (tMs - this.last.t) / 1000);
    const rate = (now: number, before: number) => round((now - before) / dt, 1);
    const sample: SecondSample = {
      t: round(tMs / 1000, 3),
      joinsPerSec: rate(this.joins, this.last.joins),
      admissionsPerSec: rate(this.admissions, this.last.admissions),
      requestsPerSec: rate(this.requests, this.last.requests),
      errorsPerSec: rate(this.errors, this.last.errors),
      p50: round(this.window.percentile(50)),
      p95: round(this.window.percentile(95)),
      p99: round(this.window.percentile(99)),
      ...gauges,
    };
    this.samples.push(sample);
    this.window.reset();
    this.last = { t: tMs, requests: this.requests, errors: this.errors, joins: this.joins, admissions: this.admissions };
    return sample;
  }

  /** Error counts by status label over every endpoint, e.g. {"503": 2, "network": 1}. */
  errorsByStatus(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const stats of this.endpoints.values()) {
      for (const [label, n] of stats.statuses) {
        if (label === 'network' || Number(label) >= 400) out[label] = (out[label] ?? 0) + n;
      }
    }
    return out;
  }
}

/** Percentiles of a plain list of values (time in queue): exact, since the list is at most N visitors. */
export function percentilesOf(values: number[]): { count: number; p50: number; p95: number; p99: number; max: number } {
  if (values.length === 0) return { count: 0, p50: 0, p95: 0, p99: 0, max: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
  return { count: sorted.length, p50: round(at(50), 3), p95: round(at(95), 3), p99: round(at(99), 3), max: round(sorted[sorted.length - 1]!, 3) };
}
