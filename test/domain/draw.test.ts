// The draw: a permutation of exactly the pre-queue entries, reproducible from the published seed, and a
// tampered seed or entry list is caught.

import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
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

function placesEqual(a: Uint32Array, b: Uint32Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
