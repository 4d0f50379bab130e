// What the server says about itself, read once a second on the set-up connections (never queued behind the
// visitors): its own waiting count (/waiting_num) and, when it publishes Prometheus metrics at /metrics (an
// Anteroom node does), its CPU use. Next to the load generator's event-loop load the CPU tells an operator
// which side limited the run; a target without /metrics simply has no CPU figure.

import type { ApiClient } from './http-client.ts';
import { parseJson } from './http-client.ts';

const CPU_SECONDS = /^(?:[a-zA-Z_:][\w:]*_)?process_cpu_seconds_total(?:\{[^}]*\})?\s+([0-9.eE+-]+)\s*$/m;

/** Total CPU seconds from a Prometheus text exposition, or null. */
export function cpuSecondsFrom(text: string): number | null {
  const m = CPU_SECONDS.exec(text);
  const value = m ? Number(m[1]) : NaN;
  return Number.isFinite(value) ? value : null;
}

/** A /serving_num answer: the counter was at most `value` at `sentAt` and at least `value` at `receivedAt`. */
export type ServingObserver = (sentAt: number, receivedAt: number, value: number) => void;

export class ServerObserver {
  /** Last /waiting_num answer, null before the first. */
  waitingNum: number | null = null;
  /** CPU seconds per second over the last interval (1 = one core busy); null without /metrics. */
  cpu: number | null = null;
  private hasMetrics = true;
  private last: { t: number; cpu: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly api: ApiClient;
  private readonly waitingPath: string;
  private readonly servingPath: string;
  private readonly onServing: ServingObserver | null;

  /** `onServing`: also read /serving_num each interval and report it (the counter's bounds when nobody polls). */
  constructor(api: ApiClient, eventId: string, onServing: ServingObserver | null = null) {
    this.api = api;
    this.waitingPath = `/waiting_num?event_id=${encodeURIComponent(eventId)}`;
    this.servingPath = `/serving_num?event_id=${encodeURIComponent(eventId)}`;
    this.onServing = onServing;
  }

  /** First readings (so the first second has a baseline), then one per interval. */
  async start(intervalMs = 1000): Promise<void> {
    await this.read();
    this.timer = setInterval(() => void this.read(), intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async read(): Promise<void> {
    await Promise.all([this.readWaiting(), this.onServing ? this.readServing() : undefined, this.hasMetrics ? this.readCpu() : undefined]);
  }

  private async readServing(): Promise<void> {
    const reply = await this.api.get(this.servingPath);
    const n = reply.status === 200 ? Number((parseJson(reply.body) as { serving_counter?: unknown } | null)?.serving_counter) : NaN;
    if (Number.isFinite(n)) this.onServing?.(reply.sentAt, reply.receivedAt, n);
  }

  private async readWaiting(): Promise<void> {
    const reply = await this.api.get(this.waitingPath);
    const n = reply.status === 200 ? Number((parseJson(reply.body) as { waiting_num?: unknown } | null)?.waiting_num) : NaN;
    if (Number.isFinite(n)) this.waitingNum = n;
  }

  private async readCpu(): Promise<void> {
    const reply = await this.api.get('/metrics');
    const cpu = reply.status === 200 ? cpuSecondsFrom(reply.body) : null;
    if (cpu === null) {
      // No Prometheus CPU counter on the first try: this target has none; stop asking.
      if (this.last === null) this.hasMetrics = false;
      return;
    }
    const t = reply.receivedAt;
    if (this.last && t > this.last.t) this.cpu = Math.max(0, (cpu - this.last.cpu) / ((t - this.last.t) / 1000));
    this.last = { t, cpu };
  }
}
