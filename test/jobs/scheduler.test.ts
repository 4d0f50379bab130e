// The interval-job scheduler (src/jobs/scheduler.ts): ticks on whole multiples of the interval, each claimed
// through the store's lock. Timers and the clock are driven by hand here.

import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { JobScheduler } from '../../src/jobs/scheduler.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const silent = { error: () => undefined, debug: () => undefined };
/** Lets the tick started by a timer claim its lock and run (the store answers without I/O in memory). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('JobScheduler', () => {
  it('a timer that fires a few ms before its boundary does not run the tick before again: the next one runs on time', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const store = new SqliteStore({ path: ':memory:' });
    let now = 9_300;
    const ran: number[] = [];
    const scheduler = new JobScheduler({ store, nodeId: 'node-a', log: silent, clockMs: () => now });
    try {
      scheduler.start({ name: 'expiry', intervalMs: 1000, run: async () => void ran.push(now) });
      now = 10_000;
      mock.timers.tick(700);
      await settle();
      assert.deepEqual(ran, [10_000], 'tick 10, on its boundary');
      // The next timer, set for 11_000, fires 5 ms early (as on a busy machine), then the one set after it.
      now = 10_995;
      mock.timers.tick(1000);
      await settle();
      now = 11_000;
      mock.timers.tick(5);
      await settle();
      // Before: the early timer took itself for tick 10 again, which this node's own lock let it run twice.
      assert.deepEqual(ran, [10_000, 11_000], 'tick 11 at its boundary, tick 10 not again');
      now = 12_000;
      mock.timers.tick(1000);
      await settle();
      assert.deepEqual(ran, [10_000, 11_000, 12_000]);
    } finally {
      await scheduler.stop();
      mock.timers.reset();
      await store.close();
    }
  });

  it('a timer that fires late runs the tick of now once; the ticks it slept through are skipped', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const store = new SqliteStore({ path: ':memory:' });
    let now = 9_500;
    const ran: number[] = [];
    const scheduler = new JobScheduler({ store, nodeId: 'node-a', log: silent, clockMs: () => now });
    try {
      scheduler.start({ name: 'expiry', intervalMs: 1000, run: async () => void ran.push(now) });
      now = 12_300; // the timer set for 10_000 fires 2.3 s late
      mock.timers.tick(500);
      await settle();
      now = 13_000;
      mock.timers.tick(700);
      await settle();
      assert.deepEqual(ran, [12_300, 13_000]);
    } finally {
      await scheduler.stop();
      mock.timers.reset();
      await store.close();
    }
  });
});
