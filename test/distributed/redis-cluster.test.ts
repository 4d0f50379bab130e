// A node on a 3-primary Redis Cluster (`--store redis-cluster://h1:p1,h2:p2,h3:p3`) serves two events whose
// keys live on different primaries: every key of an event carries the hash tag {eventId}, so each script
// touches one slot, wherever that slot lives. The whole visitor journey runs for both events.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { importJWK, jwtVerify } from 'jose';
import type { ChildNode } from '../support/child-node.ts';
import { startRedisCluster, type RedisTestCluster } from '../support/redis-server.ts';
import { ADMIN, ADMIN_TOKEN, call, freshPrefix, join, json, startNodes, stopNodes } from './fleet.ts';

/** The port of the primary serving `slot`, from CLUSTER SLOTS. */
function ownerOf(slots: [number, number, [string, number, ...unknown[]], ...unknown[]][], slot: number): number {
  const range = slots.find(([from, to]) => slot >= from && slot <= to);
  assert.ok(range, `slot ${slot} is not served`);
  return Number(range[2][1]);
}

describe('one node on a 3-primary Redis Cluster', () => {
  let cluster: RedisTestCluster;
  let node: ChildNode;
  let dir: string;
  const prefix = freshPrefix();
  const events: { id: string; primary: number }[] = [];

  before(async () => {
    cluster = await startRedisCluster();
    // Pick two event IDs whose hash tags map to slots on different primaries.
    const probe = new Redis(cluster.nodes[0]!.url);
    try {
      const slots = (await probe.call('CLUSTER', 'SLOTS')) as Parameters<typeof ownerOf>[0];
      for (let i = 0; events.length < 2; i++) {
        const id = `concert-${i}`;
        const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', `${prefix}{${id}}:c`));
        const primary = ownerOf(slots, slot);
        if (!events.some((event) => event.primary === primary)) events.push({ id, primary });
      }
    } finally {
      probe.disconnect();
    }
    dir = mkdtempSync(joinPath(tmpdir(), 'anteroom-cluster-'));
    const config = joinPath(dir, 'events.json');
    writeFileSync(config, JSON.stringify({ events: events.map((event) => ({ event_id: event.id })) }));
    node = (await startNodes(1, cluster.url, ['--redis-key-prefix', prefix, '--admin-token', ADMIN_TOKEN, '--config', config]))[0]!;
  });
  after(async () => {
    await stopNodes(node ? [node] : []);
    await cluster?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the visitor journey for two events whose keys live on different primaries', async () => {
    const url = node.url;
    assert.match(node.output(), /store\s+redis-cluster:\/\/127\.0\.0\.1:\d+,/);
    for (const { id: event } of events) {
      const ids = [(await join(url, event))!, (await join(url, event))!, (await join(url, event))!];
      assert.ok(ids.every(Boolean), `joins of ${event}`);
      for (const [i, id] of ids.entries()) {
        const position = await json<{ queue_number: number }>(`${url}/queue_num?event_id=${event}&request_id=${id}`);
        assert.equal(position.body.queue_number, i + 1);
      }
      const claim = (id: string) =>
        json<{ access_token: string; error?: string }>(`${url}/generate_token`, {
          method: 'POST', body: JSON.stringify({ event_id: event, request_id: id }),
        });
      assert.equal((await claim(ids[0]!)).status, 202, 'not served yet');
      const served = await json<{ serving_num: number }>(`${url}/private/increment_serving_counter`, {
        method: 'POST', headers: ADMIN, body: JSON.stringify({ event_id: event, increment_by: 2 }),
      });
      assert.equal(served.body.serving_num, 2);
      const token = await claim(ids[0]!);
      assert.equal(token.status, 200);
      assert.equal((await claim(ids[0]!)).body.access_token, token.body.access_token);
      assert.equal((await claim(ids[1]!)).status, 200);
      assert.equal((await claim(ids[2]!)).status, 202);

      const jwk = JSON.parse((await call(`${url}/public_key?event_id=${event}`))!.text) as Record<string, string>;
      const { payload } = await jwtVerify(token.body.access_token, await importJWK(jwk, 'RS256'), { audience: event });
      assert.deepEqual([payload.sub, payload.queue_position], [ids[0], 1]);

      // Reads that the hot-read cache serves: this node's own writes show at once.
      assert.deepEqual((await json(`${url}/serving_num?event_id=${event}`)).body, { serving_counter: 2 });
      assert.deepEqual((await json(`${url}/waiting_num?event_id=${event}`)).body, { waiting_num: 1 });
      assert.deepEqual((await json(`${url}/private/num_active_tokens?event_id=${event}`, { headers: ADMIN })).body, { active_tokens: 2 });
      const closed = await json(`${url}/private/update_session`, {
        method: 'POST', headers: ADMIN, body: JSON.stringify({ event_id: event, request_id: ids[0], status: 1 }),
      });
      assert.equal(closed.status, 200);
      assert.equal((await claim(ids[0]!)).status, 410, 'a closed session no longer gets its token');
    }
    assert.equal((await call(`${url}/readyz`))?.status, 200);

    // Each event's keys are on the primary its slot maps to, and on no other.
    for (const { id, primary } of events) {
      for (const server of cluster.nodes) {
        const inspector = new Redis(server.url);
        try {
          const keys = await inspector.keys(`${prefix}{${id}}:*`);
          if (server.port === primary) assert.ok(keys.length >= 5, `${id} has keys ${keys.join(', ')} on ${server.port}`);
          else assert.deepEqual(keys, [], `${id} has keys on ${server.port}, not its primary ${primary}`);
        } finally {
          inspector.disconnect();
        }
      }
    }
    assert.notEqual(events[0]!.primary, events[1]!.primary);
  });
});
