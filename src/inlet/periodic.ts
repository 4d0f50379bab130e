// The periodic inlet as a transport. The rule and the steps of a tick are the domain's
// (src/domain/admission/periodic.ts); here a tick is carried out through the private API, as the standalone CLI
// and the Lambda handler do it, and an outcome is written for logs and CLI lines (the in-server job too).

import { periodicTick, type PeriodicInlet, type PeriodicOutcome } from '../domain/admission/periodic.ts';
import type { PrivateApi } from './private-api.ts';

/** One tick against a waiting room reached through its private API (Anteroom or VWR). */
export function runPeriodicTick(api: PrivateApi, inlet: PeriodicInlet, now: number): Promise<PeriodicOutcome> {
  return periodicTick(inlet, now, async (by) => {
    // The private API answers the new value only; `by` ≥ 0 here, so the counter was `by` lower before.
    const serving = await api.incrementServingCounter(inlet.eventId, by);
    return { previousServing: serving - by, serving };
  });
}

/** The fields of a log line or a CLI JSON line (names as in metrics and the MaxSize answer). */
export function periodicOutcomeRecord(outcome: PeriodicOutcome): Record<string, string | number> {
  const record: Record<string, string | number> = { outcome: outcome.kind.replace('-', '_') };
  if (outcome.kind === 'moved') Object.assign(record, { moved_by: outcome.by, serving_num: outcome.servingNum });
  if (outcome.kind === 'paused') record.reason = outcome.reason;
  return record;
}

/** One line for logs and the CLI. */
export function describePeriodicOutcome(eventId: string, outcome: PeriodicOutcome, inlet: PeriodicInlet): string {
  switch (outcome.kind) {
    case 'before-start':
      return `${eventId} periodic: waiting for the start time ${new Date(inlet.startTime * 1000).toISOString()}`;
    case 'ended':
      return `${eventId} periodic: end time ${new Date(inlet.endTime * 1000).toISOString()} passed, nothing to do`;
    case 'paused':
      return `${eventId} periodic: paused (${outcome.reason}), serving counter unchanged`;
    case 'moved':
      return `${eventId} periodic: serving counter +${outcome.by} -> ${outcome.servingNum}`;
  }
}
