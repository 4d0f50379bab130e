// The hot-read cache in front of a shared store: polling reads reach the store at most once per TTL per
// event, concurrent misses share one read, and this node's own writes are visible at once. The clock is
// injected and the backing store's reads are held by hand: no sleeps.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { HotReadCache, withHotReadCache } from '../../src/store/hot-read-cache.ts';
import { StoreUnavailableError, type Counters } from '../../src/domain/ports/store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

/** An in-memory store whose counter reads are counted and, when `hold` is on, wait for `release()`. */
class CountingStore extends SqliteStore {
  reads = 0;
  hold = false;
  failNext: Error | null = null;
  private held: (() => void)[] = [];

  constructor() {
    super({ path: ':memory:' });
  }

  override async getCounters(eventId: string): Promise<Counters> {
    this.reads += 1;
    const hold = this.hold;
    const failure = this.failNext;
    this.failNext = null;
    // The answer is the state when the read was sent; a held read is a reply delayed on its way back.
    const answer = await super.getCounters(eventId);
    if (hold) await new Promise<void>((resolve) => this.held.push(resolve));
    if (failure) throw failure;
    return answer;
  }

  /** Lets every held read go on (waiting for the first one to arrive), and waits until they have answered. */
  async release(): Promise<void> {
    while (this.held.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const held = this.held;
    this.held = [];
    for (const resume of held) resume();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function setup(ttlMs = 250) {
  const backing = new CountingStore();
  const clock = { ms: 1_000 };
  const cache = new HotReadCache(backing, { ttlMs, nowMs: () => clock.ms });
  return { backing, clock, cache, event: `hot-${randomUUID()}` };
}

describe('hot-read cache', () => {
  it('answers repeated polls within the TTL from memory, then reads the store again', async () => {
    const { backing, clock, cache, event } = setup();
    await backing.incrementServing(event, 5, 1);
    for (let i = 0; i < 1000; i++) assert.equal(await cache.getServingCounter(event), 5);
    assert.equal(backing.reads, 1);
    clock.ms += 249;
    assert.equal((await cache.getCounters(event)).serving, 5);
    assert.equal(backing.reads, 1);
    clock.ms += 1;
    await cache.getServingCounter(event);
    assert.equal(backing.reads, 2);
  });

  it('shows writes made by other nodes within the TTL', async () => {
    const { backing, clock, cache, event } = setup();
    assert.equal(await cache.getServingCounter(event), 0);
    await backing.incrementServing(event, 3, 1); // another node, straight to the shared store
    assert.equal(await cache.getServingCounter(event), 0);
    clock.ms += 250;
    assert.equal(await cache.getServingCounter(event), 3);
  });

  it("shows this node's own writes at once (read-your-writes for the control panel)", async () => {
    const { cache, event } = setup();
    assert.equal(await cache.getServingCounter(event), 0);
    assert.equal(await cache.incrementServing(event, 7, 1), 7);
    assert.equal(await cache.getServingCounter(event), 7);
    await cache.assignPositions(event, [{ requestId: randomUUID(), entryTime: 1 }]);
    assert.equal((await cache.getCounters(event)).queue, 1);
    await cache.resetEvent(event);
    assert.deepEqual(await cache.getCounters(event), {
      queue: 0, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0, generation: 1,
    });
    // Leaving the queue and the move that never passes the queue are writes too.
    const id = randomUUID();
    await cache.assignPositions(event, [{ requestId: id, entryTime: 1 }]);
    assert.deepEqual(await cache.incrementServingWithinQueue(event, 5, 2), { previousServing: 0, serving: 1 });
    assert.equal(await cache.getServingCounter(event), 1);
    await cache.leaveQueue(event, id);
    assert.equal((await cache.getCounters(event)).left, 1);
  });

  it('every write passes through to the store, answers what the store answered, and drops the entry', async () => {
    const { backing, cache, clock, event } = setup();
    const [a, b] = [randomUUID(), randomUUID()];
    await cache.syncExpirySwitch(event, true, 1); // a write before any read of the event
    assert.deepEqual(await cache.assignPositionsIfAbsent(event, [{ requestId: a, entryTime: 1 }, { requestId: b, entryTime: 1 }]), [1, 2]);
    assert.equal((await cache.getCounters(event)).queue, 2);
    await cache.incrementServing(event, 2, 1);
    const record = { requestId: a, position: 1, iat: 1, nbf: 1, exp: 99, iss: 'i', kid: 'k', status: 0 as const };
    assert.equal((await cache.issueTokenIfAbsent(event, record)).outcome, 'issued');
    assert.equal((await cache.getCounters(event)).tokens, 1);
    assert.equal(await cache.closeSession(event, a, 1), true);
    assert.equal((await cache.getCounters(event)).completed, 1);
    const advance = await cache.advanceExpiry(event, 1_000, true, 2);
    // One unclaimed position expired; the counter moves for it, but never past the last position (2).
    assert.deepEqual([advance.newlyExpiredUnclaimed, advance.serving], [1, 2]);
    assert.deepEqual(await cache.getCounters(event), await backing.getCounters(event));
    // After this node's write, polls are answered from memory again: one store read for many polls.
    const reads = backing.reads;
    for (let i = 0; i < 10; i++) await cache.getServingCounter(event);
    assert.equal(backing.reads, reads);
    // The same after a write to an event whose entry existed before it (one read, then memory).
    await cache.incrementServing(event, 1, 3);
    for (let i = 0; i < 10; i++) assert.equal(await cache.getServingCounter(event), 3);
    assert.equal(backing.reads, reads + 1);
    // …and once the TTL has passed, another node's change is read.
    await backing.incrementServing(event, 1, 4);
    clock.ms += 250;
    assert.equal(await cache.getServingCounter(event), 4);
  });

  it('the pre-queue, the draw and deleting a room pass through too, and drop the entry', async () => {
    const { backing, cache, event } = setup();
    const seed = { seed: 'a'.repeat(64), commitment: 'c'.repeat(64), algorithm: 'test/v1' };
    const [a, b, late] = [randomUUID(), randomUUID(), randomUUID()];
    /** Reads the counters once (the entry is kept), runs a write, and shows the cache answers what the store has. */
    const afterWrite = async <T>(write: () => Promise<T>): Promise<T> => {
      await cache.getServingCounter(event);
      const result = await write();
      assert.deepEqual(await cache.getCounters(event), await backing.getCounters(event));
      return result;
    };
    assert.deepEqual(await afterWrite(() => cache.joinPrequeue(event, [{ requestId: a, entryTime: 1 }, { requestId: b, entryTime: 1 }], seed)), [0, 0]);
    const started = await backing.startDraw(event, seed);
    assert.equal(started.entryCount, 2);
    await backing.joinPrequeue(event, [{ requestId: late, entryTime: 2 }], seed);
    const drawn = await afterWrite(() => cache.numberDrawn(event, 0, [b, a]));
    assert.equal(drawn?.progress, 2);
    assert.equal((await cache.getCounters(event)).queue, 2, 'the drawn places moved the queue counter, seen at once');
    const done = await afterWrite(() => cache.numberLateArrivals(event, 10));
    assert.equal(done?.numberedThrough, 3);
    assert.equal((await cache.getCounters(event)).queue, 3);
    await afterWrite(() => cache.deleteRoomData(event));
    assert.equal((await cache.getCounters(event)).queue, 0, 'a deleted room has no counters left in memory');
    assert.equal(await backing.getPosition(event, a), null);
  });

  it('without a clock of its own it measures the TTL on performance.now()', async (t) => {
    const now = { ms: 5_000 };
    t.mock.method(performance, 'now', () => now.ms);
    const backing = new CountingStore();
    const cache = new HotReadCache(backing, { ttlMs: 250 });
    await cache.getServingCounter('E');
    await cache.getServingCounter('E');
    assert.equal(backing.reads, 1);
    now.ms += 250;
    await cache.getServingCounter('E');
    assert.equal(backing.reads, 2);
  });

  it('close closes the store behind it', async () => {
    const { backing, cache } = setup();
    await cache.close();
    await assert.rejects(backing.ping());
  });

  it('shares one store read among concurrent misses', async () => {
    const { backing, cache, event } = setup();
    backing.hold = true;
    const polls = Array.from({ length: 500 }, () => cache.getServingCounter(event));
    await backing.release();
    assert.deepEqual(new Set(await Promise.all(polls)), new Set([0]));
    assert.equal(backing.reads, 1);
  });

  it('does not keep a read that was in flight while this node wrote', async () => {
    const { backing, cache, event } = setup();
    backing.hold = true;
    const before = cache.getServingCounter(event); // its reply (0) arrives after the write
    backing.hold = false;
    assert.equal(await cache.incrementServing(event, 2, 1), 2);
    assert.equal(await cache.getServingCounter(event), 2, 'a read started after the write sees it');
    await backing.release();
    assert.equal(await before, 0);
    assert.equal(await cache.getServingCounter(event), 2, 'the older read did not overwrite the entry');
  });

  it("counts a value's age from when its read was sent: a slow reply does not stretch the TTL", async () => {
    const { backing, clock, cache, event } = setup();
    backing.hold = true;
    const slow = cache.getServingCounter(event); // sent at t = 1000 ms
    clock.ms += 200; // the reply takes 200 ms to come back
    await backing.release();
    assert.equal(await slow, 0);
    backing.hold = false;
    await backing.incrementServing(event, 3, 1); // another node, straight to the shared store
    clock.ms += 50; // 250 ms after the read was sent, 50 ms after it returned
    assert.equal(await cache.getServingCounter(event), 3, 'the value sent 250 ms ago is stale');
    assert.equal(backing.reads, 2);
  });

  it('answers peekCounters (the polling fast path) from memory within the TTL only, and refreshes a stale entry', async () => {
    const { backing, clock, cache, event } = setup();
    assert.equal(cache.peekCounters(event), undefined, 'nothing cached yet: the caller takes the slow path');
    assert.equal(await cache.getServingCounter(event), 0, 'the peek started the read this poll shares');
    assert.equal(backing.reads, 1);
    await backing.incrementServing(event, 3, 1); // another node
    clock.ms += 249;
    assert.equal(cache.peekCounters(event)?.serving, 0, 'fresh enough: answered from memory');
    assert.equal(backing.reads, 1);
    clock.ms += 1;
    assert.equal(cache.peekCounters(event), undefined, 'stale after the TTL: never served to a poller');
    assert.equal(await cache.getServingCounter(event), 3, 'the stale peek started a refresh, shared by this read');
    assert.equal(backing.reads, 2);
    assert.equal(cache.peekCounters(event)?.serving, 3, "other nodes' changes reach the fast path");
  });

  it('does not cache a failed read: the next poll tries the store again', async () => {
    const { backing, cache, event } = setup();
    backing.failNext = new StoreUnavailableError('down');
    await assert.rejects(cache.getServingCounter(event), StoreUnavailableError);
    assert.equal(await cache.getServingCounter(event), 0);
    assert.equal(backing.reads, 2);
  });

  it('keeps events apart, and hands out copies that callers cannot corrupt', async () => {
    const { backing, cache, event } = setup();
    const other = `${event}-other`;
    await backing.incrementServing(other, 4, 1);
    assert.equal(await cache.getServingCounter(event), 0);
    assert.equal(await cache.getServingCounter(other), 4);
    const counters = await cache.getCounters(other);
    counters.serving = 99;
    assert.equal(await cache.getServingCounter(other), 4);
  });

  it('is left out with a TTL of 0, and refuses a TTL beyond 5 s', () => {
    const backing = new CountingStore();
    assert.equal(withHotReadCache(backing, { ttlMs: 0 }), backing);
    assert.ok(withHotReadCache(backing, { ttlMs: 250 }) instanceof HotReadCache);
    assert.throws(() => new HotReadCache(backing, { ttlMs: 5001 }), { name: 'RangeError', message: 'hot-read TTL must be 1–5000 ms (got 5001)' });
    assert.throws(() => new HotReadCache(backing, { ttlMs: 0 }), RangeError);
    assert.throws(() => new HotReadCache(backing, { ttlMs: Number.NaN }), RangeError);
    assert.ok(new HotReadCache(backing, { ttlMs: 5000 }) instanceof HotReadCache, 'exactly 5 s is accepted');
    assert.equal(withHotReadCache(backing, { ttlMs: -1 }), backing);
  });
});
