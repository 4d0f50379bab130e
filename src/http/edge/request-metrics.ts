// Edge step: counts every answered request in anteroom_http_requests_total and times it in
// anteroom_http_request_duration_seconds, whoever answered it — a later edge step (a refused API key), the
// polling fast path or Fastify. It is the chain's first step so that it sees all of them.
//
// The metrics are labelled by route, and only the one who answers knows the route: Fastify's route URL
// ('unmatched' for a 404), which the edge cannot work out by itself. So whoever answers names the route with
// `answeredFor` (Fastify through the hook `labelFastifyRoutes` adds). An answer nobody named is not counted;
// those are the ones Fastify makes before any hook runs (a request target it cannot parse, a 503 while
// closing), which were never counted.
//
// An answer made at the edge (the fast path, a refusal) is complete when the rest of the chain returns, and is
// counted there and then: no timestamp or listener is added to the response, only its label. One that Fastify
// makes later is counted when the response finishes, by a listener that is the same function for every
// response (no closure per request).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../observability/metrics.ts';
import type { EdgeHandler, EdgeStep } from './edge-chain.ts';

/** The route an answer is counted under. */
export interface AnswerLabel {
  /** Fastify's route URL, e.g. '/serving_num'; 'unmatched' for a 404. */
  readonly route: string;
  /**
   * A poll answered 200 from memory by the fast path: counted (in plain integers, added at scrape time), not
   * timed — it never reaches Fastify, and its time would only say how long reading a counter takes.
   */
  readonly fromMemory: boolean;
  /** The method an answer from memory is counted under (default GET: the polls). */
  readonly method?: string;
}

const STARTED_AT = Symbol('anteroom.edge.startedAt');
const ANSWERED_FOR = Symbol('anteroom.edge.answeredFor');

interface ObservedResponse extends ServerResponse {
  [STARTED_AT]?: number;
  [ANSWERED_FOR]?: AnswerLabel;
}

/** Names the route `res` answers for; called by whoever answers, before the response finishes. */
export function answeredFor(res: ServerResponse, label: AnswerLabel): void {
  (res as ObservedResponse)[ANSWERED_FOR] = label;
}

const routeLabels = new Map<string, AnswerLabel>();

/** The label of an answer for `route` (one per route URL, made once: the routes are a fixed set). */
export function routeLabel(route: string): AnswerLabel {
  let label = routeLabels.get(route);
  if (!label) {
    label = { route, fromMemory: false };
    routeLabels.set(route, label);
  }
  return label;
}

export class RequestMetricsStep implements EdgeStep {
  readonly name = 'request metrics';
  private readonly metrics: Metrics;
  /** The 'finish' listener: one function for every response (`this` is the response). */
  private readonly countFinished: (this: ServerResponse) => void;

  constructor(metrics: Metrics) {
    this.metrics = metrics;
    this.countFinished = function (this: ServerResponse) {
      countAnswer(metrics, this as ObservedResponse, (this as ObservedResponse)[STARTED_AT] as number);
    };
  }

  handle(req: IncomingMessage, res: ServerResponse, next: EdgeHandler): void {
    const startedAt = performance.now();
    next(req, res);
    if (res.writableEnded) {
      countAnswer(this.metrics, res as ObservedResponse, startedAt);
      return;
    }
    (res as ObservedResponse)[STARTED_AT] = startedAt;
    res.on('finish', this.countFinished);
  }

  /** Makes every Fastify answer name its route (Fastify's route URL, 'unmatched' for a 404). */
  labelFastifyRoutes(app: FastifyInstance): void {
    app.addHook('onRequest', (request, reply, done) => {
      answeredFor(reply.raw, routeLabel(request.routeOptions.url ?? 'unmatched'));
      done();
    });
  }
}

function countAnswer(metrics: Metrics, res: ObservedResponse, startedAt: number): void {
  const label = res[ANSWERED_FOR];
  if (label === undefined) return;
  if (label.fromMemory) {
    metrics.countFastPoll(label.route, label.method);
    return;
  }
  const elapsedMs = performance.now() - startedAt;
  metrics.observeRequest(label.route, res.req.method as string, res.statusCode, elapsedMs);
}
