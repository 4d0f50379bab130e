// Runs a room's draw at its start (spec rooms.md §3; the algorithm is ./draw.ts, the steps are the store's
// DrawStore): fix the entries (startDraw), read them in join order in chunks, compute the order (drawOrder
// yields to the event loop), number the places in chunks of at most `chunkSize` per store call, then number
// the visitors who joined meanwhile FIFO behind them until the store marks the draw done.
//
// Never long on the event loop: every store call moves at most one chunk, and the runner yields to the event
// loop between calls (a store answering synchronously, like SQLite, would otherwise chain them in one turn).
// Resumable: the progress is the store's, and the order is recomputed from the seed, so a runner that starts
// after a crash continues where the last one stopped and gives everyone the same place.
// One runner per room at a time: in this process by `running`; across nodes by a lease in the store (a job
// tick lasts a second, a draw of 100,000 entries a few), renewed at every chunk. A runner that finds the draw
// changed under it (a reset, another runner) stops.

import { randomUUID } from 'node:crypto';
import { DRAW_ALGORITHM, drawCommitment, drawOrder, newDrawSeed } from './draw.ts';
import type { DrawRecord, DrawSeed, DrawStore, LockStore, PrequeueEntry } from './ports/store.ts';

/** Entries per store call when the draw numbers places or reads the pre-queue. */
export const DRAW_CHUNK = 5_000;
/** A runner that stops renewing its lease (a crashed node) leaves the draw to another after this long. */
export const DRAW_LEASE_MS = 15_000;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A new secret seed with its commitment: stored only if the room has no draw yet. */
export function newDrawCandidate(): DrawSeed {
  const seed = newDrawSeed();
  return { seed, commitment: drawCommitment(seed), algorithm: DRAW_ALGORITHM };
}

/**
 * The entries a started draw orders, in join order: join orders 1..drawnThrough, less those who had left.
 * Read `chunk` at a time, yielding between reads; throws if they are not the `entryCount` the draw fixed.
 */
export async function readDrawnEntries(
  store: Pick<DrawStore, 'readPrequeue'>,
  eventId: string,
  draw: DrawRecord,
  chunk: number = DRAW_CHUNK,
): Promise<PrequeueEntry[]> {
  const entries: PrequeueEntry[] = [];
  let after = 0;
  while (after < draw.drawnThrough) {
    const page = await store.readPrequeue(eventId, after, Math.min(chunk, draw.drawnThrough - after));
    if (page.length === 0) break;
    for (const entry of page) if (entry.joinOrder <= draw.drawnThrough && !entry.left) entries.push(entry);
    after = (page.at(-1) as PrequeueEntry).joinOrder;
    await yieldToLoop();
  }
  if (entries.length !== draw.entryCount) {
    throw new Error(`draw of ${eventId}: ${entries.length} entries in the pre-queue, the draw fixed ${draw.entryCount}`);
  }
  return entries;
}

export interface DrawRunnerDeps {
  store: DrawStore & LockStore;
  /** Milliseconds since the epoch (the lease's clock). */
  nowMs: () => number;
  /** Entries per store call; default DRAW_CHUNK (tests use fewer to see several chunks). */
  chunkSize?: number | undefined;
}

export class DrawRunner {
  private readonly store: DrawStore & LockStore;
  private readonly nowMs: () => number;
  private readonly chunk: number;
  /** Names this process as the holder of a draw's lease. */
  private readonly owner = `draw:${randomUUID()}`;
  /** Rooms whose draw this process has seen done (until it resets them). */
  private readonly done = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();

  constructor(deps: DrawRunnerDeps) {
    this.store = deps.store;
    this.nowMs = deps.nowMs;
    this.chunk = Math.min(DRAW_CHUNK, Math.max(1, deps.chunkSize ?? DRAW_CHUNK));
  }

  /** Known to be done, from what this process saw (no store read): joins can skip the pre-queue. */
  knownDone(eventId: string): boolean {
    return this.done.has(eventId);
  }

  /** Whether the room's draw is done, reading the store unless this process already knows. */
  async isDone(eventId: string): Promise<boolean> {
    if (this.done.has(eventId)) return true;
    if ((await this.store.getDraw(eventId))?.state !== 'done') return false;
    this.done.add(eventId);
    return true;
  }

  /** Forgets what this process knew of the room's draw (after a reset). */
  forget(eventId: string): void {
    this.done.delete(eventId);
  }

  /** Runs the room's draw to its end, or returns when another runner has it; one run per room at a time. */
  run(eventId: string): Promise<void> {
    let run = this.running.get(eventId);
    if (!run) {
      run = this.draw(eventId).finally(() => this.running.delete(eventId));
      this.running.set(eventId, run);
    }
    return run;
  }

  private lease(eventId: string): Promise<boolean> {
    return this.store.tryAcquireLock(`draw:${eventId}`, this.owner, DRAW_LEASE_MS, this.nowMs());
  }

  private async draw(eventId: string): Promise<void> {
    if (await this.isDone(eventId)) return;
    if (!(await this.lease(eventId))) return;
    let draw: DrawRecord | null = await this.store.startDraw(eventId, newDrawCandidate());
    const seed = draw.seed;
    if (draw.state === 'drawing' && draw.progress < draw.entryCount) {
      draw = await this.numberPlaces(eventId, draw);
      if (!draw) return;
    }
    while (draw.state === 'drawing') {
      await yieldToLoop();
      if (!(await this.lease(eventId))) return;
      const next: DrawRecord | null = await this.store.numberLateArrivals(eventId, this.chunk);
      // Reset in between: the next tick starts the new draw.
      if (!next || next.seed !== seed) return;
      draw = next;
    }
    if (draw.state === 'done') this.done.add(eventId);
  }

  /** Numbers every place from the draw's progress on; null when the draw changed under this runner. */
  private async numberPlaces(eventId: string, started: DrawRecord): Promise<DrawRecord | null> {
    const entries = await readDrawnEntries(this.store, eventId, started, this.chunk);
    const order = await drawOrder(started.seed, entries.length);
    let draw = started;
    while (draw.progress < draw.entryCount) {
      if (!(await this.lease(eventId))) return null;
      const from = draw.progress;
      const to = Math.min(from + this.chunk, draw.entryCount);
      const ids: string[] = [];
      for (let place = from; place < to; place++) ids.push((entries[order[place] as number] as PrequeueEntry).requestId);
      const after = await this.store.numberDrawn(eventId, from, ids);
      // Another runner numbered the same places (the same ones: the order is the seed's) or the draw is gone.
      if (!after || after.seed !== started.seed || after.state !== 'drawing' || after.progress < to) return null;
      draw = after;
      await yieldToLoop();
    }
    return draw;
  }
}
