// Failover of a Redis primary (issue 14): with --redis-min-replicas a 200 means the write is on a replica,
// so promoting that replica loses no acknowledged join, even when the replication link was cut before the
// primary died; and with --store redis-sentinel://… nodes follow a Sentinel failover without a restart.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { ChildNode } from '../support/child-node.ts';
import { startReplicatedRedis, type ReplicatedRedis } from '../support/redis-replication.ts';
import type { RedisServer } from '../support/redis-server.ts';
import { startSentinel, type FreezableProxy, type Sentinel } from '../support/redis-sentinel.ts';
import { ADMIN_TOKEN, freshPrefix, join, joinStorm, positionsOf, startNodes, stopNodes, waitFor } from './fleet.ts';

describe('a primary killed after its replication link was cut (--redis-min-replicas 1)', () => {
  let primary: RedisServer;
  let replica: RedisServer;
  let proxy: FreezableProxy;
  let redis: ReplicatedRedis | undefined;
  const nodes: ChildNode[] = [];
  const prefix = freshPrefix();

  before(async () => {
    redis = await startReplicatedRedis({ linkProxy: true });
    ({ primary, replica } = redis);
    proxy = redis.proxy as FreezableProxy;
  });
  after(async () => {
    await stopNodes(nodes);
    await redis?.destroy();
  });

  it('0 acknowledged joins lost and 0 positions handed out twice once the replica is promoted', async () => {
    const minReplicas = process.env.FAILOVER_WITHOUT_WAIT ? [] : ['--redis-min-replicas', '1', '--redis-replica-timeout-ms', '200'];
    nodes.push(...(await startNodes(2, primary.url, ['--redis-key-prefix', prefix, '--admin-token', ADMIN_TOKEN, ...minReplicas])));
    const urls = nodes.map((node) => node.url);
    const storm = joinStorm(() => urls, 16);
    try {
      await waitFor('joins before the cut', () => storm.acknowledged.length >= 300, 20_000, 5);
      proxy.freeze();
      const atCut = storm.acknowledged.length;
      // With WAIT, joins now fail (503); without, they would go on being acknowledged by the primary alone.
      await waitFor('joins refused (or acknowledged) after the cut', () => storm.failures() >= 50 || storm.acknowledged.length >= atCut + 300, 20_000, 5);
      await primary.kill('SIGKILL');
    } finally {
      await storm.stop();
    }
    await stopNodes(nodes.splice(0));

    const promote = new Redis(replica.url);
    try {
      await promote.call('REPLICAOF', 'NO', 'ONE');
    } finally {
      promote.disconnect();
    }
    const [successor] = await startNodes(1, replica.url, ['--redis-key-prefix', prefix, '--admin-token', ADMIN_TOKEN]);
    nodes.push(successor!);
    // positionsOf fails on the first acknowledged request ID the promoted replica does not know.
    const positions = await positionsOf([successor!.url], storm.acknowledged);
    assert.equal(new Set(positions).size, positions.length, 'two acknowledged joins share a position');
    const later: number[] = [];
    for (let i = 0; i < 20; i++) {
      const id = await join(successor!.url);
      assert.ok(id, 'joins work on the promoted replica');
      later.push(...(await positionsOf([successor!.url], [id])));
    }
    const promised = new Set(positions);
    assert.deepEqual(later.filter((position) => promised.has(position)), [], 'a position promised before the failover was handed out again');
  });
});

describe('--store redis-sentinel://… follows a Sentinel failover', () => {
  let primary: RedisServer;
  let redis: ReplicatedRedis | undefined;
  let sentinel: Sentinel;
  let node: ChildNode | undefined;
  const name = 'anteroom-test';

  before(async () => {
    redis = await startReplicatedRedis({ replicas: 2 });
    primary = redis.primary;
    sentinel = await startSentinel({ primaryPort: primary.port, name });
  });
  after(async () => {
    await stopNodes(node ? [node] : []);
    await sentinel?.destroy();
    await redis?.destroy();
  });

  it('a node keeps serving after the primary is killed and a replica promoted, without a restart, and loses nothing acknowledged', async () => {
    const store = `redis-sentinel://127.0.0.1:${sentinel.port}/${name}`;
    node = (await startNodes(1, store, ['--redis-key-prefix', freshPrefix(), '--admin-token', ADMIN_TOKEN, '--redis-min-replicas', '1']))[0]!;
    const url = node.url;
    const storm = joinStorm(() => [url], 8);
    try {
      await waitFor('joins before the failover', () => storm.acknowledged.length >= 200, 20_000, 5);
      await primary.kill('SIGKILL');
      const atKill = storm.acknowledged.length;
      await waitFor('the Sentinel to promote a replica', async () => (await sentinel.primary()) !== `127.0.0.1:${primary.port}`, 30_000, 50);
      await waitFor('joins acknowledged after the failover', () => storm.acknowledged.length >= atKill + 200, 30_000, 5);
    } finally {
      await storm.stop();
    }
    assert.equal(node.process.exitCode, null, 'the node was never restarted');
    const positions = await positionsOf([url], storm.acknowledged);
    assert.equal(new Set(positions).size, positions.length, 'two acknowledged joins share a position');
  });
});
