// The rule for wall-clock steps (src/domain/clock.ts): a transient step has no effect; a lasting one is
// adopted after a minute. Both clocks are driven by hand: no real time passes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { epochSeconds, steadyClock, systemClock } from '../../src/domain/clock.ts';

function clocks(startWall = Date.UTC(2026, 10, 24, 12)) {
  const state = { wall: startWall, monotonic: 1000 };
  const clock = steadyClock(() => state.wall, () => state.monotonic);
  const pass = (ms: number) => {
    state.wall += ms;
    state.monotonic += ms;
  };
  return { state, clock, pass, start: startWall };
}

describe('steadyClock', () => {
  it('is the wall clock while both clocks agree (small drift included)', () => {
    const { state, clock, pass, start } = clocks();
    assert.equal(clock(), start);
    pass(5000);
    assert.equal(clock(), start + 5000);
    state.wall += 300; // NTP slewing / drift within the tolerance
    assert.equal(clock(), start + 5300);
  });

  it('ignores a transient +2 h step of 5 s: time goes on at the monotonic pace, then the wall clock again', () => {
    const { state, clock, pass, start } = clocks();
    pass(1000);
    state.wall += 2 * 3600_000;
    for (let s = 1; s <= 5; s++) {
      pass(1000);
      assert.equal(clock(), start + 1000 + s * 1000, `second ${s} of the step`);
    }
    state.wall -= 2 * 3600_000; // stepped back to the right time
    pass(1000);
    assert.equal(clock(), start + 7000);
  });

  it('ignores a transient step back as well (a served-at time in the past would expire positions later)', () => {
    const { state, clock, pass, start } = clocks();
    state.wall -= 3600_000;
    pass(2000);
    assert.equal(clock(), start + 2000);
    state.wall += 3600_000;
    pass(1000);
    assert.equal(clock(), start + 3000);
  });

  it('adopts a lasting step after a minute (a real correction)', () => {
    const { state, clock, pass, start } = clocks();
    state.wall += 3600_000;
    pass(1000);
    assert.equal(clock(), start + 1000, 'not followed at once');
    pass(30_000);
    assert.equal(clock(), start + 31_000, 'not followed after 30 s');
    pass(30_000); // 60 s since the clock first saw the step
    assert.equal(clock(), start + 3600_000 + 61_000, 'followed once it has lasted 60 s');
    pass(1000);
    assert.equal(clock(), start + 3600_000 + 62_000);
  });
});

describe('steadyClock: the bounds of the rule', () => {
  it('a difference of up to 1 s is agreement; more is a step', () => {
    const { state, clock, pass, start } = clocks();
    pass(1000);
    state.wall += 1000;
    assert.equal(clock(), start + 2000, '1000 ms off: followed');
    pass(1000);
    state.wall += 1001;
    assert.equal(clock(), start + 3000, '1001 ms off: not followed');
  });

  it('a step is adopted when it has lasted exactly the minute, not a millisecond before', () => {
    const { state, clock, pass, start } = clocks();
    state.wall += 3600_000;
    pass(1000);
    assert.equal(clock(), start + 1000);
    pass(59_999);
    assert.equal(clock(), start + 60_999, '59 999 ms: not yet');
    pass(1);
    assert.equal(clock(), start + 3600_000 + 61_000, '60 000 ms: adopted');
  });

  it('the minute counts from when the step was first seen, whatever the monotonic clock read before', () => {
    const state = { wall: Date.UTC(2026, 10, 24, 12), monotonic: 5_000_000 };
    const clock = steadyClock(() => state.wall, () => state.monotonic);
    const start = state.wall;
    state.wall += 3600_000;
    state.monotonic += 1000;
    assert.equal(clock(), start + 1000, 'not adopted at once');
  });

  it('a step that ends starts the count again: a second step later waits its own minute', () => {
    const { state, clock, pass, start } = clocks();
    state.wall += 3600_000;
    pass(40_000);
    assert.equal(clock(), start + 40_000);
    state.wall -= 3600_000; // the first step undone
    pass(1000);
    assert.equal(clock(), start + 41_000);
    state.wall += 3600_000; // another, 30 s later
    pass(30_000);
    assert.equal(clock(), start + 71_000, 'not adopted: it has lasted 30 s, not 71');
  });

  it('is in whole milliseconds while it goes on at the monotonic pace', () => {
    const { state, clock, start } = clocks();
    state.wall += 3600_000;
    state.monotonic += 1000.4;
    assert.equal(clock(), start + 1000);
    state.monotonic += 0.2;
    assert.equal(clock(), start + 1001);
  });

  it('takes its tolerance and the time to adopt a step from its options', () => {
    const state = { wall: Date.UTC(2026, 10, 24, 12), monotonic: 1000 };
    const clock = steadyClock(() => state.wall, () => state.monotonic, { toleranceMs: 10, adoptAfterMs: 5000 });
    const start = state.wall;
    state.wall += 11;
    assert.equal(clock(), start, '11 ms off is a step');
    state.wall += 5000;
    state.monotonic += 5000;
    assert.equal(clock(), start + 5011, 'adopted after 5 s');
  });

  it('by default reads Date.now and performance.now (systemClock too)', () => {
    for (const clock of [steadyClock(), systemClock]) {
      const before = Date.now();
      const now = clock();
      assert.ok(Number.isInteger(now) && now >= before && now <= Date.now(), `${now} within [${before}, now]`);
    }
  });
});

describe('epochSeconds', () => {
  it('whole seconds, rounded down', () => {
    assert.equal(epochSeconds(() => 1_800_000_000_999), 1_800_000_000);
    assert.equal(epochSeconds(() => 1_800_000_000_000), 1_800_000_000);
  });
});
