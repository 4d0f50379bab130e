// What GET /draw publishes (src/domain/draw-publication.ts), against a draw store kept in a test object: the
// commitment before the draw, the seed and every entry after it (in join order, whatever the number of hashing
// slices); the draw record read at most once a second; one build per draw, shared, kept until the draw changes
// or is forgotten, and a failed read or build not kept; the pages of the publication.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DRAW_ALGORITHM, drawCommitment, drawEntry } from '../../src/domain/draw.ts';
import { drawPage, DrawPublications, type DrawPublication } from '../../src/domain/draw-publication.ts';
import { DrawTimes } from '../../src/domain/draw-times.ts';
import type { DrawRecord, DrawSeed, PrequeueEntry } from '../../src/domain/ports/store.ts';
import { countLoopTurns } from '../support/loop-turns.ts';

const seedOf = (n: number) => String(n).padStart(64, '0');
const requestIdOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** A room's draw as a test states it: `entries` joined (join order 1, 2, …), those in `left` gave up. */
class TestDrawStore {
  draw: DrawRecord | null = null;
  entries: PrequeueEntry[] = [];
  getDraws = 0;
  commits = 0;
  reads = 0;
  /** Rejects the next getDraw / readPrequeue once when set. */
  failNextGet = false;
  failNextRead = false;
  /** Each readPrequeue waits for this before answering (a slow store). */
  gate: Promise<void> = Promise.resolve();

  async getDraw(): Promise<DrawRecord | null> {
    this.getDraws++;
    if (this.failNextGet) {
      this.failNextGet = false;
      throw new Error('store unreachable');
    }
    return this.draw;
  }

  async commitDraw(_eventId: string, candidate: DrawSeed): Promise<DrawRecord> {
    this.commits++;
    this.draw ??= { state: 'committed', ...candidate, drawnThrough: 0, entryCount: 0, progress: 0, firstPosition: 0, numberedThrough: 0 };
    return this.draw;
  }

  async readPrequeue(_eventId: string, after: number, limit: number): Promise<PrequeueEntry[]> {
    this.reads++;
    await this.gate;
    if (this.failNextRead) {
      this.failNextRead = false;
      throw new Error('store unreachable');
    }
    return this.entries.filter((e) => e.joinOrder > after).slice(0, limit);
  }

  /** A done draw of `count` entries (seed n), every entry numbered from `firstPosition`. */
  drawn(count: number, n = 1, firstPosition = 1): void {
    this.entries = Array.from({ length: count }, (_, i) => ({
      requestId: requestIdOf(i),
      entryTime: 1,
      joinOrder: i + 1,
      left: false,
      position: firstPosition + ((i * 7) % count),
    }));
    const seed = seedOf(n);
    this.draw = {
      state: 'done',
      seed,
      commitment: drawCommitment(seed),
      algorithm: DRAW_ALGORITHM,
      drawnThrough: count,
      entryCount: count,
      progress: count,
      firstPosition,
      numberedThrough: count,
    };
  }
}

function setUp() {
  const store = new TestDrawStore();
  const clock = { ms: 1_000_000 };
  let candidates = 0;
  const secrets = new Map<string, string>();
  const times = new DrawTimes(
    {
      claimSecret: async (name: string, candidate: string) => {
        if (!secrets.has(name)) secrets.set(name, candidate);
        return secrets.get(name) as string;
      },
    },
    () => clock.ms,
  );
  const publications = new DrawPublications({
    store,
    nowMs: () => clock.ms,
    times,
    candidate: () => {
      const seed = seedOf(900 + ++candidates);
      return { seed, commitment: drawCommitment(seed), algorithm: DRAW_ALGORITHM };
    },
  });
  return { store, clock, publications, times };
}

/** Lets the event loop turn until `done` holds (at most 100 turns: then the test fails instead of hanging). */
async function turnsUntil(done: () => boolean): Promise<void> {
  for (let turn = 0; !done(); turn++) {
    assert.ok(turn < 100, 'never happened');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const parsed = (publication: DrawPublication) => JSON.parse(publication.json.toString('utf8')) as Record<string, unknown>;

describe('the publication of a draw', () => {
  it('before the draw: the algorithm and the commitment only, committing a seed for a room without one', async () => {
    const { store, publications } = setUp();
    const publication = await publications.current('room');
    assert.equal(store.commits, 1);
    assert.deepEqual(parsed(publication), {
      algorithm: DRAW_ALGORITHM,
      commitment: drawCommitment(seedOf(901)),
      committed_at: new Date(1_000_000).toISOString(),
    });
    assert.equal(publication.drawn, null);
  });

  it('after the draw: the seed, the first position and every entry in join order, across several hashing slices', async () => {
    const { store, publications, times, clock } = setUp();
    // Published a minute before the draw: the publication says when each happened, as stored.
    await times.published('room', drawCommitment(seedOf(1)));
    clock.ms += 60_000;
    await times.drawn('room', drawCommitment(seedOf(1)));
    clock.ms += 5_000;
    store.drawn(2_001, 1, 41);
    const publication = await publications.current('room');
    const ids = store.entries.map((e) => e.requestId);
    assert.deepEqual(parsed(publication), {
      algorithm: DRAW_ALGORITHM,
      commitment: drawCommitment(seedOf(1)),
      committed_at: new Date(1_000_000).toISOString(),
      drawn_at: new Date(1_060_000).toISOString(),
      seed: seedOf(1),
      first_position: 41,
      entries: ids.map(drawEntry),
    });
    assert.equal(publication.drawn?.firstPosition, 41);
    assert.deepEqual([...publication.drawn!.positions], store.entries.map((e) => e.position));
    assert.equal(publication.drawn?.entryHexes, ids.map(drawEntry).join(''));
  });

  it('lets the event loop turn between hashing slices of 1,000 entries', async () => {
    const { store, publications } = setUp();
    store.drawn(3_001);
    const turns = countLoopTurns();
    // The reads of the entries yield too: count the turns from the read of the last entry on.
    let turnsAtLastRead = -1;
    const read = store.readPrequeue.bind(store);
    store.readPrequeue = async (eventId, after, limit) => {
      const page = await read(eventId, after, limit);
      if (page.at(-1)?.joinOrder === 3_001) turnsAtLastRead = turns.count;
      return page;
    };
    try {
      await publications.current('room');
    } finally {
      turns.stop();
    }
    assert.ok(turnsAtLastRead >= 0);
    assert.ok(turns.count - turnsAtLastRead >= 4, `${turns.count - turnsAtLastRead} turns of the event loop while 4 slices were hashed`);
  });

  it('a draw of no entries publishes an empty list', async () => {
    const { store, publications } = setUp();
    store.drawn(0);
    const publication = await publications.current('room');
    assert.deepEqual(parsed(publication).entries, []);
    assert.equal(publication.drawn?.entryHexes, '');
  });

  it('reads the draw record at most once a second', async () => {
    const { store, clock, publications } = setUp();
    await publications.current('room');
    clock.ms += 999;
    await publications.current('room');
    assert.equal(store.getDraws, 1, 'within the second: the record read before');
    clock.ms += 1;
    await publications.current('room');
    assert.equal(store.getDraws, 2, 'a second later: read again');
  });

  it('a failed read of the record is not kept: the next request reads again', async () => {
    const { store, publications } = setUp();
    store.drawn(3);
    store.failNextGet = true;
    await assert.rejects(publications.current('room'), /store unreachable/);
    assert.deepEqual(parsed(await publications.current('room')).seed, seedOf(1));
    assert.equal(store.getDraws, 2);
  });

  it('a read of the record that fails after a newer one was started leaves the newer one in place', async () => {
    const { store, clock, publications } = setUp();
    store.drawn(3);
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const getDraw = store.getDraw.bind(store);
    store.getDraw = async () => {
      if (store.getDraws === 0) {
        store.getDraws++;
        await slow;
        throw new Error('store unreachable');
      }
      return getDraw();
    };
    const first = publications.current('room');
    clock.ms += 1_000;
    const second = publications.current('room');
    release();
    await assert.rejects(first, /store unreachable/);
    await second;
    await publications.current('room');
    assert.equal(store.getDraws, 2, 'the newer record answers within its second');
  });

  it('builds the publication once per draw: concurrent requests share the build, later ones reuse it', async () => {
    const { store, clock, publications } = setUp();
    store.drawn(3);
    const [a, b] = await Promise.all([publications.current('room'), publications.current('room')]);
    assert.equal(a, b);
    const reads = store.reads;
    assert.ok(reads >= 1);
    clock.ms += 5_000;
    assert.equal(await publications.current('room'), a, 'the same draw: the same publication');
    assert.equal(store.reads, reads, 'no entries read again');
  });

  it('a failed build is not kept: the next request builds again', async () => {
    const { store, publications } = setUp();
    store.drawn(3);
    store.failNextRead = true;
    await assert.rejects(publications.current('room'), /store unreachable/);
    assert.equal(parsed(await publications.current('room')).seed, seedOf(1));
  });

  it('a draw replaced by another (a reset elsewhere, drawn again) is published anew once its record is read', async () => {
    const { store, clock, publications } = setUp();
    store.drawn(3, 1);
    await publications.current('room');
    store.drawn(4, 2);
    assert.equal(parsed(await publications.current('room')).seed, seedOf(1), 'within the second: the record read before');
    clock.ms += 1_000;
    const again = parsed(await publications.current('room'));
    assert.equal(again.seed, seedOf(2));
    assert.equal((again.entries as string[]).length, 4);
  });

  it('forgets a room: the record is read and the publication built again at once', async () => {
    const { store, publications } = setUp();
    store.drawn(3, 1);
    await publications.current('room');
    store.drawn(4, 2);
    publications.forget('room');
    assert.equal(parsed(await publications.current('room')).seed, seedOf(2));
    // Whatever the store holds now, even a draw of the same seed: nothing of the room's draw is kept.
    store.drawn(5, 2);
    publications.forget('room');
    assert.equal((parsed(await publications.current('room')).entries as string[]).length, 5);
  });

  it('a build that fails after the draw was replaced leaves the new draw\'s build in place', async () => {
    const { store, clock, publications } = setUp();
    store.drawn(3, 1);
    let release!: () => void;
    store.gate = new Promise((resolve) => (release = resolve));
    store.failNextRead = true;
    const first = publications.current('room');
    // Let the first build reach its read of the entries, then replace the draw.
    await turnsUntil(() => store.reads === 1);
    clock.ms += 1_000;
    store.drawn(4, 2);
    const second = publications.current('room');
    await turnsUntil(() => store.getDraws === 2);
    release();
    await assert.rejects(first, /store unreachable/);
    const published = await second;
    const reads = store.reads;
    assert.equal(await publications.current('room'), published, 'the second build kept');
    assert.equal(store.reads, reads);
  });
});

describe('the pages of a publication', () => {
  const entries = Array.from({ length: 5 }, (_, i) => drawEntry(requestIdOf(i)));
  const head = { algorithm: DRAW_ALGORITHM, commitment: drawCommitment(seedOf(1)), seed: seedOf(1), first_position: 1 };
  const publication = (hexes: string[]): DrawPublication => ({
    json: Buffer.from(JSON.stringify({ ...head, entries: hexes })),
    drawn: { firstPosition: 1, positions: new Uint32Array(hexes.length), entryHexes: hexes.join('') },
  });

  it('before the draw: page 1 is the publication, there is no page 2', () => {
    const before: DrawPublication = { json: Buffer.from('{"algorithm":"a","commitment":"c"}'), drawn: null };
    assert.equal(drawPage(before, 1), before.json);
    assert.equal(drawPage(before, 2), null);
  });

  it('pages of the entries in order, the last one shorter; none past the last', () => {
    const page = (n: number) => JSON.parse(drawPage(publication(entries), n, 2)!.toString()) as Record<string, unknown>;
    assert.deepEqual(page(1), { ...head, total_entries: 5, page: 1, pages: 3, entries: entries.slice(0, 2) });
    assert.deepEqual(page(3), { ...head, total_entries: 5, page: 3, pages: 3, entries: entries.slice(4) });
    assert.equal(drawPage(publication(entries), 4, 2), null);
    const byDefault = JSON.parse(drawPage(publication(entries), 1)!.toString()) as { entries: string[] };
    assert.equal(byDefault.entries.length, 5, 'a page of 50,000 by default');
    assert.deepEqual(byDefault.entries, entries);
  });

  it('a draw of no entries has one page, empty', () => {
    const page = JSON.parse(drawPage(publication([]), 1)!.toString()) as { entries: string[] };
    assert.equal(page.entries.length, 0);
    assert.deepEqual(page, { ...head, total_entries: 0, page: 1, pages: 1, entries: [] });
    assert.equal(drawPage(publication([]), 2), null);
  });
});
