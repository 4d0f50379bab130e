// The periodic inlet with an injected clock: before start no move, inside the window a move, after the
// end no move, end 0 = no end, paused = skipped; inside the server as a scheduler job, where with several
// nodes each tick is applied once.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { PeriodicInlet } from '../../src/domain/admission/periodic.ts';
import type { InletSettings } from '../../src/domain/room-settings.ts';
import { periodicInletJobs } from '../../src/inlet/in-server.ts';
import { runPeriodicTick } from '../../src/inlet/periodic.ts';
import { JobScheduler } from '../../src/jobs/scheduler.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { eventSettings, startTestNode, TestClock, type TestNode, wallClock } from '../support/node.ts';
import { fakePrivateApi, startHealthServer, type HealthServer } from './helpers.ts';

const silent = { info: () => {}, debug: () => {}, error: () => {} };
/** startTestNode's option wants the clock as both a TestClock and a function. */
const clockAt = (ms: number) => new TestClock(ms) as TestClock & (() => number);

describe('periodic inlet: one tick through the private API', () => {
  const inlet: PeriodicInlet = { eventId: 'Sample', incrementBy: 10, startTime: 1000, endTime: 2000 };

  it('before the start time: no call, no move', async () => {
    const api = fakePrivateApi();
    assert.deepEqual(await runPeriodicTick(api, inlet, 1000), { kind: 'before-start' });
    assert.deepEqual(api.calls, []);
  });

  it('inside the window: increment_by is added', async () => {
    const api = fakePrivateApi({ serving: 5 });
    assert.deepEqual(await runPeriodicTick(api, inlet, 1500), { kind: 'moved', by: 10, servingNum: 15 });
    assert.deepEqual(api.calls, ['increment Sample 10']);
  });

  it('after the end time: no move', async () => {
    const api = fakePrivateApi();
    assert.deepEqual(await runPeriodicTick(api, inlet, 2000), { kind: 'ended' });
    assert.deepEqual(api.calls, []);
  });

  it('end time 0: still moving long after', async () => {
    const api = fakePrivateApi();
    const outcome = await runPeriodicTick(api, { ...inlet, endTime: 0 }, 2_000_000_000);
    assert.equal(outcome.kind, 'moved');
  });

  it('paused: the tick is skipped with the check\'s reason; the check is not even asked outside the window', async () => {
    const api = fakePrivateApi();
    let asked = 0;
    const pauseCheck = async () => {
      asked++;
      return { state: 'ALARM' as const, reason: 'health check answered HTTP 503' };
    };
    assert.deepEqual(await runPeriodicTick(api, { ...inlet, pauseCheck }, 1500), {
      kind: 'paused',
      reason: 'health check answered HTTP 503',
    });
    assert.equal(await runPeriodicTick(api, { ...inlet, pauseCheck }, 500).then((o) => o.kind), 'before-start');
    assert.equal(await runPeriodicTick(api, { ...inlet, pauseCheck }, 2500).then((o) => o.kind), 'ended');
    assert.equal(asked, 1);
    assert.deepEqual(api.calls, []);
  });
});

/** Joins for the store: `n` new visitors. */
const visitors = (n: number) => Array.from({ length: n }, () => ({ requestId: randomUUID(), entryTime: 0 }));

describe('periodic inlet inside the server (scheduler job, test clock)', () => {
  let node: TestNode;
  let site: HealthServer;
  let metrics: Metrics;
  const start = Date.UTC(2026, 10, 22, 12, 0, 0) / 1000;

  // A node of its own for every test, its clock at `start`: each test follows the window from the beginning.
  beforeEach(async () => {
    site = await startHealthServer();
    const inlet = (pause: boolean): Extract<InletSettings, { strategy: 'periodic' }> => ({
      strategy: 'periodic',
      interval: 60,
      increment_by: 10,
      start_time: start + 60,
      end_time: start + 600,
      ...(pause ? { pause_check: { url: site.url, timeout: 30 } } : {}),
    });
    node = await startTestNode(
      {
        events: [
          eventSettings('Timed', { inlet: inlet(false) }),
          eventSettings('Guarded', { inlet: { ...inlet(true), start_time: 0, end_time: 0 } }),
          eventSettings('Manual'),
        ],
      },
      { clock: clockAt(start * 1000) },
    );
    // Inside the server an inlet never moves the counter past the last position handed out: people wait.
    for (const eventId of ['Timed', 'Guarded']) await node.store.assignPositions(eventId, visitors(100));
    metrics = new Metrics({ defaultMetrics: false });
  });
  afterEach(async () => {
    await node.stop();
    await site.close();
  });

  const jobs = () => periodicInletJobs({ room: node.room, metrics, log: silent, clock: node.clock.now });
  const job = (name: string) => {
    const found = jobs().find((j) => j.name === name);
    assert.ok(found, `job ${name}`);
    return found;
  };
  const serving = async (eventId: string) => (await node.room.reports.counters(eventId)).serving;
  const tickNow = (name: string) => {
    const j = job(name);
    return node.scheduler.runTick(j, Math.floor(node.clock.now() / j.intervalMs));
  };

  it('makes one job per event with a periodic inlet, named inlet:<event>, at its interval', () => {
    assert.deepEqual(
      jobs().map((j) => [j.name, j.intervalMs]),
      [
        ['inlet:Timed', 60_000],
        ['inlet:Guarded', 60_000],
      ],
    );
  });

  /** Ticks of inlet:Timed from `start` to past the end of its window, checking the counter at each. */
  async function followWindow(): Promise<void> {
    assert.equal(await tickNow('inlet:Timed'), true);
    assert.equal(await serving('Timed'), 0, 'at the start time itself nothing moves');
    node.clock.advance(60);
    await tickNow('inlet:Timed');
    assert.equal(await serving('Timed'), 0, 'now == start_time: not yet');
    node.clock.advance(60);
    await tickNow('inlet:Timed');
    assert.equal(await serving('Timed'), 10);
    node.clock.advance(60);
    await tickNow('inlet:Timed');
    assert.equal(await serving('Timed'), 20);
    node.clock.advance(600);
    await tickNow('inlet:Timed');
    assert.equal(await serving('Timed'), 20, 'after end_time nothing moves');
  }

  it('follows the window as the clock moves: before start, inside, after the end', async () => {
    await followWindow();
    assert.equal(await serving('Manual'), 0, 'an event without an inlet is left alone');
  });

  it('skips ticks while the site\'s health check fails, and resumes when it recovers', async () => {
    const before = await serving('Guarded');
    site.answer = { status: 503, body: '{}', delayMs: 0 };
    node.clock.advance(60);
    await tickNow('inlet:Guarded');
    assert.equal(await serving('Guarded'), before);
    site.answer = { status: 200, body: '{}', delayMs: 0 };
    node.clock.advance(60);
    await tickNow('inlet:Guarded');
    assert.equal(await serving('Guarded'), before + 10);
  });

  it('records what it did as metrics', async () => {
    await followWindow();
    site.answer = { status: 503, body: '{}', delayMs: 0 };
    await tickNow('inlet:Guarded');
    const text = await metrics.registry.metrics();
    assert.match(text, /anteroom_inlet_admitted_total\{event_id="Timed",strategy="periodic"\} 20/);
    assert.match(text, /anteroom_inlet_decisions_total\{event_id="Guarded",strategy="periodic",outcome="paused"\} 1/);
    assert.match(text, /anteroom_inlet_decisions_total\{event_id="Timed",strategy="periodic",outcome="before_start"\} 2/);
    assert.match(text, /anteroom_inlet_decisions_total\{event_id="Timed",strategy="periodic",outcome="ended"\} 1/);
  });

  it('with several nodes on one store, each tick is applied once', async () => {
    const guarded = { ...job('inlet:Guarded') };
    const nodes = [randomUUID(), randomUUID(), randomUUID()].map(
      (nodeId) => new JobScheduler({ store: node.store, nodeId, log: silent, clockMs: node.clock.now }),
    );
    for (let round = 0; round < 3; round++) {
      node.clock.advance(60);
      const before = await serving('Guarded');
      const tick = Math.floor(node.clock.now() / guarded.intervalMs);
      const ran = await Promise.all(nodes.map((scheduler) => scheduler.runTick(guarded, tick)));
      assert.equal(ran.filter(Boolean).length, 1, `round ${round}: exactly one node runs the tick`);
      assert.equal(await serving('Guarded'), before + 10);
      // A node that comes late to the same tick does not apply it again.
      const loser = nodes[ran.indexOf(false)]!;
      assert.equal(await loser.runTick(guarded, tick), false);
      assert.equal(await serving('Guarded'), before + 10);
    }
    await Promise.all(nodes.map((scheduler) => scheduler.stop()));
  });
});

describe('periodic inlet wired into startNode', () => {
  it('runs as a scheduler job when jobs are on', async () => {
    const node = await startTestNode(
      { events: [eventSettings('Sample', { inlet: { strategy: 'periodic', interval: 1, increment_by: 7, start_time: 0, end_time: 0 } })] },
      { jobs: true, clock: wallClock() as TestClock & (() => number) },
    );
    try {
      await node.store.assignPositions('Sample', visitors(100));
      // The job runs every second on the real clock: poll for its first increment (the deadline only guards
      // against a hang; the test does not depend on how soon the job runs).
      const deadline = Date.now() + 30_000;
      while ((await node.room.reports.counters('Sample')).serving === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const serving = (await node.room.reports.counters('Sample')).serving;
      assert.ok(serving > 0 && serving % 7 === 0, `serving counter moved by multiples of 7 (got ${serving})`);
      const metrics = await (await node.get('/metrics')).text();
      assert.match(metrics, /anteroom_job_runs_total\{job="inlet:Sample",outcome="ok"\}/);
    } finally {
      await node.stop();
    }
  });
});
