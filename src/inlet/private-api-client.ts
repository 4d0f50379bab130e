// The private API over HTTP, authenticated with SigV4 (service execute-api; the canonical URI is the full
// path including the private prefix, as the server verifies it) or the admin bearer token. Works against
// any Anteroom node, and against VWR's own private API (same paths and answers).

import { privateSigner, type PrivateAuth } from '../http/auth/client-signer.ts';
import type { PrivateApi } from './private-api.ts';

export type { PrivateAuth };

/** A private-API call that did not answer as expected. `status` 0 = no answer (network, timeout). */
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

export interface HttpPrivateApiOptions {
  /** Base URL of the private API, e.g. http://127.0.0.1:8080/private */
  privateUrl: string;
  auth: PrivateAuth;
  timeoutMs?: number;
}

export function httpPrivateApi(options: HttpPrivateApiOptions): PrivateApi {
  const base = new URL(options.privateUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const sign = privateSigner(options.auth);
  const timeoutMs = options.timeoutMs ?? 10_000;

  async function call(method: 'GET' | 'POST', name: string, query: Record<string, string>, body?: unknown) {
    const path = `${prefix}/${name}`;
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers = await sign({ method, host: base.host, path, query, ...(text === undefined ? {} : { body: text }) });
    const url = new URL(base.origin + path);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        // The signer signed content-type: application/json; send exactly that.
        headers: text === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(text === undefined ? {} : { body: text }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
      const why = e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message);
      throw new PrivateApiError(0, `${method} ${path}: ${why}`, { cause: error });
    }
    const answer = await response.text();
    let parsed: unknown;
    try {
      parsed = answer === '' ? undefined : JSON.parse(answer);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text: answer, what: `${method} ${path}` };
  }

  function fail(reply: { status: number; body: unknown; text: string; what: string }): never {
    const error = (reply.body as { error?: unknown } | undefined)?.error;
    const detail = typeof error === 'string' ? error : reply.text.slice(0, 200);
    throw new PrivateApiError(reply.status, `${reply.what} answered ${reply.status}: ${detail}`);
  }

  /** VWR sent numbers as strings; accept either. */
  function numberField(reply: { status: number; body: unknown; text: string; what: string }, field: string): number {
    const value = Number((reply.body as Record<string, unknown> | undefined)?.[field]);
    if (!Number.isFinite(value)) fail({ ...reply, text: `no number in "${field}": ${reply.text.slice(0, 200)}` });
    return value;
  }

  return {
    async incrementServingCounter(eventId, by) {
      const reply = await call('POST', 'increment_serving_counter', {}, { event_id: eventId, increment_by: by });
      if (reply.status !== 200) fail(reply);
      return numberField(reply, 'serving_num');
    },
    async numActiveTokens(eventId) {
      const reply = await call('GET', 'num_active_tokens', { event_id: eventId });
      if (reply.status !== 200) fail(reply);
      return numberField(reply, 'active_tokens');
    },
    async updateSession(eventId, requestId, status) {
      const reply = await call('POST', 'update_session', {}, { event_id: eventId, request_id: requestId, status });
      if (reply.status === 200) return true;
      if (reply.status === 404) return false;
      return fail(reply);
    },
  };
}
