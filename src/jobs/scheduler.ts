// Interval jobs (expiry, metrics events, periodic inlets). Ticks are aligned to multiples of the interval
// on the wall clock, and each tick is claimed through a lock in the store whose owner names the tick:
// with N nodes, exactly one runs each tick, and if that node dies the next tick goes to another.

import type { Logger } from 'pino';
import type { LockStore } from '../domain/ports/store.ts';

export interface JobSpec {
  name: string;
  intervalMs: number;
  run: () => Promise<void>;
}

export interface JobSchedulerDeps {
  store: LockStore;
  nodeId: string;
  log: Pick<Logger, 'error' | 'debug'>;
  clockMs?: () => number;
  onRun?: (job: string, outcome: 'ok' | 'failed') => void;
}

export class JobScheduler {
  private readonly deps: JobSchedulerDeps;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(deps: JobSchedulerDeps) {
    this.deps = deps;
  }

  private now(): number {
    return (this.deps.clockMs ?? Date.now)();
  }

  start(job: JobSpec): void {
    const scheduleNext = () => {
      if (this.stopped) return;
      const now = this.now();
      const delay = job.intervalMs - (now % job.intervalMs);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        const tick = Math.floor(this.now() / job.intervalMs);
        const run = this.runTick(job, tick).finally(() => this.running.delete(run));
        this.running.add(run);
        scheduleNext();
      }, delay);
      timer.unref();
      this.timers.add(timer);
    };
    scheduleNext();
  }

  /** Claims tick `tick` of the job for this node and runs it; false if another node has it. */
  async runTick(job: JobSpec, tick: number): Promise<boolean> {
    const now = this.now();
    const ttl = Math.max(1, (tick + 1) * job.intervalMs - now);
    try {
      if (!(await this.deps.store.tryAcquireLock(`job:${job.name}`, `${this.deps.nodeId}:${tick}`, ttl, now))) {
        return false;
      }
      await job.run();
      this.deps.onRun?.(job.name, 'ok');
      return true;
    } catch (error) {
      this.deps.onRun?.(job.name, 'failed');
      this.deps.log.error({ err: error, job: job.name }, 'job tick failed');
      return false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }
}
