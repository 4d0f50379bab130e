// Runs a room's draw at its start (spec rooms.md §3; the algorithm is ./draw.ts, the steps are the store's
// DrawStore): fix the entries (startDraw), read them in join order in chunks, compute the order (drawOrder
// yields to the event loop), number the places in chunks (at most 5,000 per store call), then number the
// visitors who joined meanwhile FIFO behind them until the store marks the draw done.
//
// Never long on the event loop: every store call moves one chunk, sized to take a few milliseconds
// (ChunkSizer), and the runner yields to the event loop between calls (a store answering synchronously, like
// SQLite, would otherwise chain them in one turn).
// Resumable: the progress is the store's, and the order is recomputed from the seed, so a runner that starts
// after a crash continues where the last one stopped and gives everyone the same place.
// One runner per room at a time: in this process by `running`; across nodes by a lease in the store (a job
// tick lasts a second, a draw of 100,000 entries a few), renewed at every chunk. A runner that finds the draw
// changed under it (a reset, another runner) stops.

import { randomUUID } from 'node:crypto';
import { DRAW_ALGORITHM, drawCommitment, drawOrder, newDrawSeed } from './draw.ts';
import type { DrawRecord, DrawSeed, DrawStore, LockStore, PrequeueEntry } from './ports/store.ts';

/** The most entries one store call of the draw reads or numbers. */
export const DRAW_CHUNK = 5_000;
/**
 * Without a fixed chunk size, calls are sized to take about this long: an embedded store (SQLite) answers on
 * the event loop, so one call is one block of it (its commit's fsync included, a few milliseconds of it); a
 * remote one (Redis) is fast enough for the largest chunks.
 */
const TARGET_CALL_MS = 10;
const FIRST_CHUNK = 500;
const MIN_CHUNK = 50;
/** A runner that stops renewing its lease (a crashed node) leaves the draw to another after this long. */
export const DRAW_LEASE_MS = 15_000;
/** The lease is renewed between chunks once this much of it has passed (each renewal is a store write). */
const LEASE_RENEW_AFTER_MS = 2_000;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A new secret seed with its commitment: stored only if the room has no draw yet. */
export function newDrawCandidate(): DrawSeed {
  const seed = newDrawSeed();
  return { seed, commitment: drawCommitment(seed), algorithm: DRAW_ALGORITHM };
}

/**
 * How many entries the next store call takes: a fixed number, or (without one) a size that follows how long the
 * last call took, towards TARGET_CALL_MS, at most doubling at a time, within MIN_CHUNK..DRAW_CHUNK.
 */
export class ChunkSizer {
  private readonly fixed: number | undefined;
  size: number;

  constructor(fixed?: number) {
    this.fixed = fixed === undefined ? undefined : Math.min(DRAW_CHUNK, Math.max(1, fixed));
    this.size = this.fixed ?? FIRST_CHUNK;
  }

  /** Runs one store call and sizes the next from its duration. */
  async call<T>(work: (size: number) => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await work(this.size);
    if (this.fixed === undefined) {
      const took = Math.max(0.1, performance.now() - started);
      const next = Math.min(this.size * 2, Math.round((this.size * TARGET_CALL_MS) / took));
      this.size = Math.min(DRAW_CHUNK, Math.max(MIN_CHUNK, next));
    }
    return result;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The entries of a draw in join order: request IDs (UUIDs, as the API hands them out) and the position each
 * has, kept compact — 20 bytes an entry outside the JavaScript heap instead of an object each, which the
 * garbage collector would have to copy while the draw runs (tens of milliseconds for 100,000 entries).
 */
export class DrawnEntries {
  readonly count: number;
  /** The position of each entry (0 for one without a position yet). */
  readonly positions: Uint32Array;
  private readonly ids: Buffer;

  constructor(count: number) {
    this.count = count;
    this.positions = new Uint32Array(count);
    this.ids = Buffer.alloc(count * 16);
  }

  set(index: number, entry: PrequeueEntry): void {
    if (!UUID.test(entry.requestId)) throw new Error('a pre-queue request ID is not a lowercase UUID');
    this.ids.write(entry.requestId.replaceAll('-', ''), index * 16, 16, 'hex');
    this.positions[index] = entry.position ?? 0;
  }

  requestId(index: number): string {
    const hex = this.ids.toString('hex', index * 16, index * 16 + 16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}

/**
 * The entries a started draw orders, in join order: join orders 1..drawnThrough, less those who had left.
 * Read in chunks, yielding between reads; throws if they are not the `entryCount` the draw fixed.
 */
export async function readDrawnEntries(
  store: Pick<DrawStore, 'readPrequeue'>,
  eventId: string,
  draw: DrawRecord,
  chunks: ChunkSizer = new ChunkSizer(),
): Promise<DrawnEntries> {
  const entries = new DrawnEntries(draw.entryCount);
  let found = 0;
  let after = 0;
  while (after < draw.drawnThrough) {
    const page = await chunks.call((size) => store.readPrequeue(eventId, after, Math.min(size, draw.drawnThrough - after)));
    if (page.length === 0) break;
    for (const entry of page) {
      if (entry.joinOrder > draw.drawnThrough || entry.left) continue;
      if (found === draw.entryCount) {
        throw new Error(`draw of ${eventId}: more entries in the pre-queue than the ${draw.entryCount} the draw fixed`);
      }
      entries.set(found++, entry);
    }
    after = (page.at(-1) as PrequeueEntry).joinOrder;
    await yieldToLoop();
  }
  if (found !== draw.entryCount) {
    throw new Error(`draw of ${eventId}: ${found} entries in the pre-queue, the draw fixed ${draw.entryCount}`);
  }
  return entries;
}

export interface DrawRunnerDeps {
  store: DrawStore & LockStore;
  /** Milliseconds since the epoch (the lease's clock). */
  nowMs: () => number;
  /** Entries per store call, fixed (tests use a few to see several chunks); default: sized by ChunkSizer. */
  chunkSize?: number | undefined;
  /** Told once the store has fixed the draw's entries (every run: it records the first instant only). */
  onStarted?: ((eventId: string, draw: DrawRecord) => Promise<unknown>) | undefined;
}

export class DrawRunner {
  private readonly store: DrawStore & LockStore;
  private readonly nowMs: () => number;
  private readonly chunkSize: number | undefined;
  private readonly onStarted: DrawRunnerDeps['onStarted'];
  /** Names this process as the holder of a draw's lease. */
  private readonly owner = `draw:${randomUUID()}`;
  /** Rooms whose draw this process has seen done (until it resets them). */
  private readonly done = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();

  constructor(deps: DrawRunnerDeps) {
    this.store = deps.store;
    this.nowMs = deps.nowMs;
    this.chunkSize = deps.chunkSize;
    this.onStarted = deps.onStarted;
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
      // Every run takes the lease afresh (a run that ended may have lost it long ago).
      this.leasedAt.delete(eventId);
      run = this.draw(eventId).finally(() => this.running.delete(eventId));
      this.running.set(eventId, run);
    }
    return run;
  }

  /** When this process last took or renewed each room's lease (ms, the lease's clock). */
  private readonly leasedAt = new Map<string, number>();

  /** Takes or renews the room's lease; a lease renewed less than LEASE_RENEW_AFTER_MS ago is still ours. */
  private async lease(eventId: string): Promise<boolean> {
    const now = this.nowMs();
    const at = this.leasedAt.get(eventId);
    if (at !== undefined && now - at >= 0 && now - at < LEASE_RENEW_AFTER_MS) return true;
    const held = await this.store.tryAcquireLock(`draw:${eventId}`, this.owner, DRAW_LEASE_MS, now);
    if (held) this.leasedAt.set(eventId, now);
    else this.leasedAt.delete(eventId);
    return held;
  }

  private async draw(eventId: string): Promise<void> {
    if (await this.isDone(eventId)) return;
    if (!(await this.lease(eventId))) return;
    let draw: DrawRecord | null = await this.store.startDraw(eventId, newDrawCandidate());
    await this.onStarted?.(eventId, draw);
    const seed = draw.seed;
    if (draw.state === 'drawing' && draw.progress < draw.entryCount) {
      draw = await this.numberPlaces(eventId, draw);
      if (!draw) return;
    }
    const chunks = new ChunkSizer(this.chunkSize);
    while (draw.state === 'drawing') {
      await yieldToLoop();
      if (!(await this.lease(eventId))) return;
      const next: DrawRecord | null = await chunks.call((size) => this.store.numberLateArrivals(eventId, size));
      // Reset in between: the next tick starts the new draw.
      if (!next || next.seed !== seed) return;
      draw = next;
    }
    if (draw.state === 'done') this.done.add(eventId);
  }

  /** Numbers every place from the draw's progress on; null when the draw changed under this runner. */
  private async numberPlaces(eventId: string, started: DrawRecord): Promise<DrawRecord | null> {
    const entries = await readDrawnEntries(this.store, eventId, started, new ChunkSizer(this.chunkSize));
    const order = await drawOrder(started.seed, entries.count);
    const chunks = new ChunkSizer(this.chunkSize);
    let draw = started;
    while (draw.progress < draw.entryCount) {
      if (!(await this.lease(eventId))) return null;
      const from = draw.progress;
      const to = Math.min(from + chunks.size, draw.entryCount);
      const ids: string[] = [];
      for (let place = from; place < to; place++) ids.push(entries.requestId(order[place] as number));
      const after = await chunks.call(() => this.store.numberDrawn(eventId, from, ids));
      // Another runner numbered the same places (the same ones: the order is the seed's) or the draw is gone.
      if (!after || after.seed !== started.seed || after.state !== 'drawing' || after.progress < to) return null;
      draw = after;
      await yieldToLoop();
    }
    return draw;
  }
}
