// The admission job on AWS (src/aws/jobs.ts): a scheduled function runs a minute's ticks, one per second, each
// claimed through the job lock in Redis — so an invocation that overlaps another (a late start, a retry) never
// runs a tick twice. The ticks are driven by a test clock: the function's wait for the next second advances it.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { createJobHandlers, type AdmissionTicking } from '../../src/aws/jobs.ts';
import { createRuntime, type AwsRuntime } from '../../src/aws/runtime.ts';
import { defaultSettings, type RoomSettings } from '../../src/domain/room-settings.ts';
import { RedisStore } from '../../src/store/redis/redis-store.ts';
import { TestClock } from '../support/node.ts';
import { startRedisServer } from '../support/redis-server.ts';
import { scheduledEvent } from './events.ts';

const redis = await startRedisServer();
after(() => redis.destroy());

const room: RoomSettings = { ...defaultSettings('Sample'), admission: 'automatic', new_users_per_minute: 120, total_active_users: 1000, presence_timeout: 0 }; // positions made in the store: nobody to be seen

/** One execution environment of the jobs function, on a shared Redis and clock; counts its admission runs. */
async function environment(keyPrefix: string, clock: TestClock, settings: RoomSettings = room) {
  const runtime: AwsRuntime = await createRuntime(
    { event: settings, redis: { host: '127.0.0.1', port: 0, tls: false, keyPrefix }, pollTtl: 1, logLevel: 'silent' },
    { store: new RedisStore({ url: redis.url, keyPrefix, readyTimeoutMs: 5000 }), clock: clock.now, log: () => {} },
  );
  const runs: number[] = [];
  const admit = runtime.room.admission.admitAutomatically.bind(runtime.room.admission);
  runtime.room.admission.admitAutomatically = async (eventId) => {
    runs.push(Math.floor(clock.now() / 1000));
    return admit(eventId);
  };
  return { runtime, runs };
}

/** Ticks at the given seconds, as the clock reaches them (the test's stand-in for waiting a second). */
function ticksAt(clock: TestClock, seconds: readonly number[], onTick: () => void = () => {}): AdmissionTicking {
  let next = 0;
  return {
    ticks: seconds.length,
    nextTick: async () => {
      onTick();
      const second = seconds[next++]!;
      clock.ms = Math.max(clock.ms, second * 1000);
      return second;
    },
  };
}

describe('AWS admission job', () => {
  it('one invocation runs its ticks one per second and admits at the room\'s rate', async () => {
    const clock = new TestClock();
    const { runtime, runs } = await environment(`ar-aws-adm-${randomUUID().slice(0, 8)}:`, clock);
    try {
      await runtime.store.assignPositions('Sample', Array.from({ length: 10 }, () => ({ requestId: randomUUID(), entryTime: 1 })));
      const start = Math.floor(clock.now() / 1000) + 1;
      await createJobHandlers(async () => runtime, ticksAt(clock, [start, start + 1, start + 2])).admission(scheduledEvent('admission'));
      assert.deepEqual(runs, [start, start + 1, start + 2]);
      assert.equal((await runtime.room.reports.counters('Sample')).serving, 6, '⌈120/60⌉ = 2 a tick, three ticks');
    } finally {
      await runtime.close();
    }
  });

  it('costs nothing while no room needs ticks: returns without waiting for one; ticks again once a room is automatic', async () => {
    const clock = new TestClock();
    const manual: RoomSettings = { ...defaultSettings('Sample'), admission: 'manual' };
    const { runtime, runs } = await environment(`ar-aws-adm-${randomUUID().slice(0, 8)}:`, clock, manual);
    try {
      let waits = 0;
      const start = Math.floor(clock.now() / 1000) + 1;
      const seconds = Array.from({ length: 60 }, (_, i) => start + i);
      await createJobHandlers(async () => runtime, ticksAt(clock, seconds, () => waits++)).admission(scheduledEvent('admission'));
      assert.equal(waits, 0, 'no tick waited for');
      assert.deepEqual(runs, []);
      // The room switches to automatic admission (the rooms API): the next invocation ticks it.
      await runtime.room.rooms.putRoom('Sample', { ...room });
      clock.ms += 2_000;
      const later = Math.floor(clock.now() / 1000) + 1;
      await createJobHandlers(async () => runtime, ticksAt(clock, [later, later + 1], () => waits++)).admission(scheduledEvent('admission'));
      assert.equal(waits, 2);
      assert.deepEqual(runs, [later, later + 1]);
    } finally {
      await runtime.close();
    }
  });

  it('two invocations that overlap run each tick once between them', async () => {
    const clock = new TestClock();
    const keyPrefix = `ar-aws-adm-${randomUUID().slice(0, 8)}:`;
    const [a, b] = [await environment(keyPrefix, clock), await environment(keyPrefix, clock)];
    try {
      const start = Math.floor(clock.now() / 1000) + 1;
      // The late invocation starts on the last tick of the first one.
      await createJobHandlers(async () => a.runtime, ticksAt(clock, [start, start + 1])).admission(scheduledEvent('admission'));
      await createJobHandlers(async () => b.runtime, ticksAt(clock, [start + 1, start + 2])).admission(scheduledEvent('admission'));
      assert.deepEqual([...a.runs, ...b.runs], [start, start + 1, start + 2]);
    } finally {
      await a.runtime.close();
      await b.runtime.close();
    }
  });

  it('the history job records every room at its minute, and the waits an invocation admitted are in the report', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 24, 12, 0, 0));
    const start = clock.now() / 1000;
    const { runtime } = await environment(`ar-aws-hist-${randomUUID().slice(0, 8)}:`, clock, defaultSettings('Sample'));
    try {
      const joined = await runtime.room.queue.assignQueueNum('Sample', {});
      const id = (joined.body as { api_request_id: string }).api_request_id;
      clock.advance(20);
      await runtime.room.admission.incrementServingCounter('Sample', 1);
      assert.equal((await runtime.room.claims.generateToken('Sample', id)).status, 200);
      // The public API function's invocation ends with a flush: the wait is in Redis before it returns.
      await runtime.flush();
      await createJobHandlers(async () => runtime).history(scheduledEvent('history'));
      const report = await runtime.room.reports.roomReport('Sample', start, start + 60);
      assert.deepEqual(
        report.body.minutes.map((m) => [m.minute - start, m.arrivals, m.admissions, m.claims, m.waits_measured]),
        [[0, 1, 1, 1, 1]],
      );
      assert.ok(report.body.minutes[0]!.wait_p50_s! > 15 && report.body.minutes[0]!.wait_p50_s! <= 20);
    } finally {
      await runtime.close();
    }
  });
});
