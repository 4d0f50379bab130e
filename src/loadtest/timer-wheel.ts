// One timer for every visitor: tasks are bucketed by tick (10 ms by default) and a single interval fires
// the due buckets. Fifty thousand visitors polling once a second are 500 closures per tick — far cheaper
// than 50,000 pending setTimeout handles or one async loop with sleeps per visitor.

export class TimerWheel {
  private readonly buckets = new Map<number, Array<() => void>>();
  private next = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Tasks waiting to fire. */
  pending = 0;
  /** The first exception a task threw (a bug in the caller); the wheel keeps turning. */
  error: unknown = null;

  readonly now: () => number;
  readonly tickMs: number;

  constructor(now: () => number, tickMs = 10) {
    this.now = now;
    this.tickMs = tickMs;
    this.next = Math.floor(now() / tickMs);
  }

  /** Runs `task` at `timeMs` (on the clock given to the constructor), or on the next tick if that is past. */
  at(timeMs: number, task: () => void): void {
    const tick = Math.max(this.next, Math.ceil(timeMs / this.tickMs));
    const bucket = this.buckets.get(tick);
    if (bucket) bucket.push(task);
    else this.buckets.set(tick, [task]);
    this.pending++;
  }

  after(delayMs: number, task: () => void): void {
    this.at(this.now() + delayMs, task);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.turn(), this.tickMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.buckets.clear();
    this.pending = 0;
  }

  /** Fires every bucket up to now. Tasks scheduled while firing land on a later tick, never the current one. */
  turn(): void {
    const due = Math.floor(this.now() / this.tickMs);
    while (this.next <= due && this.timer !== null) {
      const tick = this.next++;
      const bucket = this.buckets.get(tick);
      if (!bucket) continue;
      this.buckets.delete(tick);
      this.pending -= bucket.length;
      for (const task of bucket) {
        try {
          task();
        } catch (error) {
          this.error ??= error;
        }
      }
    }
  }
}
