import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TurnEstimator, formatRange, type TurnEstimate } from '../../web/waiting-room-site/turn-estimate.ts';

const POLL = 3_000;

/** Feeds the estimator one poll every 3 s from t0 with the serving counter given by `serving(t)`. */
function run(estimator: TurnEstimator, fromMs: number, toMs: number, serving: (t: number) => number): void {
  for (let t = fromMs; t <= toMs; t += POLL) estimator.observe(t, serving(t));
}

describe('estimated time to my turn', () => {
  it('at a steady pace, the range contains the true time left', () => {
    const estimator = new TurnEstimator();
    // 30 people a minute = one every 2 s.
    run(estimator, 0, 120_000, (t) => Math.floor(t / 2_000));
    const estimate = estimator.estimate(120_000, 60 + 90); // 90 ahead → 180 s at this pace
    assert.equal(estimate.kind, 'range');
    if (estimate.kind !== 'range') return;
    assert.ok(estimate.lowSec <= 180 && 180 <= estimate.highSec, `${estimate.lowSec}–${estimate.highSec}`);
    assert.ok(estimate.highSec - estimate.lowSec < 100, 'a useful range, not a shrug');
    assert.ok(Math.abs(estimate.perMinute - 30) < 1);
  });

  it('says "estimating" until enough has been observed, "served" once my number is reached', () => {
    const estimator = new TurnEstimator();
    assert.equal(estimator.estimate(0, 5).kind, 'estimating');
    estimator.observe(0, 0);
    estimator.observe(3_000, 1);
    assert.equal(estimator.estimate(3_000, 5).kind, 'estimating');
    estimator.observe(6_000, 5);
    assert.equal(estimator.estimate(6_000, 5).kind, 'served');
  });

  it('says "stalled" when nobody has been let in yet, or for half the window', () => {
    const notStarted = new TurnEstimator();
    run(notStarted, 0, 60_000, () => 0);
    assert.equal(notStarted.estimate(60_000, 10).kind, 'stalled');
    const stopped = new TurnEstimator();
    run(stopped, 0, 60_000, (t) => Math.floor(t / 2_000));
    run(stopped, 63_000, 210_000, () => 30);
    assert.equal(stopped.estimate(210_000, 100).kind, 'stalled');
  });

  it('one slow poll does not push the estimate later', () => {
    const estimator = new TurnEstimator();
    const steady = (t: number) => Math.floor(t / 2_000);
    run(estimator, 0, 120_000, steady);
    const position = 200;
    const before = estimator.estimate(120_000, position);
    assert.equal(before.kind, 'range');
    if (before.kind !== 'range') return;
    // The next poll shows the counter stuck (a burst is late): the deadlines keep counting down.
    estimator.observe(123_000, steady(120_000));
    const after = estimator.estimate(123_000, position);
    assert.equal(after.kind, 'range');
    if (after.kind !== 'range') return;
    assert.ok(after.lowSec <= before.lowSec, `low ${before.lowSec} → ${after.lowSec}`);
    assert.ok(after.highSec <= before.highSec, `high ${before.highSec} → ${after.highSec}`);
  });

  it('the time shown never grows while the pace holds, over many polls of a bursty line', () => {
    const estimator = new TurnEstimator();
    // Ten people let in every 20 s (bursts), i.e. 30 a minute on average.
    const bursty = (t: number) => 10 * Math.floor(t / 20_000);
    const position = 400; // reached at t = 800 s
    let previous: { lowSec: number; highSec: number } | undefined;
    for (let t = 0; t < 800_000; t += POLL) {
      estimator.observe(t, bursty(t));
      const estimate = estimator.estimate(t, position);
      if (estimate.kind !== 'range') continue;
      if (previous) {
        assert.ok(estimate.lowSec <= previous.lowSec, `low grew at t=${t}: ${previous.lowSec} → ${estimate.lowSec}`);
        assert.ok(estimate.highSec <= previous.highSec, `high grew at t=${t}: ${previous.highSec} → ${estimate.highSec}`);
      }
      const left = 800 - t / 1000;
      if (t > 120_000) assert.ok(estimate.lowSec <= left && left <= estimate.highSec + 20, `t=${t}: ${estimate.lowSec}–${estimate.highSec}, truth ${left}`);
      previous = estimate;
    }
  });

  it('a real slowdown moves the estimate later, after it persisted for several polls', () => {
    const estimator = new TurnEstimator();
    // 60 a minute for 3 minutes, then 6 a minute.
    const pace = (t: number) => (t <= 180_000 ? t / 1_000 : 180 + (t - 180_000) / 10_000);
    run(estimator, 0, 180_000, (t) => Math.floor(pace(t)));
    const position = 600;
    const fast = estimator.estimate(180_000, position);
    assert.equal(fast.kind, 'range');
    let later: TurnEstimate = fast;
    for (let t = 183_000; t <= 300_000; t += POLL) {
      estimator.observe(t, Math.floor(pace(t)));
      later = estimator.estimate(t, position);
    }
    assert.equal(later.kind, 'range');
    if (fast.kind !== 'range' || later.kind !== 'range') return;
    assert.ok(later.highSec > fast.highSec * 1.4, `${fast.highSec} → ${later.highSec}`);
  });

  it('a serving counter that moves backwards (reset) starts the estimate afresh', () => {
    const estimator = new TurnEstimator();
    run(estimator, 0, 60_000, (t) => Math.floor(t / 1_000));
    estimator.observe(63_000, 0);
    assert.equal(estimator.estimate(63_000, 100).kind, 'estimating');
  });

  it('formats the range in words', () => {
    assert.equal(formatRange(10, 50), 'less than 1 minute');
    assert.equal(formatRange(20, 100), 'less than 2 minutes');
    assert.equal(formatRange(130, 170), '2–3 minutes');
    assert.equal(formatRange(180, 180), 'about 3 minutes');
    assert.equal(formatRange(240, 420), '4–7 minutes');
    assert.equal(formatRange(3_700, 7_000), '1–2 hours');
    assert.equal(formatRange(7_200, 7_200), 'about 2 hours');
  });
});
