// Prometheus metrics (served at /metrics). Requests by route and status are the equivalent of VWR's
// 4xx/5xx CloudWatch alarms; per-event gauges are read from the store when scraped, not on the hot path.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import { watchPresence } from './presence-metrics.ts';

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'method' | 'status'>;
  /** Answers from memory by method and route, added to the requests counter at scrape time (countFastPoll). */
  private readonly fastPolls = new Map<string, Map<string, number>>();
  readonly latency: Histogram<'route' | 'method'>;
  readonly jobRuns: Counter<'job' | 'outcome'>;
  readonly joinBatchSize: Histogram;
  readonly webhookDeliveries: Counter<'outcome'>;
  /** What the bot defence did (docs/bots.md): challenges issued, solved, failed (missing, invalid, replayed), joins and writes refused by limits, enqueue keys refused. */
  readonly botDefence: Counter<'outcome' | 'event_id'>;
  readonly authFailures: Counter<'api'>;
  readonly inletAdmitted: Counter<'event_id' | 'strategy'>;
  readonly inletDecisions: Counter<'event_id' | 'strategy' | 'outcome'>;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'anteroom_' });
    const fastPolls = this.fastPolls;
    this.requests = new Counter({
      name: 'anteroom_http_requests_total',
      help: 'HTTP requests answered, by route, method and status code',
      labelNames: ['route', 'method', 'status'],
      registers: [this.registry],
      // Polls answered by the fast path are counted in plain integers and added here, at scrape time.
      collect() {
        for (const [method, routes] of fastPolls) {
          for (const [route, n] of routes) {
            if (n > 0) this.inc({ route, method, status: '200' }, n);
            routes.set(route, 0);
          }
        }
      },
    });
    this.latency = new Histogram({
      name: 'anteroom_http_request_duration_seconds',
      help: 'Time to answer an HTTP request',
      labelNames: ['route', 'method'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    this.jobRuns = new Counter({
      name: 'anteroom_job_runs_total',
      help: 'Background job ticks run by this node, by job and outcome (ok, failed)',
      labelNames: ['job', 'outcome'],
      registers: [this.registry],
    });
    this.joinBatchSize = new Histogram({
      name: 'anteroom_join_batch_size',
      help: 'Joins committed together in one store operation (group commit)',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
      registers: [this.registry],
    });
    this.botDefence = new Counter({
      name: 'anteroom_bot_defence_total',
      help: 'Bot defence outcomes by room: challenge_issued, challenge_solved, challenge_missing, challenge_invalid, challenge_replayed, join_limited, write_limited (server-wide, event_id ""), enqueue_key_refused, parked (infinite queue), flood_detected (auto: the room\'s join rate tripped the flood detector)',
      labelNames: ['outcome', 'event_id'],
      registers: [this.registry],
    });
    this.webhookDeliveries = new Counter({
      name: 'anteroom_webhook_deliveries_total',
      help: 'Webhook deliveries by outcome (delivered, failed after retries, dropped from a full queue)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.authFailures = new Counter({
      name: 'anteroom_auth_failures_total',
      help: 'Requests refused for missing or wrong credentials (401/403), by API',
      labelNames: ['api'],
      registers: [this.registry],
    });
    this.inletAdmitted = new Counter({
      name: 'anteroom_inlet_admitted_total',
      help: 'Serving-counter increments made by inlet strategies in this node, by event and strategy',
      labelNames: ['event_id', 'strategy'],
      registers: [this.registry],
    });
    this.inletDecisions = new Counter({
      name: 'anteroom_inlet_decisions_total',
      help: 'Inlet ticks and reports by outcome (moved, paused, before_start, ended, no_capacity, nothing_reported)',
      labelNames: ['event_id', 'strategy', 'outcome'],
      registers: [this.registry],
    });
  }

  private readonly requestChildren = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();

  /**
   * Counts a 200 answered from memory by a fast path (a poll, a re-claim: src/http/fast-poll.ts, fast-claim.ts);
   * not in the latency histogram: it never reaches Fastify.
   */
  countFastPoll(route: string, method = 'GET'): void {
    let routes = this.fastPolls.get(method);
    if (!routes) this.fastPolls.set(method, (routes = new Map()));
    routes.set(route, (routes.get(route) ?? 0) + 1);
  }

  /** Counts one answered request; label children are cached because label hashing shows on the hot path. */
  observeRequest(route: string, method: string, status: number, elapsedMs: number): void {
    const key = `${route} ${method} ${status}`;
    let child = this.requestChildren.get(key);
    if (!child) {
      child = {
        count: this.requests.labels(route, method, String(status)),
        time: this.latency.labels(route, method),
      };
      this.requestChildren.set(key, child);
    }
    child.count.inc();
    child.time.observe(elapsedMs / 1000);
  }

  /** Per-event gauges, read from the store once per scrape (not on the request path). */
  watchEvents(room: Pick<WaitingRoom, 'queue' | 'reports' | 'rooms' | 'presence'>): void {
    const definitions = [
      ['queue', 'anteroom_queue_positions', 'Positions handed out'],
      ['serving', 'anteroom_serving_counter', 'Serving counter'],
      ['waiting', 'anteroom_waiting', 'Visitors waiting (queue - tokens - expired)'],
      ['activeTokens', 'anteroom_active_tokens', 'Tokens not expired whose session is open'],
      ['tokens', 'anteroom_tokens_issued', 'Token sets issued'],
      ['expired', 'anteroom_expired_positions', 'Positions that expired unclaimed'],
      ['completed', 'anteroom_sessions_completed', 'Sessions completed'],
      ['abandoned', 'anteroom_sessions_abandoned', 'Sessions abandoned'],
    ] as const;
    let scrape: Promise<void> | null = null;
    // Every gauge's collect shares one read of every event's counters per scrape.
    const readAll = (): Promise<void> => {
      scrape ??= (async () => {
        for (const eventId of room.rooms.roomIds()) {
          const [counters, prequeue] = await Promise.all([room.reports.counters(eventId), room.reports.prequeueNum(eventId)]);
          for (const [key, gauge] of gauges) gauge.set({ event_id: eventId }, counters[key]);
          prequeueGauge.set({ event_id: eventId }, prequeue);
        }
      })().finally(() => setImmediate(() => (scrape = null)));
      return scrape;
    };
    const gauges = definitions.map(
      ([key, name, help]) =>
        [key, new Gauge({ name, help, labelNames: ['event_id'], registers: [this.registry], collect: readAll })] as const,
    );
    // Not in anteroom_waiting (VWR's waiting_num): people in a drawing room's pre-queue, no position yet.
    const prequeueGauge = new Gauge({
      name: 'anteroom_prequeue_waiting',
      help: 'Visitors in the pre-queue waiting for the draw (no position yet; not counted in anteroom_waiting)',
      labelNames: ['event_id'],
      registers: [this.registry],
      collect: readAll,
    });
    watchPresence(this.registry, room);
    // The wait estimates on record (issue 16): how far the estimate given at the first lookup was from the wait.
    new Gauge({
      name: 'anteroom_wait_estimate_median_abs_error_seconds',
      help: 'Median |actual wait - middle of the estimated range| of the last 1000 admitted visitors given an estimate by this node',
      labelNames: ['event_id'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const eventId of room.rooms.roomIds()) {
          const accuracy = room.queue.estimates.accuracy(eventId);
          if (accuracy.median_abs_error_s !== null) this.set({ event_id: eventId }, accuracy.median_abs_error_s);
        }
      },
    });
    new Gauge({
      name: 'anteroom_wait_estimate_samples',
      help: 'Admitted visitors whose wait was compared with their estimate (the last 1000 at most)',
      labelNames: ['event_id'],
      registers: [this.registry],
      collect() {
        for (const eventId of room.rooms.roomIds()) this.set({ event_id: eventId }, room.queue.estimates.accuracy(eventId).samples);
      },
    });
  }
}
