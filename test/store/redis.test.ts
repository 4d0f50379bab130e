import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { newTokenRecord } from '../../src/domain/claims.ts';
import { StoreUnavailableError, type Store } from '../../src/domain/ports/store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { RedisStore, createRedisClusterClient, describeRedisUrl } from '../../src/store/redis/redis-store.ts';
import { startRedisCluster, startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { runStoreContract } from './contract.ts';

const [server, cluster] = await Promise.all([startRedisServer(), startRedisCluster()]);
const keyPrefix = `ar-test-${process.pid}:`;
after(() => Promise.all([server.destroy(), cluster.destroy()]));

// A generous first-connection wait: a loaded CI machine must not turn a slow start into a failed test.
runStoreContract('redis', {
  create: async () => new RedisStore({ url: server.url, keyPrefix, readyTimeoutMs: 5000 }),
});

runStoreContract('redis cluster (3 primaries)', {
  create: async () =>
    new RedisStore({
      url: cluster.url,
      keyPrefix,
      client: createRedisClusterClient(cluster.startupNodes),
      closeClient: true,
      readyTimeoutMs: 5000,
    }),
});

describe('redis store', () => {
  it('describes itself by its URL without credentials', () => {
    assert.equal(describeRedisUrl('redis://user:s3cret@cache.example:6380/2'), 'redis://cache.example:6380/2');
    assert.equal(describeRedisUrl('rediss://:s3cret@cache.example?password=x'), 'rediss://cache.example');
    assert.equal(describeRedisUrl('redis://127.0.0.1:6379'), 'redis://127.0.0.1:6379');
    assert.equal(describeRedisUrl('redis-cluster://u:p@h1:1,h2:2'), 'redis-cluster://h1:1,h2:2');
  });

  it('keeps every key of an event in one hash slot, under the key prefix', async () => {
    const store = new RedisStore({ url: server.url, keyPrefix });
    const inspector = new Redis(server.url);
    try {
      const event = `slot-${randomUUID()}`;
      const a = randomUUID();
      const b = randomUUID();
      await store.assignPositions(event, [{ requestId: a, entryTime: 1 }, { requestId: b, entryTime: 1 }]);
      await store.incrementServing(event, 1, 1);
      await store.issueTokenIfAbsent(event, {
        requestId: a, position: 1, iat: 1, nbf: 1, exp: 10, iss: 'i', kid: 'k', status: 0,
      });
      await store.leaveQueue(event, b);
      assert.ok((await inspector.keys(`${keyPrefix}{${event}}:*`)).includes(`${keyPrefix}{${event}}:lp`), 'left positions are kept beside the others');
      // The pre-queue and the draw too.
      await store.joinPrequeue(event, [{ requestId: randomUUID(), entryTime: 1 }], { seed: 'a'.repeat(64), commitment: 'c'.repeat(64), algorithm: 'x' });
      const keys = await inspector.keys(`${keyPrefix}{${event}}:*`);
      assert.ok(keys.length >= 10, keys.join(', '));
      // Redis Cluster hashes only the part between the first '{' and the next '}'.
      const hashTag = (key: string) => key.slice(key.indexOf('{') + 1, key.indexOf('}', key.indexOf('{')));
      assert.deepEqual(new Set(keys.map(hashTag)), new Set([event]));
    } finally {
      await store.close();
      inspector.disconnect();
    }
  });

  it('rooms at runtime: settings under a hash tag of their own; deleting a room leaves no key of it but its reset generation', async () => {
    const store = new RedisStore({ url: server.url, keyPrefix });
    const inspector = new Redis(server.url);
    try {
      const event = `deleted-${randomUUID()}`;
      await store.putRoom(event, JSON.stringify({ event_id: event }));
      assert.ok(await inspector.hexists(`${keyPrefix}{@rooms}:settings`, event));
      assert.ok(Number(await inspector.get(`${keyPrefix}{@rooms}:version`)) >= 1);
      const [a] = [randomUUID()];
      await store.syncExpirySwitch(event, true, 1);
      await store.assignPositions(event, [{ requestId: a, entryTime: 1 }]);
      await store.incrementServing(event, 1, 1);
      await store.issueTokenIfAbsent(event, newTokenRecord({ requestId: a, position: 1, now: 1, validityPeriod: 60, issuer: 'i', kid: 'k' }));
      await store.saveAuthorization(event, a, 'x');
      await store.addSigningKeyIfNone(event, { kid: 'k', privateJwk: '{}', publicJwk: '{}', createdAt: 1 });
      // Presence keys of the generation a reset ends, and of the current one (src/store/redis/presence.ts).
      const presence = async () => {
        await store.presence.markSeen(event, [1], 3, 5);
        await store.presence.recordTick(event, [[1, 1]], 3, 0);
        await store.presence.recordClaim(event, 1, true);
      };
      await presence();
      await store.resetEvent(event);
      assert.deepEqual(await inspector.keys(`${keyPrefix}{${event}}:p[wbist]:0*`), [], 'a reset deletes the presence keys of the generation it ends');
      await store.assignPositions(event, [{ requestId: randomUUID(), entryTime: 2 }]);
      await presence();
      assert.equal((await inspector.keys(`${keyPrefix}{${event}}:p[wbist]:1*`)).length, 5, 'a window, the beating, index, skipped and stats keys');
      assert.ok((await inspector.keys(`${keyPrefix}{${event}}:*`)).length >= 4);

      assert.equal(await store.deleteRoomSettings(event), true);
      await store.deleteRoomData(event);
      assert.equal(await inspector.hexists(`${keyPrefix}{@rooms}:settings`, event), 0);
      assert.equal(await inspector.hexists(`${keyPrefix}{@rooms}:created`, event), 0);
      assert.deepEqual(await inspector.keys(`${keyPrefix}{${event}}:*`), [`${keyPrefix}{${event}}:c`]);
      // Bumped past the reset's generation, so token records kept elsewhere (DynamoDB) are never read again.
      assert.deepEqual(await inspector.hgetall(`${keyPrefix}{${event}}:c`), { g: '2' });

      const never = `never-${randomUUID()}`;
      await store.deleteRoomData(never);
      assert.deepEqual(await inspector.keys(`${keyPrefix}{${never}}:*`), [], 'a delete of a room without data creates nothing');
    } finally {
      await store.close();
      inspector.disconnect();
    }
  });

  it('stores a visitor compactly: the request ID as 16 bytes, entry times per run', async () => {
    const store = new RedisStore({ url: server.url, keyPrefix });
    const inspector = new Redis(server.url);
    try {
      const event = `compact-${randomUUID()}`;
      await store.assignPositions(event, Array.from({ length: 50 }, () => ({ requestId: randomUUID(), entryTime: 7 })));
      await store.assignPositions(event, Array.from({ length: 50 }, () => ({ requestId: randomUUID(), entryTime: 8 })));
      const fields = await inspector.hkeysBuffer(`${keyPrefix}{${event}}:rq`);
      assert.equal(fields.length, 100);
      assert.ok(fields.every((field) => field.length === 16));
      assert.equal(await inspector.zcard(`${keyPrefix}{${event}}:et`), 2);
    } finally {
      await store.close();
      inspector.disconnect();
    }
  });

  it('runs its scripts again after the server lost its script cache (NOSCRIPT falls back to EVAL)', async () => {
    const store = new RedisStore({ url: server.url, keyPrefix });
    const inspector = new Redis(server.url);
    try {
      const event = `noscript-${randomUUID()}`;
      assert.equal(await store.incrementServing(event, 1, 1), 1);
      await inspector.script('FLUSH');
      assert.equal(await store.incrementServing(event, 1, 2), 2);
    } finally {
      await store.close();
      inspector.disconnect();
    }
  });

  it('accepts request IDs that are not UUIDs, without confusing them with UUIDs', async () => {
    const store = new RedisStore({ url: server.url, keyPrefix });
    try {
      const event = `ids-${randomUUID()}`;
      const ids = ['short', 'exactly-16-bytes', 'a much longer request identifier', randomUUID()];
      assert.deepEqual(await store.assignPositions(event, ids.map((requestId) => ({ requestId, entryTime: 1 }))), [1, 2, 3, 4]);
      for (const [i, id] of ids.entries()) {
        assert.equal((await store.getPosition(event, id))?.position, i + 1);
        await store.issueTokenIfAbsent(event, {
          requestId: id, position: i + 1, iat: 1, nbf: 1, exp: 10 + i, iss: 'i', kid: 'k', status: 0,
        });
      }
      assert.deepEqual(await store.listExpiredTokens(event, 100, 10), ids);
    } finally {
      await store.close();
    }
  });

  it('a batch holding a request ID that already has a position fails and changes nothing', async () => {
    const store = new RedisStore({ url: server.url, keyPrefix });
    try {
      const event = `dup-${randomUUID()}`;
      const a = randomUUID();
      await store.assignPositions(event, [{ requestId: a, entryTime: 1 }]);
      await assert.rejects(store.assignPositions(event, [{ requestId: randomUUID(), entryTime: 2 }, { requestId: a, entryTime: 2 }]));
      const b = randomUUID();
      await assert.rejects(store.assignPositions(event, [{ requestId: b, entryTime: 2 }, { requestId: b, entryTime: 2 }]));
      assert.equal((await store.getCounters(event)).queue, 1);
      assert.equal(await store.getPosition(event, b), null);
      assert.deepEqual(await store.assignPositions(event, [{ requestId: b, entryTime: 3 }]), [2]);
    } finally {
      await store.close();
    }
  });

  it('finds entry times across many runs, with times that go backwards (clock skew between nodes)', async () => {
    const store = new RedisStore({ url: server.url, keyPrefix });
    try {
      const event = `runs-${randomUUID()}`;
      await store.syncExpirySwitch(event, true, 0);
      const times = [100, 100, 101, 99, 99, 102, 150, 103, 300];
      const ids = times.map(() => randomUUID());
      await store.assignPositions(event, ids.map((requestId, i) => ({ requestId, entryTime: times[i]! })));
      for (const [i, id] of ids.entries()) {
        assert.deepEqual(await store.getPosition(event, id), { position: i + 1, entryTime: times[i] });
      }
      await store.incrementServing(event, 100, 0);
      // Same answer as the SQLite store: stop before the first position that joined at or after the cutoff.
      assert.equal((await store.advanceExpiry(event, 102, false, 1)).maxExpired, 5);
      assert.equal((await store.advanceExpiry(event, 151, false, 1)).maxExpired, 8);
    } finally {
      await store.close();
    }
  });
});

describe('redis store against the SQLite reference', () => {
  // A seeded random history (clock skew between nodes, negative increments, resets, expiry switched on and
  // off) played on both stores: every answer must be the same.
  it('answers every operation of a random history exactly like the SQLite store', async () => {
    const redis = new RedisStore({ url: server.url, keyPrefix });
    const sqlite = new SqliteStore({ path: ':memory:' });
    try {
      let seed = 20240611;
      const random = () => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed / 2147483648;
      };
      const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
      const events = [`diff-a-${randomUUID()}`, `diff-b-${randomUUID()}`];
      const ids: string[] = [];
      const pick = () => (ids.length > 0 && random() < 0.9 ? ids[int(0, ids.length - 1)]! : randomUUID());
      let clock = 1000;
      const both = async <T>(step: string, op: (store: Store) => Promise<T>) => {
        const expected = await op(sqlite);
        const actual = await op(redis);
        assert.deepEqual(actual, expected, step);
      };
      for (let i = 0; i < 3000; i++) {
        clock += int(0, 2);
        const event = events[int(0, 1)]!;
        const roll = random();
        if (roll < 0.25) {
          const joins = Array.from({ length: int(1, 4) }, () => ({ requestId: randomUUID(), entryTime: clock + int(-2, 1) }));
          ids.push(...joins.map((j) => j.requestId));
          await both(`${i} assign`, (s) => s.assignPositions(event, joins));
        } else if (roll < 0.37) {
          const by = int(-3, 6);
          const at = clock + int(-2, 0);
          await both(`${i} increment`, (s) => s.incrementServing(event, by, at));
        } else if (roll < 0.5) {
          const record = newTokenRecord({
            requestId: pick(), position: 0, now: clock, validityPeriod: int(1, 30), issuer: 'https://i', kid: 'k',
            nonce: random() < 0.3 ? `n-${i}` : undefined,
          });
          await both(`${i} issue`, (s) => s.issueTokenIfAbsent(event, record));
        } else if (roll < 0.56) {
          const id = pick();
          const status = random() < 0.5 ? 1 : -1;
          await both(`${i} close`, (s) => s.closeSession(event, id, status));
        } else if (roll < 0.66) {
          const cutoff = clock - int(0, 12);
          const incr = random() < 0.5;
          await both(`${i} expiry`, (s) => s.advanceExpiry(event, cutoff, incr, clock));
        } else if (roll < 0.69) {
          const on = random() < 0.8;
          const at = clock - int(0, 20);
          await both(`${i} switch`, (s) => s.syncExpirySwitch(event, on, at));
        } else if (roll < 0.695) {
          await both(`${i} reset`, (s) => s.resetEvent(event));
        } else if (roll < 0.75) {
          const limit = int(1, 8);
          await both(`${i} active`, (s) => s.countActiveTokens(event, clock));
          await both(`${i} expired list`, (s) => s.listExpiredTokens(event, clock, limit));
        } else {
          const id = pick();
          await both(`${i} context`, (s) => s.getClaimContext(event, id));
          await both(`${i} position`, (s) => s.getPosition(event, id));
          await both(`${i} counters`, (s) => s.getCounters(event));
        }
      }
    } finally {
      await redis.close();
      await sqlite.close();
    }
  });
});

describe('redis store when Redis goes away', () => {
  let own: RedisServer;
  before(async () => {
    own = await startRedisServer();
  });
  after(() => own.destroy());

  it('fails fast while Redis is down and recovers by itself, keeping acknowledged data (AOF)', async () => {
    const store = new RedisStore({ url: own.url, keyPrefix });
    try {
      const event = `outage-${randomUUID()}`;
      const a = randomUUID();
      await store.assignPositions(event, [{ requestId: a, entryTime: 5 }]);

      await own.kill('SIGKILL');
      // Redis stays down until every attempt has failed: a call queued until Redis came back would never end.
      for (const attempt of [() => store.ping(), () => store.getServingCounter(event), () => store.incrementServing(event, 1, 6)]) {
        await assert.rejects(attempt(), StoreUnavailableError);
      }
      // Once a wait for the connection has timed out, later calls fail at once: settled before the event loop
      // gets to its next turn, with no timer and no I/O (what keeps queued joins from each waiting in turn).
      const next = store.getServingCounter(event).then(() => 'answered', () => 'failed');
      const turn = new Promise((resolve) => setImmediate(() => resolve('still waiting')));
      assert.equal(await Promise.race([next, turn]), 'failed');

      await own.restart();
      const deadline = Date.now() + 10_000;
      for (;;) {
        try {
          await store.ping();
          break;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          // A refused call can settle without any I/O: give the client's reconnect a turn of the event loop.
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      assert.deepEqual(await store.getPosition(event, a), { position: 1, entryTime: 5 });
      assert.equal(await store.incrementServing(event, 1, 7), 1);
    } finally {
      await store.close();
    }
  });
});
