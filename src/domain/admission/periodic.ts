// The periodic inlet's rule (spec/integrations.md §3): every interval, add increment_by to the serving counter
// while start_time < now < end_time (end_time 0 = no end), unless the site's pause check says ALARM.
//
// One tick, in the spec's order (periodicTick):
//   1. periodicWindow      — where `now` lies against the window; outside it nothing else is asked;
//   2. the pause check     — consulted inside the window only (it is an HTTP call or a CloudWatch read);
//   3. decidePeriodicTick  — move by increment_by, or not;
//   4. the move            — carried out by the caller: the service inside the server (Admission), the private
//                            API in the standalone CLI and the Lambda handler (src/inlet/periodic.ts).
// No I/O here: the clock reading, the pause check and the move are handed in.

import type { ServingMove } from '../ports/store.ts';

/** The pause signal's answer. ALARM: the site is struggling (or its health is unknown), skip this tick. */
export type PauseVerdict = { state: 'OK'; reason: string } | { state: 'ALARM'; reason: string };

/** Asks the site's health (src/inlet/pause-check.ts: an HTTP GET; src/aws/inlet.ts: a CloudWatch alarm). */
export type PauseCheck = () => Promise<PauseVerdict>;

export type PeriodicWindow = 'before-start' | 'open' | 'ended';

/** Step 1: where `now` lies against the inlet's time window; all in epoch seconds, both bounds excluded. */
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

/** Step 3: the window wins over a pause; inside it, a pause skips the tick; otherwise move by increment_by. */
export function decidePeriodicTick(input: PeriodicTickInput): PeriodicDecision {
  const window = periodicWindow(input.now, input.startTime, input.endTime);
  if (window !== 'open') return { kind: window };
  if (input.paused) return { kind: 'paused' };
  return { kind: 'increment', by: input.incrementBy };
}

/** One periodic inlet's parameters, as its transport gathered them (events file, CLI options, Lambda environment). */
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

/**
 * One tick, steps 1–4. `now` is epoch seconds; `move` adds to the serving counter and answers where it was and
 * where it is (inside the server it never passes the queue, so it may move by less than asked).
 */
export async function periodicTick(
  inlet: PeriodicInlet,
  now: number,
  move: (by: number) => Promise<ServingMove>,
): Promise<PeriodicOutcome> {
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
    case 'increment': {
      const moved = await move(decision.by);
      return { kind: 'moved', by: moved.serving - moved.previousServing, servingNum: moved.serving };
    }
  }
}
