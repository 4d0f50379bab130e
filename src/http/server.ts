// Builds the HTTP server: the edge chain at the node:http level (request metrics, the public API key, the
// polling fast path), then Fastify: public API at the root, private API under its base path, health and
// metrics. One error handler renders every failure as an error of the catalogue (src/domain/errors.ts), with
// its status and {"error": message} body; no stack trace or internal message ever reaches a client. A 5xx is
// logged with the catalogue's code of the answer (`code`), the one operators search for.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import { ContractError, Errors } from '../domain/errors.ts';
import { RoomSettingsError } from '../domain/room-settings-problems.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import type { SseSink } from '../events/sse-sink.ts';
import type { Metrics } from '../observability/metrics.ts';
import { StoreUnavailableError } from '../domain/ports/store.ts';
import { secretMatcher } from './auth/constant-time.ts';
import { privateAuthHook, type PrivateCredentials } from './auth/private-auth.ts';
import { clientErrorHandler } from './client-errors.ts';
import { ApiKeyStep } from './edge/api-key.ts';
import { DrainStep } from './edge/drain.ts';
import { edgeChain } from './edge/edge-chain.ts';
import { RequestMetricsStep } from './edge/request-metrics.ts';
import { RouteScope } from './edge/route-scope.ts';
import { fastPollStep } from './fast-poll.ts';
import { fastClaimStep, preReadBody } from './fast-claim.ts';
import { counterStreamRoute, type CounterStreams } from './counter-stream.ts';
import { acceptAnyContentType, parseJsonBody } from './json-body.ts';
import { auditHooks } from './audit.ts';
import { mountOpenApiRoute, registerOpenApi } from './openapi.ts';
import { privateRoutes } from './private-routes.ts';
import type { MountOptions } from './route-table.ts';
import { publicRoutes } from './public-routes.ts';

export interface HttpServerOptions {
  room: WaitingRoom;
  sse: SseSink;
  /** The public counter streams (GET /stream); absent where answers cannot stream (API Gateway). */
  streams?: CounterStreams | undefined;
  metrics: Metrics;
  credentials: PrivateCredentials;
  /** When set, GET /metrics requires `Authorization: Bearer <this>` (--metrics-token). */
  metricsToken?: string | undefined;
  /** When set, every public request must carry x-api-key with this value. */
  publicApiKey?: string | undefined;
  /** max-age of the polling endpoints, 0–5 s. */
  pollTtl: number;
  /** Public writes (joins, claims, leaves, challenges) one client may make a minute, all nodes; 0 or absent: no limit. */
  writesPerClientPerMinute?: number | undefined;
  privateBasePath: string;
  logLevel?: string;
  /** Where log lines go; standard output when absent. */
  logStream?: DestinationStream | undefined;
  /** Log one line per request (off by default: the polling path is hot). */
  logRequests?: boolean;
  clockMs?: () => number;
  /**
   * --trust-proxy: Fastify's trustProxy — which proxies in front are trusted to name the client (X-Forwarded-*):
   * true, a hop count, or IPs/CIDRs/named ranges. Default: none, the client is the peer address. Per-client
   * limits and the gate's bypass rules key on it.
   */
  trustProxy?: boolean | number | string[] | undefined;
  /** Extra routes mounted by other parts (web pages, OIDC, inlet endpoints). */
  plugins?: ((app: FastifyInstance) => Promise<void> | void)[];
  /** Extra routes under the private base path, behind its authentication (e.g. the MaxSize inlet). */
  privatePlugins?: ((scope: FastifyInstance, mount: MountOptions) => Promise<void> | void)[];
  /** Open connections at most; more are refused (closed at once). Default DEFAULT_MAX_CONNECTIONS. */
  maxConnections?: number | undefined;
}

/** Connection limits (docs/operations.md, "Connections and timeouts"). */
export const DEFAULT_MAX_CONNECTIONS = 200_000;
/** The request line and headers must arrive within this (Node's default is 60 s). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** The whole request, body included, must arrive within this (Node's default is 300 s). */
export const REQUEST_TIMEOUT_MS = 30_000;
/** An idle kept-alive connection is closed after this (Node's default). */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;

export const BODY_LIMIT = 16 * 1024;

/** Fastify's router options; the edge's RouteScope routes with the same ones. */
const ROUTER_OPTIONS = { maxParamLength: 200 };

export async function buildHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const clockMs = options.clockMs ?? Date.now;
  const requestMetrics = new RequestMetricsStep(options.metrics);
  // The routes that need the public API key: those the public scope mounts (collected below), but preflights.
  const publicScope = new RouteScope(ROUTER_OPTIONS);
  const drain = new DrainStep();
  const fastClaim = fastClaimStep({ room: options.room, writesLimited: (options.writesPerClientPerMinute ?? 0) > 0 });
  const app = Fastify({
    // Every request goes through the edge chain, whose steps run in this order; what no step answers goes to
    // Fastify's handler. A concern that must hold for every answer, fast path and Fastify alike (a rate
    // limit, proof of work, analytics), is one more line in this list, before the fast path.
    serverFactory: (handler) => {
      const server = createServer(
        { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS },
        edgeChain(
          [
            requestMetrics, // first: it counts every answer, those of the steps below included
            drain, // on shutdown: 503 + Retry-After in the contract's shape, Connection: close
            options.publicApiKey ? new ApiKeyStep(options.publicApiKey, publicScope) : undefined,
            fastPollStep({ room: options.room, pollTtl: options.pollTtl }), // polls answered from memory
            fastClaim, // last: re-claims answered from memory
          ],
          handler,
        ),
      );
      server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
      return server;
    },
    // Malformed HTTP: the contract's error shape, counted in /metrics, never logged (see client-errors.ts).
    clientErrorHandler: clientErrorHandler(options.metrics),
    logger: {
      level: options.logLevel ?? 'info',
      redact: {
        paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-amz-security-token"]'],
        censor: '[redacted]',
      },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    // Per-request lines come from our onResponse hook, only when asked for (the polling path is hot).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    // A hop count works at run time (proxy-addr) though Fastify's types leave numbers out.
    trustProxy: (options.trustProxy ?? false) as boolean | string[],
    genReqId: () => randomUUID(),
    // The drain step answers new requests during shutdown (Fastify's own 503 has neither the contract's
    // shape nor Retry-After).
    return503OnClosing: false,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: true } },
    routerOptions: ROUTER_OPTIONS,
    // Malformed URLs and the like, rejected before routing.
    frameworkErrors: (_error, _request, reply) => {
      void sendContractError(reply as FastifyReply, Errors.badRequest());
    },
  });

  // Before any route: the OpenAPI document is made from the schemas of the routes registered after this.
  await registerOpenApi(app, { privateBasePath: options.privateBasePath, publicApiKey: options.publicApiKey !== undefined });
  acceptAnyContentType(app);
  // A claim's body the fast path read but left to Fastify (fast-claim.ts) is parsed from what it read.
  if (fastClaim) app.addHook('preParsing', preReadBody);
  // CORS and Cache-Control headers are set where each answer is made (route handlers, preflights and the
  // error handler) rather than in global hooks: the polling path is hot.
  // Fastify's answers are counted by the edge's request metrics, under the route Fastify names here.
  requestMetrics.labelFastifyRoutes(app);
  const logRequests = options.logRequests ?? false;
  app.addHook('onResponse', (request, reply, done) => {
    if (logRequests || reply.statusCode >= 500) {
      const route = request.routeOptions.url ?? 'unmatched';
      request.log.info(
        { method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
        'request',
      );
    }
    done();
  });

  // Event streams never end by themselves: end them when the server starts closing, or closing would wait for
  // every subscriber (a control panel left open) forever.
  app.addHook('preClose', async () => {
    await options.sse.close();
    await options.streams?.close();
    // Stop accepting connections, answer what is in flight, close the connections (see edge/drain.ts).
    await drain.closeGracefully(app.server);
  });
  app.addHook('onSend', async (_request, reply) => {
    if (drain.draining) reply.header('connection', 'close');
  });

  app.setErrorHandler((error: FastifyError, request, reply) => renderError(error, request, reply));
  app.setNotFoundHandler(async () => {
    throw Errors.notFound();
  });

  // Operations endpoints: never behind the API key or credentials (probes and scrapers call them). Never
  // cacheable either (spec: everything else is no-store): a CDN must not answer a probe from its cache.
  app.get('/healthz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });
  app.get('/readyz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      await options.room.reports.checkStore();
      return { status: 'ready', store: options.room.reports.storeDescription };
    } catch {
      reply.code(503).header('retry-after', '1');
      return { status: 'unavailable', store: options.room.reports.storeDescription };
    }
  });
  const metricsToken = options.metricsToken ? secretMatcher(options.metricsToken) : undefined;
  app.get('/metrics', async (request, reply) => {
    if (metricsToken) {
      const given = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      if (!given || !metricsToken(given)) {
        options.metrics.authFailures.inc({ api: 'metrics' });
        throw given ? Errors.forbidden() : Errors.missingAuthenticationToken();
      }
    }
    reply.header('content-type', options.metrics.registry.contentType).header('cache-control', 'no-store');
    return options.metrics.registry.metrics();
  });

  mountOpenApiRoute(app);

  await app.register(async (scope) => {
    // The edge's API key step guards exactly these routes (CORS preflights excepted).
    publicScope.collect(scope, { methods: ['OPTIONS'] });
    const writesPerMinute = options.writesPerClientPerMinute ?? 0;
    if (writesPerMinute > 0) {
      // Every public write, before its body is read: a client over its limit costs one counter and a 429.
      scope.addHook('onRequest', async (request) => {
        if (request.method === 'POST' || request.routeOptions.url === '/challenge') {
          await options.room.queue.limitPublicWrite(request.ip, writesPerMinute);
        }
      });
    }
    publicRoutes(scope, options.room, { parseBody: parseJsonBody, pollTtl: options.pollTtl });
    if (options.streams) counterStreamRoute(scope, options.room, options.streams);
  });

  await app.register(
    async (privateScope) => {
      // Authenticate before the body is parsed: an unauthenticated caller learns nothing about its body.
      privateScope.addHook('preValidation', privateAuthHook(options.credentials, clockMs));
      auditHooks(privateScope, options.room, options.metrics);
      const mount = { parseBody: parseJsonBody, pollTtl: options.pollTtl };
      privateRoutes(privateScope, options.room, options.sse, mount);
      for (const plugin of options.privatePlugins ?? []) await plugin(privateScope, mount);
    },
    { prefix: options.privateBasePath },
  );

  for (const plugin of options.plugins ?? []) await app.register(async (scope) => plugin(scope));
  return app;
}

/**
 * While the store is down every request fails the same way: log that once a second with a count, not once
 * per request (a polling crowd would flood the logs).
 */
const unavailableLog = { lastMs: 0, suppressed: 0 };

function logFailure(error: FastifyError, answer: ContractError, request: FastifyRequest): void {
  if (!(error instanceof StoreUnavailableError)) {
    request.log.error({ code: answer.code, err: error }, 'request failed');
    return;
  }
  const now = Date.now();
  if (now - unavailableLog.lastMs < 1000) {
    unavailableLog.suppressed++;
    return;
  }
  request.log.error(
    { code: answer.code, err: error.message, similar_since_last: unavailableLog.suppressed },
    'store unavailable',
  );
  unavailableLog.lastMs = now;
  unavailableLog.suppressed = 0;
}

function renderError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const answer = toContractError(error, request);
  if (answer.status >= 500) logFailure(error, answer, request);
  return sendContractError(reply, answer);
}

function sendContractError(reply: FastifyReply, answer: ContractError) {
  reply
    .code(answer.status)
    .headers(answer.headers)
    .header('access-control-allow-origin', '*')
    .header('cache-control', 'no-store');
  // A room's settings refused: every problem too, each naming its field (src/domain/room-settings-problems.ts).
  if (answer instanceof RoomSettingsError) return reply.send({ error: answer.message, problems: answer.problems });
  return reply.send({ error: answer.message });
}

function toContractError(error: FastifyError, request: FastifyRequest): ContractError {
  if (error instanceof ContractError) return error;
  if (error instanceof StoreUnavailableError) return Errors.storeUnavailable();
  if (error.validation) {
    if (error.validationContext !== 'querystring') return Errors.invalidRequestBody();
    const missing = error.validation
      .filter((e) => e.keyword === 'required')
      .map((e) => String((e.params as { missingProperty?: string }).missingProperty));
    if (missing.length > 0) return Errors.missingParameters(missing);
    return (request.routeOptions.config?.invalidQuery ?? Errors.invalidRequestBody)();
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return Errors.payloadTooLarge();
  const status = error.statusCode ?? 500;
  if (status === 400) return Errors.badRequest();
  if (status === 415) return Errors.unsupportedMediaType();
  if (status > 400 && status < 500) return Errors.frameworkClientError(status);
  if (status === 503) return Errors.shuttingDown();
  return Errors.internal();
}
