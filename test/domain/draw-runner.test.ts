// The parts of the draw's runner (src/domain/draw-runner.ts) on their own: a new seed with its commitment; the
// chunk sizes of the store calls (fixed, or following how long the last call took, with a clock driven by hand);
// the compact list of drawn entries; reading a started draw's entries in join order; the runner (one run per
// room, its lease, what it knows of the draw being done, stopping when the draw changes under it) on an in-memory
// SQLite store.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { DRAW_ALGORITHM, drawCommitment, drawOrder, isDrawSeed, placesOf } from '../../src/domain/draw.ts';
import {
  ChunkSizer,
  DRAW_CHUNK,
  DRAW_LEASE_MS,
  DrawnEntries,
  DrawRunner,
  newDrawCandidate,
  readDrawnEntries,
} from '../../src/domain/draw-runner.ts';
import type { DrawRecord, PrequeueEntry, Store } from '../../src/domain/ports/store.ts';
import { ForwardingStore } from '../../src/store/forwarding-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { countLoopTurns } from '../support/loop-turns.ts';

const requestIdOf = (i: number) => `0000000${i % 10}-0000-4000-8000-${String(i).padStart(12, '0')}`;

describe('a new draw candidate', () => {
  it('is a fresh seed with its commitment and the algorithm', () => {
    const a = newDrawCandidate();
    assert.ok(isDrawSeed(a.seed));
    assert.deepEqual(a, { seed: a.seed, commitment: drawCommitment(a.seed), algorithm: DRAW_ALGORITHM });
    assert.notEqual(newDrawCandidate().seed, a.seed);
  });
});

describe('the chunk sizes of the draw', () => {
  /** The sizes of successive calls that take `durations` ms each (a clock driven by hand). */
  async function sizes(chunks: ChunkSizer, durations: number[]): Promise<number[]> {
    let ms = 0;
    performance.now = () => ms;
    try {
      const seen: number[] = [];
      for (const took of durations) {
        await chunks.call(async (size) => {
          seen.push(size);
          ms += took;
        });
      }
      seen.push(chunks.size);
      return seen;
    } finally {
      Reflect.deleteProperty(performance, 'now');
    }
  }

  it('a fixed size stays, within 1..5,000', async () => {
    assert.deepEqual(await sizes(new ChunkSizer(7), [100, 0.01]), [7, 7, 7]);
    assert.equal(new ChunkSizer(0).size, 1);
    assert.equal(new ChunkSizer(-3).size, 1);
    assert.equal(new ChunkSizer(DRAW_CHUNK + 1).size, DRAW_CHUNK);
    assert.equal(DRAW_CHUNK, 5_000);
  });

  it('without one: 500 first, then sized to take 10 ms, at most doubling, within 50..5,000', async () => {
    // 500 in 5 ms → 1000 (10 ms); 1000 in 20 ms → 500; 500 in 3 ms → 1667 capped at 1000 (doubling).
    assert.deepEqual(await sizes(new ChunkSizer(), [5, 20, 3]), [500, 1000, 500, 1000]);
    // 500 in 40 ms → 125; 125 in 100 ms → 12.5, at least 50.
    assert.deepEqual(await sizes(new ChunkSizer(), [40, 100]), [500, 125, 50]);
    // Fast calls double up to 5,000 and stay there; a call that takes no time counts as 0.1 ms.
    assert.deepEqual(await sizes(new ChunkSizer(), [1, 1, 1, 1, 0, 0]), [500, 1000, 2000, 4000, 5000, 5000, 5000]);
    // 500 in 4 ms → 1250, at most 1000; 1000 in 7 ms → 1428.6, rounded.
    assert.deepEqual(await sizes(new ChunkSizer(), [4, 7]), [500, 1000, 1429]);
  });

  it('answers what the call answered', async () => {
    assert.equal(await new ChunkSizer().call(async (size) => size + 1), 501);
    assert.equal(await new ChunkSizer(3).call(async (size) => size + 1), 4);
  });
});

describe('the drawn entries', () => {
  it('keeps each request ID and position by index; an entry without a position has 0', () => {
    const entries = new DrawnEntries(3);
    assert.equal(entries.count, 3);
    entries.set(0, { requestId: '0123abcd-4567-89ef-0123-456789abcdef', entryTime: 1, joinOrder: 1, left: false, position: 7 });
    entries.set(2, { requestId: requestIdOf(2), entryTime: 1, joinOrder: 3, left: false, position: null });
    assert.equal(entries.requestId(0), '0123abcd-4567-89ef-0123-456789abcdef');
    assert.equal(entries.requestId(2), requestIdOf(2));
    assert.deepEqual([...entries.positions], [7, 0, 0]);
  });

  it('refuses a request ID that is not a lowercase UUID', () => {
    const entries = new DrawnEntries(1);
    for (const requestId of ['0123ABCD-4567-89ef-0123-456789abcdef', `x${requestIdOf(1)}`, `${requestIdOf(1)}0`, 'not a uuid']) {
      assert.throws(() => entries.set(0, { requestId, entryTime: 1, joinOrder: 1, left: false, position: null }), {
        message: 'a pre-queue request ID is not a lowercase UUID',
      }, requestId);
    }
  });
});

describe('reading a started draw\'s entries', () => {
  /** A pre-queue of `count` joins (join order 1..count), `left` the join orders that gave up; its reads recorded. */
  function prequeue(count: number, left: number[] = []) {
    const all: PrequeueEntry[] = Array.from({ length: count }, (_, i) => ({
      requestId: requestIdOf(i + 1),
      entryTime: 1,
      joinOrder: i + 1,
      left: left.includes(i + 1),
      position: null,
    }));
    const reads: [number, number][] = [];
    return {
      all,
      reads,
      store: {
        readPrequeue: async (_eventId: string, after: number, limit: number) => {
          reads.push([after, limit]);
          return all.filter((e) => e.joinOrder > after).slice(0, limit);
        },
      },
    };
  }
  const draw = (drawnThrough: number, entryCount: number): DrawRecord => ({
    state: 'drawing',
    seed: '0'.repeat(64),
    commitment: '',
    algorithm: DRAW_ALGORITHM,
    drawnThrough,
    entryCount,
    progress: 0,
    firstPosition: 1,
    numberedThrough: drawnThrough,
  });

  it('the entries up to the draw\'s last join order, less those who left, in join order, read in chunks', async () => {
    const q = prequeue(12, [2, 5]);
    const entries = await readDrawnEntries(q.store, 'room', draw(9, 7), new ChunkSizer(4));
    assert.deepEqual(
      Array.from({ length: entries.count }, (_, i) => entries.requestId(i)),
      [1, 3, 4, 6, 7, 8, 9].map(requestIdOf),
    );
    assert.deepEqual(q.reads, [[0, 4], [4, 4], [8, 1]], 'never past the draw\'s last join order');
  });

  it('skips an entry past the draw\'s last join order that a store answers all the same', async () => {
    const q = prequeue(6);
    const store = { readPrequeue: async (_eventId: string, after: number) => q.all.filter((e) => e.joinOrder > after) };
    const entries = await readDrawnEntries(store, 'room', draw(4, 4), new ChunkSizer(2));
    assert.equal(entries.count, 4);
    assert.equal(entries.requestId(3), requestIdOf(4));
  });

  it('a draw of no entries reads nothing', async () => {
    const q = prequeue(3);
    const entries = await readDrawnEntries(q.store, 'room', draw(0, 0));
    assert.equal(entries.count, 0);
    assert.deepEqual(q.reads, []);
  });

  it('throws when the pre-queue does not hold the entries the draw fixed', async () => {
    await assert.rejects(readDrawnEntries(prequeue(9).store, 'room', draw(9, 7), new ChunkSizer(4)), {
      message: 'draw of room: more entries in the pre-queue than the 7 the draw fixed',
    });
    await assert.rejects(readDrawnEntries(prequeue(9, [1, 2, 3]).store, 'room', draw(9, 7), new ChunkSizer(4)), {
      message: 'draw of room: 6 entries in the pre-queue, the draw fixed 7',
    });
    // A pre-queue that ends before the draw's last join order (the reads stop at an empty answer).
    await assert.rejects(readDrawnEntries(prequeue(5).store, 'room', draw(9, 9), new ChunkSizer(4)), {
      message: 'draw of room: 5 entries in the pre-queue, the draw fixed 9',
    });
  });

  it('lets the event loop turn between two reads', async () => {
    const q = prequeue(10);
    let turns = 0;
    const store = {
      readPrequeue: async (eventId: string, after: number, limit: number) => {
        setImmediate(() => turns++);
        return q.store.readPrequeue(eventId, after, limit);
      },
    };
    await readDrawnEntries(store, 'room', draw(10, 10), new ChunkSizer(2));
    assert.ok(turns >= 4, `${turns} turns in 5 reads`);
  });
});

/** An in-memory store seen through hooks: counts the calls the runner makes, and runs a hook before numbering. */
class WatchedStore extends ForwardingStore {
  getDraws = 0;
  /** The clock's value at each lease asked of the store. */
  leases: number[] = [];
  numberDrawnCalls = 0;
  lateCalls = 0;
  reads = 0;
  beforeNumberDrawn: (call: number) => Promise<void> = async () => {};
  beforeLate: (call: number) => Promise<void> = async () => {};

  override async getDraw(eventId: string): Promise<DrawRecord | null> {
    this.getDraws++;
    return super.getDraw(eventId);
  }

  override async tryAcquireLock(name: string, owner: string, ttlMs: number, nowMs: number): Promise<boolean> {
    this.leases.push(nowMs);
    return super.tryAcquireLock(name, owner, ttlMs, nowMs);
  }

  override async readPrequeue(eventId: string, afterJoinOrder: number, limit: number): Promise<PrequeueEntry[]> {
    this.reads++;
    return super.readPrequeue(eventId, afterJoinOrder, limit);
  }

  override async numberDrawn(eventId: string, expected: number, ids: readonly string[]): Promise<DrawRecord | null> {
    await this.beforeNumberDrawn(++this.numberDrawnCalls);
    return super.numberDrawn(eventId, expected, ids);
  }

  override async numberLateArrivals(eventId: string, limit: number): Promise<DrawRecord | null> {
    await this.beforeLate(++this.lateCalls);
    return super.numberLateArrivals(eventId, limit);
  }
}

describe('the draw runner', () => {
  const opened: Store[] = [];
  after(async () => {
    for (const store of opened) await store.close();
  });
  let joined = 0;

  async function setUp(entries: number, chunkSize = 3) {
    const inner = new SqliteStore({ path: ':memory:' });
    opened.push(inner);
    const store = new WatchedStore(inner);
    const clock = { ms: 1_000_000 };
    const join = async (n: number) => {
      const ids = Array.from({ length: n }, () => requestIdOf(++joined));
      await store.joinPrequeue('room', ids.map((requestId) => ({ requestId, entryTime: 1 })), newDrawCandidate());
      return ids;
    };
    const ids = await join(entries);
    const runner = new DrawRunner({ store, nowMs: () => clock.ms, chunkSize });
    const positionOf = async (id: string) => (await store.getPrequeueEntry('room', id))?.position ?? null;
    return { store, clock, join, ids, runner, positionOf };
  }

  it('draws: every entry gets the place its seed gives, late arrivals FIFO behind; then the draw is known done', async () => {
    const t = await setUp(10);
    let late: string[] = [];
    t.store.beforeNumberDrawn = async (call) => {
      if (call === 2) late = await t.join(2);
    };
    assert.equal(t.runner.knownDone('room'), false);
    await t.runner.run('room');
    const draw = await t.store.getDraw('room');
    assert.equal(draw?.state, 'done');
    assert.deepEqual(await Promise.all(t.ids.map(t.positionOf)), [...placesOf(await drawOrder(draw!.seed, 10))]);
    assert.deepEqual(await Promise.all(late.map(t.positionOf)), [11, 12]);
    assert.equal(t.store.numberDrawnCalls, 4, 'chunks of 3');
    assert.equal(t.runner.knownDone('room'), true);
    const reads = t.store.getDraws;
    assert.equal(await t.runner.isDone('room'), true);
    assert.equal(t.store.getDraws, reads, 'known without a store read');
  });

  it('isDone: read from the store until it is seen done, then known; forget makes it read again', async () => {
    const t = await setUp(4);
    assert.equal(await t.runner.isDone('room'), false);
    assert.equal(await t.runner.isDone('nowhere'), false, 'a room without a draw');
    // Another runner (another node) draws.
    await new DrawRunner({ store: t.store, nowMs: () => t.clock.ms + DRAW_LEASE_MS }).run('room');
    assert.equal(t.runner.knownDone('room'), false, 'not known before it is read');
    assert.equal(await t.runner.isDone('room'), true);
    assert.equal(t.runner.knownDone('room'), true);
    const reads = t.store.getDraws;
    assert.equal(await t.runner.isDone('room'), true);
    assert.equal(t.store.getDraws, reads);
    t.runner.forget('room');
    assert.equal(t.runner.knownDone('room'), false);
    assert.equal(await t.runner.isDone('room'), true);
    assert.equal(t.store.getDraws, reads + 1);
  });

  it('one run per room at a time; a run after one that ended (the lease held elsewhere) runs again', async () => {
    const t = await setUp(7);
    // Another node holds the lease.
    assert.equal(await t.store.tryAcquireLock('draw:room', 'another node', DRAW_LEASE_MS, t.clock.ms), true);
    await t.runner.run('room');
    assert.equal((await t.store.getDraw('room'))?.state, 'committed', 'left to the lease\'s holder');
    t.clock.ms += DRAW_LEASE_MS;
    const [a, b] = [t.runner.run('room'), t.runner.run('room')];
    assert.equal(a, b, 'the same run');
    await a;
    assert.equal((await t.store.getDraw('room'))?.state, 'done');
    assert.equal(t.store.numberDrawnCalls, 3);
  });

  it('takes the lease at the start and renews it between chunks once 2 s have passed, or when the clock went back', async () => {
    const t = await setUp(6, 1);
    const start = t.clock.ms;
    // Each numbering call takes a second; the fourth finds the clock 5 s back.
    t.store.beforeNumberDrawn = async (call) => {
      t.clock.ms += call === 4 ? -5_000 : 1_000;
    };
    await t.runner.run('room');
    assert.equal((await t.store.getDraw('room'))?.state, 'done');
    const at = t.store.leases.map((ms) => (ms - start) / 1000);
    // 0: taken; chunk 1 at 0 s, 2 at 1 s: still ours; 3 at 2 s: renewed; 4 at 3 s; 5 at −2 s (back): renewed;
    // 6 at −1 s; the late arrivals at 0 s: renewed two seconds after −2 s.
    assert.deepEqual(at, [0, 2, -2, 0]);
  });

  it('a runner that loses its lease stops, leaving the draw where it is', async () => {
    const t = await setUp(9);
    t.store.beforeNumberDrawn = async (call) => {
      if (call === 1) {
        t.clock.ms += DRAW_LEASE_MS;
        assert.equal(await t.store.tryAcquireLock('draw:room', 'another node', DRAW_LEASE_MS, t.clock.ms), true);
      }
    };
    await t.runner.run('room');
    const draw = await t.store.getDraw('room');
    assert.equal(draw?.state, 'drawing');
    assert.equal(draw?.progress, 3, 'the chunk under way numbered, no more');
    assert.equal(t.runner.knownDone('room'), false);
  });

  it('a runner that loses its lease while it numbers the late arrivals stops too', async () => {
    const t = await setUp(3);
    t.store.beforeNumberDrawn = async () => void (await t.join(5));
    t.store.beforeLate = async (call) => {
      if (call === 1) {
        t.clock.ms += DRAW_LEASE_MS;
        assert.equal(await t.store.tryAcquireLock('draw:room', 'another node', DRAW_LEASE_MS, t.clock.ms), true);
      }
    };
    await t.runner.run('room');
    assert.equal(t.store.lateCalls, 1);
    assert.equal((await t.store.getDraw('room'))?.state, 'drawing');
    assert.equal(t.runner.knownDone('room'), false);
  });
  it('a reset while it numbers the places stops the runner quietly; the new draw is left for the next tick', async () => {
    const t = await setUp(9);
    t.store.beforeNumberDrawn = async (call) => {
      if (call === 2) await t.store.resetEvent('room');
    };
    await t.runner.run('room');
    assert.equal(await t.store.getDraw('room'), null);
    assert.equal(t.store.numberDrawnCalls, 2);
    // Reset, and a new pre-queue joined before the call: its draw is not this runner's.
    const u = await setUp(9);
    let fresh: string[] = [];
    u.store.beforeNumberDrawn = async (call) => {
      if (call === 2) {
        await u.store.resetEvent('room');
        fresh = await u.join(2);
      }
    };
    await u.runner.run('room');
    assert.equal((await u.store.getDraw('room'))?.state, 'committed');
    assert.deepEqual(await Promise.all(fresh.map(u.positionOf)), [null, null]);
    assert.equal(u.runner.knownDone('room'), false);
  });

  it('a reset while it numbers the late arrivals stops the runner too', async () => {
    const t = await setUp(3);
    t.store.beforeNumberDrawn = async () => void (await t.join(2));
    let fresh: string[] = [];
    t.store.beforeLate = async (call) => {
      if (call === 1) {
        await t.store.resetEvent('room');
        fresh = await t.join(2);
      }
    };
    await t.runner.run('room');
    assert.equal(t.store.lateCalls, 1);
    assert.equal((await t.store.getDraw('room'))?.state, 'committed');
    assert.deepEqual(await Promise.all(fresh.map(t.positionOf)), [null, null]);
    assert.equal(t.runner.knownDone('room'), false);
  });
  it('a run of a draw already done (by another node) writes nothing, not even a lease', async () => {
    const t = await setUp(4);
    await new DrawRunner({ store: t.store, nowMs: () => t.clock.ms }).run('room');
    const leases = t.store.leases.length;
    await t.runner.run('room');
    assert.equal(t.store.leases.length, leases);
    assert.equal(t.runner.knownDone('room'), true);
  });

  it('a runner resuming a draw whose places are all numbered reads no entries: it numbers the late arrivals', async () => {
    const t = await setUp(4);
    t.store.beforeNumberDrawn = async () => void (await t.join(2));
    t.store.beforeLate = async () => {
      throw new Error('the node died');
    };
    await assert.rejects(t.runner.run('room'), /the node died/);
    t.store.beforeLate = async () => {};
    const reads = t.store.reads;
    t.clock.ms += DRAW_LEASE_MS;
    await new DrawRunner({ store: t.store, nowMs: () => t.clock.ms }).run('room');
    assert.equal((await t.store.getDraw('room'))?.state, 'done');
    assert.equal(t.store.reads, reads);
  });

  it('lets the event loop turn between two numbering calls', async () => {
    const t = await setUp(4, 1);
    const turns = countLoopTurns();
    const at = { drawn: [] as number[], late: [] as number[] };
    t.store.beforeNumberDrawn = async (call) => {
      if (call === 1) await t.join(3);
      at.drawn.push(turns.count);
    };
    t.store.beforeLate = async () => void at.late.push(turns.count);
    try {
      await t.runner.run('room');
    } finally {
      turns.stop();
    }
    // 4 places, then 3 late arrivals, one a call (SQLite answers without a turn of the loop).
    assert.equal(at.drawn.length, 4);
    assert.equal(at.late.length, 3);
    const between = (a: number[]) => a.slice(1).map((n, k) => n - a[k]!);
    assert.ok(between(at.drawn).every((n) => n >= 1), `turns between numbering calls: ${between(at.drawn).join(',')}`);
    assert.ok(between(at.late).every((n) => n >= 1), `turns between late calls: ${between(at.late).join(',')}`);
  });

  it('a reset while it numbers the late arrivals, and a new draw started by another node: it stops, leaving that draw', async () => {
    const t = await setUp(3);
    t.store.beforeNumberDrawn = async () => void (await t.join(2));
    t.store.beforeLate = async (call) => {
      if (call === 1) {
        await t.store.resetEvent('room');
        await t.join(2);
        await t.store.startDraw('room', newDrawCandidate());
      }
      if (call > 3) throw new Error('numbering a draw not its own');
    };
    await t.runner.run('room');
    assert.equal((await t.store.getDraw('room'))?.state, 'drawing', 'the new draw left to its runner');
    assert.equal(t.runner.knownDone('room'), false);
    // Reset without a new draw: it stops too.
    const u = await setUp(3);
    u.store.beforeNumberDrawn = async () => void (await u.join(2));
    u.store.beforeLate = async (call) => void (call === 1 && (await u.store.resetEvent('room')));
    await u.runner.run('room');
    assert.equal(await u.store.getDraw('room'), null);
  });

  it('a reset while it numbers the places, and a new draw another node numbered further: it stops, leaving that draw', async () => {
    const t = await setUp(9);
    t.store.beforeNumberDrawn = async (call) => {
      if (call !== 2) return;
      await t.store.resetEvent('room');
      await t.join(9);
      const draw = await t.store.startDraw('room', newDrawCandidate());
      const entries = await readDrawnEntries(t.store, 'room', draw);
      const order = await drawOrder(draw.seed, entries.count);
      const first = Array.from({ length: 6 }, (_, place) => entries.requestId(order[place]!));
      assert.equal((await t.store.numberDrawn('room', 0, first))?.progress, 6);
    };
    await t.runner.run('room');
    const draw = await t.store.getDraw('room');
    assert.equal(draw?.state, 'drawing');
    assert.equal(draw?.progress, 6, 'the new draw as its runner left it');
  });
});
