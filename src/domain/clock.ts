/** The one clock of the system: milliseconds since the epoch. Tests pass their own. */
export type Clock = () => number;

/**
 * The rule for wall-clock steps (docs/operations.md, "Clock steps"): Anteroom's clock is the wall clock
 * while the wall clock agrees with the monotonic clock (within `toleranceMs` of where the monotonic clock
 * says it should be since they last agreed). A step, forward or back, is followed only once it has lasted
 * `adoptAfterMs`: until then the clock goes on from the last agreed time at the monotonic clock's pace. So
 * a transient jump (a bad NTP answer, a VM resumed with a stale clock, an operator's typo undone) has no
 * effect at all — no position retired early by the expiry job, no `served at` recorded in the past, no
 * token issued for the wrong hours — and a real correction is adopted after a minute.
 */
export function steadyClock(
  wall: () => number = () => Date.now(),
  monotonic: () => number = () => performance.now(),
  options: { toleranceMs?: number; adoptAfterMs?: number } = {},
): Clock {
  const tolerance = options.toleranceMs ?? 1000;
  const adoptAfter = options.adoptAfterMs ?? 60_000;
  let agreedWall = wall();
  let agreedMonotonic = monotonic();
  /** Monotonic time at which the wall clock first disagreed (since the last agreement). */
  let disagreeingSince: number | null = null;
  return () => {
    const now = wall();
    const steady = monotonic();
    const expected = agreedWall + (steady - agreedMonotonic);
    if (Math.abs(now - expected) <= tolerance || (disagreeingSince !== null && steady - disagreeingSince >= adoptAfter)) {
      agreedWall = now;
      agreedMonotonic = steady;
      disagreeingSince = null;
      return now;
    }
    disagreeingSince ??= steady;
    return Math.round(expected);
  };
}

export const systemClock: Clock = steadyClock();

/** Integer epoch seconds: every time the contract exposes (entry_time, iat, exp) is in these units. */
export function epochSeconds(clock: Clock): number {
  return Math.floor(clock() / 1000);
}
