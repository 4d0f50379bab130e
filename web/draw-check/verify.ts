// The draw, checked in the visitor's browser with WebCrypto (no server trusted for the arithmetic): the same
// algorithm as src/domain/draw.ts and `anteroom verify-draw` (docs/rooms.md "The algorithm, exactly"),
// written again from its description so that the two check each other (test/web/draw-check.test.ts).
// Pure: no DOM; runs in Node's WebCrypto as in the browser's.

export const DRAW_ALGORITHM = 'fisher-yates/hmac-sha256-48/v1';

/** GET /draw's answer (or one page of it). */
export interface Publication {
  algorithm?: unknown;
  commitment?: unknown;
  committed_at?: unknown;
  drawn_at?: unknown;
  seed?: unknown;
  first_position?: unknown;
  entries?: unknown;
  total_entries?: unknown;
  page?: unknown;
  pages?: unknown;
}

export type DrawCheck =
  | { kind: 'pending'; commitment: string; committedAt: string | null }
  | {
      kind: 'verified';
      commitment: string;
      committedAt: string;
      drawnAt: string;
      entries: number;
      /** Null when the visitor's entry was not looked for (no request ID) or is not among the entries. */
      place: number | null;
      position: number | null;
      /** Whether the visitor's request ID was looked for and is not in the draw. */
      notInDraw: boolean;
    }
  | { kind: 'failed'; problem: string };

const HEX64 = /^[0-9a-f]{64}$/;
const RANGE = 2 ** 48;

const bytesOf = (hex: string): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
};

const hexOf = (buffer: ArrayBuffer): string => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');

export async function sha256Hex(data: Uint8Array<ArrayBuffer>): Promise<string> {
  return hexOf(await crypto.subtle.digest('SHA-256', data));
}

/** A visitor's entry: SHA-256 (hex) of their request ID as the API gave it (lowercase UUID, UTF-8). */
export function entryOf(requestId: string): Promise<string> {
  return sha256Hex(new TextEncoder().encode(requestId.trim().toLowerCase()));
}

/** Numbers asked of WebCrypto at once: the k-th number does not depend on the others, so they come in batches. */
const BATCH = 512;

/** The seed's numbers, HMAC-SHA256(seed, k as 8 bytes big-endian), first 6 bytes, in order k = 0, 1, 2, … */
class WebDrawRandom {
  private readonly key: Promise<CryptoKey>;
  private batch: number[] = [];
  private used = 0;
  private nextK = 0;

  constructor(seed: string) {
    this.key = crypto.subtle.importKey('raw', bytesOf(seed), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  }

  private async refill(): Promise<void> {
    const key = await this.key;
    const from = this.nextK;
    this.nextK += BATCH;
    const signatures = await Promise.all(
      Array.from({ length: BATCH }, (_, i) => {
        const message = new Uint8Array(8);
        new DataView(message.buffer).setBigUint64(0, BigInt(from + i));
        return crypto.subtle.sign('HMAC', key, message);
      }),
    );
    this.batch = signatures.map((signature) => {
      const view = new DataView(signature);
      return view.getUint16(0) * 2 ** 32 + view.getUint32(2);
    });
    this.used = 0;
  }

  async uniform(m: number): Promise<number> {
    const limit = m * Math.floor(RANGE / m);
    for (;;) {
      if (this.used === this.batch.length) await this.refill();
      const r = this.batch[this.used++] as number;
      if (r < limit) return r % m;
    }
  }
}

/** The order of the draw: order[p − 1] is the join-order index of the entry with place p (Fisher–Yates). */
export async function webDrawOrder(seed: string, count: number, progress?: (done: number, total: number) => void): Promise<Uint32Array> {
  const random = new WebDrawRandom(seed);
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  for (let i = count - 1; i >= 1; i--) {
    const j = await random.uniform(i + 1);
    const swapped = order[i] as number;
    order[i] = order[j] as number;
    order[j] = swapped;
    if (progress && (count - i) % 10_000 === 0) progress(count - i, count - 1);
  }
  return order;
}

const isInstant = (value: unknown): value is string => typeof value === 'string' && !Number.isNaN(Date.parse(value));

/**
 * Checks a publication: the algorithm; before the draw, the commitment only. After it: the seed matches the
 * commitment, the commitment was published before the draw, it is the one the visitor saw before (when they
 * did), the entries are well-formed and distinct; then recomputes the order and finds the visitor's place.
 */
export async function checkDraw(
  publication: Publication,
  entries: readonly string[],
  options: { requestId?: string | undefined; seenCommitment?: string | undefined; progress?: (done: number, total: number) => void } = {},
): Promise<DrawCheck> {
  const { algorithm, commitment, seed } = publication;
  if (algorithm !== DRAW_ALGORITHM) return { kind: 'failed', problem: `The draw uses an algorithm this page does not know (${String(algorithm)}).` };
  if (typeof commitment !== 'string' || !HEX64.test(commitment)) return { kind: 'failed', problem: 'The publication has no valid commitment.' };
  const seen = options.seenCommitment?.trim().toLowerCase();
  if (seen && seen !== commitment) {
    return { kind: 'failed', problem: `The commitment changed: it is ${commitment} now, and was ${seen} when you saw it before the draw.` };
  }
  if (seed === undefined) return { kind: 'pending', commitment, committedAt: isInstant(publication.committed_at) ? publication.committed_at : null };
  if (typeof seed !== 'string' || !HEX64.test(seed)) return { kind: 'failed', problem: 'The published seed is not 64 hex digits.' };
  if ((await sha256Hex(bytesOf(seed))) !== commitment) {
    return { kind: 'failed', problem: 'The seed does not match the commitment: this is not the draw that was committed to.' };
  }
  const { committed_at: committedAt, drawn_at: drawnAt } = publication;
  if (!isInstant(committedAt)) return { kind: 'failed', problem: 'The publication does not say when the commitment was published.' };
  if (!isInstant(drawnAt)) return { kind: 'failed', problem: 'The publication does not say when the draw took place.' };
  if (Date.parse(committedAt) >= Date.parse(drawnAt)) {
    return { kind: 'failed', problem: `The commitment was first published at ${committedAt}, not before the draw at ${drawnAt}.` };
  }
  const firstPosition = publication.first_position;
  if (typeof firstPosition !== 'number' || !Number.isSafeInteger(firstPosition) || firstPosition < 1) {
    return { kind: 'failed', problem: 'The publication has no first position.' };
  }
  if (!entries.every((e) => HEX64.test(e))) return { kind: 'failed', problem: 'An entry is not a SHA-256 digest.' };
  if (new Set(entries).size !== entries.length) return { kind: 'failed', problem: 'An entry appears twice.' };
  const order = await webDrawOrder(seed, entries.length, options.progress);
  let place: number | null = null;
  let notInDraw = false;
  if (options.requestId) {
    const index = entries.indexOf(await entryOf(options.requestId));
    if (index < 0) notInDraw = true;
    else place = order.indexOf(index) + 1;
  }
  return {
    kind: 'verified',
    commitment,
    committedAt,
    drawnAt,
    entries: entries.length,
    place,
    position: place === null ? null : firstPosition + place - 1,
    notInDraw,
  };
}

/**
 * The whole publication: page 1, then the other pages of a large draw (GET /draw?…&page=N), their entries
 * concatenated. `url` is the draw's address with its event_id; `get` fetches JSON.
 */
export async function fetchPublication(url: string, get: (url: string) => Promise<Publication>): Promise<{ publication: Publication; entries: string[] }> {
  const sep = url.includes('?') ? '&' : '?';
  const first = await get(`${url}${sep}page=1`);
  const entries: string[] = [];
  const take = (page: Publication) => {
    if (Array.isArray(page.entries)) for (const e of page.entries) entries.push(String(e));
  };
  take(first);
  const pages = typeof first.pages === 'number' && Number.isSafeInteger(first.pages) ? Math.min(first.pages, 10_000) : 1;
  for (let page = 2; page <= pages; page++) take(await get(`${url}${sep}page=${page}`));
  if (typeof first.total_entries === 'number' && first.total_entries !== entries.length) {
    throw new Error(`the publication lists ${entries.length} entries, it says ${first.total_entries}`);
  }
  return { publication: first, entries };
}
