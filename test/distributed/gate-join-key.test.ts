// The gate's join carries an Idempotency-Key (issue 35): a visitor whose join through the gate was refused with a
// 503 after it took effect — its replica wait failed (the replica paused with SIGSTOP) but the primary applied
// it — and who asks again (a reload) gets the place the refused join made, not a second one. The key travels in
// the gate's join cookie, set on the 503 itself and cleared once the place cookie holds the place. A visitor
// without that cookie (another browser) is another join.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { ChildNode } from '../support/child-node.ts';
import { freePort, startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { CookieJar, startOrigin, type Origin } from '../gate/support.ts';
import { ADMIN_TOKEN, freshPrefix, json, startNodes, stopNodes, waitFor } from './fleet.ts';

const JSON_ACCEPT = { accept: 'application/json' };

describe('the gate\'s join with an Idempotency-Key (Redis, --redis-min-replicas 1)', () => {
  let primary: RedisServer;
  let replica: RedisServer;
  let origin: Origin;
  let node: ChildNode;
  let gate: string;
  let dir: string;

  before(async () => {
    primary = await startRedisServer();
    replica = await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
    const client = new Redis(replica.url);
    await waitFor('the replica in sync', async () => /master_link_status:up/.test(await client.info('replication')), 15_000);
    client.disconnect();
    origin = await startOrigin();
    dir = mkdtempSync(join(tmpdir(), 'anteroom-gate-key-'));
    const config = join(dir, 'rooms.json');
    writeFileSync(config, JSON.stringify({ events: [{ event_id: 'Shop', gate: { origin: origin.url, routes: [{ path: '/' }] } }] }));
    const gatePort = await freePort();
    gate = `http://127.0.0.1:${gatePort}`;
    [node] = (await startNodes(1, primary.url, [
      '--redis-key-prefix', freshPrefix(), '--admin-token', ADMIN_TOKEN, '--redis-min-replicas', '1', '--redis-replica-timeout-ms', '500',
      '--gate-port', String(gatePort), '--config', config,
    ])) as [ChildNode];
  });
  after(async () => {
    await stopNodes(node ? [node] : []);
    await replica?.kill('SIGCONT');
    await primary?.destroy();
    await replica?.destroy();
    await origin?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const queueLength = async () => {
    const waiting = await json<{ waiting_num: number }>(`${node.url}/waiting_num?event_id=Shop`);
    const serving = await json<{ serving_counter: number }>(`${node.url}/serving_num?event_id=Shop`);
    return waiting.body.waiting_num + serving.body.serving_counter;
  };

  it('a gate join refused after it took effect: the visitor\'s next request gets that place, one place in all', async () => {
    const start = await queueLength();
    const visitor = new CookieJar();
    await replica.kill('SIGSTOP');
    const refused = await visitor.fetch(`${gate}/shop`, { headers: JSON_ACCEPT });
    assert.equal(refused.status, 503, await refused.text());
    assert.ok(visitor.cookies.has('anteroom_join'), 'the 503 carries the join cookie');
    assert.match(visitor.attributes.get('anteroom_join') ?? '', /HttpOnly/i);
    assert.ok(!visitor.cookies.has('anteroom_place'), 'no place cookie on a refused join');
    await replica.kill('SIGCONT');
    // The refused join took a place on the primary (its replica wait failed after the script ran).
    await waitFor('the refused join to be readable', async () => ((await queueLength()) === start + 1 ? true : null), 15_000, 100);
    const retried = await waitFor('the retry to be answered', async () => {
      const reply = await visitor.fetch(`${gate}/shop`, { headers: JSON_ACCEPT });
      return reply.status === 200 ? ((await reply.json()) as { status: string; queue_number: number }) : null;
    }, 15_000, 100);
    assert.equal(retried.status, 'queued');
    assert.equal(retried.queue_number, start + 1, 'the retry holds the place the refused join made');
    assert.equal(await queueLength(), start + 1, 'one place, not two');
    assert.ok(visitor.cookies.has('anteroom_place'));
    assert.ok(!visitor.cookies.has('anteroom_join'), 'the join cookie is cleared once the place cookie holds the place');
    // Another visitor (no join cookie) is another join.
    const other = await new CookieJar().fetch(`${gate}/shop`, { headers: JSON_ACCEPT });
    assert.equal(((await other.json()) as { queue_number: number }).queue_number, start + 2);
  });
});
