// The waiting visitors' polls (GET /serving_num, /waiting_num, /queue_num) on keep-alive HTTP/1.1
// connections of node:net (node:tls for https), pipelined: one process must drive 50,000 visitors polling
// once a second, i.e. 50,000 requests/s, and on the 2-core reference machine it shares the CPU with the
// server.
//
// Why not undici, which carries everything else (joins, claims, the private API): its Pool through `dispatch`
// costs this process too much per GET, pipelined or not (bench/loadtest-client.ts, 2026-11-22, Node 24,
// undici 7.30, 128 connections, the target on the other core; medians of 3 rounds, CPU µs per request):
//
//                                           undici p1   undici p8   this, p1   this, p8
//   closed loop, canned server                17.2        14.1         8.8        2.7
//   50,000 visitors polling 1/s, canned       21.6        15.7        12.0        4.8
//   50,000 visitors polling 1/s, Anteroom     21.3        15.4        13.4        8.2
//
// At 50,000 polls/s undici without pipelining saturates the core (it reaches ~46,000/s with p50 ~1 s);
// pipelined (`pipelining: 8`, `blocking: false`) it keeps up only at 76–99 % of the core before the journey's
// own work, with p99 of 0.1–0.6 s. The per-request machinery (a Request object, headers parsed into objects,
// llhttp callbacks, one socket write per request) is the cost. This module does only what a poll needs:
// request bytes built once per path, every request issued in the same event-loop turn written with one
// write per connection, up to `pipelining` requests in flight per connection, and a small incremental
// response parser (src/loadtest/http1-response-parser.ts).
//
// Accounting: every get() resolves exactly once, with the response to that very request (responses come back
// in request order on a connection) or with status 0. A connection whose bytes cannot be framed is destroyed
// and every request on it fails with status 0 (counted in `protocolErrors`); a later flush opens a fresh one.
// When the server announces the end of a connection (`Connection: close`, a body delimited by the close),
// requests pipelined behind that response were never processed and are sent again on another connection
// (each connection answers at least the response that announced its end, so this always progresses; a
// request is re-sent at most MAX_RESENDS times); an unannounced close, a reset or a timeout fails what was in
// flight with status 0, and the visitor's own retry (with back-off) takes over.
//
// Connection use: each flush fills the lowest-numbered connections first, so at a low poll rate the same few
// connections carry every poll and stay alive, and only as many connections are open as the rate needs;
// at a high rate every connection takes an equal share. A connection idle for `idleMs` is never written to
// again: it is closed (by the timer, or by the flush that would have used it) and a new one opened. Latency runs from get() to the end of that request's own
// response: it includes a wait for a free connection slot (as with undici) and, when pipelined, the
// responses ahead of it on its connection.

import { isIP, connect as netConnect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect } from 'node:tls';
import type { Reply } from './http-client.ts';
import { CUT_SHORT, Http1ResponseParser, type ParsedResponse } from './http1-response-parser.ts';

export interface PollConnectionsOptions {
  /** Keep-alive connections to open (at most). */
  connections: number;
  /** Requests in flight at once on one connection; 1 = keep-alive without pipelining. Default 8. */
  pipelining?: number;
  /** Added to every request (e.g. x-api-key). */
  headers?: Record<string, string>;
  /** The run's time origin (performance.now() at start), so sentAt/receivedAt are run-relative. */
  origin: number;
  /** A request not answered after this long fails, with everything else in flight on its connection. */
  timeoutMs?: number;
  /**
   * A connection idle this long is closed by the client, before a server's keep-alive timeout can close it just
   * as a request is written on it (node:http's keepAliveTimeout is 5 s; many servers use 5 s). Default 4 s.
   */
  idleMs?: number;
  /** Monotonic milliseconds (the timeouts and idle checks read it). Default performance.now; tests pass their own. */
  clock?: () => number;
}

interface Pending {
  bytes: Buffer;
  sentAt: number;
  resolve: (reply: Reply) => void;
  /** Times sent again after a connection announced its close before answering it. */
  resends: number;
}

const DEFAULT_PIPELINING = 8;
/** Request heads kept ready, by path: the polls' few distinct paths (a path naming a request ID is built each time). */
const MAX_CACHED_PATHS = 256;
/** More than any pipelining depth (64 at most): a request can be behind that many announced closes only on a pathological server. */
const MAX_RESENDS = 64;

class Connection {
  readonly socket: Socket;
  readonly parser: Http1ResponseParser;
  /** Written, awaiting their responses, in order. */
  readonly inFlight: Pending[] = [];
  /** No more requests may be written: the server announced a close, or the connection failed. */
  closing = false;
  /** When a response last completed, or the first request was written to an idle connection (stall check). */
  lastProgressAt = 0;

  constructor(socket: Socket, sink: (c: Connection, r: ParsedResponse) => boolean) {
    this.socket = socket;
    this.parser = new Http1ResponseParser((response) => sink(this, response));
  }
}

export class PollConnections {
  /** Connections destroyed because their bytes could not be framed as HTTP/1.1 responses. */
  protocolErrors = 0;
  /** Requests sent again after their connection was closed by the server before answering them (each time counted). */
  resent = 0;
  inFlight = 0;
  private readonly slots: Array<Connection | null>;
  private readonly pipelining: number;
  private readonly origin: number;
  private readonly timeoutMs: number;
  private readonly idleMs: number;
  private readonly clock: () => number;
  private readonly host: string;
  private readonly port: number;
  private readonly tls: boolean;
  private readonly servername: string;
  private readonly prefix: string;
  private readonly headerLines: string;
  private readonly heads = new Map<string, Buffer>();
  /** Issued, not yet written (a ring would save little: it is drained every turn). */
  private queue: Pending[] = [];
  private queueHead = 0;
  private flushScheduled = false;
  private closed = false;
  private readonly timer: NodeJS.Timeout;

  constructor(baseUrl: string, options: PollConnectionsOptions) {
    const url = new URL(baseUrl);
    this.tls = url.protocol === 'https:';
    this.host = url.hostname.replace(/^\[|\]$/g, '');
    // SNI names a host, never an address (RFC 6066).
    this.servername = isIP(this.host) === 0 ? this.host : '';
    this.port = url.port ? Number(url.port) : this.tls ? 443 : 80;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.pipelining = Math.max(1, options.pipelining ?? DEFAULT_PIPELINING);
    this.origin = options.origin;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.idleMs = options.idleMs ?? 4000;
    this.clock = options.clock ?? (() => performance.now());
    this.slots = Array.from({ length: Math.max(1, options.connections) }, () => null);
    let lines = `Host: ${url.host}\r\n`;
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) throw new Error(`header ${name} contains a line break`);
      lines += `${name}: ${value}\r\n`;
    }
    this.headerLines = lines;
    this.timer = setInterval(() => this.expire(), Math.min(1000, this.timeoutMs, this.idleMs));
    this.timer.unref();
  }

  now(): number {
    return this.clock() - this.origin;
  }

  /**
   * GET `path` (relative to the base URL's path, e.g. "/serving_num?event_id=Sample"). Never rejects; a path
   * with white space is the caller's bug and throws.
   */
  get(path: string): Promise<Reply> {
    const sentAt = this.now();
    if (this.closed) return Promise.resolve({ status: 0, body: 'client closed', retryAfterMs: null, sentAt, receivedAt: sentAt });
    const bytes = this.requestBytes(path);
    this.inFlight++;
    return new Promise<Reply>((resolve) => {
      this.queue.push({ bytes, sentAt, resolve, resends: 0 });
      this.scheduleFlush();
    });
  }

  /** Fails everything still queued or in flight (status 0) and closes the connections. */
  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      clearInterval(this.timer);
      for (let i = 0; i < this.slots.length; i++) {
        const c = this.slots[i];
        if (c) this.drop(c, 'client closed', false);
      }
      const queued = this.queue.slice(this.queueHead);
      this.queue = [];
      this.queueHead = 0;
      for (const p of queued) this.settle(p, 0, 'client closed', null);
    }
    return Promise.resolve();
  }

  private requestBytes(path: string): Buffer {
    const cached = this.heads.get(path);
    if (cached) return cached;
    if (/[\s]/.test(path)) throw new Error(`path contains white space: ${path.slice(0, 80)}`);
    const bytes = Buffer.from(`GET ${this.prefix}${path} HTTP/1.1\r\n${this.headerLines}\r\n`, 'latin1');
    if (this.heads.size < MAX_CACHED_PATHS && !path.includes('request_id=')) this.heads.set(path, bytes);
    return bytes;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    // After the current turn: the timer wheel's whole tick, or every answer of one socket read, is batched.
    setImmediate(this.flush);
  }

  /** Writes queued requests, spread over the connections, one write per connection. */
  private readonly flush = (): void => {
    this.flushScheduled = false;
    if (this.closed) return;
    const n = this.slots.length;
    const batches = new Map<Connection, Pending[]>();
    let waiting = this.queue.length - this.queueHead;
    const idleSince = this.now() - this.idleMs;
    // Spread evenly from the first connection on: each pass gives a connection at most an equal share of what
    // is left, up to its free slots; another pass while some connections took less than their share and others
    // have room. Starting at slot 0 every time keeps a slow trickle of polls on the same connections.
    while (waiting > 0) {
      const share = Math.max(1, Math.ceil(waiting / n));
      let took = 0;
      for (let index = 0; index < n && waiting > 0; index++) {
        let c = this.slots[index] ?? null;
        // Idle too long: the server may be closing it right now. Nothing is in flight on it to resend.
        if (c !== null && c.inFlight.length === 0 && !batches.has(c) && c.lastProgressAt < idleSince) this.drop(c, 'idle', true);
        c = this.slots[index] ?? null;
        if (c === null) c = this.open(index);
        const batch = batches.get(c);
        const free = this.pipelining - c.inFlight.length - (batch ? batch.length : 0);
        if (free <= 0) continue;
        const take = Math.min(free, share, waiting);
        const list = batch ?? [];
        for (let i = 0; i < take; i++) list.push(this.queue[this.queueHead++]!);
        if (!batch) batches.set(c, list);
        waiting -= take;
        took += take;
      }
      if (took === 0) break;
    }
    if (this.queueHead === this.queue.length) {
      this.queue = [];
      this.queueHead = 0;
    } else if (this.queueHead > 4096) {
      this.queue = this.queue.slice(this.queueHead);
      this.queueHead = 0;
    }
    const writtenAt = this.now();
    for (const [c, list] of batches) {
      if (c.inFlight.length === 0) c.lastProgressAt = writtenAt;
      for (const p of list) c.inFlight.push(p);
      c.socket.write(list.length === 1 ? list[0]!.bytes : Buffer.concat(list.map((p) => p.bytes)));
    }
    // Requests left over wait for a free slot: each response that frees one flushes again.
  };

  private open(index: number): Connection {
    const socket = this.tls
      ? tlsConnect({ host: this.host, port: this.port, ALPNProtocols: ['http/1.1'], ...(this.servername ? { servername: this.servername } : {}) })
      : netConnect({ host: this.host, port: this.port });
    socket.setNoDelay(true);
    const c = new Connection(socket, this.onResponse);
    c.lastProgressAt = this.now();
    this.slots[index] = c;
    socket.on('data', (chunk: Buffer) => {
      const problem = c.parser.push(chunk);
      if (problem !== null) {
        this.protocolErrors++;
        this.drop(c, `malformed response: ${problem}`, false);
      } else if (c.closing) {
        // The server announced the end of this connection: what is pipelined behind goes elsewhere now.
        this.drop(c, 'connection closed by the server', true);
      }
    });
    socket.on('end', () => {
      const problem = c.parser.end();
      // An answer cut short by the close is a network error; bytes that cannot be framed are malformed.
      if (problem !== null && problem !== CUT_SHORT) this.protocolErrors++;
      this.drop(c, problem ?? 'connection closed by the server', c.closing);
    });
    socket.on('error', (error: Error) => this.drop(c, error.message, c.closing));
    socket.on('close', () => this.drop(c, 'connection closed', c.closing));
    return c;
  }

  private readonly onResponse = (c: Connection, response: ParsedResponse): boolean => {
    const p = c.inFlight.shift();
    if (p === undefined) return false;
    c.lastProgressAt = this.now();
    if (response.close) c.closing = true;
    this.settle(p, response.status, response.body, response.retryAfterMs);
    if (this.queue.length > this.queueHead) this.scheduleFlush();
    return true;
  };

  /**
   * Ends a connection. With `announced` (the server said it would close), requests it had not answered are
   * sent again elsewhere (at most MAX_RESENDS times each); otherwise they fail with status 0.
   */
  private drop(c: Connection, reason: string, announced: boolean): void {
    const index = this.slots.indexOf(c);
    if (index >= 0) this.slots[index] = null;
    c.closing = true;
    if (!c.socket.destroyed) c.socket.destroy();
    const orphans = c.inFlight.splice(0);
    let requeued = false;
    for (const p of orphans) {
      if (announced && p.resends < MAX_RESENDS && !this.closed) {
        p.resends++;
        this.resent++;
        this.queue.push(p);
        requeued = true;
      } else {
        this.settle(p, 0, reason, null);
      }
    }
    if (requeued || this.queue.length > this.queueHead) this.scheduleFlush();
  }

  private settle(p: Pending, status: number, body: string, retryAfterMs: number | null): void {
    this.inFlight--;
    p.resolve({ status, body, retryAfterMs, sentAt: p.sentAt, receivedAt: this.now() });
  }

  /** Fails connections with no answer for longer than the timeout; closes those idle for longer than idleMs. */
  private expire(): void {
    const now = this.now();
    for (const c of this.slots) {
      if (c === null) continue;
      if (c.inFlight.length > 0) {
        if (c.lastProgressAt < now - this.timeoutMs) this.drop(c, `no answer within ${this.timeoutMs} ms`, false);
      } else if (c.lastProgressAt < now - this.idleMs) {
        this.drop(c, 'idle', true);
      }
    }
  }
}
