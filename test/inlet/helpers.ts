// Shared pieces of the inlet tests: a site health endpoint whose answer the test sets, a recording fake of
// the private API, and visitors who hold active tokens on a test node.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrivateApi, SessionStatus } from '../../src/inlet/private-api.ts';
import type { TestNode } from '../support/node.ts';

export interface HealthServer {
  url: string;
  /** What the next requests get. `delayMs` holds the answer back (timeouts). */
  answer: { status: number; body: string; delayMs: number };
  hits: number;
  close(): Promise<void>;
}

export async function startHealthServer(): Promise<HealthServer> {
  const state: HealthServer = {
    url: '',
    answer: { status: 200, body: '{"status":"ok"}', delayMs: 0 },
    hits: 0,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server: Server = createServer((_req, res) => {
    state.hits++;
    const { status, body, delayMs } = state.answer;
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    };
    if (delayMs > 0) setTimeout(send, delayMs).unref();
    else send();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`;
  return state;
}

export interface FakeApi extends PrivateApi {
  serving: number;
  active: number;
  /** Sessions that are open (closing one succeeds once). */
  open: Set<string>;
  calls: string[];
}

export function fakePrivateApi(initial: { serving?: number; active?: number; open?: string[] } = {}): FakeApi {
  const api: FakeApi = {
    serving: initial.serving ?? 0,
    active: initial.active ?? 0,
    open: new Set(initial.open ?? []),
    calls: [],
    async incrementServingCounter(eventId: string, by: number) {
      api.calls.push(`increment ${eventId} ${by}`);
      api.serving += by;
      return api.serving;
    },
    async numActiveTokens(eventId: string) {
      api.calls.push(`active ${eventId}`);
      return api.active;
    },
    async updateSession(eventId: string, requestId: string, status: SessionStatus) {
      api.calls.push(`update ${eventId} ${requestId} ${status}`);
      if (!api.open.delete(requestId)) return false;
      api.active--;
      return true;
    },
  };
  return api;
}

/** Joins `n` visitors, serves them and claims their tokens: they hold active tokens. Returns their IDs. */
export async function visitorsWithTokens(node: TestNode, n: number, eventId = 'Sample'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await node.post('/assign_queue_num', { event_id: eventId });
    assert.equal(res.status, 200);
    ids.push(((await res.json()) as { api_request_id: string }).api_request_id);
  }
  const inc = await node.admin('POST', '/increment_serving_counter', { event_id: eventId, increment_by: n });
  assert.equal(inc.status, 200);
  for (const id of ids) {
    const res = await node.post('/generate_token', { event_id: eventId, request_id: id });
    assert.equal(res.status, 200, await res.clone().text());
  }
  return ids;
}
