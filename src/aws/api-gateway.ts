// API Gateway (REST API, Lambda proxy integration) in front of Anteroom's own HTTP layer: the event is replayed
// into the same Fastify routes every node serves (src/http: validation, contract errors, CORS, Cache-Control)
// with Fastify's inject, and the answer is returned in the proxy result shape. One contract, one mapper: the
// Lambda functions do not restate any rule of the API.

import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { FastifyInstance } from 'fastify';
import { Errors } from '../domain/errors.ts';
import { buildHttpServer } from '../http/server.ts';
import { SseSink } from '../events/sse-sink.ts';
import { Metrics } from '../observability/metrics.ts';
import { ALLOWED_HEADERS } from '../http/route-table.ts';
import type { AwsRuntime } from './runtime.ts';

/** Extra public routes for the app (e.g. the OpenID Connect adapter's), as `plugins` of the HTTP server. */
type PublicPlugins = NonNullable<Parameters<typeof buildHttpServer>[0]['plugins']>;

/** The base path of the private routes inside the Fastify app (API Gateway serves them at its root). */
const PRIVATE_BASE_PATH = '/private';

export interface HttpApp {
  app: FastifyInstance;
  /** Headers added to every replayed request (the private API's in-process credential). */
  extraHeaders: Record<string, string>;
  pathPrefix: string;
}

/**
 * The public API app: its private routes exist (they are part of the shared server) but no credential can
 * open them, so a public request can never reach one.
 */
export async function publicHttpApp(runtime: AwsRuntime, plugins: PublicPlugins = []): Promise<HttpApp> {
  const app = await buildApp(runtime, {}, plugins);
  return { app, extraHeaders: {}, pathPrefix: '' };
}

/**
 * The private API app. API Gateway has already authenticated the caller with IAM (SigV4, checked by AWS
 * against the caller's own policy), and the function cannot check that signature again (it does not know the
 * caller's secret key). So the replayed request carries a credential made up by this execution environment,
 * in memory only, that the shared private-route authentication accepts; the caller's own Authorization
 * header is replaced and never reaches the routes.
 */
export async function privateHttpApp(runtime: AwsRuntime): Promise<HttpApp> {
  const token = randomBytes(32).toString('base64url');
  const app = await buildApp(runtime, { adminToken: token });
  return { app, extraHeaders: { authorization: `Bearer ${token}` }, pathPrefix: PRIVATE_BASE_PATH };
}

async function buildApp(
  runtime: AwsRuntime,
  credentials: { adminToken?: string },
  plugins: PublicPlugins = [],
): Promise<FastifyInstance> {
  const app = await buildHttpServer({
    room: runtime.room,
    sse: new SseSink(),
    metrics: new Metrics({ defaultMetrics: false }),
    credentials,
    pollTtl: runtime.config.pollTtl,
    privateBasePath: PRIVATE_BASE_PATH,
    logLevel: runtime.config.logLevel,
    clockMs: runtime.clock,
    plugins,
  });
  await app.ready();
  return app;
}

/** The request path: the resource template when it is a fixed path (no custom-domain base path in it). */
function requestPath(event: APIGatewayProxyEvent): string {
  return event.resource && !event.resource.includes('{') ? event.resource : event.path;
}

function queryString(event: APIGatewayProxyEvent): string {
  const params = new URLSearchParams();
  if (event.multiValueQueryStringParameters) {
    for (const [key, values] of Object.entries(event.multiValueQueryStringParameters)) {
      for (const value of values ?? []) params.append(key, value);
    }
  } else if (event.queryStringParameters) {
    for (const [key, value] of Object.entries(event.queryStringParameters)) {
      if (value !== undefined) params.append(key, value);
    }
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

function requestHeaders(event: APIGatewayProxyEvent, extra: Record<string, string>): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  if (event.multiValueHeaders) {
    for (const [name, values] of Object.entries(event.multiValueHeaders)) {
      if (values && values.length > 0) headers[name.toLowerCase()] = values.length === 1 ? (values[0] as string) : values;
    }
  }
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined && headers[name.toLowerCase()] === undefined) headers[name.toLowerCase()] = value;
  }
  // Recomputed by the replay from the body actually passed.
  delete headers['content-length'];
  return { ...headers, ...extra };
}

/** Replays one API Gateway proxy event into the app and returns API Gateway's proxy result. */
export async function invokeHttpApp(http: HttpApp, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const body = event.body == null ? undefined : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  const reply = await http.app.inject({
    method: event.httpMethod as 'GET',
    url: `${http.pathPrefix}${requestPath(event)}${queryString(event)}`,
    headers: requestHeaders(event, http.extraHeaders),
    ...(body ? { payload: body } : {}),
    remoteAddress: event.requestContext?.identity?.sourceIp ?? '127.0.0.1',
  });
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(reply.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) multiValueHeaders[name] = value.map(String);
    else headers[name] = String(value);
  }
  return {
    statusCode: reply.statusCode,
    headers,
    ...(Object.keys(multiValueHeaders).length > 0 ? { multiValueHeaders } : {}),
    body: reply.body,
    isBase64Encoded: false,
  };
}

/** The answer when the execution environment cannot even start (e.g. Redis unreachable at cold start). */
export function unavailableResult(): APIGatewayProxyResult {
  const unavailable = Errors.storeUnavailable();
  return {
    statusCode: unavailable.status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'access-control-allow-origin': '*',
      'access-control-allow-headers': ALLOWED_HEADERS,
      'cache-control': 'no-store',
      ...unavailable.headers,
    },
    body: JSON.stringify({ error: unavailable.message }),
    isBase64Encoded: false,
  };
}

/** A proxy handler over a lazily built runtime and app; events are delivered before it returns. */
export function proxyHandler(
  runtime: () => Promise<AwsRuntime>,
  makeApp: (runtime: AwsRuntime) => Promise<HttpApp>,
): (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult> {
  let app: Promise<HttpApp> | undefined;
  return async (event) => {
    let rt: AwsRuntime;
    let http: HttpApp;
    try {
      rt = await runtime();
      await rt.followRooms();
      app ??= makeApp(rt);
      http = await app;
    } catch (error) {
      app = undefined;
      console.error('Anteroom could not start', error);
      return unavailableResult();
    }
    const result = await invokeHttpApp(http, event);
    await rt.flush();
    return result;
  };
}
