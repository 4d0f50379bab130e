// The write fence's clock: where "now" is on the Redis server's clock, seen from this process.
//
// A writing script carries a deadline on the server's clock (FENCE_PROLOGUE in scripts.ts) and changes
// nothing when it runs later. The deadline of a write sent at local time m is m + offset + budget, with
// budget shorter than the command timeout: the caller is answered 503 only after the command timeout, so a
// script that may still run after that answer is refused. `offset` must never be larger than the true
// difference between the clocks (that would move the deadline later than the caller's give-up time), so it
// is measured from below: TIME is read between local times t0 and t1, the server's clock read r happened at
// some local time in [t0, t1], hence offset = r - t1 ≤ r - (local time of the read). The error is at most
// t1 - t0 (one round trip), in the safe direction: a write may be refused by that much too early.
//
// Local time is the monotonic clock (performance.now), so a step of this machine's wall clock changes
// nothing. The server's clock (gettimeofday) is re-measured every few seconds and after each reconnection;
// a step BACK of a Redis server's clock between two measurements could let a delayed script through (run
// Redis hosts with NTP slewing, not stepping). With a Cluster the smallest offset over the primaries is
// used, so the deadline is early enough on every primary (their clocks should agree within a few ms: NTP).

import type { Cluster, Redis } from 'ioredis';

/** Measurements older than this are refreshed in the background. */
const REFRESH_MS = 5_000;
/** A measurement whose round trip took longer is discarded (its error would eat the budget). */
const MAX_ROUND_TRIP_MS = 250;

export class WriteFenceClock {
  /** Per server ("host:port"): the offset measured from below, and when. */
  private readonly offsets = new Map<string, { offset: number; at: number }>();
  private measuring: Promise<void> | null = null;
  private readonly budgetMs: number;
  private readonly client: Redis | Cluster;

  constructor(client: Redis | Cluster, options: { budgetMs: number }) {
    this.client = client;
    this.budgetMs = options.budgetMs;
  }

  /** Whether some server was measured (a write can be fenced). */
  ready(): boolean {
    return this.offsets.size > 0;
  }

  /** The fence argument for a write sent now; throws if no server was measured yet. */
  fence(): string {
    const now = performance.now();
    let lowest = Infinity;
    for (const [key] of this.servers()) {
      const measured = this.offsets.get(key);
      if (measured) lowest = Math.min(lowest, measured.offset);
    }
    if (lowest === Infinity) throw new Error('the Redis clock was not measured yet');
    if (this.oldest(now) > REFRESH_MS || this.servers().some(([key]) => !this.offsets.has(key))) {
      void this.measure().catch(() => {});
    }
    return String(Math.floor(now + lowest + this.budgetMs));
  }

  /** Measures every primary's clock (one TIME each); resolves when done, rejects if none could be read. */
  measure(): Promise<void> {
    this.measuring ??= this.measureAll().finally(() => {
      this.measuring = null;
    });
    return this.measuring;
  }

  /** Forget the measurements (after a failover, the primary is another machine with another clock). */
  forget(): void {
    this.offsets.clear();
  }

  private oldest(now: number): number {
    let oldest = 0;
    for (const { at } of this.offsets.values()) oldest = Math.max(oldest, now - at);
    return oldest;
  }

  private servers(): [string, Redis][] {
    const client = this.client;
    if ('nodes' in client && typeof (client as Cluster).nodes === 'function' && (client as Cluster).isCluster) {
      return (client as Cluster).nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]);
    }
    return [['server', client as Redis]];
  }

  private async measureAll(): Promise<void> {
    const results = await Promise.allSettled(
      this.servers().map(async ([key, server]) => {
        for (let attempt = 0; attempt < 3; attempt++) {
          const t0 = performance.now();
          const [seconds, micros] = await server.time();
          const t1 = performance.now();
          if (t1 - t0 > MAX_ROUND_TRIP_MS) continue;
          const serverMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
          this.offsets.set(key, { offset: serverMs - t1, at: t1 });
          return;
        }
        throw new Error(`TIME on ${key} took longer than ${MAX_ROUND_TRIP_MS} ms three times`);
      }),
    );
    const failed = results.find((result) => result.status === 'rejected');
    if (failed && !this.ready()) throw (failed as PromiseRejectedResult).reason;
  }
}
