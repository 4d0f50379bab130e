// The operator's pre-queue figure (src/domain/prequeue-figures.ts): people listed, not left, no position yet.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DrawRecord } from '../../src/domain/ports/store.ts';
import { prequeueWaiting } from '../../src/domain/prequeue-figures.ts';

const draw = (over: Partial<DrawRecord>): DrawRecord => ({
  state: 'committed',
  seed: '0'.repeat(64),
  commitment: '1'.repeat(64),
  algorithm: 'fisher-yates/hmac-sha256-48/v1',
  drawnThrough: 0,
  entryCount: 0,
  progress: 0,
  firstPosition: 0,
  numberedThrough: 0,
  ...over,
});

describe('prequeueWaiting', () => {
  it('is 0 without a draw and once the draw is done', () => {
    assert.equal(prequeueWaiting(null), 0);
    assert.equal(prequeueWaiting(draw({ state: 'done', listed: 50, leftPrequeue: 2, entryCount: 48, progress: 48, numberedThrough: 50 })), 0);
  });

  it('before the draw: everyone listed less those who left', () => {
    assert.equal(prequeueWaiting(draw({ listed: 40, leftPrequeue: 3 })), 37);
    assert.equal(prequeueWaiting(draw({ listed: 0, leftPrequeue: 0 })), 0);
  });

  it('while the draw numbers the places: the drawn entries not numbered yet and the late arrivals', () => {
    // 40 listed at the start, 3 of them had left: 37 drawn, 10 numbered; 5 joined since, 1 of them left.
    const drawing = draw({ state: 'drawing', listed: 45, leftPrequeue: 4, drawnThrough: 40, entryCount: 37, progress: 10, numberedThrough: 40 });
    assert.equal(prequeueWaiting(drawing), 27 + 4);
    // Every place numbered, 2 late arrivals numbered behind them.
    assert.equal(prequeueWaiting({ ...drawing, progress: 37, numberedThrough: 42 }), 2);
  });

  it('never counts below zero', () => {
    assert.equal(prequeueWaiting(draw({ listed: 1, leftPrequeue: 5 })), 0);
  });
});
