// The draw: a permutation of exactly the pre-queue entries, reproducible from the published seed, and a
// tampered seed or entry list is caught.

import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { countLoopTurns } from '../support/loop-turns.ts';
import {
  DRAW_ALGORITHM,
  checkPublishedDraw,
  drawCommitment,
  drawEntry,
  drawOrder,
  isDrawSeed,
  newDrawSeed,
  placesOf,
} from '../../src/domain/draw.ts';

/** Fixed seeds, so every run draws the same thing. */
const seed = (n: number) => createHash('sha256').update(`seed ${n}`).digest('hex');

describe('the draw', () => {
  it('orders exactly the entries: a permutation of 0..n-1', async () => {
    for (const n of [0, 1, 2, 3, 10, 1000]) {
      const order = await drawOrder(seed(n), n);
      assert.equal(order.length, n);
      assert.deepEqual([...order].sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
    }
  });

  it('is reproducible from the seed, and another seed gives another order', async () => {
    const a = await drawOrder(seed(1), 500);
    const again = await drawOrder(seed(1), 500, null);
    assert.deepEqual(again, a, 'the same order with or without yielding to the event loop');
    assert.notDeepEqual(await drawOrder(seed(2), 500), a);
  });

  it('without a yield (null) never yields, however long the draw: 20,000 entries, past a slice of 5,000 swaps', async () => {
    const yielded = await drawOrder(seed(4), 20_000);
    assert.deepEqual(await drawOrder(seed(4), 20_000, null), yielded);
  });

  it('pins the algorithm: a known seed gives a known order (changing the algorithm must change its name)', async () => {
    for (const [s, n] of [['00'.repeat(32), 8], [seed(3), 2000]] as const) {
      const order = [...(await drawOrder(s, n, null))];
      // Recomputed independently of drawOrder, from the definition in src/domain/draw.ts, with node's HMAC.
      const key = Buffer.from(s, 'hex');
      let counter = 0n;
      const uniform = (m: number) => {
        for (;;) {
          const message = Buffer.alloc(8);
          message.writeBigUInt64BE(counter++);
          const r = createHmac('sha256', key).update(message).digest().readUIntBE(0, 6);
          if (r < m * Math.floor(2 ** 48 / m)) return r % m;
        }
      };
      const expected = Array.from({ length: n }, (_, i) => i);
      for (let i = n - 1; i >= 1; i--) {
        const j = uniform(i + 1);
        [expected[i], expected[j]] = [expected[j]!, expected[i]!];
      }
      assert.deepEqual(order, expected);
    }
    assert.equal(drawEntry('0f8fad5b-d9cb-469f-a165-70867728950e'), createHash('sha256').update('0f8fad5b-d9cb-469f-a165-70867728950e').digest('hex'));
    assert.equal(DRAW_ALGORITHM, 'fisher-yates/hmac-sha256-48/v1');
  });

  it('is fair: each of the 6 orders of 3 entries comes up about equally often over 6,000 seeds', async () => {
    const counts = new Map<string, number>();
    for (let s = 0; s < 6000; s++) {
      const key = [...(await drawOrder(seed(s), 3, null))].join('');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    assert.equal(counts.size, 6);
    // Chi-square with 5 degrees of freedom; 20.5 is its 0.999 quantile (fixed seeds: the test is deterministic).
    const chi = [...counts.values()].reduce((sum, c) => sum + (c - 1000) ** 2 / 1000, 0);
    assert.ok(chi < 20.5, `chi-square ${chi.toFixed(1)}`);
  });

  it('places: entry i gets place p exactly when order[p-1] = i', async () => {
    const order = await drawOrder(seed(7), 100);
    const places = placesOf(order);
    for (let p = 1; p <= 100; p++) assert.equal(places[order[p - 1]!], p);
  });

  it('yields to the event loop while drawing 100,000 entries', async () => {
    let yields = 0;
    const order = await drawOrder(seed(9), 100_000, () => new Promise((resolve) => setImmediate(() => (yields++, resolve()))));
    assert.equal(order.length, 100_000);
    assert.ok(yields >= 19, `${yields} yields`);
  });

  it('a published draw verifies; a tampered seed, commitment, algorithm or entry list does not', async () => {
    const s = newDrawSeed();
    assert.ok(isDrawSeed(s));
    const entries = Array.from({ length: 50 }, (_, i) => drawEntry(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`));
    const draw = { algorithm: DRAW_ALGORITHM, commitment: drawCommitment(s), seed: s, entries };
    const checked = await checkPublishedDraw(draw);
    assert.ok(checked.ok);
    const places = checked.places;

    const otherSeed = newDrawSeed();
    assert.deepEqual(await checkPublishedDraw({ ...draw, seed: otherSeed }), {
      ok: false,
      problem: 'the seed does not match the commitment published before the draw',
    });
    // A seed swapped together with its commitment passes the commitment check but gives other places.
    const reseeded = await checkPublishedDraw({ ...draw, seed: otherSeed, commitment: drawCommitment(otherSeed) });
    assert.ok(reseeded.ok && !placesEqual(reseeded.places, places));
    assert.equal((await checkPublishedDraw({ ...draw, algorithm: 'other' })).ok, false);
    assert.equal((await checkPublishedDraw({ ...draw, entries: [...entries.slice(0, 49), entries[0]!] })).ok, false);
    // An entry left out shifts everyone's place: the places no longer match the positions handed out.
    const shorter = await checkPublishedDraw({ ...draw, entries: entries.slice(1) });
    assert.ok(shorter.ok && !placesEqual(shorter.places, places.subarray(1)));
  });
});

describe('the draw: its bounds', () => {
  it('refuses an entry count that is not a whole number from 0 to 2^32 − 1, and a seed that is not 64 lowercase hex digits', async () => {
    for (const count of [-1, 1.5, Number.NaN, 2 ** 32]) await assert.rejects(drawOrder(seed(1), count), { name: 'RangeError', message: `bad entry count ${count}` });
    for (const bad of ['', seed(1).toUpperCase(), seed(1).slice(1), `${seed(1)}0`]) await assert.rejects(drawOrder(bad, 3), { name: 'RangeError', message: 'a draw seed is 64 lowercase hex digits' });
    assert.deepEqual([...(await drawOrder(seed(1), 0))], []);
    assert.deepEqual([...(await drawOrder(seed(1), 1))], [0]);
  });

  it('a seed is 64 lowercase hex digits, nothing else', () => {
    assert.ok(isDrawSeed(seed(1)));
    assert.equal(isDrawSeed(undefined), false);
    assert.equal(isDrawSeed(42), false);
    assert.equal(isDrawSeed([seed(1)]), false, 'an array whose text is a seed');
    assert.equal(isDrawSeed(seed(1).toUpperCase()), false);
    assert.equal(isDrawSeed(`x${seed(1)}`), false);
    assert.equal(isDrawSeed(`${seed(1)}x`), false);
    assert.equal(isDrawSeed(seed(1).slice(1)), false);
    assert.match(newDrawSeed(), /^[0-9a-f]{64}$/);
    assert.notEqual(newDrawSeed(), newDrawSeed());
  });

  it('the commitment is the SHA-256 of the seed bytes (not of its text)', () => {
    const s = seed(4);
    assert.equal(drawCommitment(s), createHash('sha256').update(Buffer.from(s, 'hex')).digest('hex'));
  });

  it('by default it lets other callbacks run while it draws; the yield is told the swaps done, and comes at least every 5,000 swaps', async () => {
    const turns = countLoopTurns();
    try {
      await drawOrder(seed(9), 10_001);
    } finally {
      turns.stop();
    }
    assert.ok(turns.count >= 2, `${turns.count} turns of the event loop during the draw`);

    const done: number[] = [];
    await drawOrder(seed(9), 10_001, async (swapsDone) => void done.push(swapsDone));
    assert.ok(done.length >= 2, `${done.length} yields`);
    assert.ok(done.every((n, k) => n > (done[k - 1] ?? 0) && n <= 10_000), done.join(','));
    assert.ok(done.every((n, k) => n - (done[k - 1] ?? 0) <= 5_000), 'at most 5,000 swaps between two yields');
  });

  it('yields after 5,000 swaps, or when 5 ms have passed at a look at the clock every 64 swaps (a clock driven by hand)', async () => {
    const swapsAtYields = async (now: () => number) => {
      performance.now = now;
      try {
        const done: number[] = [];
        await drawOrder(seed(9), 10_001, async (swapsDone) => void done.push(swapsDone));
        return done;
      } finally {
        Reflect.deleteProperty(performance, 'now');
      }
    };
    // A clock that never moves: only the count yields.
    assert.deepEqual(await swapsAtYields(() => 0), [5_000, 10_000]);
    // A clock 1 ms further at each look: the slice starts at a look, and the fifth look after it (swap 320 of
    // the slice) finds 5 ms passed.
    let ms = 0;
    assert.deepEqual(await swapsAtYields(() => ++ms), Array.from({ length: 31 }, (_, k) => (k + 1) * 320));
  });

  it('each problem of a published draw in words', async () => {
    const s = seed(5);
    const entries = Array.from({ length: 5 }, (_, i) => drawEntry(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`));
    const draw = { algorithm: DRAW_ALGORITHM, commitment: drawCommitment(s), seed: s, entries };
    assert.deepEqual(await checkPublishedDraw({ ...draw, algorithm: 'v0' }), { ok: false, problem: 'unknown algorithm "v0"' });
    assert.deepEqual(await checkPublishedDraw({ ...draw, seed: s.toUpperCase() }), { ok: false, problem: 'the seed is not 64 lowercase hex digits' });
    for (const bad of [entries[0]!.toUpperCase(), entries[0]!.slice(1), `${entries[0]!}0`, `x${entries[0]!.slice(1)}`]) {
      assert.deepEqual(await checkPublishedDraw({ ...draw, entries: [...entries.slice(1), bad] }), { ok: false, problem: 'an entry is not a SHA-256 hex digest' }, bad);
    }
    assert.deepEqual(await checkPublishedDraw({ ...draw, entries: [...entries, entries[2]!] }), { ok: false, problem: 'an entry appears twice' });
    const checked = await checkPublishedDraw(draw);
    assert.ok(checked.ok);
    assert.deepEqual(checked.places, placesOf(await drawOrder(s, 5, null)));
    let yields = 0;
    assert.ok((await checkPublishedDraw({ ...draw, entries: Array.from({ length: 5_001 }, (_, i) => drawEntry(String(i))) }, async () => void yields++)).ok);
    assert.ok(yields >= 1, 'the yield passed on to the draw');
  });
});

function placesEqual(a: Uint32Array, b: Uint32Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
