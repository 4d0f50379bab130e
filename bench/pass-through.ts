// The floor for a proxy in Node: bare pass-throughs, each passing every request to one origin over keep-alive
// connections, streaming both bodies, adding nothing (no X-Forwarded-*, no hooks). bench/gate.ts runs them
// side by side with the gate and nginx to find the cheapest well-kept way for Node to proxy. The variants:
//   undici-request     node:http server + undici Pool `request` (promise, body as a Readable, stream pipeline)
//   undici-stream      node:http server + undici Pool `stream` (the answer is written straight into the response)
//   undici-dispatch    node:http server + undici Pool `dispatch` with a handler writing into the response
//   undici-pipeline    node:http server + undici Pool `pipeline` (a Duplex: request body in, answer body out)
//   undici-pipelining  as undici-request, a Pool of 16 connections pipelining up to 8 requests each
//   node-agent         node:http server + node:http client with a keep-alive http.Agent (maxSockets 128)
//   reply-from-undici  Fastify + @fastify/reply-from, its default undici client (what the gate uses today)
//   reply-from-http    Fastify + @fastify/reply-from with `http: { agentOptions }` (node:http client instead)
//   http-proxy         Fastify + @fastify/http-proxy (reply-from on undici underneath), `upstream` set, nothing
//                      else: the library the gate is built on, bare (no WebSocket leg, no hooks, no cookies)
//   fastify-undici-stream  Fastify (one catch-all route, the reply hijacked) + undici Pool `stream`: what a gate
//                      that kept Fastify but passed requests with undici's cheapest call would start from
//
//   node bench/pass-through.ts <variant> <origin URL>     prints "listening <port>", stops on SIGTERM

import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import fastifyHttpProxy from '@fastify/http-proxy';
import fastifyReplyFrom from '@fastify/reply-from';
import Fastify from 'fastify';
import { Pool, type Dispatcher } from 'undici';

const [variant, origin] = process.argv.slice(2) as [string, string];
const originUrl = new URL(origin);

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The request's headers without the hop-by-hop ones. */
function forwardHeaders(req: IncomingMessage): IncomingHttpHeaders {
  const headers = { ...req.headers };
  delete headers.connection;
  delete headers['keep-alive'];
  delete headers['transfer-encoding'];
  return headers;
}

function answerHeaders(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out = { ...headers };
  delete out.connection;
  delete out['keep-alive'];
  delete out['transfer-encoding'];
  return out as Record<string, string | string[]>;
}

const hasBody = (req: IncomingMessage) => req.method !== 'GET' && req.method !== 'HEAD';

function failed(res: ServerResponse): void {
  if (!res.headersSent) res.writeHead(502).end();
  else res.destroy();
}

function undiciRequest(pool: Pool): Handler {
  return (req, res) => {
    pool
      .request({ path: req.url ?? '/', method: (req.method ?? 'GET') as Dispatcher.HttpMethod, headers: forwardHeaders(req), body: hasBody(req) ? req : null })
      .then(async (answer) => {
        res.writeHead(answer.statusCode, answerHeaders(answer.headers));
        await pipeline(answer.body, res);
      })
      .catch(() => failed(res));
  };
}

function undiciStream(pool: Pool): Handler {
  return (req, res) => {
    pool.stream(
      { path: req.url ?? '/', method: (req.method ?? 'GET') as Dispatcher.HttpMethod, headers: forwardHeaders(req), body: hasBody(req) ? req : null },
      ({ statusCode, headers }) => {
        res.writeHead(statusCode, answerHeaders(headers));
        return res;
      },
      (error) => {
        if (error) failed(res);
      },
    );
  };
}

function undiciDispatch(pool: Pool): Handler {
  return (req, res) => {
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        res.once('close', () => {
          if (!res.writableFinished) controller.abort(new Error('client went away'));
        });
      },
      onResponseStart(controller, statusCode, headers) {
        res.writeHead(statusCode, answerHeaders(headers));
        res.on('drain', () => controller.resume());
      },
      onResponseData(controller, chunk) {
        if (!res.write(chunk)) controller.pause();
      },
      onResponseEnd() {
        res.end();
      },
      onResponseError(_controller, _error) {
        failed(res);
      },
    };
    pool.dispatch({ path: req.url ?? '/', method: (req.method ?? 'GET') as Dispatcher.HttpMethod, headers: forwardHeaders(req), body: hasBody(req) ? req : null }, handler);
  };
}

function undiciPipeline(pool: Pool): Handler {
  return (req, res) => {
    const duplex = pool.pipeline({ path: req.url ?? '/', method: (req.method ?? 'GET') as Dispatcher.HttpMethod, headers: forwardHeaders(req) }, ({ statusCode, headers, body }) => {
      res.writeHead(statusCode, answerHeaders(headers));
      return body;
    });
    duplex.on('error', () => failed(res));
    if (hasBody(req)) req.pipe(duplex);
    else duplex.end();
    duplex.pipe(res);
  };
}

function nodeAgent(): Handler {
  const agent = new Agent({ keepAlive: true, maxSockets: 128, maxFreeSockets: 128 });
  return (req, res) => {
    const upstream = httpRequest({ agent, host: originUrl.hostname, port: originUrl.port, method: req.method, path: req.url, headers: forwardHeaders(req) }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answerHeaders(answer.headers));
      answer.pipe(res);
    });
    upstream.on('error', () => failed(res));
    if (hasBody(req)) req.pipe(upstream);
    else upstream.end();
  };
}

async function replyFrom(client: 'undici' | 'http'): Promise<number> {
  const app = Fastify({ logger: false });
  await app.register(fastifyReplyFrom, {
    base: origin,
    disableRequestLogging: true,
    ...(client === 'http' ? { http: { agentOptions: { keepAlive: true, maxSockets: 128, maxFreeSockets: 128 } } } : {}),
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.all('/*', (request, reply) => {
    reply.from(request.url, { retryDelay: () => null });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
  return typeof address === 'object' && address ? address.port : 0;
}

async function httpProxy(): Promise<number> {
  const app = Fastify({ logger: false });
  await app.register(fastifyHttpProxy, { upstream: origin, disableRequestLogging: true, replyOptions: { retryDelay: () => null } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
  return typeof address === 'object' && address ? address.port : 0;
}

async function fastifyUndiciStream(): Promise<number> {
  const app = Fastify({ logger: false });
  const handler = undiciStream(new Pool(origin, { connections: 128 }));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.all('/*', (request, reply) => {
    reply.hijack();
    handler(request.raw, reply.raw);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
  return typeof address === 'object' && address ? address.port : 0;
}

async function plain(handler: Handler): Promise<number> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

const variants: Record<string, () => Promise<number>> = {
  'undici-request': () => plain(undiciRequest(new Pool(origin, { connections: 128 }))),
  'undici-stream': () => plain(undiciStream(new Pool(origin, { connections: 128 }))),
  'undici-dispatch': () => plain(undiciDispatch(new Pool(origin, { connections: 128 }))),
  'undici-pipeline': () => plain(undiciPipeline(new Pool(origin, { connections: 128 }))),
  'undici-pipelining': () => plain(undiciRequest(new Pool(origin, { connections: 16, pipelining: 8 }))),
  'node-agent': () => plain(nodeAgent()),
  'reply-from-undici': () => replyFrom('undici'),
  'reply-from-http': () => replyFrom('http'),
  'http-proxy': httpProxy,
  'fastify-undici-stream': fastifyUndiciStream,
};

const start = variants[variant];
if (!start) throw new Error(`unknown variant ${variant}; one of ${Object.keys(variants).join(', ')}`);
process.stdout.write(`listening ${await start()}\n`);
