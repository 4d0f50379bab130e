// The embedded store's count of active token sets (exp ≥ now, session open) per event, kept in memory (issue
// 15): `SELECT count(*)` over the tokens table took 50–60 ms at 50,000 active tokens, on the event loop, at
// every num_active_tokens call and every /metrics scrape. Here: the open sessions per exp second, in exp
// order, and a cursor that moves with `now` carrying the sum of the open sessions before it — O(1) for a
// clock that moves forward (amortised), exact for any `now`. Built from the table at open; changed only after
// a commit.

interface Bucket {
  exp: number;
  open: number;
}

export class ActiveTokens {
  /** Open sessions by exp second, in exp order. */
  private readonly buckets: Bucket[] = [];
  private open = 0;
  /** Buckets before the cursor, and the open sessions in them (all with exp < buckets[cursor].exp). */
  private cursor = 0;
  private before = 0;

  /** A session opened (a token set issued), or `by` sessions of that exp read from the table at open. */
  opened(exp: number, by = 1): void {
    this.open += by;
    const last = this.buckets[this.buckets.length - 1];
    if (last === undefined || last.exp < exp) {
      this.buckets.push({ exp, open: by });
      return;
    }
    const at = this.indexOf(exp);
    const bucket = this.buckets[at];
    if (bucket !== undefined && bucket.exp === exp) bucket.open += by;
    else this.buckets.splice(at, 0, { exp, open: by });
    if (at < this.cursor) {
      // Inserted or grown before the cursor: the sum before it includes it.
      if (bucket === undefined || bucket.exp !== exp) this.cursor += 1;
      this.before += by;
    }
  }

  /** A session closed (completed or abandoned) whose token set has this exp. */
  closed(exp: number): void {
    const at = this.indexOf(exp);
    const bucket = this.buckets[at];
    if (bucket === undefined || bucket.exp !== exp || bucket.open === 0) return;
    bucket.open -= 1;
    this.open -= 1;
    if (at < this.cursor) this.before -= 1;
  }

  /** Open sessions whose token set has exp ≥ now. */
  count(now: number): number {
    while (this.cursor < this.buckets.length && (this.buckets[this.cursor] as Bucket).exp < now) {
      this.before += (this.buckets[this.cursor] as Bucket).open;
      this.cursor += 1;
    }
    while (this.cursor > 0 && (this.buckets[this.cursor - 1] as Bucket).exp >= now) {
      this.cursor -= 1;
      this.before -= (this.buckets[this.cursor] as Bucket).open;
    }
    return this.open - this.before;
  }

  /** The first bucket with exp ≥ `exp`. */
  private indexOf(exp: number): number {
    let low = 0;
    let high = this.buckets.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.buckets[mid] as Bucket).exp < exp) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
