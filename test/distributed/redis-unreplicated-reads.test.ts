// An answer read from an unreplicated write waits like a write (issue 35, item 2). With --redis-min-replicas 1
// and the replication link frozen by a proxy: a claim on node A writes the token set on the primary, its WAIT
// fails and A answers 503; the same claim on node B finds that token set and writes nothing. B must not answer
// 200 from state the replicas do not hold: once the primary dies and the replica is promoted, a token set B
// acknowledged would be gone, and claiming again would issue another one. Counted: acknowledged claims that the
// promoted replica does not answer with the same token (lost) — 0. The same for a place read back after a join.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { ChildNode } from '../support/child-node.ts';
import type { RedisServer } from '../support/redis-server.ts';
import type { FreezableProxy } from '../support/redis-sentinel.ts';
import { startReplicatedRedis, type ReplicatedRedis } from '../support/redis-replication.ts';
import { ADMIN, ADMIN_TOKEN, call, freshPrefix, join, json, metricValue, startNodes, stopNodes, waitFor } from './fleet.ts';

const VISITORS = 20;

const claim = (url: string, id: string) =>
  call(`${url}/generate_token`, { method: 'POST', body: JSON.stringify({ event_id: 'Sample', request_id: id }) });

describe('a claim answered from a token set that only the primary holds (--redis-min-replicas 1, link frozen)', () => {
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

  it('node B answers 503 like node A, never a 200 that the promoted replica does not know: 0 lost', async () => {
    const args = ['--redis-key-prefix', prefix, '--admin-token', ADMIN_TOKEN, '--redis-min-replicas', '1', '--redis-replica-timeout-ms', '200'];
    const [a, b] = await startNodes(2, primary.url, args);
    nodes.push(a!, b!);
    const ids: string[] = [];
    for (let i = 0; i < VISITORS + 1; i++) ids.push((await join(a!.url)) as string);
    assert.ok(ids.every(Boolean), 'joins before the cut');
    const served = await json<{ serving_num: number }>(`${a!.url}/private/increment_serving_counter`, {
      method: 'POST', headers: ADMIN, body: JSON.stringify({ event_id: 'Sample', increment_by: VISITORS + 1 }),
    });
    assert.equal(served.status, 200);
    const readBack = ids.pop() as string;

    proxy.freeze();
    const acknowledged = new Map<string, string>();
    let refusedOnA = 0;
    for (const id of ids) {
      const first = await claim(a!.url, id);
      if (first?.status === 503) refusedOnA += 1;
      const second = await claim(b!.url, id);
      if (second?.status === 200) acknowledged.set(id, (JSON.parse(second.text) as { access_token: string }).access_token);
      else assert.equal(second?.status, 503, `B answered ${second?.status} ${second?.text}`);
    }
    assert.equal(refusedOnA, VISITORS, 'every claim on A was refused (its WAIT failed): the scenario happened');
    // A place that B reads while the link is frozen: the join was replicated before the cut, so B may answer it.
    const place = await call(`${b!.url}/queue_num?event_id=Sample&request_id=${readBack}`);
    assert.ok(place && [200, 503].includes(place.status));

    await primary.kill('SIGKILL');
    await stopNodes(nodes.splice(0));
    const promote = new Redis(replica.url);
    try {
      await promote.call('REPLICAOF', 'NO', 'ONE');
    } finally {
      promote.disconnect();
    }
    const [successor] = await startNodes(1, replica.url, ['--redis-key-prefix', prefix, '--admin-token', ADMIN_TOKEN]);
    nodes.push(successor!);
    let lost = 0;
    for (const [id, token] of acknowledged) {
      const again = await claim(successor!.url, id);
      if (again?.status !== 200 || (JSON.parse(again.text) as { access_token: string }).access_token !== token) lost += 1;
    }
    assert.equal(lost, 0, `${lost} of ${acknowledged.size} claims acknowledged by B were lost in the failover`);
  });
});

describe('a re-claim answered from memory waits like a write (--redis-min-replicas 1, issue 37)', () => {
  let redis: ReplicatedRedis | undefined;
  let primary: RedisServer;
  let proxy: FreezableProxy;
  const nodes: ChildNode[] = [];

  before(async () => {
    redis = await startReplicatedRedis({ linkProxy: true });
    primary = redis.primary;
    proxy = redis.proxy!;
  });
  after(async () => {
    await stopNodes(nodes);
    await redis?.destroy();
  });

  it('a set kept in memory is confirmed on the replicas: with the link cut, the re-claim is 503 like the routed one', async () => {
    const args = ['--redis-key-prefix', freshPrefix(), '--admin-token', ADMIN_TOKEN, '--redis-min-replicas', '1', '--redis-replica-timeout-ms', '200'];
    const [a] = await startNodes(1, primary.url, args);
    nodes.push(a!);
    const id = (await join(a!.url)) as string;
    const served = await json(`${a!.url}/private/increment_serving_counter`, {
      method: 'POST', headers: ADMIN, body: JSON.stringify({ event_id: 'Sample', increment_by: 1 }),
    });
    assert.equal(served.status, 200);
    const issued = await claim(a!.url, id);
    assert.equal(issued?.status, 200, issued?.text);
    const routed = () => metricValue(a!.url, 'anteroom_http_request_duration_seconds_count', { route: '/generate_token', method: 'POST' });
    const again = await waitFor('a re-claim answered from memory', async () => {
      const before = await routed();
      const reply = await claim(a!.url, id);
      return (await routed()) === before ? reply : null;
    });
    const token = (text: string) => (JSON.parse(text) as { access_token: string }).access_token;
    assert.equal(token(again.text), token(issued!.text));

    proxy.freeze();
    const cut = await claim(a!.url, id);
    assert.equal(cut?.status, 503, `answered ${cut?.status} ${cut?.text} from state it did not confirm on a replica`);
  });
});
