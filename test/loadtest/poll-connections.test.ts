import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as pause } from 'node:timers/promises';
import { afterEach, describe, it } from 'node:test';
import type { Reply } from '../../src/loadtest/http-client.ts';
import { PollConnections } from '../../src/loadtest/poll-connections.ts';

/** What a scripted server saw of one connection. */
interface SeenConnection {
  socket: Socket;
  /** Request paths in arrival order. */
  paths: string[];
  /** Requests received and not answered yet, at most (pipelining depth seen). */
  maxOutstanding: number;
  outstanding: number;
  heads: string[];
  /** Complete requests found in each read. */
  perRead: number[];
}

/**
 * A raw TCP server that reads pipelined GET heads and lets `answer` reply (or not) to each, with full control of
 * the bytes and of the connection: the misbehaviour a real HTTP server would not produce on demand.
 */
async function scriptedServer(answer: (c: SeenConnection, path: string, index: number) => void): Promise<{ url: string; seen: SeenConnection[]; server: Server }> {
  const seen: SeenConnection[] = [];
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    const c: SeenConnection = { socket, paths: [], maxOutstanding: 0, outstanding: 0, heads: [], perRead: [] };
    seen.push(c);
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      c.perRead.push(pending.split('\r\n\r\n').length - 1);
      for (let at = pending.indexOf('\r\n\r\n'); at >= 0; at = pending.indexOf('\r\n\r\n')) {
        const head = pending.slice(0, at);
        pending = pending.slice(at + 4);
        const path = head.split(' ')[1]!;
        c.heads.push(head);
        c.paths.push(path);
        c.outstanding++;
        c.maxOutstanding = Math.max(c.maxOutstanding, c.outstanding);
        answer(c, path, c.paths.length - 1);
      }
    });
    socket.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

function ok(body: string, extra = ''): string {
  return `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
}

function chunked(body: string): string {
  const half = Math.ceil(body.length / 2);
  const parts = [body.slice(0, half), body.slice(half)].filter((p) => p.length > 0);
  return `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${parts.map((p) => `${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`).join('')}0\r\n\r\n`;
}

/**
 * Pseudo-random numbers in [0, 1) from a fixed seed (mulberry32): the pieces responses are cut into are
 * arbitrary but the same on every run, so a failure can be replayed.
 */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Writes `text` in pieces of 1–40 bytes, some after a pause, so that reads split responses anywhere. */
const writing = new WeakMap<Socket, Promise<void>>();
function dribble(socket: Socket, text: string, random: () => number): void {
  // One answer after the other on a connection, as a server must.
  writing.set(socket, (writing.get(socket) ?? Promise.resolve()).then(() => dribbleNow(socket, text, random)));
}

async function dribbleNow(socket: Socket, text: string, random: () => number): Promise<void> {
  const data = Buffer.from(text);
  let at = 0;
  while (at < data.length) {
    const n = 1 + Math.floor(random() * 40);
    socket.write(data.subarray(at, at + n));
    at += n;
    // Not synchronisation: a pause lets the piece leave on its own, so that the client reads it alone.
    if (random() < 0.2) await pause(1);
  }
}

/** A clock the test moves by hand (milliseconds), for the timeouts and idle checks of PollConnections. */
function manualClock() {
  const clock = { ms: 0, now: () => clock.ms };
  return clock;
}

const servers: Server[] = [];
const clients: PollConnections[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const s of servers.splice(0)) {
    s.close();
    (s as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
  }
});

function client(url: string, options: Partial<ConstructorParameters<typeof PollConnections>[1]> = {}): PollConnections {
  const c = new PollConnections(url, { connections: 4, pipelining: 4, origin: performance.now(), ...options });
  clients.push(c);
  return c;
}

describe('pipelined polling connections', () => {
  for (const pipelining of [1, 4]) {
    it(`pipelining ${pipelining}: each request gets its own answer, in order, however the bytes are split`, async () => {
      // Answers come in batches per read, written in arbitrary pieces: Content-Length, chunked and 204 mixed.
      const random = seededRandom(pipelining);
      const { url, seen } = await scriptedServer((c, path, index) => {
        const body = JSON.stringify({ path });
        const text = index % 5 === 4 ? 'HTTP/1.1 204 No Content\r\n\r\n' : index % 3 === 0 ? chunked(body) : ok(body);
        c.outstanding--;
        dribble(c.socket, text, random);
      });
      const polls = client(url, { connections: 3, pipelining });
      // More distinct paths than the client caches, so both ways of building a request are used.
      const paths = Array.from({ length: 400 }, (_, i) => `/serving_num?event_id=Sample&i=${i}`);
      const replies = await Promise.all(paths.map((p) => polls.get(p)));
      for (const [i, reply] of replies.entries()) {
        assert.ok(reply.status === 200 || reply.status === 204, `${i}: ${reply.status} ${reply.body}`);
        if (reply.status === 200) assert.deepEqual(JSON.parse(reply.body), { path: paths[i] });
        assert.ok(reply.receivedAt >= reply.sentAt);
      }
      // The 204s: every 5th request on its connection; the server saw each path exactly once.
      assert.deepEqual(seen.flatMap((c) => c.paths).sort(), [...paths].sort());
      assert.ok(seen.length <= 3, `${seen.length} connections`);
      for (const c of seen) assert.ok(c.maxOutstanding <= pipelining, `${c.maxOutstanding} in flight on one connection`);
      assert.equal(polls.inFlight, 0);
      assert.equal(polls.protocolErrors, 0);
    });
  }

  it('writes the requests issued in one turn with one write per connection', async () => {
    const { url, seen } = await scriptedServer((c, path) => {
      c.outstanding--;
      c.socket.write(ok(JSON.stringify({ path })));
    });
    const polls = client(url, { connections: 1, pipelining: 8 });
    await polls.get('/warm-up');
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => polls.get(`/p${i}`)));
    assert.deepEqual(replies.map((r) => JSON.parse(r.body).path), Array.from({ length: 8 }, (_, i) => `/p${i}`));
    // One write of 8 requests arrives in one read on loopback.
    assert.deepEqual(seen[0]!.perRead, [1, 8]);
  });

  it('Connection: close in mid-pipeline: what was pipelined behind it is sent again on a new connection, nothing lost', async () => {
    const { url, seen } = await scriptedServer((c, path, index) => {
      if (seen.indexOf(c) === 0) {
        // The first connection answers two requests, announces its end with the third, and ignores the rest.
        if (index < 2) c.socket.write(ok(JSON.stringify({ path })));
        else if (index === 2) c.socket.end(ok(JSON.stringify({ path }), 'Connection: close\r\n'));
        return;
      }
      c.socket.write(ok(JSON.stringify({ path })));
    });
    const polls = client(url, { connections: 1, pipelining: 8 });
    const paths = Array.from({ length: 8 }, (_, i) => `/p${i}`);
    const replies = await Promise.all(paths.map((p) => polls.get(p)));
    assert.deepEqual(
      replies.map((r) => [r.status, JSON.parse(r.body).path]),
      paths.map((p) => [200, p]),
    );
    assert.equal(seen.length, 2);
    assert.deepEqual(seen[1]!.paths, paths.slice(3));
    assert.equal(polls.resent, 5);
    assert.equal(polls.inFlight, 0);
  });

  it('a server that drops the connection mid-pipeline: each request in flight fails once with status 0, the next use a new one', async () => {
    let dropped = false;
    const { url, seen } = await scriptedServer((c, path, index) => {
      if (!dropped && index === 2) {
        dropped = true;
        c.socket.destroy();
        return;
      }
      if (c.socket.destroyed) return;
      c.socket.write(ok(JSON.stringify({ path })));
    });
    const polls = client(url, { connections: 1, pipelining: 8 });
    // Requests 0 and 1 are answered before the drop; 2.. are lost with the connection.
    const first = await Promise.all([polls.get('/a'), polls.get('/b')]);
    const lost = await Promise.all(Array.from({ length: 6 }, (_, i) => polls.get(`/lost${i}`)));
    assert.deepEqual(first.map((r) => r.status), [200, 200]);
    assert.deepEqual(lost.map((r) => r.status), [0, 0, 0, 0, 0, 0]);
    assert.equal(polls.inFlight, 0);
    const after = await polls.get('/after');
    assert.equal(after.status, 200);
    assert.equal(JSON.parse(after.body).path, '/after');
    assert.equal(seen.length, 2);
    assert.equal(polls.resent, 0, 'an unannounced close is not retried here: the visitor retries with back-off');
  });

  it('a malformed answer closes that connection, fails what was in flight on it and counts a protocol error', async () => {
    let broken = false;
    const { url, seen } = await scriptedServer((c, path, index) => {
      if (!broken && index === 1) {
        broken = true;
        c.socket.write('HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\n{}');
        return;
      }
      c.socket.write(ok(JSON.stringify({ path })));
    });
    const polls = client(url, { connections: 1, pipelining: 4 });
    const replies = await Promise.all(['/a', '/b', '/c', '/d'].map((p) => polls.get(p)));
    assert.equal(replies[0]!.status, 200);
    assert.equal(JSON.parse(replies[0]!.body).path, '/a');
    for (const reply of replies.slice(1)) {
      assert.equal(reply.status, 0);
      assert.match(reply.body, /malformed response: malformed status line/);
    }
    assert.equal(polls.protocolErrors, 1);
    const after = await polls.get('/after');
    assert.deepEqual([after.status, JSON.parse(after.body).path], [200, '/after']);
    assert.equal(seen.length, 2, 'the broken connection was replaced');
    assert.equal(polls.inFlight, 0);
  });

  it('an answer with no request waiting for it is a protocol error, not attributed to a later request', async () => {
    const { url, seen } = await scriptedServer((c, path) => {
      // Two answers to one request: the second must not become the answer of the next request.
      c.socket.write(ok(JSON.stringify({ path })) + ok('{"path":"/forged"}'));
    });
    const polls = client(url, { connections: 1, pipelining: 1 });
    const first = await polls.get('/one');
    assert.deepEqual([first.status, JSON.parse(first.body).path], [200, '/one']);
    // The client counts the error, then destroys the connection: the server sees it close.
    await once(seen[0]!.socket, 'close');
    assert.equal(polls.protocolErrors, 1);
    const second = await polls.get('/two');
    assert.deepEqual([second.status, JSON.parse(second.body).path], [200, '/two']);
  });

  it('a request with no answer fails with status 0 after the timeout, with everything behind it', async () => {
    let arrived: () => void = () => {};
    const bothArrived = new Promise<void>((resolve) => (arrived = resolve));
    const { url } = await scriptedServer((_c, _path, index) => {
      if (index === 1) arrived();
    });
    const clock = manualClock();
    const polls = client(url, { connections: 1, pipelining: 2, timeoutMs: 200, clock: clock.now, origin: 0 });
    const pending = Promise.all([polls.get('/a'), polls.get('/b')]);
    await bothArrived;
    clock.ms = 201; // the timeout has passed on the client's clock: its next check fails the connection
    const replies = await pending;
    assert.deepEqual(replies.map((r) => r.status), [0, 0]);
    assert.match(replies[0]!.body, /no answer within 200 ms/);
    for (const reply of replies) assert.ok(reply.receivedAt - reply.sentAt > 200, 'failed only once the timeout had passed');
    assert.equal(polls.inFlight, 0);
  });

  it('closes a connection left idle before the server\'s keep-alive timeout can, and opens a new one when needed', async () => {
    const { url, seen } = await scriptedServer((c, path) => {
      c.socket.write(ok(JSON.stringify({ path })));
    });
    const clock = manualClock();
    const polls = client(url, { connections: 1, pipelining: 1, idleMs: 100, clock: clock.now, origin: 0 });
    assert.equal((await polls.get('/a')).status, 200);
    clock.ms += 101; // idle past idleMs on the client's clock: the idle timer closes it
    await once(seen[0]!.socket, 'close');
    const b = await polls.get('/b');
    assert.deepEqual([b.status, JSON.parse(b.body).path], [200, '/b']);
    assert.equal(seen.length, 2);
  });

  it('at a low rate one connection carries every poll: keep-alive, no new connection per poll', async () => {
    const { url, seen } = await scriptedServer((c, path) => {
      c.socket.write(ok(JSON.stringify({ path })));
    });
    const polls = client(url, { connections: 128, pipelining: 8 });
    for (let i = 0; i < 30; i++) {
      const reply = await polls.get(`/p${i}`);
      assert.deepEqual([reply.status, JSON.parse(reply.body).path], [200, `/p${i}`]);
    }
    assert.equal(seen.length, 1, `${seen.length} connections for 30 polls one after another`);
  });

  it('only as many connections are opened as the polls in flight need, from the first slot on', async () => {
    const { url, seen } = await scriptedServer((c, path) => {
      c.socket.write(ok(JSON.stringify({ path })));
    });
    const polls = client(url, { connections: 128, pipelining: 8 });
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all(Array.from({ length: 3 }, (_, i) => polls.get(`/r${round}-${i}`)));
      assert.deepEqual(replies.map((r) => r.status), [200, 200, 200]);
    }
    assert.equal(seen.length, 3, 'three polls at a time: three connections, reused every round');
  });

  it('a server that closes after every answer: every pipelined poll is answered (sent again as often as needed)', async () => {
    const { url, seen } = await scriptedServer((c, path, index) => {
      // Answers the first request of each connection with Connection: close and ignores the rest.
      if (index === 0) c.socket.end(ok(JSON.stringify({ path }), 'Connection: close\r\n'));
    });
    const polls = client(url, { connections: 1, pipelining: 4 });
    const paths = Array.from({ length: 8 }, (_, i) => `/p${i}`);
    const replies = await Promise.all(paths.map((p) => polls.get(p)));
    assert.deepEqual(
      replies.map((r) => [r.status, JSON.parse(r.body).path]),
      paths.map((p) => [200, p]),
    );
    assert.equal(seen.length, 8, 'one connection per answer');
    assert.ok(polls.resent > 0);
    assert.equal(polls.protocolErrors, 0);
    assert.equal(polls.inFlight, 0);
  });

  it('an answer nobody asked for, delimited by the end of the connection, counts as a protocol error too', async () => {
    const { url, seen } = await scriptedServer((c, path) => {
      c.socket.end(ok(JSON.stringify({ path })) + 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end');
    });
    const polls = client(url, { connections: 1, pipelining: 1 });
    const reply = await polls.get('/one');
    assert.deepEqual([reply.status, JSON.parse(reply.body).path], [200, '/one']);
    // The client counts the error when the connection ends, then destroys it: the server sees it close.
    await once(seen[0]!.socket, 'close');
    assert.equal(polls.protocolErrors, 1);
  });

  it('a connection idle past idleMs is not written to again, even between two checks of the idle timer', async () => {
    const { url, seen } = await scriptedServer((c, path) => {
      c.socket.write(ok(JSON.stringify({ path })));
    });
    // The second poll goes out 450 ms (on the client's clock) after the first answer, idle past idleMs: the
    // flush that would write it must not use the idle connection, whether or not the idle timer has run.
    const clock = manualClock();
    const polls = client(url, { connections: 1, pipelining: 1, idleMs: 300, clock: clock.now, origin: 0 });
    assert.equal((await polls.get('/a')).status, 200);
    clock.ms += 450;
    const b = await polls.get('/b');
    assert.deepEqual([b.status, JSON.parse(b.body).path], [200, '/b']);
    assert.equal(seen.length, 2, 'the idle connection was replaced');
    assert.deepEqual(seen[0]!.paths, ['/a']);
  });

  it('a refused connection fails the requests with status 0 and does not throw', async () => {
    const { url, server } = await scriptedServer(() => {});
    server.close();
    await once(server, 'close');
    const polls = client(url, { connections: 2, pipelining: 2 });
    const replies = await Promise.all([polls.get('/a'), polls.get('/b'), polls.get('/c')]);
    assert.deepEqual(replies.map((r) => r.status), [0, 0, 0]);
    assert.equal(polls.inFlight, 0);
  });

  it('against node:http: base path, Host and extra headers are sent; chunked bodies and Retry-After are read', async () => {
    const server = createHttpServer((req, res) => {
      if (req.headers['x-api-key'] !== 'k-123') {
        res.writeHead(403).end();
      } else if (req.url === '/base/busy') {
        res.writeHead(503, { 'retry-after': '2', 'content-type': 'text/plain' }).end('busy');
      } else {
        // No Content-Length: node:http sends it chunked.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`{"url":"${req.url}",`);
        res.end(`"host":"${req.headers.host}"}`);
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    try {
      const polls = client(`http://127.0.0.1:${port}/base/`, { headers: { 'x-api-key': 'k-123' } });
      const [a, busy] = await Promise.all([polls.get('/serving_num?event_id=Sample'), polls.get('/busy')]);
      assert.equal(a.status, 200);
      assert.deepEqual(JSON.parse(a.body), { url: '/base/serving_num?event_id=Sample', host: `127.0.0.1:${port}` });
      assert.deepEqual([busy.status, busy.body, busy.retryAfterMs], [503, 'busy', 2000]);
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      server.closeAllConnections();
      server.close();
    }
  });

  it('close() answers everything queued or in flight with status 0; later gets too', async () => {
    let arrived: () => void = () => {};
    const firstArrived = new Promise<void>((resolve) => (arrived = resolve));
    const { url } = await scriptedServer(() => arrived());
    const polls = client(url, { connections: 1, pipelining: 1 });
    const pending: Array<Promise<Reply>> = [polls.get('/a'), polls.get('/b'), polls.get('/c')];
    await firstArrived; // /a is in flight on the connection, /b and /c are queued behind it
    await polls.close();
    assert.deepEqual((await Promise.all(pending)).map((r) => r.status), [0, 0, 0]);
    assert.equal((await polls.get('/d')).status, 0);
    assert.equal(polls.inFlight, 0);
  });
});
