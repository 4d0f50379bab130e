// Joins that carry an Idempotency-Key, as Anteroom's waiting page sends them, and what became of them after a
// fault (issue 35, items 3 and 4). During the fault each join gets a fresh key; a join refused (5xx) or left
// unanswered (a killed node) is sent again with ITS key once the store is back ("settled"), as the page does
// when the visitor presses Reserve again. Counted afterwards:
// - lost: an acknowledged (200) request ID without a place;
// - duplicated: two keys (or a key and its retry) holding two places, or two request IDs one position;
// - refused-then-applied: a refused join whose key already had a place before its retry (the retry got that
//   place: with its key, this is the promise kept, not a defect);
// - applied without a key: positions handed out (the queue counter) that no key holds — a refused join that
//   took effect and that no retry can find. Numbering is gap-free, so this is the counter minus the places held.
// - longest: the longest answer to any join during the fault.

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { keyWindows, requestIdForIdempotencyKey } from '../../src/domain/idempotency-key.ts';
import { call } from '../distributed/fleet.ts';

export interface KeyedOutcome {
  acknowledged: number;
  refused: number;
  lost: number;
  duplicated: number;
  refusedThenApplied: number;
  appliedWithoutKey: number;
  longestAnswerMs: number;
}

const EVENT = 'Sample';

async function joinWithKey(url: string, key: string): Promise<{ status: number | null; requestId?: string; ms: number }> {
  const reply = await call(`${url}/assign_queue_num`, {
    method: 'POST',
    headers: { 'idempotency-key': `"${key}"` },
    body: JSON.stringify({ event_id: EVENT }),
  });
  if (!reply) return { status: null, ms: 0 };
  if (reply.status !== 200) return { status: reply.status, ms: reply.ms };
  return { status: 200, requestId: (JSON.parse(reply.text) as { api_request_id: string }).api_request_id, ms: reply.ms };
}

/** Joins from `concurrency` loops over `urls()` until stop(); each with a fresh Idempotency-Key. */
export function keyedStorm(urls: () => readonly string[], concurrency: number) {
  const acknowledged = new Map<string, string>();
  const refused: string[] = [];
  const other: string[] = [];
  let longest = 0;
  let running = true;
  const loops = Array.from({ length: concurrency }, async (_, loop) => {
    for (let i = loop; running; i++) {
      const targets = urls();
      const key = randomUUID();
      const answer = await joinWithKey(targets[i % targets.length] as string, key);
      longest = Math.max(longest, answer.ms);
      if (answer.status === 200) acknowledged.set(key, answer.requestId as string);
      else if (answer.status === null || answer.status >= 500) {
        refused.push(key);
        await sleep(50); // a failing (or killed) node answers at once: do not spin
      } else other.push(`${answer.status}`);
    }
  });
  return {
    acknowledged,
    refused,
    other,
    longestMs: () => longest,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function placeOf(url: string, requestId: string, deadline: number): Promise<number | null> {
  for (;;) {
    const reply = await call(`${url}/queue_num?event_id=${EVENT}&request_id=${requestId}`);
    if (reply?.status === 200) return (JSON.parse(reply.text) as { queue_number: number }).queue_number;
    if (reply && reply.status < 500) return null;
    if (Date.now() > deadline) throw new Error(`no answer about ${requestId} from ${url}`);
    await sleep(50);
  }
}

async function counter(url: string, path: string, field: string, deadline: number): Promise<number> {
  for (;;) {
    const reply = await call(`${url}/${path}?event_id=${EVENT}`);
    if (reply?.status === 200) return (JSON.parse(reply.text) as Record<string, number>)[field] as number;
    if (Date.now() > deadline) throw new Error(`no ${path} from ${url}`);
    await sleep(50);
  }
}

/** After the fault: retries every refused key, then counts (see the top of this file). */
export async function settle(url: string, storm: ReturnType<typeof keyedStorm>): Promise<KeyedOutcome> {
  // Generous: with --redis-min-replicas, a promoted primary answers only once a replica is in sync again.
  const deadline = Date.now() + 120_000;
  const positions: number[] = [];
  let lost = 0;
  for (const requestId of storm.acknowledged.values()) {
    const position = await placeOf(url, requestId, deadline);
    if (position === null) lost += 1;
    else positions.push(position);
  }
  let refusedThenApplied = 0;
  let duplicated = 0;
  for (const key of storm.refused) {
    const named = requestIdForIdempotencyKey(EVENT, key, '127.0.0.1', keyWindows(Date.now() / 1000).current);
    const before = await placeOf(url, named, deadline);
    if (before !== null) refusedThenApplied += 1;
    let retried: { status: number | null; requestId?: string } = { status: null };
    while (retried.status !== 200) {
      retried = await joinWithKey(url, key);
      if (retried.status !== 200 && Date.now() > deadline) throw new Error(`the retry of a refused join never succeeded (${retried.status})`);
      if (retried.status !== 200) await sleep(50);
    }
    const after = await placeOf(url, retried.requestId as string, deadline);
    if (retried.requestId !== named || (before !== null && after !== before)) duplicated += 1;
    if (after !== null) positions.push(after);
  }
  duplicated += positions.length - new Set(positions).size;
  const handedOut = (await counter(url, 'waiting_num', 'waiting_num', deadline)) + (await counter(url, 'serving_num', 'serving_counter', deadline));
  return {
    acknowledged: storm.acknowledged.size,
    refused: storm.refused.length,
    lost,
    duplicated,
    refusedThenApplied,
    appliedWithoutKey: handedOut - new Set(positions).size,
    longestAnswerMs: storm.longestMs(),
  };
}
