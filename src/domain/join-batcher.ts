// Group commit of joins. Every join that arrives while the event loop is busy is collected and handed to
// the store as ONE batch (one transaction / one Lua call), then every caller is answered. Under load the
// batches grow by themselves; at rest a join waits only for the current loop turn (setImmediate), or
// `windowMs` if configured. Per event, batches are committed one after another, so positions follow
// arrival order on this node. When a batch fails because the store is unavailable, the joins queued
// behind it fail with it (the same 503), so a join waits for at most one store call. And with `queueWaitMs`
// (the Redis store: its time to get ready), a join that waited longer than that behind a slow batch that did
// succeed is answered 503 without being sent — so a join takes one store call's bound plus queueWaitMs at most,
// not two calls' (issue 35: answers over 2 s during failovers); a join never sent has no effect.

import { StoreUnavailableError, type JoinRequest } from './ports/store.ts';

interface PendingJoin extends JoinRequest {
  resolve(position: number): void;
  reject(error: unknown): void;
  /** When the join arrived (the batcher's clock, performance.now()). */
  arrivedAt: number;
}

export type CommitBatch = (eventId: string, joins: readonly JoinRequest[]) => Promise<number[]>;

export class JoinBatcher {
  private readonly commit: CommitBatch;
  private readonly maxBatch: number;
  private readonly windowMs: number;
  private readonly queueWaitMs: number;
  private readonly now: () => number;
  private readonly pending = new Map<string, PendingJoin[]>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private scheduled = false;
  /** Batch sizes committed, for metrics. */
  onBatch: (size: number) => void = () => {};

  constructor(
    commit: CommitBatch,
    options: { maxBatch?: number; windowMs?: number; queueWaitMs?: number | undefined; now?: () => number } = {},
  ) {
    this.commit = commit;
    this.maxBatch = options.maxBatch ?? 1000;
    this.windowMs = options.windowMs ?? 0;
    this.queueWaitMs = options.queueWaitMs ?? Infinity;
    this.now = options.now ?? (() => performance.now());
  }

  join(eventId: string, request: JoinRequest): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      let queue = this.pending.get(eventId);
      if (!queue) this.pending.set(eventId, (queue = []));
      queue.push({ ...request, resolve, reject, arrivedAt: this.now() });
      this.schedule();
    });
  }

  /** Resolves once every join received so far has been committed and answered. */
  async drain(): Promise<void> {
    while (this.pending.size > 0 || this.inFlight.size > 0) {
      this.flush();
      await Promise.all(this.inFlight.values());
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.flush();
    };
    if (this.windowMs > 0) setTimeout(run, this.windowMs);
    else setImmediate(run);
  }

  private flush(): void {
    for (const eventId of [...this.pending.keys()]) {
      if (!this.inFlight.has(eventId)) this.startBatch(eventId);
    }
  }

  private startBatch(eventId: string): void {
    const queue = this.pending.get(eventId);
    if (!queue || queue.length === 0) return;
    let batch = queue.splice(0, this.maxBatch);
    if (queue.length === 0) this.pending.delete(eventId);
    if (this.queueWaitMs !== Infinity) {
      const now = this.now();
      const late = new Set(batch.filter((join) => now - join.arrivedAt > this.queueWaitMs));
      if (late.size > 0) {
        const error = new StoreUnavailableError(`a join waited over ${this.queueWaitMs} ms behind a slow store call`);
        for (const join of late) join.reject(error);
        batch = batch.filter((join) => !late.has(join));
        if (batch.length === 0) {
          if (this.pending.has(eventId)) this.startBatch(eventId);
          return;
        }
      }
    }
    const run = this.commitBatch(eventId, batch).finally(() => {
      this.inFlight.delete(eventId);
      // Joins that arrived while this batch was committing go next.
      if (this.pending.has(eventId)) this.startBatch(eventId);
    });
    this.inFlight.set(eventId, run);
  }

  private async commitBatch(eventId: string, batch: PendingJoin[]): Promise<void> {
    try {
      const positions = await this.commit(eventId, batch);
      this.onBatch(batch.length);
      batch.forEach((join, i) => join.resolve(positions[i] as number));
    } catch (error) {
      for (const join of batch) join.reject(error);
      // The store is away: the joins queued behind this batch fail with it rather than wait for a batch of
      // their own (each wait is bounded, but two in a row would double a visitor's wait for a 503).
      if (error instanceof StoreUnavailableError) {
        const queued = this.pending.get(eventId) ?? [];
        this.pending.delete(eventId);
        for (const join of queued) join.reject(error);
      }
    }
  }
}
