// The request metrics step alone: it counts every answer made after it — by a later edge step at once, by the
// last handler or Fastify when the response finishes — under the route its answerer named, times all but the
// polls answered from memory, and counts nothing nobody named.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { edgeChain, type EdgeStep } from '../../../src/http/edge/edge-chain.ts';
import { answeredFor, RequestMetricsStep, routeLabel } from '../../../src/http/edge/request-metrics.ts';
import { Metrics } from '../../../src/observability/metrics.ts';
import { rawRequest, serveRaw, type RawServer } from '../../support/raw-http.ts';

/** Counts of anteroom_http_requests_total and of the latency histogram, by "route method status" / "route method". */
async function counted(metrics: Metrics): Promise<{ requests: Record<string, number>; timed: Record<string, number> }> {
  const requests: Record<string, number> = {};
  for (const v of (await metrics.requests.get()).values) requests[`${v.labels.route} ${v.labels.method} ${v.labels.status}`] = v.value;
  const timed: Record<string, number> = {};
  for (const v of (await metrics.latency.get()).values) {
    if (v.metricName?.endsWith('_count')) timed[`${v.labels.route} ${v.labels.method}`] = v.value;
  }
  return { requests, timed };
}

describe('request metrics step', () => {
  const metrics = new Metrics({ defaultMetrics: false });
  let server: RawServer;
  /**
   * Responses the last handler answers, once finished on the server. The step counts them on 'finish'; these
   * promises settle after every 'finish' listener has run. (Edge answers are counted before the chain returns.)
   */
  let finished: Promise<unknown>[] = [];

  // A later edge step that answers /refused (as the API key step does) and /polled (as the fast path does).
  const answering: EdgeStep = {
    name: 'answers some',
    handle(req, res, next) {
      if (req.url === '/refused') answeredFor(res, routeLabel('/refused'));
      else if (req.url === '/polled') answeredFor(res, { route: '/polled', fromMemory: true });
      else return next(req, res);
      res.statusCode = req.url === '/refused' ? 403 : 200;
      res.end();
    },
  };

  before(async () => {
    server = await serveRaw(
      edgeChain([new RequestMetricsStep(metrics), answering], (req, res) => {
        finished.push(once(res, 'finish'));
        // The last handler answers later, as Fastify does; /anonymous names no route.
        setImmediate(() => {
          if (req.url !== '/anonymous') answeredFor(res, routeLabel('/late'));
          res.statusCode = 201;
          res.end();
        });
      }),
    );
  });
  after(() => server.close());

  async function send(method: string, target: string) {
    await rawRequest(server.port, method, target);
    await Promise.all(finished);
    finished = [];
  }

  it('counts and times an answer made by a later edge step, under the route it named', async () => {
    await send('GET', '/refused');
    await send('POST', '/refused');
    const { requests, timed } = await counted(metrics);
    assert.equal(requests['/refused GET 403'], 1);
    assert.equal(requests['/refused POST 403'], 1);
    assert.equal(timed['/refused GET'], 1);
  });

  it('counts and times an answer the last handler makes later, when it finishes', async () => {
    await send('PUT', '/whatever?x=1');
    const { requests, timed } = await counted(metrics);
    assert.equal(requests['/late PUT 201'], 1);
    assert.equal(timed['/late PUT'], 1);
  });

  it('counts a poll answered from memory (GET 200), without timing it', async () => {
    await send('GET', '/polled');
    await send('GET', '/polled');
    const { requests, timed } = await counted(metrics);
    assert.equal(requests['/polled GET 200'], 2);
    assert.equal(timed['/polled GET'], undefined);
  });

  it('counts nothing for an answer whose route nobody named', async () => {
    const before = await counted(metrics);
    await send('GET', '/anonymous');
    assert.deepEqual(await counted(metrics), before);
  });
});

describe('request metrics step in front of Fastify', () => {
  const metrics = new Metrics({ defaultMetrics: false });
  const step = new RequestMetricsStep(metrics);
  let app: FastifyInstance;
  let port: number;
  const finished: Promise<unknown>[] = [];

  before(async () => {
    app = Fastify({
      serverFactory: (handler) =>
        createServer(
          edgeChain([step], (req, res) => {
            handler(req, res);
            finished.push(once(res, 'finish'));
          }),
        ),
    });
    step.labelFastifyRoutes(app);
    app.get('/items/:id', async () => ({ ok: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  after(() => app.close());

  it("counts Fastify's answers under Fastify's route URL, and a 404 as 'unmatched'", async () => {
    assert.equal((await rawRequest(port, 'GET', '/items/1')).status, 200);
    assert.equal((await rawRequest(port, 'GET', '/items/2')).status, 200);
    assert.equal((await rawRequest(port, 'GET', '/nothing-here')).status, 404);
    await Promise.all(finished);
    const { requests, timed } = await counted(metrics);
    assert.deepEqual(requests, { '/items/:id GET 200': 2, 'unmatched GET 404': 1 });
    assert.deepEqual(timed, { '/items/:id GET': 2, 'unmatched GET': 1 });
  });
});
