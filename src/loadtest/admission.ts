// The admission driver: moves the event's serving counter through the private API at the admit rate, as an
// inlet strategy would. Admissions accrue like a token bucket (at most one second's worth in one step) and
// never take the counter past the highest position a visitor holds, so an idle queue does not bank
// capacity without bound. One call at a time: each answer tells the counter's true value.
// It is load, not a rule of the server: it runs in the load tester's process, and the server sees its calls
// as manual increments, which go through the server's admission (src/domain/admission/) like any other.

import { PrivateApiError, type PrivateApiClient } from '../client/private-api-client.ts';
import { parseJson } from './http-client.ts';
import type { IncrementRecord } from './records.ts';
import type { RunStats } from './stats.ts';
import type { TimerWheel } from './timer-wheel.ts';

export interface AdmissionDeps {
  privateApi: PrivateApiClient;
  /** Also the clock of the increments' sentAt/receivedAt (the run's time origin, like every reply's). */
  wheel: TimerWheel;
  stats: RunStats;
  eventId: string;
  admitRate: number;
  /** The counter before the run (read from /serving_num). */
  initialServing: number;
  tickMs?: number;
}

export class AdmissionDriver {
  /** The counter as last answered by the server. */
  counter: number;
  highestPosition = 0;
  readonly increments: IncrementRecord[] = [];
  private allowance = 0;
  private lastTick = 0;
  private inFlight = false;
  private stopped = false;
  private readonly deps: AdmissionDeps;
  private readonly tickMs: number;

  constructor(deps: AdmissionDeps) {
    this.deps = deps;
    this.counter = deps.initialServing;
    this.tickMs = deps.tickMs ?? 100;
  }

  notePosition(position: number): void {
    if (position > this.highestPosition) this.highestPosition = position;
  }

  start(): void {
    this.lastTick = this.deps.wheel.now();
    this.deps.wheel.after(this.tickMs, this.tick);
  }

  stop(): void {
    this.stopped = true;
  }

  private readonly tick = (): void => {
    if (this.stopped) return;
    const now = this.deps.wheel.now();
    const burst = Math.max(1, this.deps.admitRate);
    this.allowance = Math.min(burst, this.allowance + (this.deps.admitRate * (now - this.lastTick)) / 1000);
    this.lastTick = now;
    const by = Math.min(Math.floor(this.allowance), this.highestPosition - this.counter);
    if (!this.inFlight && by > 0) void this.increment(by);
    this.deps.wheel.after(this.tickMs, this.tick);
  };

  private async increment(by: number): Promise<void> {
    this.inFlight = true;
    const reply = await this.send(by);
    this.deps.stats.record('increment_serving_counter', reply.status, reply.receivedAt - reply.sentAt);
    const serving = reply.status === 200 ? (parseJson(reply.body) as { serving_num?: unknown } | null)?.serving_num : undefined;
    const answered = typeof serving === 'number' || (typeof serving === 'string' && serving !== '');
    this.increments.push({
      sentAt: reply.sentAt,
      receivedAt: reply.status === 0 ? NaN : reply.receivedAt,
      by,
      status: reply.status,
      servingAfter: answered ? Number(serving) : null,
    });
    if (answered) {
      this.counter = Number(serving);
      this.allowance -= by;
    }
    this.inFlight = false;
  }

  /** The increment's answer; status 0 when there was none (network, timeout, the run's end), as for every reply. */
  private async send(by: number): Promise<{ status: number; body: string; sentAt: number; receivedAt: number }> {
    const sentAt = this.deps.wheel.now();
    let status = 0;
    let body = '';
    try {
      const response = await this.deps.privateApi.send('POST', '/increment_serving_counter', { event_id: this.deps.eventId, increment_by: by });
      status = response.status;
      try {
        body = await response.text();
      } catch {
        // The answer broke off: the increment may have been applied, but no counter came back.
        status = 0;
      }
    } catch (error) {
      if (!(error instanceof PrivateApiError)) throw error;
    }
    return { status, body, sentAt, receivedAt: this.deps.wheel.now() };
  }
}
