// The draw at the start of a room with a pre-queue (shuffle_at_event_start): everyone who joined during the
// pre-queue gets a random place, in an order anyone can recompute from what the room publishes.
//
// Published before the start: the commitment, SHA-256 of the seed (so the seed cannot be chosen after the
// entries are known). Published after the draw: the seed and the entries, the SHA-256 (hex) of every pre-queue
// request ID in join order — a visitor finds their own entry, nobody learns another visitor's request ID.
//
// The algorithm, exactly (DRAW_ALGORITHM):
//   seed      32 random bytes, published as 64 lowercase hex digits; commitment = hex(SHA-256(seed bytes)).
//   random k  the k-th number drawn (k = 0, 1, 2, …): the first 6 bytes of HMAC-SHA256(key = seed bytes,
//             message = k as an 8-byte big-endian unsigned integer), read as a big-endian 48-bit integer.
//   uniform(m) a number in [0, m): draw r; while r ≥ m·⌊2^48 / m⌋ draw again (no modulo bias); answer r mod m.
//   shuffle   order = [0, 1, …, n−1]; for i = n−1 down to 1: j = uniform(i+1); swap order[i] and order[j]
//             (Fisher–Yates). Place p (1-based) goes to the entry with index order[p−1].
// The same seed and entry count always give the same order (test/domain/draw.test.ts shows it), so
// `anteroom verify-draw` recomputes it from the published data alone.

import { createHash, hash, randomBytes } from 'node:crypto';

export const DRAW_ALGORITHM = 'fisher-yates/hmac-sha256-48/v1';

const SEED_BYTES = 32;
const SEED_PATTERN = /^[0-9a-f]{64}$/;
const RANGE = 2 ** 48;
/**
 * drawOrder yields to the event loop after this many swaps or this many milliseconds, whichever comes first:
 * a draw of 100,000 entries never holds the loop for long, however slow the machine.
 */
const SWAPS_PER_SLICE = 5_000;
const MS_PER_SLICE = 5;
/** Swaps between two looks at the clock. */
const SWAPS_PER_CLOCK_CHECK = 64;

/** A new secret seed, as hex. */
export function newDrawSeed(): string {
  return randomBytes(SEED_BYTES).toString('hex');
}

export function isDrawSeed(seed: unknown): seed is string {
  return typeof seed === 'string' && SEED_PATTERN.test(seed);
}

/** What is published before the draw: SHA-256 of the seed's bytes, hex. */
export function drawCommitment(seed: string): string {
  return createHash('sha256').update(Buffer.from(seed, 'hex')).digest('hex');
}

/** A visitor's published entry: SHA-256 (hex) of their request ID as sent (lowercase UUID). */
export function drawEntry(requestId: string): string {
  return hash('sha256', requestId, 'hex');
}

/**
 * The deterministic random numbers of a seed (see the algorithm above). HMAC-SHA256 computed as RFC 2104 defines
 * it, H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m)), with two one-shot hashes over buffers kept for the whole draw: the
 * same value as createHmac (test/domain/draw.test.ts pins it), and no native object per number — creating one
 * (createHmac, Hash.copy) 100,000 times makes the young-generation collections long enough to block requests.
 */
class DrawRandom {
  /** K ⊕ ipad (64 bytes), then the counter (8 bytes, big-endian). */
  private readonly innerInput = Buffer.alloc(72, 0x36);
  /** K ⊕ opad (64 bytes), then the inner digest (32 bytes). */
  private readonly outerInput = Buffer.alloc(96, 0x5c);
  private counter = 0n;

  constructor(seed: string) {
    if (!isDrawSeed(seed)) throw new RangeError('a draw seed is 64 lowercase hex digits');
    // SHA-256's block is 64 bytes: the 32-byte key is padded with zeros, then XORed with ipad / opad.
    const key = Buffer.from(seed, 'hex');
    for (let i = 0; i < key.length; i++) {
      this.innerInput[i] = 0x36 ^ (key[i] as number);
      this.outerInput[i] = 0x5c ^ (key[i] as number);
    }
  }

  private next48(): number {
    this.innerInput.writeBigUInt64BE(this.counter++, 64);
    this.outerInput.write(hash('sha256', this.innerInput, 'hex'), 64, 32, 'hex');
    // The first 6 bytes = the first 12 hex digits, a 48-bit integer (exact in a double).
    return parseInt(hash('sha256', this.outerInput, 'hex').slice(0, 12), 16);
  }

  uniform(m: number): number {
    const limit = m * Math.floor(RANGE / m);
    for (;;) {
      const r = this.next48();
      if (r < limit) return r % m;
    }
  }
}

/**
 * The order of the draw: `order[p - 1]` is the index (in join order) of the entry that gets place p. Yields
 * to the event loop every few milliseconds (pass `yieldToLoop` = null to run it in one go); the yield is told
 * how many of the count − 1 swaps are done (a CLI shows progress with it).
 */
export async function drawOrder(
  seed: string,
  count: number,
  yieldToLoop: ((swapsDone: number) => Promise<void>) | null = () => new Promise((resolve) => setImmediate(resolve)),
): Promise<Uint32Array> {
  if (!Number.isSafeInteger(count) || count < 0 || count > 2 ** 32 - 1) throw new RangeError(`bad entry count ${count}`);
  const random = new DrawRandom(seed);
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  let sinceYield = 0;
  let sliceStart = performance.now();
  for (let i = count - 1; i >= 1; i--) {
    const j = random.uniform(i + 1);
    const swapped = order[i] as number;
    order[i] = order[j] as number;
    order[j] = swapped;
    if (!yieldToLoop) continue;
    sinceYield += 1;
    if (
      sinceYield === SWAPS_PER_SLICE ||
      (sinceYield % SWAPS_PER_CLOCK_CHECK === 0 && performance.now() - sliceStart >= MS_PER_SLICE)
    ) {
      sinceYield = 0;
      await yieldToLoop(count - i);
      sliceStart = performance.now();
    }
  }
  return order;
}

/** The place (1-based) each entry got: `places[index] = p` for the entry at `index` in join order. */
export function placesOf(order: Uint32Array): Uint32Array {
  const places = new Uint32Array(order.length);
  for (let p = 0; p < order.length; p++) places[order[p] as number] = p + 1;
  return places;
}

export interface PublishedDraw {
  algorithm: string;
  commitment: string;
  seed: string;
  entries: readonly string[];
}

export type DrawCheck = { ok: true; places: Uint32Array } | { ok: false; problem: string };

/**
 * Checks what a room published: the seed matches the commitment and the algorithm is this one; then recomputes
 * every place (`yieldToLoop`, as for drawOrder: a caller may pass one to report progress).
 */
export async function checkPublishedDraw(
  draw: PublishedDraw,
  yieldToLoop: ((swapsDone: number) => Promise<void>) | null = null,
): Promise<DrawCheck> {
  if (draw.algorithm !== DRAW_ALGORITHM) return { ok: false, problem: `unknown algorithm "${draw.algorithm}"` };
  if (!isDrawSeed(draw.seed)) return { ok: false, problem: 'the seed is not 64 lowercase hex digits' };
  if (drawCommitment(draw.seed) !== draw.commitment) {
    return { ok: false, problem: 'the seed does not match the commitment published before the draw' };
  }
  if (draw.entries.some((e) => !/^[0-9a-f]{64}$/.test(e))) return { ok: false, problem: 'an entry is not a SHA-256 hex digest' };
  if (new Set(draw.entries).size !== draw.entries.length) return { ok: false, problem: 'an entry appears twice' };
  return { ok: true, places: placesOf(await drawOrder(draw.seed, draw.entries.length, yieldToLoop)) };
}
