// Lambda functions run by EventBridge schedules (rate(1 minute)): the queue-position expiry job and the
// metrics event, the jobs every Anteroom node runs on an interval. One schedule invokes one function, so no
// leader lock is needed; a retried invocation is harmless (an expiry step is idempotent, a metrics event
// describes the state it reads).

import type { ScheduledEvent } from 'aws-lambda';
import { awsConfigFromEnv } from './environment.ts';
import { createRuntime, openAwsParts, type AwsRuntime } from './runtime.ts';
import { once } from './once.ts';

export interface JobHandlers {
  expiry: (event: ScheduledEvent) => Promise<void>;
  metrics: (event: ScheduledEvent) => Promise<void>;
}

export function createJobHandlers(runtime: () => Promise<AwsRuntime>): JobHandlers {
  const run = (job: (rt: AwsRuntime, eventId: string) => Promise<void>) => async () => {
    const rt = await runtime();
    await rt.followRooms();
    for (const eventId of rt.room.roomIds()) await job(rt, eventId);
    await rt.flush();
  };
  return {
    expiry: run((rt, eventId) => rt.room.advanceExpiry(eventId)),
    metrics: run((rt, eventId) => rt.room.emitMetrics(eventId)),
  };
}

const runtime = once(async () => {
  const config = awsConfigFromEnv();
  return createRuntime(config, await openAwsParts(config));
});

const handlers = createJobHandlers(runtime);
export const expiry = handlers.expiry;
export const metrics = handlers.metrics;
