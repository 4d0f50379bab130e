// Queue-position expiry arithmetic (spec: "Queue position expiry"). One boundary rule everywhere:
// a position eligible since T has expired when now − T > period (VWR used > in the API and >= in its job).

export interface ExpiryFacts {
  position: number;
  entryTime: number;
  /** Epoch seconds at which the serving counter first reached ≥ position; null if it never has. */
  servedAt: number | null;
  /** Epoch seconds at which expiry was (last) switched on for the event; null while it is off. */
  expiryEnabledSince: number | null;
  /** Highest position the expiry job has already recorded as expired unclaimed. */
  maxExpired: number;
}

/**
 * T = max(entry time, time the counter first reached the position, time expiry was switched on). The last
 * term handles positions that became eligible while expiry was off (VWR crashed on the missing record).
 */
export function eligibleSince(facts: ExpiryFacts): number | null {
  if (facts.servedAt === null || facts.expiryEnabledSince === null) return null;
  return Math.max(facts.entryTime, facts.servedAt, facts.expiryEnabledSince);
}

export function hasExpired(facts: ExpiryFacts, now: number, period: number): boolean {
  if (facts.expiryEnabledSince === null) return false;
  if (facts.position <= facts.maxExpired) return true;
  const since = eligibleSince(facts);
  return since !== null && now - since > period;
}

/** Seconds left before expiry, 0 ≤ result ≤ period. */
export function secondsLeft(facts: ExpiryFacts, now: number, period: number): number {
  const since = eligibleSince(facts);
  if (since === null) return period;
  return Math.min(period, Math.max(0, period - (now - since)));
}

/**
 * The expiry job and the API must agree: a position eligible at T is expired at `now` iff T < cutoff.
 * (now − T > period ⇔ T < now − period.)
 */
export function expiryCutoff(now: number, period: number): number {
  return now - period;
}
