// The presence part of the store contract over Redis Sentinel (issue 34 item 5): the store a node opens from a
// redis-sentinel:// URL (open-store.ts: the Sentinel client, the hot-read cache over it), against a real
// redis-server primary with a replica and a real redis-sentinel. Standalone and Cluster run it with the whole
// contract (redis.test.ts), SQLite in sqlite.test.ts, the AWS composite store in test/aws/composite-store.test.ts.

import { after, before, describe } from 'node:test';
import { parseStoreLocation } from '../../src/config/config.ts';
import { openStore } from '../../src/compose/open-store.ts';
import type { Store } from '../../src/domain/ports/store.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { startSentinel, type Sentinel } from '../support/redis-sentinel.ts';
import { runPresenceContract } from './presence-contract.ts';

const name = 'anteroom-presence';
let primary: RedisServer;
let replica: RedisServer;
let sentinel: Sentinel;
const stores: Store[] = [];

before(async () => {
  primary = await startRedisServer();
  replica = await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
  sentinel = await startSentinel({ primaryPort: primary.port, name });
});
after(async () => {
  for (const store of stores) await store.close();
  await sentinel?.destroy();
  await replica?.destroy();
  await primary?.destroy();
});

describe('store contract (presence): redis sentinel', () => {
  runPresenceContract(async () => {
    const store = await openStore({
      store: parseStoreLocation(`redis-sentinel://127.0.0.1:${sentinel.port}/${name}`, '/tmp'),
      sqliteSynchronous: 'full',
      redisKeyPrefix: `ar-presence-${process.pid}:`,
    });
    stores.push(store);
    return store;
  });
});
