// Opening the store a configuration names: Redis URLs (one server, TLS, a cluster seed list), the key
// prefix, the hot-read cache in front of Redis only, and a clear failure when Redis cannot be reached.

import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseStoreLocation } from '../../src/config/config.ts';
import { HotReadCache } from '../../src/store/hot-read-cache.ts';
import {
  checkRedisKeyPrefix,
  describeStoreLocation,
  isSharedStore,
  openStore,
  parseClusterUrl,
  parseSentinelUrl,
} from '../../src/compose/open-store.ts';
import { RedisStore } from '../../src/store/redis/redis-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

const redisConfig = (url: string, extra: { hotReadTtlMs?: number; redisKeyPrefix?: string } = {}) => ({
  store: parseStoreLocation(url, '/tmp'),
  sqliteSynchronous: 'full' as const,
  ...extra,
});

describe('store locations', () => {
  it('accepts redis://, rediss://, redis-cluster:// and rediss-cluster:// URLs, and never echoes a password', () => {
    for (const url of ['redis://h:6379', 'rediss://u:p@h:6380/2', 'redis-cluster://h1:1,h2:2', 'rediss-cluster://h1:1']) {
      assert.deepEqual(parseStoreLocation(url, '/tmp'), { kind: 'redis', url });
    }
    assert.throws(() => parseStoreLocation('redis:/user:s3cret@host', '/tmp'), (error: Error) => !error.message.includes('s3cret'));
  });

  it('parses a cluster seed list with credentials and IPv6 addresses', () => {
    assert.deepEqual(parseClusterUrl('redis-cluster://10.0.0.1:7000,10.0.0.2:7001'), {
      nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }],
      username: undefined,
      password: undefined,
    });
    assert.deepEqual(parseClusterUrl('rediss-cluster://app:p%40ss@cache.example:6379,[::1]:7000/'), {
      nodes: [{ host: 'cache.example', port: 6379 }, { host: '::1', port: 7000 }],
      username: 'app',
      password: 'p@ss',
    });
    assert.deepEqual(parseClusterUrl('redis-cluster://:pw@h:1').password, 'pw');
    assert.throws(() => parseClusterUrl('redis-cluster://h1,h2:2'), /"h1" is not host:port/);
    assert.throws(() => parseClusterUrl('redis-cluster://u:secret@h:99999'), (error: Error) => !error.message.includes('secret'));
  });

  it('parses a Sentinel list and the name of the primary; refuses one without a name, never echoing a password', () => {
    for (const url of ['redis-sentinel://h1:26379,h2:26379/mymaster', 'rediss-sentinel://u:p@h:1/m']) {
      assert.deepEqual(parseStoreLocation(url, '/tmp'), { kind: 'redis', url });
    }
    assert.deepEqual(parseSentinelUrl('redis-sentinel://app:p%40ss@10.0.0.1:26379,[::1]:26380/my%20primary'), {
      nodes: [{ host: '10.0.0.1', port: 26379 }, { host: '::1', port: 26380 }],
      username: 'app',
      password: 'p@ss',
      masterName: 'my primary',
    });
    assert.throws(() => parseSentinelUrl('redis-sentinel://u:secret@h:26379'), (error: Error) =>
      /<master name>/.test(error.message) && !error.message.includes('secret'),
    );
  });

  it('refuses a key prefix that would break the per-event hash tags', () => {
    assert.equal(checkRedisKeyPrefix('tenant-a:'), 'tenant-a:');
    assert.equal(checkRedisKeyPrefix(''), '');
    assert.throws(() => checkRedisKeyPrefix('{shared}:'), /"\{" or "\}"/);
    assert.throws(() => checkRedisKeyPrefix('a b'), /without spaces/);
  });

  it('names a store without its credentials, and knows which stores several processes can share', () => {
    assert.equal(describeStoreLocation({ store: { kind: 'redis', url: 'redis://u:pw@h:1/0' } }), 'redis://h:1/0');
    assert.equal(describeStoreLocation({ store: { kind: 'sqlite', path: '/d/a.db' } }), 'sqlite:/d/a.db');
    assert.equal(isSharedStore({ store: { kind: 'redis', url: 'redis://h:1' } }), true);
    assert.equal(isSharedStore({ store: { kind: 'sqlite', path: '/d/a.db' } }), false);
    assert.equal(isSharedStore({ store: { kind: 'memory' } }), false);
  });
});

describe('openStore on Redis', () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedisServer({ appendonly: false });
  });
  after(() => redis.destroy());

  it('puts the hot-read cache in front of Redis (not of SQLite), unless its TTL is 0', async () => {
    const cached = await openStore(redisConfig(redis.url, { redisKeyPrefix: 'open-test:' }));
    const direct = await openStore(redisConfig(redis.url, { hotReadTtlMs: 0 }));
    const sqlite = await openStore({ store: { kind: 'memory' }, sqliteSynchronous: 'full' });
    try {
      assert.ok(cached instanceof HotReadCache);
      assert.equal(cached.description, redis.url);
      assert.ok(direct instanceof RedisStore);
      assert.ok(sqlite instanceof SqliteStore);
      assert.equal(await cached.incrementServing('E', 3, 1), 3);
      assert.equal(await cached.getServingCounter('E'), 3);
    } finally {
      await Promise.all([cached.close(), direct.close(), sqlite.close()]);
    }
  });

  it('fails at start with a clear message when Redis cannot be reached', async () => {
    // A port that accepts nothing: listen, note the port, close.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 1));
      });
    });
    // Nothing will ever listen there: the open ends only because it gives up after connectWaitMs.
    const started = Date.now();
    await assert.rejects(
      openStore(redisConfig(`redis://:hunter2@127.0.0.1:${port}`), { connectWaitMs: 300 }),
      (error: Error) =>
        error.message.startsWith(`cannot reach the store redis://127.0.0.1:${port}`) && !error.message.includes('hunter2'),
    );
    assert.ok(Date.now() - started >= 300, 'it kept trying for connectWaitMs before giving up');
  });
});
