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
  /** The timer of each scheduled job's next tick, by job name. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Ticks in flight, with the name of their job. */
  private readonly running = new Map<Promise<unknown>, string>();
  private stopped = false;

  constructor(deps: JobSchedulerDeps) {
    this.deps = deps;
  }

  private now(): number {
    return (this.deps.clockMs ?? Date.now)();
  }

  /** Runs the job at every multiple of its interval until stopJob(name) or stop(). One job per name. */
  start(job: JobSpec): void {
    if (this.timers.has(job.name)) throw new Error(`job ${job.name} is already scheduled`);
    // The tick this node started last. A timer can fire a few ms before the boundary it was set for (Node counts
    // its delay from the event loop's cached time, which lags the clock on a busy machine) and so see the tick
    // before: the one this node may have just run, which its own lock would let it run again. It is skipped, and
    // the next timer, a few ms away, runs the new tick. (Any other tick runs, a clock stepped back included.)
    let lastTick: number | null = null;
    const scheduleNext = () => {
      if (this.stopped) return;
      const now = this.now();
      const delay = job.intervalMs - (now % job.intervalMs);
      const timer = setTimeout(() => {
        const tick = Math.floor(this.now() / job.intervalMs);
        if (tick !== lastTick) {
          lastTick = tick;
          const run = this.runTick(job, tick).finally(() => this.running.delete(run));
          this.running.set(run, job.name);
        }
        scheduleNext();
      }, delay);
      timer.unref();
      this.timers.set(job.name, timer);
    };
    scheduleNext();
  }

  /** Whether a job of this name is scheduled. */
  isScheduled(name: string): boolean {
    return this.timers.has(name);
  }

  /**
   * Unschedules the job (its room went away or changed): no tick starts after this call; resolves once its
   * tick in flight, if any, has finished. Unknown names are ignored.
   */
  async stopJob(name: string): Promise<void> {
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
    await Promise.allSettled([...this.running].filter(([, job]) => job === name).map(([run]) => run));
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
      // Which node ran which tick, at --log-level debug (test/distributed/jobs.test.ts reads it).
      this.deps.log.debug({ job: job.name, tick }, 'job tick ran');
      return true;
    } catch (error) {
      this.deps.onRun?.(job.name, 'failed');
      this.deps.log.error({ err: error, job: job.name }, 'job tick failed');
      return false;
    }
  }

  /** Unschedules every job and waits for the ticks in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.allSettled([...this.running.keys()]);
  }
}
