// Inlet strategies inside the server, configured per event ("inlet" in the events file). Periodic inlets
// are scheduler jobs ("inlet:<event_id>"), started and stopped as rooms come, change and go; ticks are
// claimed through the store's lock, so with N nodes each tick is applied once. The MaxSize inlet is an
// endpoint of the private API, behind its authentication: POST <private base>/inlet/max_size. Both are
// transports: they gather the inputs (the tick's time and pause check, the site's report), hand them to the
// service's admission (AdmissionService.admit, whose rules are in src/domain/admission/), and record what it
// did as a log line and metrics; they emit no events of their own (the spec's event list has none for inlets;
// closing sessions still emits session_updated as update_session does).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Logger } from 'pino';
import { MAX_EXITED, MAX_REPORT_IDS, maxSizeReportProblem } from '../domain/admission/max-size.ts';
import type { PeriodicInlet } from '../domain/admission/periodic.ts';
import { epochSeconds, type Clock } from '../domain/clock.ts';
import { Errors } from '../domain/errors.ts';
import type { RoomRegistry } from '../domain/room-registry.ts';
import type { RoomSettings } from '../domain/room-settings.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import { mountRoutes, type MountOptions } from '../http/route-table.ts';
import type { JobScheduler, JobSpec } from '../jobs/scheduler.ts';
import type { Metrics } from '../observability/metrics.ts';
import { describeMaxSizeResult } from './max-size.ts';
import { pauseChecker } from './pause-check.ts';
import { describePeriodicOutcome, periodicOutcomeRecord } from './periodic.ts';

export interface InletDeps {
  room: Pick<WaitingRoom, 'admission' | 'rooms'>;
  metrics: Metrics;
  log: Pick<Logger, 'info' | 'debug'>;
}

/** One job per event configured with the periodic inlet. */
export function periodicInletJobs(deps: InletDeps & { clock: Clock }): JobSpec[] {
  return deps.room.rooms.rooms().flatMap((event) => periodicInletJob(event, deps) ?? []);
}

/** The job name of an event's periodic inlet. */
export const periodicInletJobName = (eventId: string) => `inlet:${eventId}`;

/** The scheduler job of the event's periodic inlet; undefined when it has none. */
export function periodicInletJob(event: RoomSettings, deps: InletDeps & { clock: Clock }): JobSpec | undefined {
  const settings = event.inlet;
  if (settings?.strategy !== 'periodic') return undefined;
  const eventId = event.event_id;
  const inlet: PeriodicInlet = {
    eventId,
    incrementBy: settings.increment_by,
    startTime: settings.start_time,
    endTime: settings.end_time,
    pauseCheck: settings.pause_check ? pauseChecker(settings.pause_check) : undefined,
  };
  return {
    name: periodicInletJobName(eventId),
    intervalMs: settings.interval * 1000,
    run: async () => {
      const outcome = await deps.room.admission.admit(eventId, { kind: 'periodic', inlet, now: epochSeconds(deps.clock) });
      const labels = { event_id: eventId, strategy: 'periodic' };
      const record = periodicOutcomeRecord(outcome);
      deps.metrics.inletDecisions.inc({ ...labels, outcome: record.outcome });
      if (outcome.kind === 'moved') deps.metrics.inletAdmitted.inc(labels, outcome.by);
      // Outside the window every tick says the same thing: keep it out of the info log.
      const level = outcome.kind === 'moved' || outcome.kind === 'paused' ? 'info' : 'debug';
      deps.log[level]({ ...labels, ...record }, describePeriodicOutcome(eventId, outcome, inlet));
    },
  };
}

/**
 * Schedules the periodic inlet of every room that has one, and follows the rooms: a room put with a periodic
 * inlet gets its job (restarted with the new settings when they changed), a room removed or put without one
 * loses it. Returns the function that stops following (the jobs themselves stop with the scheduler).
 */
export function followPeriodicInlets(
  rooms: Pick<RoomRegistry, 'all' | 'onChange'>,
  scheduler: Pick<JobScheduler, 'start' | 'stopJob'>,
  deps: InletDeps & { clock: Clock },
): () => void {
  const unsubscribe = rooms.onChange(async (change) => {
    const name = periodicInletJobName(change.eventId);
    // The old job is unscheduled at once; a tick of it in flight finishes on its own.
    const stopped = scheduler.stopJob(name);
    const job = change.after && periodicInletJob(change.after, deps);
    if (job) scheduler.start(job);
    await stopped;
  });
  for (const event of rooms.all()) {
    const job = periodicInletJob(event, deps);
    if (job) scheduler.start(job);
  }
  return unsubscribe;
}

/** Request IDs are UUIDs (36 characters); the domain checks their form. */
const IdList = Type.Array(Type.String({ maxLength: 64 }), { maxItems: MAX_REPORT_IDS });

/**
 * The body of VWR's MaxSize SNS message plus the event. VWR's SNS envelope itself is not accepted: SNS's
 * HTTP delivery cannot sign with SigV4, so a site posts the message body here directly.
 */
export const MaxSizeReportBody = Type.Object({
  event_id: Type.String({ maxLength: 1024 }),
  exited: Type.Integer({ minimum: 0, maximum: MAX_EXITED }),
  completed: Type.Optional(IdList),
  abandoned: Type.Optional(IdList),
});

/** Two full ID lists with JSON overhead, above the 16 KiB of the core API. */
const REPORT_BODY_LIMIT = 96 * 1024;

/** POST /inlet/max_size under the private base path. */
export function maxSizeInletRoutes(deps: Omit<InletDeps, 'log'>) {
  return (scope: FastifyInstance, mount: MountOptions): void => {
    mountRoutes(scope, [
      {
        method: 'POST',
        url: '/inlet/max_size',
        schema: { body: MaxSizeReportBody },
        bodyLimit: REPORT_BODY_LIMIT,
        handler: async (req) => {
          const b = (req as FastifyRequest<{ Body: Static<typeof MaxSizeReportBody> }>).body;
          const event = deps.room.rooms.roomSettings(b.event_id);
          if (!event) throw Errors.invalidEventId();
          if (event.inlet?.strategy !== 'max_size') throw Errors.maxSizeInletNotConfigured();
          const report = { exited: b.exited, completed: b.completed ?? [], abandoned: b.abandoned ?? [] };
          // Every ID is checked before any session is closed: a bad report changes nothing.
          if (maxSizeReportProblem(report)) throw Errors.invalidEventOrRequestId();
          const maxSize = event.inlet.max_size;
          const result = await deps.room.admission.admit(event.event_id, { kind: 'max-size', maxSize, report });
          const labels = { event_id: event.event_id, strategy: 'max_size' };
          const outcome = result.moved_by > 0 ? 'moved' : result.capacity <= 0 ? 'no_capacity' : 'nothing_reported';
          deps.metrics.inletDecisions.inc({ ...labels, outcome });
          if (result.moved_by > 0) deps.metrics.inletAdmitted.inc(labels, result.moved_by);
          req.log.info({ ...labels, exited: report.exited, ...result }, describeMaxSizeResult(event.event_id, maxSize, result));
          return { status: 200, body: result };
        },
      },
    ], mount);
  };
}
