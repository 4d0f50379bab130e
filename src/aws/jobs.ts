// Lambda functions run by EventBridge schedules (rate(1 minute)): the queue-position expiry job, the
// metrics event, the draw and the history (after-event reports), the jobs every Anteroom node runs on an interval. One schedule invokes one
// function, so no leader lock is needed; a retried invocation is harmless (an expiry step is idempotent, a
// metrics event describes the state it reads, a draw resumes from its stored progress under its own lease).
//
// The admission job ticks every second (automatic admission, src/domain/admission/automatic.ts), more often
// than a schedule can invoke a function: one invocation a minute runs the minute's ticks, one at each whole
// second. Each tick is claimed through the store's job lock like a node's (src/jobs/scheduler.ts), so an
// invocation that overlaps the next one (a late start, a retry) never runs a tick twice.
//
// It costs only while a room needs it: an invocation with no room whose ticks can move its counter (automatic
// admission, or the state "off": ticksMatter) returns at once, and one that runs stops as soon as none is left
// (the rooms are followed between ticks). A room switched to automatic admission is ticked from the next
// invocation, within a minute. Cost figures: docs/aws.md, Cost notes.

import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';
import { ADMISSION_TICK_MS, ticksMatter } from '../domain/admission/automatic.ts';
import { JobScheduler, type JobSpec } from '../jobs/scheduler.ts';
import { awsConfigFromEnv } from './environment.ts';
import { createRuntime, openAwsParts, type AwsRuntime } from './runtime.ts';
import { once } from './once.ts';

export interface JobHandlers {
  expiry: (event: ScheduledEvent) => Promise<void>;
  metrics: (event: ScheduledEvent) => Promise<void>;
  admission: (event: ScheduledEvent) => Promise<void>;
  /** The draw of every room with shuffle_at_event_start whose start has come (resumable, see draw-runner.ts). */
  draw: (event: ScheduledEvent) => Promise<void>;
  /** Every room's counters at this minute into its history (after-event reports), as a node's history job. */
  history: (event: ScheduledEvent) => Promise<void>;
}

export interface AdmissionTicking {
  /** Ticks one invocation runs: a minute's, the schedule's period. */
  ticks: number;
  /** Waits for the next tick boundary and answers the tick's number. Default: the next whole second. */
  nextTick: (clock: () => number) => Promise<number>;
}

/** Waits until the next multiple of the tick interval on `clock` (the wall clock of a real invocation). */
async function nextWholeTick(clock: () => number): Promise<number> {
  const delay = ADMISSION_TICK_MS - (clock() % ADMISSION_TICK_MS);
  await new Promise((resolve) => setTimeout(resolve, delay));
  return Math.floor(clock() / ADMISSION_TICK_MS);
}

export const DEFAULT_ADMISSION_TICKING: AdmissionTicking = { ticks: 60, nextTick: nextWholeTick };

export function createJobHandlers(
  runtime: () => Promise<AwsRuntime>,
  ticks: AdmissionTicking = DEFAULT_ADMISSION_TICKING,
): JobHandlers {
  const run = (job: (rt: AwsRuntime, eventId: string) => Promise<void>) => async () => {
    const rt = await runtime();
    await rt.followRooms();
    for (const eventId of rt.room.rooms.roomIds()) await job(rt, eventId);
    await rt.flush();
  };
  return {
    expiry: run((rt, eventId) => rt.room.admission.advanceExpiry(eventId)),
    metrics: run((rt, eventId) => rt.room.reports.emitMetrics(eventId)),
    admission: async () => {
      const rt = await runtime();
      const ticking = async () => {
        await rt.followRooms();
        return rt.room.rooms.rooms().some(ticksMatter);
      };
      if (!(await ticking())) return;
      const scheduler = new JobScheduler({
        store: rt.store,
        nodeId: randomUUID(),
        clockMs: rt.clock,
        // A failed tick is logged like the other handlers' failures (CloudWatch Logs); the next tick still runs.
        log: { error: (detail: unknown, message?: unknown) => console.error(message ?? 'job tick failed', detail), debug: () => {} },
      });
      const job: JobSpec = {
        name: 'admission',
        intervalMs: ADMISSION_TICK_MS,
        run: async () => {
          for (const room of rt.room.rooms.rooms()) if (ticksMatter(room)) await rt.room.admission.admitAutomatically(room.event_id);
        },
      };
      for (let i = 0; i < ticks.ticks; i++) {
        if (i > 0 && !(await ticking())) break;
        await scheduler.runTick(job, await ticks.nextTick(rt.clock));
        // Deliver each tick's events (automatic_serving_counter_incr) as they happen, not a minute later.
        await rt.flush();
      }
    },
    draw: async () => {
      const rt = await runtime();
      // A warm execution environment learns of rooms created or changed since it started (the rooms API).
      await rt.followRooms();
      await rt.room.draws.runDraws();
      await rt.flush();
    },
    history: async () => {
      const rt = await runtime();
      const keepSeconds = (rt.config.historyRetentionDays ?? 30) * 86_400;
      if (keepSeconds === 0) return;
      await rt.followRooms();
      await rt.room.reports.recordHistory(keepSeconds);
      await rt.flush();
    },
  };
}

const runtime = once(async () => {
  const config = awsConfigFromEnv();
  return createRuntime(config, await openAwsParts(config));
});

const handlers = createJobHandlers(runtime);
export const expiry = handlers.expiry;
export const metrics = handlers.metrics;
export const admission = handlers.admission;
export const draw = handlers.draw;
export const history = handlers.history;
