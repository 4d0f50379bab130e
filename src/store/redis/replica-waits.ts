// Replica waits (--redis-min-replicas N): an answer is given only once N replicas hold the state it was built
// from. A write script is followed, on the same connection and in one pipeline, by a barrier write and
// `WAIT N timeout`. The barrier matters (issue 35): WAIT waits for the replication offset of the connection's
// own last write, and a script that wrote nothing (an idempotent claim finding its token set, a repeated join
// finding its place) moves no offset, so WAIT would return at once although the state the script read may
// sit on the primary only (written by another node whose own WAIT failed). The barrier is a tiny SET in the
// script's hash slot (so a Cluster sends it to the same primary); WAIT then covers everything the primary
// had applied when the script ran. The reads that answer visitors (a place, a claim's context, a pre-queue
// entry) are confirmed the same way: a 200 never rests on state that a failover may take back.

import type { Cluster } from 'ioredis';
import type { RedisClient } from './scripts.ts';

type Arg = string | number | Buffer;

/** How long the barrier key lives: it holds nothing anyone reads. */
const BARRIER_TTL_MS = 10_000;

/** A key in the same hash slot as `key` (its {tag}, or the whole key as the tag when it has none). */
export function barrierKeyFor(key: string): string {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  if (close > open + 1) return `${key}:wb`;
  return `{${key}}:wb`;
}

/**
 * Runs the script `command` with `args`, then the barrier and WAIT on the same connection: the result counts
 * only once `count` replicas have everything the primary had applied by then. Too few replicas in time is an
 * error (NOREPLICAS: the store answers 503), never a success.
 */
export async function runAndWait(
  client: RedisClient,
  command: string,
  args: readonly Arg[],
  firstKey: string,
  replicas: { count: number; timeoutMs: number },
): Promise<unknown> {
  const barrier = barrierKeyFor(firstKey);
  // A Cluster answers MOVED/ASK for a slot that moved (a failover): the script did not run. ioredis follows
  // redirections of single commands but not of this pipeline (WAIT's reply is not an error), so refresh the
  // slots and send it again; the caller's command timeout bounds the whole.
  for (let attempt = 1; ; attempt++) {
    const pipeline = client.pipeline() as unknown as Record<string, (...args: Arg[]) => unknown> & {
      exec(): Promise<[Error | null, unknown][] | null>;
    };
    (pipeline[command] as (...args: Arg[]) => unknown).call(pipeline, ...args);
    (pipeline.set as (...args: Arg[]) => unknown).call(pipeline, barrier, '1', 'PX', BARRIER_TTL_MS);
    (pipeline.wait as (...args: Arg[]) => unknown).call(pipeline, replicas.count, replicas.timeoutMs);
    const results = await pipeline.exec();
    const [script, set, wait] = results ?? [];
    if (!script || !set || !wait) throw new Error('the Redis pipeline returned no result');
    if (script[0]) {
      const cluster = client as Cluster;
      if (cluster.isCluster && attempt < 3 && /^(MOVED|ASK) /.test(script[0].message)) {
        await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
        continue;
      }
      throw script[0];
    }
    if (set[0]) throw set[0];
    if (wait[0]) throw wait[0];
    const acknowledged = Number(wait[1]);
    if (acknowledged < replicas.count) {
      throw new Error(
        `NOREPLICAS the answer's state reached ${acknowledged} of the ${replicas.count} replicas required within ${replicas.timeoutMs} ms`,
      );
    }
    return script[1];
  }
}
