// The pre-queue and the draw through the service, on SQLite and on Redis: joins of the pre-queue wait without a
// position; at the start the draw gives exactly the pre-queue entries (nobody who left, nobody who joined after
// it started) a random place that anyone recomputes from the published seed; those who joined meanwhile queue
// FIFO behind; a draw stopped after k chunks finishes, after a restart, with the same order.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { composeCore, type Core } from '../../src/compose/core.ts';
import { checkPublishedDraw, drawCommitment, drawEntry, drawOrder, placesOf } from '../../src/domain/draw.ts';
import { DRAW_LEASE_MS } from '../../src/domain/draw-runner.ts';
import { DRAW_PAGE_ENTRIES, drawPage } from '../../src/domain/draw-publication.ts';
import { Pending } from '../../src/domain/errors.ts';
import type { DrawRecord, Store } from '../../src/domain/ports/store.ts';
import type { RoomSettings } from '../../src/domain/room-settings.ts';
import { ForwardingStore } from '../../src/store/forwarding-store.ts';
import { RedisStore } from '../../src/store/redis/redis-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { eventSettings, TestClock } from '../support/node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

const START_MS = Date.UTC(2026, 10, 24, 18, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** A room with a pre-queue that opens an hour before the start and a draw at the start. */
function drawRoom(eventId: string, overrides: Partial<RoomSettings> = {}): RoomSettings {
  return eventSettings(eventId, {
    prequeue_start_time: iso(START_MS - 3_600_000),
    event_start_time: iso(START_MS),
    shuffle_at_event_start: true,
    ...overrides,
  });
}

/** The store of a test, seen through hooks: runs `onNumberDrawn` before each numbering call; close is a no-op. */
class ObservedStore extends ForwardingStore {
  onNumberDrawn: (call: number) => Promise<void> = async () => {};
  numberDrawnCalls = 0;

  override async numberDrawn(eventId: string, expected: number, ids: readonly string[]): Promise<DrawRecord | null> {
    await this.onNumberDrawn(++this.numberDrawnCalls);
    return super.numberDrawn(eventId, expected, ids);
  }

  override async close(): Promise<void> {}
}

interface Backend {
  name: string;
  open(): Promise<Store>;
}

const redis: { server?: RedisServer } = {};
let redisPrefix = 0;
const allBackends: Backend[] = [
  { name: 'sqlite', open: async () => new SqliteStore({ path: ':memory:' }) },
  {
    name: 'redis',
    open: async () =>
      new RedisStore({ url: redis.server!.url, keyPrefix: `draw-${process.pid}-${++redisPrefix}:`, readyTimeoutMs: 5000 }),
  },
];
// DRAW_TEST_BACKENDS=sqlite runs the in-memory store only: the mutation scope "draw" (test/mutation/scopes.json)
// tests the domain's draw code, which is the same on every store, without starting a Redis server per mutant.
const only = process.env.DRAW_TEST_BACKENDS?.split(',');
const backends = only ? allBackends.filter((backend) => only.includes(backend.name)) : allBackends;

before(async () => {
  if (backends.some((backend) => backend.name === 'redis')) redis.server = await startRedisServer();
});
after(() => redis.server?.destroy());

for (const backend of backends) {
  describe(`the pre-queue and the draw (${backend.name})`, () => {
    const opened: Store[] = [];
    after(async () => {
      for (const store of opened) await store.close();
    });

    async function setUp(room: RoomSettings, options: { chunk?: number; store?: ObservedStore; clock?: TestClock } = {}) {
      let store = options.store;
      if (!store) {
        const inner = await backend.open();
        opened.push(inner);
        store = new ObservedStore(inner);
      }
      const clock = options.clock ?? new TestClock(START_MS - 1_800_000);
      const core: Core = await composeCore({
        store,
        rooms: [room],
        clock: clock.now,
        defaultIssuer: () => 'https://issuer.test',
        ...(options.chunk ? { drawChunkSize: options.chunk } : {}),
      });
      const service = core.room;
      const eventId = room.event_id;
      return {
        store,
        clock,
        service,
        core,
        join: async (n: number): Promise<string[]> =>
          Promise.all(
            Array.from({ length: n }, async () => {
              const answer = await service.queue.assignQueueNum(eventId, {});
              assert.equal(answer.status, 200);
              return (answer.body as { api_request_id: string }).api_request_id;
            }),
          ),
        published: async () =>
          JSON.parse((await service.draws.drawPublication(eventId)).body.toString('utf8')) as {
            algorithm: string;
            commitment: string;
            seed?: string;
            first_position?: number;
            entries?: string[];
          },
        positionOf: async (requestId: string) => {
          const answer = await service.queue.queueNum(eventId, requestId);
          return answer.status === 200 ? answer.body.queue_number : null;
        },
      };
    }

    it('a pre-queue join waits without a position; /draw shows only the commitment', async () => {
      const t = await setUp(drawRoom('wait'));
      const [a] = await t.join(3);
      assert.deepEqual(await t.service.queue.queueNum('wait', a), Pending.awaitingDraw);
      assert.deepEqual(await t.service.claims.generateToken('wait', a), Pending.notServedYet);
      assert.deepEqual(await t.service.claims.queuePosExpiry('wait', a), Pending.notServedYet);
      assert.equal((await t.service.reports.counters('wait')).queue, 0);
      const published = await t.published();
      // The commitment and when it was published (issue 33: checked against the draw's time).
      assert.deepEqual(Object.keys(published).sort(), ['algorithm', 'commitment', 'committed_at']);
      assert.equal(published.commitment, (await t.store.getDraw('wait'))?.commitment, 'the seed of the first join');
      assert.equal(await t.service.draws.drawDone('wait'), false);
      // Before the start the draw job does nothing.
      await t.service.draws.runDraws();
      assert.equal((await t.store.getDraw('wait'))?.state, 'committed');
    });

    it('at the start: a permutation of exactly the pre-queue entries, reproducible from the seed; later arrivals FIFO behind', async () => {
      const t = await setUp(drawRoom('drop'), { chunk: 7 });
      const before = await t.published();
      const prequeue = await t.join(30);
      const gaveUp = [prequeue[4]!, prequeue[17]!];
      // Through leave_queue, as the page gives a place up: out of the pre-queue, announced, and only once.
      const left: unknown[] = [];
      t.core.bus.subscribe({ name: 'test', deliver: (e) => void (e['detail-type'] === 'queue_left' && left.push(e.detail)) });
      for (const id of gaveUp) assert.deepEqual(await t.service.queue.leaveQueue('drop', id), { status: 200, body: {} });
      assert.deepEqual(left, gaveUp.map((request_id) => ({ event_id: 'drop', request_id })));
      await assert.rejects(t.service.queue.leaveQueue('drop', gaveUp[0]), /Queue position was given up/);
      const stayed = prequeue.filter((id) => !gaveUp.includes(id));

      // Visitors who arrive while the draw numbers its places (after the first chunk) queue behind it.
      let duringDraw: string[] = [];
      let leaveDuringDraw: unknown;
      t.store.onNumberDrawn = async (call) => {
        if (call === 2) {
          duringDraw = await t.join(3);
          // An entry the draw covers cannot leave while it numbers the places: try again in a few seconds. (One
          // the first chunk has not numbered yet: a numbered one holds a position, which it can give up.)
          let unnumbered: string | undefined;
          for (const id of stayed) if (unnumbered === undefined && (await t.positionOf(id)) === null) unnumbered = id;
          leaveDuringDraw = await t.service.queue.leaveQueue('drop', unnumbered).catch((error: Error) => error);
        }
      };
      t.clock.ms = START_MS;
      await t.service.draws.runDraws();
      assert.ok(t.store.numberDrawnCalls >= 4, `${t.store.numberDrawnCalls} chunks of at most 7 for 28 entries`);
      assert.equal(await t.service.draws.drawDone('drop'), true);

      const published = await t.published();
      assert.equal(published.commitment, before.commitment, 'the commitment published before the draw');
      assert.equal(drawCommitment(published.seed!), published.commitment);
      assert.deepEqual(published.entries, stayed.map(drawEntry), 'exactly the entries that stayed, in join order');
      assert.match(String((leaveDuringDraw as Error).message), /The draw is giving out places/);
      assert.equal((leaveDuringDraw as { status?: number }).status, 409);
      const checked = await checkPublishedDraw({ ...published, seed: published.seed!, entries: published.entries! });
      assert.ok(checked.ok);

      const positions = await Promise.all(stayed.map((id) => t.positionOf(id)));
      assert.deepEqual(
        positions,
        stayed.map((_, i) => published.first_position! + checked.places[i]! - 1),
        'everyone has the place the published seed gives',
      );
      assert.deepEqual([...positions].sort((x, y) => x! - y!), Array.from({ length: 28 }, (_, i) => i + 1));
      assert.notDeepEqual(positions, Array.from({ length: 28 }, (_, i) => i + 1), 'not join order');
      for (const id of gaveUp) assert.deepEqual(await t.service.queue.queueNum('drop', id), Pending.requestIdNotFound);
      assert.deepEqual(await Promise.all(duringDraw.map((id) => t.positionOf(id))), [29, 30, 31]);
      const [afterDraw] = await t.join(1);
      assert.equal(await t.positionOf(afterDraw!), 32, 'a join after the draw gets the next position at once');
      assert.equal((await t.service.reports.counters('drop')).queue, 32);
    });

    it('a draw stopped after k chunks finishes after a restart, with the same order', async () => {
      const room = drawRoom('crash');
      const first = await setUp(room, { chunk: 5 });
      const prequeue = await first.join(23);
      first.clock.ms = START_MS;
      first.store.onNumberDrawn = async (call) => {
        if (call === 3) throw new Error('the node died');
      };
      await assert.rejects(first.service.draws.runDraws(), /the node died/);
      const stopped = await first.store.getDraw('crash');
      assert.equal(stopped?.state, 'drawing');
      assert.equal(stopped?.progress, 10, 'two chunks of 5 numbered');

      // Another process while the dead one's lease still holds: it leaves the draw alone.
      const store = new ObservedStore(first.store);
      const restarted = await setUp(room, { chunk: 5, store, clock: first.clock });
      await restarted.service.draws.runDraws();
      assert.equal((await store.getDraw('crash'))?.progress, 10);
      // Once the lease has run out it resumes from the stored progress.
      first.clock.advance(DRAW_LEASE_MS / 1000 + 1);
      await restarted.service.draws.runDraws();
      assert.equal(await restarted.service.draws.drawDone('crash'), true);
      assert.equal(store.numberDrawnCalls, 3, 'only the chunks left: places 11–23');

      const expected = placesOf(await drawOrder(stopped!.seed, 23));
      const positions = await Promise.all(prequeue.map((id) => restarted.positionOf(id)));
      assert.deepEqual(positions, [...expected], 'the places the seed gives, as if nothing had happened');
    });

    it('two nodes on one store share one seed, and at the start one of them draws while the other leaves it be', async () => {
      const room = drawRoom('shared');
      const a = await setUp(room, { chunk: 4 });
      const b = await setUp(room, { chunk: 4, store: new ObservedStore(a.store), clock: a.clock });
      const joined = [...(await a.join(5)), ...(await b.join(5)), ...(await a.join(5))];
      assert.equal((await a.published()).commitment, (await b.published()).commitment);
      a.clock.ms = START_MS;
      await Promise.all([a.service.draws.runDraws(), b.service.draws.runDraws()]);
      assert.ok(
        (a.store.numberDrawnCalls === 0) !== (b.store.numberDrawnCalls === 0),
        `one node numbered the places (${a.store.numberDrawnCalls} and ${b.store.numberDrawnCalls} calls)`,
      );
      assert.equal(await a.service.draws.drawDone('shared'), true);
      assert.equal(await b.service.draws.drawDone('shared'), true);
      const draw = await a.store.getDraw('shared');
      const places = placesOf(await drawOrder(draw!.seed, 15));
      assert.deepEqual(await Promise.all(joined.map((id) => b.positionOf(id))), [...places]);
    });

    it('GET /draw?page=N: the entries in pages (every page fits a Lambda answer), the same head, 404 past the last', async () => {
      const t = await setUp(drawRoom('pages'));
      await t.join(5);
      assert.deepEqual(JSON.parse((await t.service.draws.drawPublication('pages', 1)).body.toString()), await t.published(), 'before the draw: the publication');
      t.clock.ms = START_MS;
      await t.service.draws.runDraws();
      const whole = await t.published();
      const page = async (n: number) => JSON.parse((await t.service.draws.drawPublication('pages', n)).body.toString()) as Record<string, unknown>;
      const { entries, ...head } = whole;
      assert.deepEqual(await page(1), { ...head, total_entries: 5, page: 1, pages: 1, entries });
      await assert.rejects(t.service.draws.drawPublication('pages', 2), { status: 404, message: 'The draw has no such page' });
      // Pages of 2: the same entries, in order, split.
      const publication = { json: Buffer.from(JSON.stringify(whole)), drawn: { firstPosition: whole.first_position!, positions: new Uint32Array(5), entryHexes: entries!.join('') } };
      const pages = [1, 2, 3].map((n) => JSON.parse(drawPage(publication, n, 2)!.toString()) as { entries: string[]; pages: number; total_entries: number });
      assert.deepEqual(pages.flatMap((p) => p.entries), entries);
      assert.deepEqual(pages.map((p) => [p.pages, p.total_entries]), [[3, 5], [3, 5], [3, 5]]);
      assert.equal(drawPage(publication, 4, 2), null);
      // The default page size keeps a page under Lambda's 6 MB answer: 64 hex digits and 3 characters an entry.
      assert.ok(DRAW_PAGE_ENTRIES * 67 < 6 * 1024 * 1024 * 0.6);
    });

    it('a reset clears the pre-queue and the draw; the next join commits a new seed', async () => {
      const t = await setUp(drawRoom('again'));
      const [a] = await t.join(2);
      const before = await t.published();
      await t.service.admission.resetInitialState('again');
      assert.equal(await t.store.getDraw('again'), null);
      assert.deepEqual(await t.service.queue.queueNum('again', a), Pending.requestIdNotFound);
      await t.join(1);
      assert.notEqual((await t.published()).commitment, before.commitment);
    });

    it('a room without shuffle numbers pre-queue joins at once and publishes no draw', async () => {
      const t = await setUp(drawRoom('plain', { shuffle_at_event_start: false }));
      const ids = await t.join(3);
      assert.deepEqual(await Promise.all(ids.map((id) => t.positionOf(id))), [1, 2, 3]);
      await assert.rejects(t.service.draws.drawPublication('plain'), { status: 404, message: 'This waiting room has no draw' });
      assert.equal(await t.service.draws.drawDone('plain'), true);
    });

    it('the first /draw of a room commits its seed; a draw of an empty pre-queue is done at the start', async () => {
      const t = await setUp(drawRoom('empty'));
      const before = await t.published();
      assert.equal((await t.store.getDraw('empty'))?.commitment, before.commitment);
      t.clock.ms = START_MS + 5000;
      await t.service.draws.runDraws();
      assert.equal(await t.service.draws.drawDone('empty'), true);
      const published = await t.published();
      assert.deepEqual(published.entries, []);
      assert.equal(published.commitment, before.commitment);
      const [late] = await t.join(1);
      assert.equal(await t.positionOf(late!), 1);
    });
  });
}
