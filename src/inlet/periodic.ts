// The periodic inlet (spec/integrations.md §3): every interval, add increment_by to the serving counter
// while start_time < now < end_time (end_time 0 = no end), unless the pause check says ALARM. The decision
// is a pure function; runPeriodicTick carries one tick out through the private API, the same way in the
// server (a scheduler job, once per tick across nodes) and in the standalone CLI.

import type { PauseCheck } from './pause-check.ts';
import type { PrivateApi } from './private-api.ts';

export type PeriodicWindow = 'before-start' | 'open' | 'ended';

/** Where `now` lies against the inlet's time window; all in epoch seconds, both bounds excluded. */
export function periodicWindow(now: number, startTime: number, endTime: number): PeriodicWindow {
  if (!(now > startTime)) return 'before-start';
  if (endTime !== 0 && !(now < endTime)) return 'ended';
  return 'open';
}

export interface PeriodicTickInput {
  /** Epoch seconds. */
  now: number;
  startTime: number;
  /** 0 = no end. */
  endTime: number;
  incrementBy: number;
  /** The pause check said ALARM. */
  paused: boolean;
}

export type PeriodicDecision =
  | { kind: 'before-start' }
  | { kind: 'ended' }
  | { kind: 'paused' }
  | { kind: 'increment'; by: number };

export function decidePeriodicTick(input: PeriodicTickInput): PeriodicDecision {
  const window = periodicWindow(input.now, input.startTime, input.endTime);
  if (window !== 'open') return { kind: window };
  if (input.paused) return { kind: 'paused' };
  return { kind: 'increment', by: input.incrementBy };
}

export interface PeriodicInlet {
  eventId: string;
  incrementBy: number;
  startTime: number;
  endTime: number;
  /** Absent: never paused. */
  pauseCheck?: PauseCheck | undefined;
}

export type PeriodicOutcome =
  | { kind: 'before-start' }
  | { kind: 'ended' }
  | { kind: 'paused'; reason: string }
  | { kind: 'moved'; by: number; servingNum: number };

/** One tick. The pause check is only consulted inside the time window. */
export async function runPeriodicTick(api: PrivateApi, inlet: PeriodicInlet, now: number): Promise<PeriodicOutcome> {
  let paused = false;
  let reason = '';
  if (inlet.pauseCheck && periodicWindow(now, inlet.startTime, inlet.endTime) === 'open') {
    const verdict = await inlet.pauseCheck();
    paused = verdict.state === 'ALARM';
    reason = verdict.reason;
  }
  const decision = decidePeriodicTick({ now, startTime: inlet.startTime, endTime: inlet.endTime, incrementBy: inlet.incrementBy, paused });
  switch (decision.kind) {
    case 'before-start':
    case 'ended':
      return decision;
    case 'paused':
      return { kind: 'paused', reason };
    case 'increment':
      return { kind: 'moved', by: decision.by, servingNum: await api.incrementServingCounter(inlet.eventId, decision.by) };
  }
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
