// The interval-job scheduler (src/jobs/scheduler.ts): ticks on whole multiples of the interval, each claimed
// through the store's lock. Timers and the clock are driven by hand here.

import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { JobScheduler } from '../../src/jobs/scheduler.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const silent = { error: () => undefined, debug: () => undefined };

/**
 * A one-second job started at `startMs` on a scheduler whose timers and clock `body` moves: `at(ms, advanceMs)`
 * sets the clock, fires the timers due within `advanceMs` and lets the tick they started claim its lock and run
 * (the store answers without I/O in memory). `ran` holds the clock at each run.
 */
async function withOneSecondJob(startMs: number, body: (at: (ms: number, advanceMs: number) => Promise<void>, ran: number[]) => Promise<void>) {
  mock.timers.enable({ apis: ['setTimeout'] });
  const store = new SqliteStore({ path: ':memory:' });
  let now = startMs;
  const ran: number[] = [];
  const scheduler = new JobScheduler({ store, nodeId: 'node-a', log: silent, clockMs: () => now });
  try {
    scheduler.start({ name: 'expiry', intervalMs: 1000, run: async () => void ran.push(now) });
    await body(async (ms, advanceMs) => {
      now = ms;
      mock.timers.tick(advanceMs);
      await new Promise((resolve) => setImmediate(resolve));
    }, ran);
  } finally {
    await scheduler.stop();
    mock.timers.reset();
    await store.close();
  }
}

describe('JobScheduler', () => {
  it('a timer that fires a few ms before its boundary does not run the tick before again: the next one runs on time', async () => {
    await withOneSecondJob(9_300, async (at, ran) => {
      await at(10_000, 700);
      assert.deepEqual(ran, [10_000], 'tick 10, on its boundary');
      // The next timer, set for 11_000, fires 5 ms early (as on a busy machine), then the one set after it.
      await at(10_995, 1000);
      await at(11_000, 5);
      // Before: the early timer took itself for tick 10 again, which this node's own lock let it run twice.
      assert.deepEqual(ran, [10_000, 11_000], 'tick 11 at its boundary, tick 10 not again');
      await at(12_000, 1000);
      assert.deepEqual(ran, [10_000, 11_000, 12_000]);
    });
  });

  it('a timer that fires late runs the tick of now once; the ticks it slept through are skipped', async () => {
    await withOneSecondJob(9_500, async (at, ran) => {
      await at(12_300, 500); // the timer set for 10_000 fires 2.3 s late
      await at(13_000, 700);
      assert.deepEqual(ran, [12_300, 13_000]);
    });
  });
});
