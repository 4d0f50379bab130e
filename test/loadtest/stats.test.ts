import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpuSecondsFrom } from '../../src/loadtest/server-observer.ts';
import { LatencyHistogram, percentilesOf, RunStats } from '../../src/loadtest/stats.ts';
import { TimerWheel } from '../../src/loadtest/timer-wheel.ts';

describe('latency histogram', () => {
  it('percentiles are within 2.5 % of the exact value over six orders of magnitude', () => {
    const h = new LatencyHistogram();
    const values: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const v = 0.01 * 10 ** ((i % 1000) / 166); // 10 µs … ~10 s
      values.push(v);
      h.record(v);
    }
    values.sort((a, b) => a - b);
    for (const p of [50, 90, 95, 99, 99.9]) {
      const exact = values[Math.ceil((p / 100) * values.length) - 1]!;
      const got = h.percentile(p);
      assert.ok(Math.abs(got - exact) / exact < 0.025, `p${p}: ${got} vs ${exact}`);
    }
    assert.equal(h.count, 20_000);
    assert.equal(h.maxMs, values[values.length - 1]);
  });

  it('an empty histogram answers 0; merge adds counts', () => {
    const a = new LatencyHistogram();
    assert.equal(a.percentile(99), 0);
    a.record(1);
    const b = new LatencyHistogram();
    b.record(100);
    b.record(100);
    a.merge(b);
    assert.equal(a.count, 3);
    assert.ok(Math.abs(a.percentile(50) - 100) < 3);
    assert.equal(a.minMs, 1);
  });

  it('exact percentiles of a list (time in queue)', () => {
    assert.deepEqual(percentilesOf([]), { count: 0, p50: 0, p95: 0, p99: 0, max: 0 });
    const r = percentilesOf(Array.from({ length: 100 }, (_, i) => i + 1));
    assert.deepEqual(r, { count: 100, p50: 50, p95: 95, p99: 99, max: 100 });
  });
});

describe('run statistics', () => {
  it('counts 0, 4xx and 5xx as errors by status; 200 and 202 are not errors', () => {
    const s = new RunStats();
    s.record('serving_num', 200, 1);
    s.record('queue_num', 202, 1);
    s.record('generate_token', 503, 1);
    s.record('serving_num', 0, 1);
    s.record('serving_num', 0, 1);
    s.record('queue_num', 404, 1);
    assert.equal(s.requests, 6);
    assert.equal(s.errors, 4);
    assert.deepEqual(s.errorsByStatus(), { network: 2, '503': 1, '404': 1 });
  });

  it('a sample gives rates over the interval since the previous one', () => {
    const s = new RunStats();
    for (let i = 0; i < 50; i++) s.record('serving_num', 200, 2);
    s.joins = 10;
    const gauges = { joined: 10, waiting: 4, served: 6, servingCounter: 6, highestPosition: 10, serverWaitingNum: null, clientBusy: 0.5, serverCpu: null };
    const first = s.sample(500, gauges);
    assert.equal(first.requestsPerSec, 100);
    assert.equal(first.joinsPerSec, 20);
    assert.ok(Math.abs(first.p99 - 2) < 0.05);
    const second = s.sample(1500, gauges);
    assert.equal(second.requestsPerSec, 0);
    assert.equal(second.p99, 0);
    assert.equal(s.samples.length, 2);
  });
});

describe('timer wheel', () => {
  it('fires tasks in time order, on the tick they are due, and never twice', () => {
    let now = 0;
    const wheel = new TimerWheel(() => now, 10);
    const fired: string[] = [];
    wheel.start();
    wheel.at(25, () => fired.push('b'));
    wheel.at(5, () => fired.push('a'));
    wheel.at(100, () => fired.push('c'));
    now = 30;
    wheel.turn();
    assert.deepEqual(fired, ['a', 'b']);
    now = 99;
    wheel.turn();
    assert.deepEqual(fired, ['a', 'b']);
    now = 100;
    wheel.turn();
    wheel.turn();
    assert.deepEqual(fired, ['a', 'b', 'c']);
    assert.equal(wheel.pending, 0);
    wheel.stop();
  });

  it('a task scheduled "now" from a task runs on the next tick, not in the same turn', () => {
    let now = 0;
    const wheel = new TimerWheel(() => now, 10);
    wheel.start();
    const fired: number[] = [];
    wheel.at(10, () => {
      fired.push(now);
      wheel.after(0, () => fired.push(now));
    });
    now = 10;
    wheel.turn();
    assert.deepEqual(fired, [10]);
    now = 20;
    wheel.turn();
    assert.deepEqual(fired, [10, 20]);
    wheel.stop();
  });

  it('keeps turning when a task throws, and remembers the first error', () => {
    let now = 0;
    const wheel = new TimerWheel(() => now, 10);
    wheel.start();
    let ran = false;
    wheel.at(0, () => {
      throw new Error('bug');
    });
    wheel.at(0, () => (ran = true));
    now = 10;
    wheel.turn();
    assert.equal(ran, true);
    assert.equal((wheel.error as Error).message, 'bug');
    wheel.stop();
  });
});

describe('server CPU from /metrics', () => {
  it('reads process_cpu_seconds_total with or without a prefix and labels', () => {
    assert.equal(cpuSecondsFrom('# HELP x\nanteroom_process_cpu_seconds_total 12.5\n'), 12.5);
    assert.equal(cpuSecondsFrom('process_cpu_seconds_total{instance="a"} 3e1\n'), 30);
    assert.equal(cpuSecondsFrom('anteroom_process_cpu_user_seconds_total 4\n'), null);
    assert.equal(cpuSecondsFrom('{"error":"Not found"}'), null);
  });
});
