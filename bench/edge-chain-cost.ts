// The edge chain's own cost on a poll, in-process: the fast poll step alone, then behind the request metrics
// step, then behind the API key step too. Requests and responses are real node:http objects with the socket
// writes stubbed out, so only the chain's code is timed. Prints the best of 40 batches per variant (the
// machine is noisy; the best batch is the one nothing else interrupted). Run: node bench/edge-chain-cost.ts

import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { Counters } from '../src/domain/ports/store.ts';
import type { WaitingRoom } from '../src/domain/services/waiting-room.ts';
import { ApiKeyStep } from '../src/http/edge/api-key.ts';
import { edgeChain, type EdgeHandler, type EdgeStep } from '../src/http/edge/edge-chain.ts';
import { RequestMetricsStep } from '../src/http/edge/request-metrics.ts';
import { RouteScope } from '../src/http/edge/route-scope.ts';
import { fastPollStep } from '../src/http/fast-poll.ts';
import { Metrics } from '../src/observability/metrics.ts';

const KEY = 'cdn-origin-key-0123456789';
const BATCH = 5000;
const BATCHES = 40;

const counters: Counters = { queue: 10, serving: 5, tokens: 1, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0 };
const room = { queue: { answersPollsFromMemory: true, countersInMemory: () => counters } } as unknown as WaitingRoom;
const fastPoll = fastPollStep({ room, pollTtl: 1 }) as EdgeStep;
const notAnswered: EdgeHandler = () => {
  throw new Error('the fast path did not answer');
};
const publicScope = new RouteScope({ maxParamLength: 200 });
for (const method of ['GET', 'HEAD']) publicScope.add(method, '/serving_num');

const variants: Record<string, EdgeHandler> = {
  'fast poll alone': edgeChain([fastPoll], notAnswered),
  '+ request metrics': edgeChain([new RequestMetricsStep(new Metrics({ defaultMetrics: false })), fastPoll], notAnswered),
  '+ request metrics + API key': edgeChain(
    [new RequestMetricsStep(new Metrics({ defaultMetrics: false })), new ApiKeyStep(KEY, publicScope), fastPoll],
    notAnswered,
  ),
};

function writeHeadStub(this: ServerResponse): ServerResponse {
  return this;
}
function endStub(this: ServerResponse): ServerResponse {
  (this as unknown as { finished: boolean }).finished = true; // what writableEnded reads
  return this;
}

function poll(): [IncomingMessage, ServerResponse] {
  const req = new IncomingMessage(new Socket());
  req.method = 'GET';
  req.url = '/serving_num?event_id=Sample';
  req.headers['x-api-key'] = KEY;
  const res = new ServerResponse(req);
  res.writeHead = writeHeadStub as ServerResponse['writeHead'];
  res.end = endStub as ServerResponse['end'];
  return [req, res];
}

const best: Record<string, number> = {};
for (let batch = 0; batch < BATCHES; batch++) {
  for (const [name, handler] of Object.entries(variants)) {
    const polls = Array.from({ length: BATCH }, poll);
    const start = process.hrtime.bigint();
    for (const [req, res] of polls) handler(req, res);
    const ns = Number(process.hrtime.bigint() - start) / BATCH;
    best[name] = Math.min(best[name] ?? Infinity, ns);
  }
}
for (const [name, ns] of Object.entries(best)) console.log(`${name.padEnd(30)} ${ns.toFixed(0).padStart(5)} ns per poll`);
