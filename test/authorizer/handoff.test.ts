// The authorizer's hand-off middleware alone (packages/authorizer/src/handoff.ts): the exchange of an
// anteroom_handoff code with a waiting room played by a fetch recorded here, and the redirect and cookie each
// framework answers. test/gate/handoff.test.ts runs the same middleware against a real node; this file states
// its rules one by one, fast enough for the mutation scope `authorizer`.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, IncomingMessage, type ServerResponse } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import {
  DEFAULT_TOKEN_COOKIE, HANDOFF_PARAMETER, exchangeHandoffCode, expressHandoff, fastifyHandoff, type HandoffOptions,
} from '../../packages/authorizer/src/handoff.ts';

interface Call {
  url: string;
  init: RequestInit;
}

/** A waiting room that answers POST /handoff with `answer` and records what it was asked. */
function waitingRoom(answer: () => Response | Promise<Response>): { fetch: typeof globalThis.fetch; calls: Call[] } {
  const calls: Call[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    calls.push({ url: String(input), init: init ?? {} });
    return answer();
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

const granted = (body: unknown = { access_token: 'tok.en.sig', expires_in: 600 }) => () => Response.json(body);

describe('exchangeHandoffCode', () => {
  it('POSTs the event and the code as JSON to <publicApiUrl>/handoff and returns the token', async () => {
    for (const [base, expected] of [
      ['https://wr.example', 'https://wr.example/handoff'],
      ['https://wr.example/', 'https://wr.example/handoff'],
      ['https://wr.example/api', 'https://wr.example/api/handoff'],
      [new URL('https://wr.example/api/'), 'https://wr.example/api/handoff'],
    ] as const) {
      const room = waitingRoom(granted());
      const token = await exchangeHandoffCode('c0de', { publicApiUrl: base, eventId: 'Shop', fetch: room.fetch });
      assert.deepEqual(token, { accessToken: 'tok.en.sig', expiresIn: 600 });
      assert.equal(room.calls.length, 1);
      const [{ url, init }] = room.calls as [Call];
      assert.equal(url, expected);
      assert.equal(init.method, 'POST');
      assert.deepEqual(init.headers, { 'content-type': 'application/json' });
      assert.deepEqual(JSON.parse(String(init.body)), { event_id: 'Shop', code: 'c0de' });
      assert.ok(init.signal instanceof AbortSignal);
      assert.equal(init.signal.aborted, false);
    }
  });

  it('gives up after timeoutMs (default 5 s): a waiting room that does not answer is no token', async () => {
    let signal: AbortSignal | undefined;
    const hanging = (async (_input: string | URL | Request, init?: RequestInit) => {
      signal = init?.signal ?? undefined;
      await once(signal!, 'abort');
      throw signal!.reason;
    }) as typeof globalThis.fetch;
    assert.equal(await exchangeHandoffCode('c', { publicApiUrl: 'https://wr.example', eventId: 'Shop', fetch: hanging, timeoutMs: 20 }), undefined);
    assert.equal(signal?.aborted, true);
    // The default (5 s): a signal that has not aborted by the time the waiting room answers.
    const room = waitingRoom(granted());
    await exchangeHandoffCode('c', { publicApiUrl: 'https://wr.example', eventId: 'Shop', fetch: room.fetch });
    assert.equal(room.calls[0]!.init.signal!.aborted, false);
  });

  it('no token for another status (its body cancelled), a body without a string token or a numeric lifetime, or a failed fetch', async () => {
    let cancelled = false;
    const refused = waitingRoom(() => new Response(new ReadableStream({ cancel: () => { cancelled = true; } }), { status: 404 }));
    assert.equal(await exchangeHandoffCode('c', { publicApiUrl: 'https://wr.example', eventId: 'Shop', fetch: refused.fetch }), undefined);
    assert.equal(cancelled, true);
    for (const body of [{}, { access_token: 1, expires_in: 600 }, { access_token: 't', expires_in: '600' }, { expires_in: 600 }, { access_token: 't' }]) {
      const room = waitingRoom(granted(body));
      assert.equal(await exchangeHandoffCode('c', { publicApiUrl: 'https://wr.example', eventId: 'Shop', fetch: room.fetch }), undefined, JSON.stringify(body));
    }
    const notJson = waitingRoom(() => new Response('<html>', { status: 200 }));
    assert.equal(await exchangeHandoffCode('c', { publicApiUrl: 'https://wr.example', eventId: 'Shop', fetch: notJson.fetch }), undefined);
    const failing = (async () => { throw new TypeError('fetch failed'); }) as typeof globalThis.fetch;
    assert.equal(await exchangeHandoffCode('c', { publicApiUrl: 'https://wr.example', eventId: 'Shop', fetch: failing }), undefined);
  });

  it('uses the global fetch when none is given', async () => {
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      req.on('end', () => {
        bodies.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'real', expires_in: 30 }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const token = await exchangeHandoffCode('k', { publicApiUrl: `http://127.0.0.1:${port}`, eventId: 'Shop' });
      assert.deepEqual(token, { accessToken: 'real', expiresIn: 30 });
      assert.deepEqual(bodies, ['POST /handoff {"event_id":"Shop","code":"k"}']);
    } finally {
      server.close();
    }
  });
});

/** A request as a framework would see it: its URL, headers, and whether its socket is TLS. */
function incoming(url: string | undefined, headers: Record<string, string> = {}, encrypted = false): IncomingMessage {
  const socket = new Socket();
  if (encrypted) Object.assign(socket, { encrypted: true });
  const req = new IncomingMessage(socket);
  req.url = url as string; // undefined too: a request Node never gave a URL
  Object.assign(req.headers, headers);
  return req;
}

interface Answer {
  passed: boolean;
  error?: unknown;
  status?: number;
  headers?: Record<string, string>;
}

/** Runs expressHandoff's middleware on a request by hand: next() called (passed), or the head it wrote. */
function runExpress(options: HandoffOptions, req: IncomingMessage): Promise<Answer> {
  return new Promise((resolve) => {
    const res = {
      writeHead(status: number, headers: Record<string, string>) {
        return { end: () => resolve({ passed: false, status, headers }) };
      },
    } as unknown as ServerResponse;
    expressHandoff(options)(req, res, (error?: unknown) => resolve(error === undefined ? { passed: true } : { passed: true, error }));
  });
}

/** The same through fastifyHandoff as an onRequest hook: passed when the route itself answered. */
async function runFastify(options: HandoffOptions, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const app = Fastify();
  app.addHook('onRequest', fastifyHandoff(options));
  app.get('/*', async () => 'the route');
  const response = await app.inject({ method: 'GET', url, headers });
  await app.close();
  if (response.statusCode === 200 && response.body === 'the route') return { passed: true };
  return { passed: false, status: response.statusCode, headers: response.headers as Record<string, string> };
}

const BASE = 'https://wr.example';

describe('the hand-off middleware (Express and Fastify alike)', () => {
  for (const framework of ['express', 'fastify'] as const) {
    const run = (options: HandoffOptions, url: string, headers: Record<string, string> = {}) =>
      framework === 'express' ? runExpress(options, incoming(url, headers)) : runFastify(options, url, headers);

    describe(framework, () => {
      it('passes a request without a code on, asking nothing; a path merely naming the parameter too', async () => {
        const room = waitingRoom(granted());
        for (const url of ['/', '/store?x=1', `/${HANDOFF_PARAMETER}/help`, `/p?not_${HANDOFF_PARAMETER}x=1`]) {
          assert.deepEqual(await run({ publicApiUrl: BASE, eventId: 'Shop', fetch: room.fetch }, url), { passed: true }, url);
        }
        assert.equal(room.calls.length, 0);
      });

      it('exchanges the code and redirects (303, no-store) to the same URL without it, with the token cookie', async () => {
        const room = waitingRoom(granted({ access_token: 'abc.def.ghi', expires_in: 599.9 }));
        const answer = await run({ publicApiUrl: BASE, eventId: 'Shop', fetch: room.fetch }, `/store/cart?item=7&${HANDOFF_PARAMETER}=xyz&page=2`);
        assert.equal(answer.passed, false);
        assert.equal(answer.status, 303);
        assert.equal(answer.headers!['location'], '/store/cart?item=7&page=2');
        assert.equal(answer.headers!['cache-control'], 'no-store');
        assert.equal(answer.headers!['set-cookie'], `${DEFAULT_TOKEN_COOKIE}=abc.def.ghi; Path=/; HttpOnly; SameSite=Lax; Max-Age=599`);
        assert.deepEqual(JSON.parse(String(room.calls[0]!.init.body)), { event_id: 'Shop', code: 'xyz' });
      });

      it('a code alone leaves the bare path; a refused code redirects without a cookie', async () => {
        const refused = waitingRoom(() => new Response('{"error":"unknown code"}', { status: 404 }));
        const answer = await run({ publicApiUrl: BASE, eventId: 'Shop', fetch: refused.fetch }, `/store?${HANDOFF_PARAMETER}=used`);
        assert.equal(answer.status, 303);
        assert.equal(answer.headers!['location'], '/store');
        assert.equal(answer.headers!['set-cookie'], undefined);
        assert.equal(refused.calls.length, 1);
      });

      it('the cookie: its name, Max-Age never negative, Secure by option or when the request came over HTTPS', async () => {
        const cookieOf = async (options: Partial<HandoffOptions>, headers: Record<string, string> = {}, body?: unknown) => {
          const room = waitingRoom(granted(body));
          const answer = await run({ publicApiUrl: BASE, eventId: 'Shop', fetch: room.fetch, ...options }, `/?${HANDOFF_PARAMETER}=c`, headers);
          return answer.headers!['set-cookie'];
        };
        assert.equal(await cookieOf({ cookieName: 'wr' }), 'wr=tok.en.sig; Path=/; HttpOnly; SameSite=Lax; Max-Age=600');
        assert.equal(await cookieOf({}, {}, { access_token: 't', expires_in: -5 }), `${DEFAULT_TOKEN_COOKIE}=t; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`);
        assert.equal(await cookieOf({}, { 'x-forwarded-proto': 'https' }), `${DEFAULT_TOKEN_COOKIE}=tok.en.sig; Path=/; HttpOnly; SameSite=Lax; Max-Age=600; Secure`);
        assert.equal(await cookieOf({}, { 'x-forwarded-proto': 'http' }), `${DEFAULT_TOKEN_COOKIE}=tok.en.sig; Path=/; HttpOnly; SameSite=Lax; Max-Age=600`);
        assert.equal(await cookieOf({ secureCookie: true }), `${DEFAULT_TOKEN_COOKIE}=tok.en.sig; Path=/; HttpOnly; SameSite=Lax; Max-Age=600; Secure`);
        assert.equal(await cookieOf({ secureCookie: false }, { 'x-forwarded-proto': 'https' }), `${DEFAULT_TOKEN_COOKIE}=tok.en.sig; Path=/; HttpOnly; SameSite=Lax; Max-Age=600`);
      });
    });
  }

  it('Express: a TLS socket makes the cookie Secure; originalUrl is read before url; no url is "/"', async () => {
    const room = waitingRoom(granted());
    const options = { publicApiUrl: BASE, eventId: 'Shop', fetch: room.fetch };
    const tls = await runExpress(options, incoming(`/?${HANDOFF_PARAMETER}=c`, {}, true));
    assert.match(tls.headers!['set-cookie']!, /; Secure$/);
    const plain = await runExpress(options, incoming(`/?${HANDOFF_PARAMETER}=c`, {}, false));
    assert.doesNotMatch(plain.headers!['set-cookie']!, /Secure/);
    // Mounted under a prefix, Express rewrites url and keeps the whole one in originalUrl.
    const mounted = incoming(`/cart?${HANDOFF_PARAMETER}=c`);
    Object.assign(mounted, { originalUrl: `/shop/cart?${HANDOFF_PARAMETER}=c&k=v` });
    assert.equal((await runExpress(options, mounted)).headers!['location'], '/shop/cart?k=v');
    const calls = room.calls.length;
    assert.deepEqual(await runExpress(options, incoming(undefined)), { passed: true });
    assert.equal(room.calls.length, calls);
  });

  it('Express: a URL that cannot be parsed goes to next(error), not to an unhandled rejection', async () => {
    const room = waitingRoom(granted());
    const answer = await runExpress({ publicApiUrl: BASE, eventId: 'Shop', fetch: room.fetch }, incoming(`http://[${HANDOFF_PARAMETER}`));
    assert.equal(answer.passed, true);
    assert.ok(answer.error instanceof TypeError, String(answer.error));
    assert.equal(room.calls.length, 0);
  });

  it('Express: in a real app, before the routes; the parameter is anteroom_handoff (the contract, spec rooms.md §5)', async () => {
    let grant = true;
    const room = waitingRoom(() => (grant ? Response.json({ access_token: 'tok.en.sig', expires_in: 600 }) : new Response(null, { status: 404 })));
    const app = express();
    app.use(expressHandoff({ publicApiUrl: BASE, eventId: 'Shop', fetch: room.fetch }));
    app.get('/store', (_req, res) => { res.send('the route'); });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const handed = await fetch(`http://127.0.0.1:${port}/store?anteroom_handoff=c`, { redirect: 'manual' });
      assert.equal(handed.status, 303);
      assert.equal(handed.headers.get('location'), '/store');
      assert.match(handed.headers.get('set-cookie') ?? '', /^anteroom_token=tok\.en\.sig; /);
      // A refused code: the same redirect, and no Set-Cookie header at all.
      grant = false;
      const refused = await fetch(`http://127.0.0.1:${port}/store?anteroom_handoff=used`, { redirect: 'manual' });
      assert.equal(refused.status, 303);
      assert.equal(refused.headers.get('location'), '/store');
      assert.equal(refused.headers.get('set-cookie'), null);
      const route = await fetch(`http://127.0.0.1:${port}/store`);
      assert.equal(await route.text(), 'the route');
    } finally {
      server.close();
    }
  });
});
