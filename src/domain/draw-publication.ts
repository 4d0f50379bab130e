// What GET /draw publishes (spec rooms.md §3), as the JSON bytes sent:
//   before the draw is done  {"algorithm", "commitment", "committed_at"}
//   after it                 {"algorithm", "commitment", "committed_at", "drawn_at", "seed", "first_position", "entries"}
// where committed_at is when the commitment was first published and drawn_at when the draw fixed its entries
// (ISO 8601 UTC, ./draw-times.ts)
// where entries are the SHA-256 (hex) of every request ID the draw ordered, in join order, and first_position
// is the position of place 1 (place p has position first_position + p − 1).
//
// After the draw the answer is large (100,000 entries ≈ 6.6 MB) and never changes until a reset, so it is built
// once per draw (per seed) and kept in memory: reading the entries in chunks and hashing them in slices, with a
// yield to the event loop between slices, so that building it never blocks requests for long. Concurrent
// requests share one build. The positions the entries got are kept with it, for the operator's check
// (/private/draw_positions). Before the draw the answer is small; the draw record behind it is read at most
// once a second per room.

import { drawEntry } from './draw.ts';
import { readDrawnEntries } from './draw-runner.ts';
import type { DrawTimes } from './draw-times.ts';
import type { DrawRecord, DrawSeed, DrawStore } from './ports/store.ts';

export interface DrawPublication {
  /** The JSON answer of GET /draw. */
  json: Buffer;
  /** Once the draw is done: where its places start, and the drawn entries and their positions in join order. */
  drawn: DrawnEntries | null;
}

export interface DrawnEntries {
  firstPosition: number;
  /** The position each entry got (0 for one without a position). */
  positions: Uint32Array;
  /** The published entries (SHA-256 hex, 64 digits each), concatenated in join order: entry i at 64·i. */
  entryHexes: string;
}

/**
 * Entries in one page of GET /draw?page=N (≈ 3.3 MB of JSON): every page fits in an AWS Lambda answer (6 MB),
 * which the whole publication of a draw of more than ~90,000 entries does not.
 */
export const DRAW_PAGE_ENTRIES = 50_000;

/**
 * Page `page` (from 1) of a publication: its head, the entries' total, the page and the number of pages, and
 * that page's entries (in join order, DRAW_PAGE_ENTRIES a page). Before the draw is done, the publication as it
 * is (no entries yet); null for a page past the last (a draw of no entries has one page, empty).
 */
export function drawPage(publication: DrawPublication, page: number, pageSize = DRAW_PAGE_ENTRIES): Buffer | null {
  if (!publication.drawn) return page === 1 ? publication.json : null;
  const { entryHexes } = publication.drawn;
  const total = entryHexes.length / 64;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (page > pages) return null;
  // The head is the whole answer up to its entries: {"algorithm":…,"first_position":N,"entries":[
  const whole = publication.json;
  const head = whole.subarray(0, whole.indexOf('"entries":[')).toString();
  const from = (page - 1) * pageSize;
  const to = Math.min(total, from + pageSize);
  const entries: string[] = [];
  for (let i = from; i < to; i++) entries.push(entryHexes.slice(64 * i, 64 * i + 64));
  return Buffer.from(`${head}"total_entries":${total},"page":${page},"pages":${pages},"entries":[${entries.map((e) => `"${e}"`).join(',')}]}`);
}

/** How long a room's draw record answers GET /draw before it is read again. */
const RECORD_TTL_MS = 1000;
/** Entries hashed between two yields to the event loop (a few milliseconds of work). */
const HASH_SLICE = 1_000;

const isoOf = (ms: number) => new Date(ms).toISOString();

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface DrawPublicationsDeps {
  store: Pick<DrawStore, 'getDraw' | 'commitDraw' | 'readPrequeue'>;
  /** Monotonic or wall-clock milliseconds, for the record's freshness. */
  nowMs: () => number;
  /** A new seed, stored as the room's draw if it has none when first asked (all nodes then share the winner). */
  candidate: () => DrawSeed;
  /** When each commitment was published and each draw took place. */
  times: DrawTimes;
}

export class DrawPublications {
  private readonly deps: DrawPublicationsDeps;
  private readonly records = new Map<string, { record: Promise<DrawRecord>; readAt: number }>();
  private readonly published = new Map<string, { seed: string; publication: Promise<DrawPublication> }>();
  /** Rooms whose commitment this process has marked published (notePublished). */
  private readonly noted = new Set<string>();

  constructor(deps: DrawPublicationsDeps) {
    this.deps = deps;
  }

  /** The room's publication now. The room must draw (the caller checks its settings). */
  async current(eventId: string): Promise<DrawPublication> {
    const record = await this.record(eventId);
    if (record.state !== 'done') {
      const committedAt = await this.deps.times.published(eventId, record.commitment);
      const json = JSON.stringify({ algorithm: record.algorithm, commitment: record.commitment, committed_at: isoOf(committedAt) });
      return { json: Buffer.from(json), drawn: null };
    }
    let built = this.published.get(eventId);
    if (!built || built.seed !== record.seed) {
      const publication = this.build(eventId, record);
      built = { seed: record.seed, publication };
      this.published.set(eventId, built);
      // A failed build (the store unreachable) is not kept: the next request tries again.
      const entry = built;
      publication.catch(() => {
        if (this.published.get(eventId) === entry) this.published.delete(eventId);
      });
    }
    return built.publication;
  }

  /** Forgets the room's draw (after a reset). */
  forget(eventId: string): void {
    this.records.delete(eventId);
    this.published.delete(eventId);
    this.noted.delete(eventId);
  }

  /**
   * The draw job, while the room's pre-queue is open: once the room has a commitment (its first pre-queue join
   * stored one), marks it published, so that its instant is the one it was first there to see.
   */
  async notePublished(eventId: string): Promise<void> {
    if (this.noted.has(eventId)) return;
    const record = await this.deps.store.getDraw(eventId);
    if (!record) return;
    await this.deps.times.published(eventId, record.commitment);
    this.noted.add(eventId);
  }

  /** The stored draw, read at most once per RECORD_TTL_MS; committed first if the room has none yet. */
  private record(eventId: string): Promise<DrawRecord> {
    const now = this.deps.nowMs();
    const cached = this.records.get(eventId);
    if (cached && now - cached.readAt < RECORD_TTL_MS) return cached.record;
    const record = (async () =>
      (await this.deps.store.getDraw(eventId)) ?? (await this.deps.store.commitDraw(eventId, this.deps.candidate())))();
    const entry = { record, readAt: now };
    this.records.set(eventId, entry);
    record.catch(() => {
      if (this.records.get(eventId) === entry) this.records.delete(eventId);
    });
    return record;
  }

  private async build(eventId: string, draw: DrawRecord): Promise<DrawPublication> {
    const entries = await readDrawnEntries(this.deps.store, eventId, draw);
    const [committedAt, drawnAt] = await Promise.all([
      this.deps.times.published(eventId, draw.commitment),
      this.deps.times.drawn(eventId, draw.commitment),
    ]);
    const head = JSON.stringify({
      algorithm: draw.algorithm,
      commitment: draw.commitment,
      committed_at: isoOf(committedAt),
      drawn_at: isoOf(drawnAt),
      seed: draw.seed,
      first_position: draw.firstPosition,
    });
    // {"algorithm":…,"first_position":N} → {"algorithm":…,"first_position":N,"entries":[ … ]}
    const parts: Buffer[] = [Buffer.from(`${head.slice(0, -1)},"entries":[`)];
    const hexes: string[] = [];
    for (let from = 0; from < entries.count; from += HASH_SLICE) {
      const hashes: string[] = [];
      for (let i = from; i < Math.min(entries.count, from + HASH_SLICE); i++) hashes.push(drawEntry(entries.requestId(i)));
      hexes.push(hashes.join(''));
      parts.push(Buffer.from(`${from === 0 ? '' : ','}"${hashes.join('","')}"`));
      await yieldToLoop();
    }
    parts.push(Buffer.from(']}'));
    return {
      json: Buffer.concat(parts),
      drawn: { firstPosition: draw.firstPosition, positions: entries.positions, entryHexes: hexes.join('') },
    };
  }
}
