// The composite store of the AWS deployment (Redis for counters and positions, DynamoDB for token records and
// sessions) passes the whole store contract, against a real redis-server and dynalite.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { newTokenRecord } from '../../src/domain/claims.ts';
import { CompositeStore } from '../../src/store/dynamodb/composite-store.ts';
import { TokenTable } from '../../src/store/dynamodb/token-table.ts';
import { RedisStore } from '../../src/store/redis/redis-store.ts';
import { startRedisServer } from '../support/redis-server.ts';
import { runStoreContract } from '../store/contract.ts';
import { startDynalite } from './local-aws.ts';

const [redis, dynamo] = await Promise.all([startRedisServer(), startDynalite()]);
const tableName = await dynamo.createTokenTable();
after(() => Promise.all([redis.destroy(), dynamo.close()]));

const keyPrefix = `ar-composite-${process.pid}:`;
const open = () =>
  new CompositeStore({
    redis: new RedisStore({ url: redis.url, keyPrefix, readyTimeoutMs: 5000 }),
    tokens: new TokenTable({ client: dynamo.client, tableName }),
  });

runStoreContract('redis + dynamodb (dynalite)', { create: async () => open() });

describe('composite store across its two backends', () => {
  it('a crash between the Redis claim and the DynamoDB write is completed by the retry, counted once', async () => {
    const store = open();
    const redisOnly = new RedisStore({ url: redis.url, keyPrefix });
    try {
      const event = `crash-${randomUUID()}`;
      const id = randomUUID();
      await store.assignPositions(event, [{ requestId: id, entryTime: 100 }]);
      await store.incrementServing(event, 1, 100);
      // Step 1 ran, then the process died before step 2.
      assert.equal((await redisOnly.claimTokenPosition(event, id)).outcome, 'claimed');
      assert.equal((await store.getClaimContext(event, id))?.token, null);
      const retry = await store.issueTokenIfAbsent(event, newTokenRecord({ requestId: id, position: 1, now: 150, validityPeriod: 60, issuer: 'i', kid: 'k' }));
      assert.equal(retry.outcome, 'issued');
      assert.equal((await store.getCounters(event)).tokens, 1);
      // The claimed position is never expired by the job, though it lay unclaimed in DynamoDB for a while.
      await store.syncExpirySwitch(event, true, 0);
      assert.equal((await store.advanceExpiry(event, 10_000, false, 10_000)).newlyExpiredUnclaimed, 0);
    } finally {
      await store.close();
      await redisOnly.close();
    }
  });

  it('a crash between closing the session and counting it is repaired by the next update_session', async () => {
    const store = open();
    const tokens = new TokenTable({ client: dynamo.client, tableName });
    try {
      const event = `close-${randomUUID()}`;
      const id = randomUUID();
      await store.assignPositions(event, [{ requestId: id, entryTime: 100 }]);
      await store.issueTokenIfAbsent(event, newTokenRecord({ requestId: id, position: 1, now: 100, validityPeriod: 60, issuer: 'i', kid: 'k' }));
      // Step 1 (DynamoDB) ran, the count in Redis did not.
      assert.equal((await tokens.close(event, 0, id, 1)).outcome, 'closed');
      assert.equal((await store.getCounters(event)).completed, 0);
      assert.equal(await store.closeSession(event, id, 1), false, 'the retry answers "already closed"');
      assert.equal((await store.getCounters(event)).completed, 1, 'and the count is repaired');
      assert.equal(await store.closeSession(event, id, 1), false);
      assert.equal((await store.getCounters(event)).completed, 1, 'only once');
    } finally {
      await store.close();
    }
  });

  it('token records of before a reset are never seen again, even for a request ID numbered again', async () => {
    const store = open();
    try {
      const event = `gen-${randomUUID()}`;
      const id = randomUUID();
      await store.assignPositionsIfAbsent(event, [{ requestId: id, entryTime: 1 }]);
      await store.issueTokenIfAbsent(event, newTokenRecord({ requestId: id, position: 1, now: 1, validityPeriod: 5, issuer: 'i', kid: 'k' }));
      await store.resetEvent(event);
      // A redelivered intake message numbers the same request ID again after the reset.
      await store.assignPositionsIfAbsent(event, [{ requestId: id, entryTime: 2 }]);
      assert.equal((await store.getClaimContext(event, id))?.token, null);
      assert.deepEqual(await store.listExpiredTokens(event, 1000, 10), []);
      const again = await store.issueTokenIfAbsent(event, newTokenRecord({ requestId: id, position: 1, now: 3, validityPeriod: 5, issuer: 'i', kid: 'k' }));
      assert.equal(again.outcome, 'issued');
      assert.equal(again.outcome === 'issued' && again.record.iat, 3);
    } finally {
      await store.close();
    }
  });
});
