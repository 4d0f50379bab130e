// The gate listener holds up (issue 30 item 5, docs/gate.md "Limits of the gate listener"): slow clients are
// cut by the header and request timeouts while admitted visitors are served, one client's connections are
// capped while others are served, a queued visitor cannot stream a large body into the gate, and what the
// request timeout must not cut (a slow download from the origin, a WebSocket) is not cut.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import {
  GATE_HEADERS_TIMEOUT_MS,
  GATE_KEEP_ALIVE_TIMEOUT_MS,
  GATE_MAX_CONNECTIONS_CEILING,
  GATE_MAX_CONNECTIONS_PER_CLIENT,
  GATE_REQUEST_TIMEOUT_MS,
  UNSENT_BODY_LIMIT,
  clientKey,
  defaultGateMaxConnections,
  trustedPeer,
} from '../../src/gate/listener-limits.ts';
import { TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { configFromOptions, serveCommand } from '../../src/cli/serve-command.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A connection of one client (a loopback source address) to the gate, with what it received and when it closed. */
interface HeldConnection {
  socket: Socket;
  received: () => string;
  closed: Promise<void>;
}

function open(port: number, localAddress: string): Promise<HeldConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    // A reset is one way of being closed.
    socket.on('error', () => {});
    const closed = new Promise<void>((resolveClosed) => socket.once('close', () => resolveClosed()));
    socket.once('connect', () => resolve({ socket, received: () => text, closed }));
    socket.once('error', reject);
  });
}

/** The number of connections the gate's server holds open right now. */
function connectionsOf(node: GateNode): Promise<number> {
  return new Promise((resolve, reject) => node.gate!.server.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

/** Waits (a turn of the event loop at a time, never a fixed sleep) until `check` holds. */
async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** A GET of `path` from a given loopback source address, on a connection of its own. */
function getFrom(port: number, localAddress: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, localAddress, agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the gate listener: defaults', () => {
  let origin: Origin;
  let node: GateNode;
  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Shop', origin.url)]);
  });
  after(async () => {
    await node.stop();
    await origin.close();
  });

  it('sets the documented timeouts and caps on the gate\'s server (Node\'s defaults are 60 s, 300 s and no cap)', () => {
    const server = node.gate!.server.app.server;
    assert.equal(server.headersTimeout, GATE_HEADERS_TIMEOUT_MS);
    assert.equal(server.requestTimeout, GATE_REQUEST_TIMEOUT_MS);
    assert.equal(server.keepAliveTimeout, GATE_KEEP_ALIVE_TIMEOUT_MS);
    assert.equal(server.maxConnections, defaultGateMaxConnections());
    assert.deepEqual([GATE_HEADERS_TIMEOUT_MS, GATE_REQUEST_TIMEOUT_MS, GATE_KEEP_ALIVE_TIMEOUT_MS, GATE_MAX_CONNECTIONS_PER_CLIENT], [10_000, 30_000, 5_000, 256]);
  });

  it('the flags set the limits; absent, the gate\'s defaults apply', async () => {
    const parse = async (args: string[]) => {
      let options: Record<string, unknown> = {};
      await serveCommand()
        .exitOverride()
        .action((parsed: Record<string, unknown>) => {
          options = parsed;
        })
        .parseAsync(['--data-dir', mkdtempSync(join(tmpdir(), 'anteroom-flags-')), ...args], { from: 'user' });
      return configFromOptions(options).gateLimits;
    };
    assert.deepEqual(await parse(['--gate-max-connections', '900', '--gate-max-connections-per-client', '0', '--gate-request-timeout', '120']), {
      maxConnections: 900,
      maxConnectionsPerClient: 0,
      requestTimeoutMs: 120_000,
    });
    assert.deepEqual(await parse([]), { maxConnections: undefined, maxConnectionsPerClient: 256, requestTimeoutMs: 30_000 });
  });

  it('the total cap is a quarter of the open-file limit, at most the ceiling', () => {
    const dir = mkdtempSync(join(tmpdir(), 'anteroom-limits-'));
    const limits = (soft: string) => {
      const file = join(dir, `limits-${soft}`);
      writeFileSync(file, `Limit                     Soft Limit           Hard Limit           Units     \nMax open files            ${soft}                ${soft}                files     \n`);
      return file;
    };
    assert.equal(defaultGateMaxConnections(limits('20000')), 5_000);
    assert.equal(defaultGateMaxConnections(limits('1048576')), GATE_MAX_CONNECTIONS_CEILING);
    assert.equal(defaultGateMaxConnections(limits('unlimited')), GATE_MAX_CONNECTIONS_CEILING);
    assert.equal(defaultGateMaxConnections(join(dir, 'missing')), GATE_MAX_CONNECTIONS_CEILING);
  });

  it('one client is an IPv4 address or an IPv6 /64; trusted proxies are not clients', () => {
    assert.equal(clientKey('192.0.2.7'), '192.0.2.7');
    assert.equal(clientKey('::ffff:192.0.2.7'), '192.0.2.7');
    assert.equal(clientKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(clientKey('2001:db8:1:2::9'), clientKey('2001:0db8:0001:0002:ffff::1'));
    assert.notEqual(clientKey('2001:db8:1:2::9'), clientKey('2001:db8:1:3::9'));
    assert.equal(clientKey('::1'), '0:0:0:0::/64');
    assert.equal(trustedPeer(undefined)('127.0.0.1'), false);
    assert.equal(trustedPeer(false)('127.0.0.1'), false);
    assert.equal(trustedPeer(true)('192.0.2.1'), true);
    assert.equal(trustedPeer(1)('192.0.2.1'), true);
    const list = trustedPeer(['10.0.0.0/8', '192.0.2.5', 'loopback']);
    assert.deepEqual(['10.9.9.9', '::ffff:10.1.1.1', '192.0.2.5', '192.0.2.6', '127.0.0.2', '::1', '11.0.0.1'].map(list), [true, true, true, false, true, true, false]);
  });
});

describe('the gate listener under 300 slow connections', () => {
  let origin: Origin;
  let node: GateNode;
  before(async () => {
    origin = await startOrigin();
    // Short header timeout so that the test sees the slow connections cut; no limit per client is reached
    // (300 connections from 10 addresses).
    node = await startGateNode([gatedRoom('Shop', origin.url, { state: 'off' })], { gateLimits: { headersTimeoutMs: 3_000 } });
  });
  after(async () => {
    await node.stop();
    await origin.close();
  });

  it('answers an admitted visitor while they are held, then cuts them with 408', { timeout: 30_000 }, async (t) => {
    const jar = new CookieJar();
    assert.equal((await jar.fetch(`${node.gateUrl}/`)).status, 303);
    assert.ok(jar.cookies.has(TOKEN_COOKIE));
    const baseline = await connectionsOf(node);

    const held: HeldConnection[] = [];
    const timers: NodeJS.Timeout[] = [];
    try {
      for (let i = 0; i < 300; i++) {
        const connection = await open(node.gate!.port, `127.0.0.${10 + (i % 10)}`);
        connection.socket.write('GET /slow HTTP/1.1\r\nHost: shop.example\r\n');
        // One more header line every 500 ms: never the end of the headers.
        let line = 0;
        const timer = setInterval(() => {
          if (!connection.socket.destroyed) connection.socket.write(`X-Slow-${line++}: x\r\n`);
        }, 500);
        timers.push(timer);
        void connection.closed.then(() => clearInterval(timer));
        held.push(connection);
      }
      await until(async () => (await connectionsOf(node)) >= baseline + 300 || held.some((c) => c.socket.destroyed));

      const started = performance.now();
      const answer = await jar.fetch(`${node.gateUrl}/echo`);
      const ms = performance.now() - started;
      assert.equal(answer.status, 200, 'the admitted visitor reaches the origin');
      assert.equal(((await answer.json()) as { url: string }).url, '/echo');
      const stillHeld = held.filter((c) => !c.socket.destroyed).length;
      t.diagnostic(`admitted answer in ${ms.toFixed(1)} ms with ${stillHeld} slow connections held`);

      await Promise.all(held.map((c) => c.closed));
      for (const connection of held) assert.match(connection.received(), /^HTTP\/1\.1 408 /, 'cut by the header timeout');
      assert.equal(origin.seen.filter((r) => r.url === '/slow').length, 0);
    } finally {
      for (const timer of timers) clearInterval(timer);
      for (const connection of held) connection.socket.destroy();
    }
  });
});

describe('the gate listener: connection caps', () => {
  let origin: Origin;
  let node: GateNode;
  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Shop', origin.url, { state: 'off' })], {
      gateLimits: { maxConnectionsPerClient: 3, maxConnections: 6, keepAliveTimeoutMs: 60_000 },
      trustProxy: ['127.0.0.5'],
    });
  });
  after(async () => {
    await node.stop();
    await origin.close();
  });

  /** A kept-alive connection that has been answered once (so the gate has surely counted it). */
  async function answered(localAddress: string): Promise<HeldConnection> {
    const connection = await open(node.gate!.port, localAddress);
    connection.socket.write('GET /_anteroom/none HTTP/1.1\r\nHost: shop.example\r\n\r\n');
    await until(() => connection.received().includes('\r\n\r\n') || connection.socket.destroyed);
    assert.match(connection.received(), /^HTTP\/1\.1 404 /);
    return connection;
  }

  it('closes the fourth connection of one client at once while another client is served', async () => {
    const held: HeldConnection[] = [];
    try {
      for (let i = 0; i < 3; i++) held.push(await answered('127.0.0.2'));
      const fourth = await open(node.gate!.port, '127.0.0.2');
      fourth.socket.write('GET /_anteroom/none HTTP/1.1\r\nHost: shop.example\r\n\r\n');
      await fourth.closed;
      assert.equal(fourth.received(), '', 'closed without an answer');

      assert.equal(await getFrom(node.gate!.port, '127.0.0.3', '/_anteroom/none'), 404, 'another client is served');
      assert.ok(held.every((c) => !c.socket.destroyed), 'the first three stay open');

      // One closed: the client may open one again.
      held.pop()!.socket.destroy();
      await until(async () => (await connectionsOf(node)) <= 2);
      held.push(await answered('127.0.0.2'));
    } finally {
      for (const connection of held) connection.socket.destroy();
    }
  });

  it('a proxy --trust-proxy trusts is not a client: its connections are not capped per client', async () => {
    const held: HeldConnection[] = [];
    try {
      await until(async () => (await connectionsOf(node)) === 0);
      for (let i = 0; i < 5; i++) held.push(await answered('127.0.0.5'));
      assert.ok(held.every((c) => !c.socket.destroyed));
    } finally {
      for (const connection of held) connection.socket.destroy();
    }
  });

  it('closes connections past the total cap, whoever opens them', async () => {
    const held: HeldConnection[] = [];
    try {
      await until(async () => (await connectionsOf(node)) === 0);
      for (let i = 0; i < 6; i++) held.push(await answered(`127.0.0.${20 + i}`));
      const seventh = await open(node.gate!.port, '127.0.0.30');
      seventh.socket.write('GET /_anteroom/none HTTP/1.1\r\nHost: shop.example\r\n\r\n');
      await seventh.closed;
      assert.equal(seventh.received(), '');
    } finally {
      for (const connection of held) connection.socket.destroy();
    }
  });
});

describe('the gate listener: bodies and the request timeout', () => {
  let origin: Origin;
  let slowOrigin: Server;
  let node: GateNode;
  let queuedNode: GateNode;
  before(async () => {
    origin = await startOrigin();
    // An origin whose answer takes longer than the gate's request timeout: 8 chunks, 400 ms apart.
    slowOrigin = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const timer = setInterval(() => {
        response.write(`chunk ${sent}\n`);
        if (++sent === 8) {
          clearInterval(timer);
          response.end();
        }
      }, 400);
      response.on('close', () => clearInterval(timer));
    });
    slowOrigin.listen(0, '127.0.0.1');
    await once(slowOrigin, 'listening');
    const slowUrl = `http://127.0.0.1:${(slowOrigin.address() as AddressInfo).port}`;
    node = await startGateNode(
      [
        gatedRoom('Shop', origin.url, { state: 'off' }),
        gatedRoom('Slow', slowUrl, { state: 'off', gate: { origin: slowUrl, routes: [{ path: '/download' }], queueing_status_code: 200 } }),
      ],
      { gateLimits: { headersTimeoutMs: 2_000, requestTimeoutMs: 2_000 } },
    );
    // A room nobody gets into (no admissions): every visitor is queued.
    queuedNode = await startGateNode([gatedRoom('Shop', origin.url)]);
  });
  after(async () => {
    await node.stop();
    await queuedNode.stop();
    await origin.close();
    slowOrigin.closeAllConnections();
    slowOrigin.close();
  });

  async function admittedJar(): Promise<CookieJar> {
    const jar = new CookieJar();
    assert.equal((await jar.fetch(`${node.gateUrl}/`)).status, 303);
    return jar;
  }

  it('a body trickled slower than the request timeout is cut with 408; a WebSocket opened before it and a slow download are not', { timeout: 30_000 }, async () => {
    const jar = await admittedJar();
    const ws = new WebSocket(`${node.gateUrl.replace('http', 'ws')}/ws`, { headers: { cookie: jar.header() } });
    const messages: string[] = [];
    ws.on('message', (data) => messages.push(String(data)));
    await once(ws, 'open');

    // The download is another room's (/download): its own admission.
    const downloader = new CookieJar();
    assert.equal((await downloader.fetch(`${node.gateUrl}/download`)).status, 303);
    const download = downloader.fetch(`${node.gateUrl}/download`).then((r) => r.text());

    const trickle = await open(node.gate!.port, '127.0.0.1');
    trickle.socket.write(`POST /echo HTTP/1.1\r\nHost: shop.example\r\nCookie: ${jar.header()}\r\nContent-Length: 100\r\n\r\n`);
    const timer = setInterval(() => {
      if (!trickle.socket.destroyed) trickle.socket.write('x');
    }, 200);
    try {
      await trickle.closed;
    } finally {
      clearInterval(timer);
    }
    assert.match(trickle.received(), /^HTTP\/1\.1 408 /);

    // The WebSocket outlived the request timeout that cut the trickle.
    ws.send('still here');
    await until(() => messages.includes('echo still here') || ws.readyState !== WebSocket.OPEN);
    assert.ok(messages.includes('echo still here'));
    ws.close();
    assert.equal((await download).split('\n').filter(Boolean).length, 8, 'the whole download, longer than the request timeout');
  });

  it('a queued visitor\'s large body is not read: the gate answers and closes the connection', { timeout: 30_000 }, async () => {
    for (const framing of ['Content-Length: 1073741824', 'Transfer-Encoding: chunked']) {
      const connection = await open(queuedNode.gate!.port, '127.0.0.1');
      connection.socket.write(`POST /upload HTTP/1.1\r\nHost: shop.example\r\nAccept: application/json\r\n${framing}\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const frame = framing.startsWith('Transfer') ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
      let written = 0;
      // Write as fast as the gate reads, up to 64 MiB; the gate must close the connection long before that.
      const limit = 64 * 1024 * 1024;
      while (!connection.socket.destroyed && written < limit) {
        const ok = connection.socket.write(frame);
        written += frame.length;
        if (!ok) await new Promise((resolve) => connection.socket.once('drain', resolve).once('close', resolve));
      }
      await Promise.race([connection.closed, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      assert.ok(connection.socket.destroyed, `${framing}: the gate closed the connection (after ${written} bytes written)`);
      assert.ok(written < limit, `${framing}: ${written} bytes written before the gate closed`);
      assert.match(connection.received(), /^HTTP\/1\.1 503 /, `${framing}: answered first`);
      assert.match(connection.received(), /connection: close/i);
    }
  });

  it('a queued visitor\'s small body is read and dropped: the connection stays usable', async () => {
    const connection = await open(queuedNode.gate!.port, '127.0.0.1');
    try {
      const body = 'a=1&b=2'.repeat(100);
      assert.ok(body.length < UNSENT_BODY_LIMIT);
      connection.socket.write(`POST /cart HTTP/1.1\r\nHost: shop.example\r\nAccept: application/json\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      await until(() => /\r\n\r\n[\s\S]*\}$/.test(connection.received()) || connection.socket.destroyed);
      assert.match(connection.received(), /^HTTP\/1\.1 503 /);
      assert.doesNotMatch(connection.received(), /connection: close/i);
      const before = connection.received().length;
      connection.socket.write('GET /_anteroom/none HTTP/1.1\r\nHost: shop.example\r\n\r\n');
      await until(() => connection.received().slice(before).includes('\r\n\r\n') || connection.socket.destroyed);
      assert.match(connection.received().slice(before), /^HTTP\/1\.1 404 /, 'a second request on the same connection');
    } finally {
      connection.socket.destroy();
    }
  });

  it('the gate\'s own paths parse at most 16 KiB of a body', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(UNSENT_BODY_LIMIT) });
    const answer = await fetch(`${node.gateUrl}/_anteroom/none`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    assert.equal(answer.status, 413);
    await answer.text();
  });
});
