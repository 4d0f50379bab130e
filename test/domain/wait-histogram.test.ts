// The wait histogram of after-event reports: fixed buckets, percentiles read back within their bucket, tallies
// drained once and put back when the store refused them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bucketOf, countOf, percentile, WAIT_BUCKET_BOUNDS, WaitTally } from '../../src/domain/wait-histogram.ts';

function countsOf(values: readonly number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[`w${bucketOf(v)}`] = (counts[`w${bucketOf(v)}`] ?? 0) + 1;
  return counts;
}

/** The exact percentile (nearest rank) of the values. */
const exact = (values: readonly number[], p: number) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * values.length) - 1)]!;

describe('wait histogram', () => {
  it('puts a value in the first bucket whose bound is at or above it; above the last, in one more', () => {
    assert.equal(bucketOf(0), 0);
    assert.equal(bucketOf(-5), 0);
    assert.equal(bucketOf(0.5), 1);
    assert.equal(bucketOf(1), 1);
    assert.equal(bucketOf(7), WAIT_BUCKET_BOUNDS.indexOf(8));
    assert.equal(bucketOf(1e9), WAIT_BUCKET_BOUNDS.length);
  });

  it('reads percentiles back within a quarter of the exact value (exact at small waits)', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (const scale of [3, 40, 600, 7200]) {
      const values = Array.from({ length: 2000 }, () => Math.round(random() * random() * scale));
      const counts = countsOf(values);
      assert.equal(countOf(counts, 'w'), values.length);
      for (const p of [50, 90, 99]) {
        const truth = exact(values, p);
        const read = percentile(counts, 'w', p)!;
        assert.ok(Math.abs(read - truth) <= Math.max(1, truth * 0.25), `scale ${scale} p${p}: ${read} vs ${truth}`);
      }
    }
    assert.equal(percentile({}, 'w', 50), null);
    assert.equal(percentile({ w3: 2 }, 'e', 50), null);
    assert.equal(percentile({ [`w${WAIT_BUCKET_BOUNDS.length}`]: 1 }, 'w', 99), WAIT_BUCKET_BOUNDS.at(-1));
  });

  it('tallies per room and minute, drains once, and takes back what the store refused', () => {
    const tally = new WaitTally();
    tally.add('A', 125, 30, 4);
    tally.add('A', 170, 30, undefined);
    tally.add('B', 61, 0, undefined);
    const drained = tally.drain();
    assert.deepEqual(drained, [
      { eventId: 'A', waits: { minute: 120, counts: { [`w${bucketOf(30)}`]: 2, [`e${bucketOf(4)}`]: 1 } } },
      { eventId: 'B', waits: { minute: 60, counts: { w0: 1 } } },
    ]);
    assert.deepEqual(tally.drain(), []);
    tally.restore(drained.slice(1));
    tally.add('B', 61, 0, undefined);
    assert.deepEqual(tally.drain(), [{ eventId: 'B', waits: { minute: 60, counts: { w0: 2 } } }]);
    tally.add('C', 0, 1, undefined);
    tally.forget('C');
    assert.deepEqual(tally.drain(), []);
  });
});
