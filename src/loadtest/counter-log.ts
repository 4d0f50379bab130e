// What the run saw of the serving counter, for the verdicts of a room that admits by itself (nobody in the
// load tester moves its counter, so the increments cannot tell where it stood). Every /serving_num answer is
// an observation: the counter was at most its value when the request was sent, and at least its value when the
// answer came (the counter never goes down during a run). Millions of polls are folded into a grid of
// GRID_MS-wide buckets, each keeping the smallest value sent in it and the largest received in it, and the
// bounds are read from that grid on the safe side:
//   lowerAt(t) — the largest value answered by a poll received before the bucket of t began;
//   upperAt(t) — the smallest value answered by a poll sent in a bucket that begins at or after t.
// So lowerAt(t) ≤ counter(t) ≤ upperAt(t) for every t, whatever the latencies.

/** Width of a bucket of the grid, in ms: fine enough for 1-second admission ticks. */
export const GRID_MS = 10;

export interface CounterBounds {
  /** The counter was certainly at least this at time t (ms since the run's start). */
  lowerAt(t: number): number;
  /** The counter was certainly at most this at time t; Infinity when no poll was sent at or after t. */
  upperAt(t: number): number;
}

export class CounterLog implements CounterBounds {
  private sentMin = new Float64Array(1024).fill(Infinity);
  private receivedMax = new Float64Array(1024).fill(-Infinity);
  private buckets = 0;
  private prefixMax: Float64Array | null = null;
  private suffixMin: Float64Array | null = null;
  private readonly initial: number;

  /** `initial`: the counter before the run (0 after a reset), a lower bound for the whole run. */
  constructor(initial: number) {
    this.initial = initial;
  }

  observe(sentAt: number, receivedAt: number, value: number): void {
    if (!Number.isFinite(value) || !(receivedAt >= sentAt) || sentAt < 0) return;
    const s = Math.floor(sentAt / GRID_MS);
    const r = Math.floor(receivedAt / GRID_MS);
    this.grow(r + 1);
    if (value < this.sentMin[s]!) this.sentMin[s] = value;
    if (value > this.receivedMax[r]!) this.receivedMax[r] = value;
    this.prefixMax = null;
    this.suffixMin = null;
  }

  lowerAt(t: number): number {
    const prefix = this.prefix();
    // Buckets strictly before the one holding t: every answer in them was received before t.
    const b = Math.min(Math.floor(t / GRID_MS), this.buckets) - 1;
    return b < 0 ? this.initial : Math.max(this.initial, prefix[b]!);
  }

  upperAt(t: number): number {
    const suffix = this.suffix();
    // Buckets that begin at or after t: every poll in them was sent at or after t.
    const b = Math.max(0, Math.ceil(t / GRID_MS));
    return b >= this.buckets ? Infinity : suffix[b]!;
  }

  /** The last bucket's end: bounds after it are not known. */
  get endsAt(): number {
    return this.buckets * GRID_MS;
  }

  private grow(size: number): void {
    if (size > this.buckets) this.buckets = size;
    if (size <= this.sentMin.length) return;
    let length = this.sentMin.length;
    while (length < size) length *= 2;
    const sent = new Float64Array(length).fill(Infinity);
    sent.set(this.sentMin);
    const received = new Float64Array(length).fill(-Infinity);
    received.set(this.receivedMax);
    this.sentMin = sent;
    this.receivedMax = received;
  }

  private prefix(): Float64Array {
    if (this.prefixMax) return this.prefixMax;
    const prefix = new Float64Array(this.buckets);
    let high = this.initial;
    for (let i = 0; i < this.buckets; i++) prefix[i] = high = Math.max(high, this.receivedMax[i]!);
    return (this.prefixMax = prefix);
  }

  private suffix(): Float64Array {
    if (this.suffixMin) return this.suffixMin;
    const suffix = new Float64Array(this.buckets);
    let low = Infinity;
    for (let i = this.buckets - 1; i >= 0; i--) suffix[i] = low = Math.min(low, this.sentMin[i]!);
    return (this.suffixMin = suffix);
  }
}
