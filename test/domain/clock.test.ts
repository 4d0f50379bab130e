// The rule for wall-clock steps (src/domain/clock.ts): a transient step has no effect; a lasting one is
// adopted after a minute. Both clocks are driven by hand: no real time passes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { steadyClock } from '../../src/domain/clock.ts';

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
