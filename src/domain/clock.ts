/** The one clock of the system: milliseconds since the epoch. Tests pass their own. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/** Integer epoch seconds: every time the contract exposes (entry_time, iat, exp) is in these units. */
export function epochSeconds(clock: Clock): number {
  return Math.floor(clock() / 1000);
}
