// Automatic admission (spec/rooms.md §2): a room with `admission: "automatic"` lets visitors in by itself, once
// per admission tick (every second; the tick is claimed through the job lock, so with N nodes each tick runs
// once), within two limits:
//   new_users_per_minute  n: at most n admissions in any 60 s, at most ⌈n/60⌉ in any second;
//   total_active_users    at most this many visitors in at once: admitted visitors who have not claimed yet
//                         (until their claim window expires) plus active sessions.
// A room whose state is `off` has no queue: each tick admits everyone waiting, whatever `admission` says.
//
// One tick of one room, in order:
//   1. planTick            — from the settings and the phase alone: nothing to do (a manual room, or a phase
//                            that holds admission: before the start, paused, closed), everyone (off), or
//                            admission within the limits. Rooms with nothing to do cost no store call;
//   2. the snapshot        — the store's getAdmissionSnapshot: queue, serving, positions first reached in the
//                            last 60 s and in this second (the serving history), and the occupancy;
//   3. decideAdmission     — min(rateAllowance, capacityAllowance, waitingAllowance);
//   4. the move            — incrementServingWithinQueue, which never passes the last position handed out.
// No I/O here: the Admission (admission.ts) reads the snapshot and makes the move.
//
// The snapshot and the move are two store calls; the move is a compare-and-set on the counter the snapshot read
// (incrementServingWithinQueue's `ifServing`). Each tick runs once across nodes, but ticks of consecutive seconds
// can overlap in time (one node's tick for second s runs late while another's for s + 1 starts): both would read
// the same occupancy, and without the condition both would admit on it (seen in a three-node load test: 80 in
// at once against a capacity of 40). With it, the first move wins and the other changes nothing. Between the
// read and the move anything else can only lower the occupancy (a claim window expiring, a session or a place
// given up) or raise the queue (joins); a move of the counter itself (another tick, the manual increment) voids
// the tick's move. So a tick never admits more than the limits allowed at the instant it read. A session that
// ends frees its place at the next tick.

import type { AdmissionSnapshot } from '../ports/store.ts';
import { admitsInPhase, type RoomPhase } from '../room-phase.ts';
import type { RoomSettings } from '../room-settings.ts';

/** The rate's window: n admissions in any 60 s. */
export const RATE_WINDOW_SECONDS = 60;

/**
 * How often the admission job ticks (the node's scheduler, the AWS admission function): every second, so that
 * ⌈n/60⌉ a second adds up to the rate and a place that frees up is given again within a second.
 */
export const ADMISSION_TICK_MS = 1000;

export interface AutomaticLimits {
  newUsersPerMinute: number;
  totalActiveUsers: number;
}

/** The room's admission mode as its settings say: manual (VWR), or automatic with both limits. */
export type AdmissionMode = { kind: 'manual' } | { kind: 'automatic'; limits: AutomaticLimits } | { kind: 'automatic-without-limits' };

export function admissionModeOf(
  room: Pick<RoomSettings, 'admission' | 'new_users_per_minute' | 'total_active_users'>,
): AdmissionMode {
  if (room.admission !== 'automatic') return { kind: 'manual' };
  // The settings schema refuses "automatic" without both limits; settings built elsewhere are held, not guessed.
  if (room.new_users_per_minute === undefined || room.total_active_users === undefined) {
    return { kind: 'automatic-without-limits' };
  }
  return {
    kind: 'automatic',
    limits: { newUsersPerMinute: room.new_users_per_minute, totalActiveUsers: room.total_active_users },
  };
}

export type TickPlan =
  | { kind: 'nothing'; reason: 'manual' | 'automatic-without-limits' | `phase ${RoomPhase}` }
  | { kind: 'everyone' }
  | { kind: 'within-limits'; limits: AutomaticLimits };

/** Step 1: what this tick does with the room, from its admission mode and phase alone. */
/**
 * Whether ticks can move this room's counter with its settings as they are: automatic admission, or the state
 * "off" (everyone in). Otherwise every tick's plan is "nothing" (planTick), whatever the phase: a job runner
 * that pays for ticking (the AWS admission function) skips rooms, and whole invocations, where this is false.
 */
export function ticksMatter(room: Pick<RoomSettings, 'admission' | 'state'>): boolean {
  return room.admission === 'automatic' || room.state === 'off';
}

export function planTick(mode: AdmissionMode, phase: RoomPhase): TickPlan {
  if (phase === 'off') return { kind: 'everyone' };
  if (!admitsInPhase(phase)) return { kind: 'nothing', reason: `phase ${phase}` };
  if (mode.kind === 'manual' || mode.kind === 'automatic-without-limits') return { kind: 'nothing', reason: mode.kind };
  return { kind: 'within-limits', limits: mode.limits };
}

type Reached = Pick<AdmissionSnapshot, 'reachedInWindow' | 'reachedThisSecond'>;

/** min(⌈n/60⌉ − admitted this second, n − admitted in the last 60 s), never negative. */
export function rateAllowance(newUsersPerMinute: number, reached: Reached): number {
  const perSecond = Math.ceil(newUsersPerMinute / RATE_WINDOW_SECONDS);
  return Math.max(0, Math.min(perSecond - reached.reachedThisSecond, newUsersPerMinute - reached.reachedInWindow));
}

/** total_active_users − (admitted not yet claimed + active sessions), never negative. */
export function capacityAllowance(
  totalActiveUsers: number,
  occupancy: Pick<AdmissionSnapshot, 'awaitingClaim' | 'activeSessions'>,
): number {
  return Math.max(0, totalActiveUsers - occupancy.awaitingClaim - occupancy.activeSessions);
}

/** Everyone who waits behind the counter: the counter never passes the last position handed out. */
export function waitingAllowance(counters: Pick<AdmissionSnapshot, 'queue' | 'serving'>): number {
  return Math.max(0, counters.queue - counters.serving);
}

export interface AdmissionDecision {
  /** How far the counter moves this tick (≥ 0). */
  by: number;
  waiting: number;
  /** Within limits only. */
  rate?: number;
  capacity?: number;
}

/** Step 3, for a plan that moves the counter. */
export function decideAdmission(plan: Exclude<TickPlan, { kind: 'nothing' }>, snapshot: AdmissionSnapshot): AdmissionDecision {
  const waiting = waitingAllowance(snapshot);
  if (plan.kind === 'everyone') return { by: waiting, waiting };
  const rate = rateAllowance(plan.limits.newUsersPerMinute, snapshot);
  const capacity = capacityAllowance(plan.limits.totalActiveUsers, snapshot);
  return { by: Math.min(rate, capacity, waiting), waiting, rate, capacity };
}

/** The first second of the rate window that ends at `now` (both included: 60 whole seconds). */
export function rateWindowStart(now: number): number {
  return now - RATE_WINDOW_SECONDS + 1;
}

/** What one tick did with one room (logs, metrics, tests). */
export type AutomaticTickOutcome =
  | { kind: 'nothing'; reason: Extract<TickPlan, { kind: 'nothing' }>['reason'] }
  | ({ kind: 'admitted'; previousServing: number; serving: number } & AdmissionDecision);
