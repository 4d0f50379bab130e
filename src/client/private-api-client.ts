// The one client of the private API (spec/core-api.md "Private API"), for every caller outside the server:
// the standalone inlets and the inlet Lambdas, the load tester's admission driver and, bundled by Vite, the
// control panel in the browser. It needs only fetch and WebCrypto (aws4fetch's signer), so the same module
// runs in Node and in a page; it imports nothing else from src/, so adapters and the browser build can use it.
//
// Authentication: the admin bearer token, or AWS Signature Version 4 (service execute-api; the canonical URI
// is the full path including the private prefix, as the server verifies it), signed as VWR's control panel
// signed with aws4fetch: host and x-amz-date, plus x-amz-security-token with temporary credentials. So the
// client also drives VWR's own private API, whose paths and answers are the same.
// Secrets stay in this object: never logged, never put in an error message.

import { AwsV4Signer } from 'aws4fetch';

/** How a caller authenticates to the private API. */
export type PrivateApiCredentials =
  | { adminToken: string }
  | {
      accessKeyId: string;
      secretAccessKey: string;
      /** Region of the SigV4 credential scope. Default us-east-1. */
      region?: string | undefined;
      /** With temporary credentials (an IAM role's). */
      sessionToken?: string | undefined;
    };

/** A private-API call that did not answer as expected. `status` 0 = no answer (network, timeout, aborted). */
export class PrivateApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PrivateApiError';
    this.status = status;
  }
  /** A 4xx: wrong credentials, unknown event, bad input. Retrying the same call will not help. */
  get permanent(): boolean {
    return this.status >= 400 && this.status < 500;
  }
}

export interface PrivateApiClientOptions {
  /** Base URL of the private API, e.g. http://127.0.0.1:8080/private */
  baseUrl: string;
  credentials: PrivateApiCredentials;
  /** A call still unanswered after this long fails with status 0. Default: no limit of the client's own. */
  timeoutMs?: number | undefined;
  /** Aborting it fails the calls in flight and every later one with status 0 (the load tester's end of run). */
  signal?: AbortSignal | undefined;
  /**
   * Bodies go out with `Content-Type: application/json` (the default), or, when false, with none: as text/plain,
   * like VWR's control panel sends them. The private API parses either as JSON.
   */
  jsonContentType?: boolean | undefined;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface Reply {
  status: number;
  body: unknown;
  text: string;
  what: string;
}

export class PrivateApiClient {
  /** The base URL without a trailing slash. */
  readonly baseUrl: string;
  readonly #credentials: PrivateApiCredentials;
  readonly #timeoutMs: number | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #jsonContentType: boolean;
  /** SigV4 signing keys derived for a day and region, so each call signs with two HMACs instead of six. */
  readonly #signingKeys = new Map<string, ArrayBuffer>();

  constructor(options: PrivateApiClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#credentials = options.credentials;
    this.#timeoutMs = options.timeoutMs;
    this.#signal = options.signal;
    this.#jsonContentType = options.jsonContentType ?? true;
  }

  /** Who is calling, without the secret: "admin token" or "access key <id>". */
  get identity(): string {
    return 'adminToken' in this.#credentials ? 'admin token' : `access key ${this.#credentials.accessKeyId}`;
  }

  /**
   * One authenticated call, signed afresh (a SigV4 signature carries the time). `path` is relative to the base
   * URL and carries the query, e.g. "/num_active_tokens?event_id=Sample"; `body` is sent as JSON. Resolves with
   * the answer whatever its status; rejects with a PrivateApiError of status 0 when there is none.
   */
  async send(method: Method, path: string, body?: unknown): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = text !== undefined && this.#jsonContentType ? { 'content-type': 'application/json' } : {};
    const signals = [this.#signal, this.#timeoutMs === undefined ? undefined : AbortSignal.timeout(this.#timeoutMs)].filter(
      (signal) => signal !== undefined,
    );
    try {
      return await fetch(url, {
        method,
        headers: await this.#authenticated(method, url, headers, text),
        ...(text === undefined ? {} : { body: text }),
        // Every answer is live state: never one from a browser cache.
        cache: 'no-store',
        ...(signals.length === 0 ? {} : { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) }),
      });
    } catch (error) {
      const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
      const why =
        e.name === 'TimeoutError' ? `no answer within ${this.#timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message);
      throw new PrivateApiError(0, `${method} ${url.pathname}: ${why}`, { cause: error });
    }
  }

  /** POST /increment_serving_counter; returns the new serving counter. `by` 0 reads it unchanged. */
  async incrementServingCounter(eventId: string, by: number): Promise<number> {
    const reply = await this.#call('POST', '/increment_serving_counter', { event_id: eventId, increment_by: by });
    if (reply.status !== 200) fail(reply);
    return numberField(reply, 'serving_num');
  }

  /** GET /num_active_tokens. */
  async numActiveTokens(eventId: string): Promise<number> {
    const reply = await this.#call('GET', `/num_active_tokens?${new URLSearchParams({ event_id: eventId })}`);
    if (reply.status !== 200) fail(reply);
    return numberField(reply, 'active_tokens');
  }

  /**
   * POST /update_session; true when this call closed the session, false when it answered 404 (no token set
   * for the ID, or its session was already closed): "not closed now", not a failure.
   */
  async updateSession(eventId: string, requestId: string, status: 1 | -1): Promise<boolean> {
    const reply = await this.#call('POST', '/update_session', { event_id: eventId, request_id: requestId, status });
    if (reply.status === 200) return true;
    if (reply.status === 404) return false;
    return fail(reply);
  }

  /**
   * GET /draw_positions: the entries of the room's draw (SHA-256 hex of the request IDs) and the positions they
   * got, in join order, from `offset` (at most `limit`, ≤ 5,000); null before the draw has taken place (202).
   */
  async drawPositions(
    eventId: string,
    offset: number,
    limit: number,
  ): Promise<{ firstPosition: number; total: number; entries: string[]; positions: number[] } | null> {
    const query = new URLSearchParams({ event_id: eventId, offset: String(offset), limit: String(limit) });
    const reply = await this.#call('GET', `/draw_positions?${query}`);
    if (reply.status === 202) return null;
    if (reply.status !== 200) fail(reply);
    const { entries, positions } = (reply.body ?? {}) as { entries?: unknown; positions?: unknown };
    if (
      !Array.isArray(positions) ||
      !positions.every(Number.isInteger) ||
      !Array.isArray(entries) ||
      entries.length !== positions.length ||
      !entries.every((entry) => typeof entry === 'string')
    ) {
      fail({ ...reply, text: `no entries and positions: ${reply.text.slice(0, 200)}` });
    }
    return {
      firstPosition: numberField(reply, 'first_position'),
      total: numberField(reply, 'total'),
      entries: entries as string[],
      positions: positions as number[],
    };
  }

  async #call(method: Method, path: string, body?: unknown): Promise<Reply> {
    const response = await this.send(method, path, body);
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text, what: `${method} ${new URL(this.baseUrl + path).pathname}` };
  }

  async #authenticated(method: Method, url: URL, headers: Record<string, string>, body: string | undefined): Promise<Record<string, string>> {
    const credentials = this.#credentials;
    if ('adminToken' in credentials) return { ...headers, authorization: `Bearer ${credentials.adminToken}` };
    const signer = new AwsV4Signer({
      method,
      url: url.href,
      headers,
      ...(body === undefined ? {} : { body }),
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      ...(credentials.sessionToken ? { sessionToken: credentials.sessionToken } : {}),
      service: 'execute-api',
      region: credentials.region ?? 'us-east-1',
      cache: this.#signingKeys,
    });
    // The signed headers: Authorization, X-Amz-Date (and X-Amz-Security-Token) next to those given. Host is
    // signed from the URL and set by fetch; Content-Type is sent but, as aws4fetch does, not signed.
    return Object.fromEntries((await signer.sign()).headers);
  }
}

function fail(reply: Reply): never {
  const error = (reply.body as { error?: unknown } | undefined)?.error;
  const detail = typeof error === 'string' ? error : reply.text.slice(0, 200);
  throw new PrivateApiError(reply.status, `${reply.what} answered ${reply.status}: ${detail}`);
}

/** VWR sent numbers as strings; accept either. */
function numberField(reply: Reply, field: string): number {
  const value = Number((reply.body as Record<string, unknown> | undefined)?.[field]);
  if (!Number.isFinite(value)) fail({ ...reply, text: `no number in "${field}": ${reply.text.slice(0, 200)}` });
  return value;
}
