// POST /token is rate-limited per client (issue 14): a token bucket per client ID that the request names
// (HTTP Basic or the form's client_id), whether or not its secret turns out right, so guessing a client's
// secret is slow. IDs that name no configured client share one bucket, so the buckets are bounded by the
// configured clients. Per node, in memory: with N nodes behind a load balancer the limit is N times this.

/** Requests a second per client, sustained. */
export const TOKEN_RATE_PER_SECOND = 20;
/** Requests a client may send at once before the rate applies. */
export const TOKEN_BURST = 40;

export class TokenRateLimit {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.now = now;
  }

  /** Takes one request from `key`'s bucket; false when it is empty. */
  take(key: string): boolean {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: TOKEN_BURST, at: now };
    bucket.tokens = Math.min(TOKEN_BURST, bucket.tokens + ((now - bucket.at) / 1000) * TOKEN_RATE_PER_SECOND);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}
