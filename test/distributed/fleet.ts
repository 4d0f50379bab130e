// Helpers of the distributed tests: several `anteroom serve` processes on one private Redis, a join storm
// spread over them, and waiting for a condition with a deadline (never a sleep standing in for it).

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { startChildNode, type ChildNode } from '../support/child-node.ts';

export const ADMIN_TOKEN = 'distributed-admin-token-0123456789';
export const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** A key prefix of its own for each test, so no test sees another's keys. */
export const freshPrefix = (): string => `ar-dist-${randomUUID().slice(0, 8)}:`;

/** Starts `count` nodes on `store` in parallel; extra args apply to every node. */
export async function startNodes(count: number, store: string, args: string[] = []): Promise<ChildNode[]> {
  return Promise.all(Array.from({ length: count }, () => startChildNode(['--store', store, ...args])));
}

/** SIGTERM (or the given signal) and wait for the exit; a node already gone is fine. */
export async function stopNode(node: ChildNode, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | string> {
  if (node.process.exitCode === null && node.process.signalCode === null) node.process.kill(signal);
  return node.exited;
}

export async function stopNodes(nodes: readonly ChildNode[]): Promise<void> {
  await Promise.all(nodes.map((node) => stopNode(node)));
}

/** Polls `check` until it returns a truthy value (returned) or the deadline passes (throws `what`). */
export async function waitFor<T>(what: string, check: () => Promise<T> | T, timeoutMs = 10_000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await sleep(everyMs);
  }
}

const dispatcher = new Agent({ connections: 128, headersTimeout: 10_000, bodyTimeout: 10_000 });

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  ms: number;
}

/** One HTTP call; `null` when the connection failed (a killed node): never an acknowledgement. */
export async function call(url: string, init: RequestInit = {}): Promise<Reply | null> {
  const started = Date.now();
  try {
    // @ts-expect-error undici dispatcher option of Node's fetch
    const response = await fetch(url, { ...init, dispatcher });
    return { status: response.status, headers: response.headers, text: await response.text(), ms: Date.now() - started };
  } catch {
    return null;
  }
}

export async function json<T>(url: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const reply = await call(url, init);
  assert.ok(reply, `no answer from ${url}`);
  return { status: reply.status, body: JSON.parse(reply.text) as T };
}

export async function join(url: string, eventId = 'Sample'): Promise<string | null> {
  const reply = await call(`${url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: eventId }) });
  if (!reply || reply.status !== 200) return null;
  return (JSON.parse(reply.text) as { api_request_id: string }).api_request_id;
}

/**
 * Joins from `concurrency` loops, each going round the given nodes, until stop(); keeps every acknowledged
 * (200) request ID. `urls()` is read at every call, so a test can take a killed node out of the rotation.
 */
export function joinStorm(urls: () => readonly string[], concurrency: number, eventId = 'Sample') {
  const acknowledged: string[] = [];
  let failures = 0;
  let running = true;
  let longest = 0;
  const loops = Array.from({ length: concurrency }, async (_, loop) => {
    for (let i = loop; running; i++) {
      const targets = urls();
      const started = Date.now();
      const id = await join(targets[i % targets.length] as string, eventId);
      longest = Math.max(longest, Date.now() - started);
      if (id) acknowledged.push(id);
      else {
        failures += 1;
        await sleep(2); // a failing node answers at once: do not spin
      }
    }
  });
  return {
    acknowledged,
    failures: () => failures,
    /** The longest time a join took to be answered (any answer), in ms. */
    longestMs: () => longest,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/**
 * The position of each request ID, asked of the given nodes in turn; fails if one has none. A 503 is the node
 * saying the store did not answer within its bound (a node just after a failover, on a busy machine): it says
 * nothing of the place, so that read is asked again, for up to `unavailableForMs` in all; any other answer but
 * 200 fails at once.
 */
export async function positionsOf(urls: readonly string[], ids: readonly string[], eventId = 'Sample', unavailableForMs = 20_000): Promise<number[]> {
  const positions: number[] = new Array(ids.length);
  const deadline = Date.now() + unavailableForMs;
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < ids.length) {
        const i = next++;
        const url = urls[i % urls.length] as string;
        for (;;) {
          const { status, body } = await json<{ queue_number: number; error?: string }>(
            `${url}/queue_num?event_id=${eventId}&request_id=${ids[i]}`,
          );
          if (status === 503 && Date.now() < deadline) {
            await sleep(50);
            continue;
          }
          assert.equal(status, 200, `acknowledged request ${ids[i]} has no position (asked ${url}: ${JSON.stringify(body)})`);
          positions[i] = body.queue_number;
          break;
        }
      }
    }),
  );
  return positions;
}

/** Sum of a counter's samples in a node's /metrics text matching every given label. */
export async function metricValue(url: string, name: string, labels: Record<string, string>): Promise<number> {
  const reply = await call(`${url}/metrics`);
  assert.ok(reply && reply.status === 200, `no /metrics from ${url}`);
  return metricInText(reply.text, name, labels);
}

/** Sum of a counter's samples in a /metrics text matching every given label. */
export function metricInText(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.indexOf('}'));
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) {
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}
