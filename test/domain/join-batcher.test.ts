import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JoinBatcher } from '../../src/domain/join-batcher.ts';
import { StoreUnavailableError, type JoinRequest } from '../../src/domain/ports/store.ts';

describe('group commit of joins', () => {
  it('joins arriving in the same event-loop turn are committed as one batch, in arrival order', async () => {
    const batches: string[][] = [];
    let next = 0;
    const batcher = new JoinBatcher(async (_event, joins: readonly JoinRequest[]) => {
      batches.push(joins.map((j) => j.requestId));
      return joins.map(() => ++next);
    });
    const positions = await Promise.all(['a', 'b', 'c'].map((id) => batcher.join('E', { requestId: id, entryTime: 1 })));
    assert.deepEqual(positions, [1, 2, 3]);
    assert.deepEqual(batches, [['a', 'b', 'c']]);
  });

  it('joins arriving while a batch commits go in the next batch, never in parallel for one event', async () => {
    let active = 0;
    let maxActive = 0;
    let release: () => void = () => {};
    const sizes: number[] = [];
    let next = 0;
    const batcher = new JoinBatcher(async (_event, joins) => {
      active++;
      maxActive = Math.max(maxActive, active);
      sizes.push(joins.length);
      if (sizes.length === 1) await new Promise<void>((r) => (release = r));
      active--;
      return joins.map(() => ++next);
    });
    const first = batcher.join('E', { requestId: 'a', entryTime: 1 });
    await new Promise((r) => setImmediate(r));
    const later = ['b', 'c'].map((id) => batcher.join('E', { requestId: id, entryTime: 1 }));
    await new Promise((r) => setImmediate(r));
    release();
    assert.deepEqual(await Promise.all([first, ...later]), [1, 2, 3]);
    assert.deepEqual(sizes, [1, 2]);
    assert.equal(maxActive, 1);
  });

  it('a failed commit rejects every join of its batch and the next batch still runs', async () => {
    let calls = 0;
    const batcher = new JoinBatcher(async (_event, joins) => {
      calls++;
      if (calls === 1) throw new Error('store down');
      return joins.map((_, i) => i + 1);
    });
    const failed = await Promise.allSettled(['a', 'b'].map((id) => batcher.join('E', { requestId: id, entryTime: 1 })));
    assert.deepEqual(failed.map((r) => r.status), ['rejected', 'rejected']);
    assert.equal(await batcher.join('E', { requestId: 'c', entryTime: 1 }), 1);
  });

  it('batches are bounded by maxBatch', async () => {
    const sizes: number[] = [];
    const batcher = new JoinBatcher(async (_event, joins) => {
      sizes.push(joins.length);
      return joins.map((_, i) => i);
    }, { maxBatch: 4 });
    await Promise.all(Array.from({ length: 10 }, (_, i) => batcher.join('E', { requestId: String(i), entryTime: 1 })));
    assert.deepEqual(sizes, [4, 4, 2]);
  });

  it('batches are bounded at 1000 joins unless told otherwise', async () => {
    const sizes: number[] = [];
    const batcher = new JoinBatcher(async (_event, joins) => {
      sizes.push(joins.length);
      return joins.map((_, i) => i);
    });
    await Promise.all(Array.from({ length: 1001 }, (_, i) => batcher.join('E', { requestId: String(i), entryTime: 1 })));
    assert.deepEqual(sizes, [1000, 1]);
  });

  it('with a window, joins gather for windowMs (on the timer) before one commit', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate'] });
    const batches: string[][] = [];
    const batcher = new JoinBatcher(async (_event, joins) => {
      batches.push(joins.map((j) => j.requestId));
      return joins.map((_, i) => i + 1);
    }, { windowMs: 20 });
    const first = batcher.join('E', { requestId: 'a', entryTime: 1 });
    t.mock.timers.tick(19);
    const second = batcher.join('E', { requestId: 'b', entryTime: 1 });
    assert.deepEqual(batches, [], 'not before the window has passed');
    t.mock.timers.tick(1);
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    assert.deepEqual(batches, [['a', 'b']]);
  });

  it('keeps each event\'s joins in its own batches', async () => {
    const batches: string[] = [];
    const batcher = new JoinBatcher(async (eventId, joins) => {
      batches.push(`${eventId}:${joins.map((j) => j.requestId).join(',')}`);
      return joins.map((_, i) => i + 1);
    });
    const answers = await Promise.all([
      batcher.join('E', { requestId: 'a', entryTime: 1 }),
      batcher.join('F', { requestId: 'b', entryTime: 1 }),
      batcher.join('E', { requestId: 'c', entryTime: 1 }),
    ]);
    assert.deepEqual(answers, [1, 1, 2]);
    assert.deepEqual(batches.sort(), ['E:a,c', 'F:b']);
  });

  it('reports the size of each committed batch, not of a failed one', async () => {
    const sizes: number[] = [];
    let fail = true;
    const batcher = new JoinBatcher(async (_event, joins) => {
      if (fail) throw new Error('down');
      return joins.map((_, i) => i + 1);
    });
    batcher.onBatch = (size) => sizes.push(size);
    await Promise.allSettled([batcher.join('E', { requestId: 'a', entryTime: 1 })]);
    fail = false;
    await Promise.all([batcher.join('E', { requestId: 'b', entryTime: 1 }), batcher.join('E', { requestId: 'c', entryTime: 1 })]);
    assert.deepEqual(sizes, [2]);
  });

  it('drain also waits for a batch that is already being committed', async () => {
    let release: () => void = () => {};
    let started: () => void = () => {};
    const committing = new Promise<void>((resolve) => (started = resolve));
    const batcher = new JoinBatcher(async (_event, joins) => {
      started();
      await new Promise<void>((resolve) => (release = resolve));
      return joins.map((_, i) => i + 1);
    });
    const answered: number[] = [];
    void batcher.join('E', { requestId: 'a', entryTime: 1 }).then((p) => answered.push(p));
    await committing; // in flight, nothing pending any more
    const drained = batcher.drain();
    release();
    await drained;
    assert.deepEqual(answered, [1]);
  });

  it('drain resolves after every received join is answered', async () => {
    const answered: number[] = [];
    const batcher = new JoinBatcher(async (_event, joins) => joins.map((_, i) => i + 1));
    for (let i = 0; i < 3; i++) void batcher.join('E', { requestId: String(i), entryTime: 1 }).then((p) => answered.push(p));
    await batcher.drain(); // without waiting for the turn that would have started the commit
    assert.equal(answered.length, 3);
  });

  it('when the store is away, the joins queued behind the failed batch fail with it at once; after another error they get their own batch', async () => {
    for (const [failure, commitsExpected] of [[new StoreUnavailableError('down'), 1], [new Error('one bad batch'), 2]] as const) {
      let commits = 0;
      let release: () => void = () => {};
      let started: () => void = () => {};
      const firstStarted = new Promise<void>((resolve) => (started = resolve));
      const batcher = new JoinBatcher(async () => {
        commits++;
        if (commits > 1) return [7];
        started();
        await new Promise<void>((resolve) => (release = resolve));
        throw failure;
      });
      const first = batcher.join('E', { requestId: 'a', entryTime: 1 });
      await firstStarted;
      const behind = batcher.join('E', { requestId: 'b', entryTime: 1 });
      release();
      await assert.rejects(first, (e) => e === failure);
      if (failure instanceof StoreUnavailableError) await assert.rejects(behind, (e) => e === failure);
      else assert.equal(await behind, 7);
      assert.equal(commits, commitsExpected, failure.message);
    }
  });

  it('with queueWaitMs, a join that waited longer behind a slow (successful) batch is answered 503 unsent; a fresh one is committed', async () => {
    let clock = 0;
    let release: () => void = () => {};
    const committed: string[][] = [];
    let next = 0;
    const batcher = new JoinBatcher(
      async (_event, joins) => {
        committed.push(joins.map((j) => j.requestId));
        if (committed.length === 1) await new Promise<void>((r) => (release = r));
        return joins.map(() => ++next);
      },
      { queueWaitMs: 500, now: () => clock },
    );
    const first = batcher.join('E', { requestId: 'slow', entryTime: 1 });
    await new Promise((r) => setImmediate(r));
    const waited = batcher.join('E', { requestId: 'waited', entryTime: 1 });
    clock = 400;
    const fresh = batcher.join('E', { requestId: 'fresh', entryTime: 1 });
    clock = 501; // the slow batch took over 0.5 s: 'waited' has waited 501 ms, 'fresh' 101 ms
    release();
    assert.equal(await first, 1);
    await assert.rejects(waited, StoreUnavailableError);
    assert.equal(await fresh, 2);
    assert.deepEqual(committed, [['slow'], ['fresh']], 'the late join was never sent to the store');
  });

  it('without queueWaitMs (SQLite, memory) a join waits for the batch before it, however long', async () => {
    let clock = 0;
    let release: () => void = () => {};
    let calls = 0;
    const batcher = new JoinBatcher(async (_event, joins) => {
      calls++;
      if (calls === 1) await new Promise<void>((r) => (release = r));
      return joins.map((_, i) => calls * 10 + i);
    }, { now: () => clock });
    const first = batcher.join('E', { requestId: 'a', entryTime: 1 });
    await new Promise((r) => setImmediate(r));
    const behind = batcher.join('E', { requestId: 'b', entryTime: 1 });
    clock = 10_000;
    release();
    assert.equal(await first, 10);
    assert.equal(await behind, 20);
  });
});
