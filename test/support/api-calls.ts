// Calls the contract tests make again and again, against a TestNode: read a response whole, join, look a
// position up, serve up to a position, collect emitted events.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Envelope } from '../../src/events/envelope.ts';
import type { TestNode } from './node.ts';

export type Body = Record<string, unknown>;

export interface Read<T> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

/** The status, headers, raw text and parsed JSON of a response. */
export async function read<T = Body>(response: Promise<Response>): Promise<Read<T>> {
  const res = await response;
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

export interface TokenBody {
  access_token: string;
  refresh_token: string;
  id_token: string;
  token_type: string;
  expires_in: number;
}

export async function join(node: TestNode, eventId = 'Sample'): Promise<string> {
  const res = await read<{ api_request_id: string }>(node.post('/assign_queue_num', { event_id: eventId }));
  assert.equal(res.status, 200, res.text);
  return res.body.api_request_id;
}

export async function positionOf(node: TestNode, requestId: string, eventId = 'Sample'): Promise<number> {
  const res = await read<{ queue_number: number }>(node.get(`/queue_num?event_id=${eventId}&request_id=${requestId}`));
  assert.equal(res.status, 200, res.text);
  return res.body.queue_number;
}

/**
 * Empties the events (reset_initial_state): a test that starts with this sees no position, token, counter
 * value or serving history left by the tests before it on a shared node. The clock is not reset.
 */
export async function resetEvents(node: TestNode, ...eventIds: string[]): Promise<void> {
  for (const eventId of eventIds.length > 0 ? eventIds : ['Sample']) {
    const res = await read(node.admin('POST', '/reset_initial_state', { event_id: eventId }));
    assert.equal(res.status, 200, res.text);
  }
}

/** Moves the serving counter exactly to `value` through the private API. */
export async function serveUpTo(node: TestNode, value: number, eventId = 'Sample'): Promise<void> {
  const { serving } = await node.room.reports.counters(eventId);
  if (value === serving) return;
  const res = await read(node.admin('POST', '/increment_serving_counter', { event_id: eventId, increment_by: value - serving }));
  assert.equal(res.status, 200, res.text);
}

/** A visitor who joined and whose position is being served. */
export async function servedVisitor(node: TestNode, eventId = 'Sample'): Promise<string> {
  const id = await join(node, eventId);
  const position = await positionOf(node, id, eventId);
  const { serving } = await node.room.reports.counters(eventId);
  if (serving < position) await serveUpTo(node, position, eventId);
  return id;
}

export function collectEvents(node: TestNode): { events: Envelope[]; stop: () => void } {
  const events: Envelope[] = [];
  const stop = node.bus.subscribe({ name: `test-${randomUUID()}`, deliver: (e) => events.push(e) });
  return { events, stop };
}
