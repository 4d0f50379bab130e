// A pooled HTTP/1.1 client for one base URL (undici Pool, keep-alive, no pipelining by default). Requests go
// through `dispatch` with a minimal handler rather than `request`: no stream per response. It carries the
// joins, claims and the tester's own readings; the waiting visitors' polls, by far the most requests, go
// through src/loadtest/poll-connections.ts unless `--pipelining 0`, and the private API through
// src/client/private-api-client.ts. Never throws: a network error is status 0.

import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

export interface Reply {
  /** HTTP status, or 0 for a network error / timeout. */
  status: number;
  body: string;
  /** From Retry-After (seconds) on 429/503, when present. */
  retryAfterMs: number | null;
  /** Milliseconds since the client's time origin. */
  sentAt: number;
  receivedAt: number;
}

export interface ApiClientOptions {
  connections: number;
  /** Requests in flight at once on one connection (HTTP/1.1 pipelining); 1 = none. Only bench/loadtest-client.ts
   * sets it, to compare undici's pipelining with the polling connections'. */
  pipelining?: number;
  /** Added to every request (e.g. x-api-key). */
  headers?: Record<string, string>;
  /** The run's time origin (performance.now() at start), so sentAt/receivedAt are run-relative. */
  origin: number;
  timeoutMs?: number;
}

export class ApiClient {
  /** Path prefix of the base URL, e.g. "/api" ('' for a bare origin). */
  private readonly prefix: string;
  private readonly pool: Pool;
  private readonly getHeaders: Record<string, string>;
  private readonly postHeaders: Record<string, string>;
  private readonly origin: number;
  /** undici holds back pipelining behind a "blocking" request (by default any but HEAD) until its headers arrive. */
  private readonly blocking: boolean;
  inFlight = 0;
  private closing: Promise<void> | null = null;

  constructor(baseUrl: string, options: ApiClientOptions) {
    const url = new URL(baseUrl);
    this.prefix = url.pathname.replace(/\/+$/, '');
    // Shared by every request without extra headers (undici only reads them): no object per poll.
    this.getHeaders = { ...options.headers };
    this.postHeaders = { 'content-type': 'application/json', ...options.headers };
    this.origin = options.origin;
    this.blocking = (options.pipelining ?? 1) <= 1;
    const timeout = options.timeoutMs ?? 30_000;
    this.pool = new Pool(url.origin, {
      connections: options.connections,
      pipelining: options.pipelining ?? 1,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      connectTimeout: 10_000,
      keepAliveTimeout: 30_000,
    });
  }

  now(): number {
    return performance.now() - this.origin;
  }

  get(path: string, headers?: Record<string, string>): Promise<Reply> {
    return this.send('GET', path, undefined, headers);
  }

  /** `path` is relative to the base URL's path (e.g. "/serving_num?event_id=Sample"). */
  send(method: 'GET' | 'POST', path: string, body?: string, extraHeaders?: Record<string, string>): Promise<Reply> {
    const sentAt = this.now();
    const common = body === undefined ? this.getHeaders : this.postHeaders;
    const headers = extraHeaders ? { ...common, ...extraHeaders } : common;
    this.inFlight++;
    return new Promise<Reply>((resolve) => {
      let status = 0;
      let retryAfterMs: number | null = null;
      const chunks: Buffer[] = [];
      const finish = (reply: Reply) => {
        this.inFlight--;
        resolve(reply);
      };
      this.pool.dispatch(
        { method, path: this.prefix + path, headers, blocking: this.blocking, ...(body === undefined ? {} : { body }) },
        {
          onRequestStart() {},
          onResponseStart(_controller, statusCode, responseHeaders) {
            status = statusCode;
            const retryAfter = responseHeaders['retry-after'];
            if (typeof retryAfter === 'string' && /^\d+$/.test(retryAfter)) retryAfterMs = Number(retryAfter) * 1000;
          },
          onResponseData(_controller, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd: () => {
            const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
            finish({ status, body: text, retryAfterMs, sentAt, receivedAt: this.now() });
          },
          onResponseError: (_controller, error) => {
            finish({ status: 0, body: error.message, retryAfterMs: null, sentAt, receivedAt: this.now() });
          },
        },
      );
    });
  }

  /** Aborts whatever is still in flight and closes the connections. */
  close(): Promise<void> {
    return (this.closing ??= this.pool.destroy());
  }
}

/** Parses a JSON body, or returns null (a load test never crashes on a malformed answer: it counts it). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
