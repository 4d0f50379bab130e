// `anteroom loadtest` against a room that runs its sale by itself (docs/rooms.md): automatic admission with a
// rate and a capacity, a pre-queue drawn at the start, and a pause in the middle, on one node with the embedded
// store and on three nodes sharing one Redis (the visitors on one node, the admission ticks on any of them). The
// room verdicts must be there and hold; what makes each of them fail is in room-verdicts.test.ts.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startNode, type AnteroomNode } from '../../src/app.ts';
import { parseLoadTestOptions } from '../../src/loadtest/options.ts';
import { runLoadTest, type LoadTestResult } from '../../src/loadtest/run.ts';
import { formatSummary } from '../../src/loadtest/summary.ts';
import { ADMIN_TOKEN, freshPrefix, startNodes, stopNodes, waitFor } from '../distributed/fleet.ts';
import type { ChildNode } from '../support/child-node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { TEST_CREDENTIALS, testConfig } from '../support/node.ts';

const ROOM = {
  admission: 'automatic',
  new_users_per_minute: 6000, // 100 a second
  total_active_users: 40,
  enable_queue_position_expiry: true,
  queue_position_expiry_period: 60,
};

async function putRoom(privateUrl: string, token: string, eventId: string): Promise<void> {
  const response = await fetch(`${privateUrl}/rooms/${eventId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(ROOM),
  });
  assert.ok(response.status === 200 || response.status === 201, `PUT room: ${response.status} ${await response.text()}`);
}

async function getRoom(privateUrl: string, token: string, eventId: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${privateUrl}/rooms/${eventId}`, { headers: { authorization: `Bearer ${token}` } });
  return (await response.json()) as Record<string, unknown>;
}

function run(target: string, privateTarget: string, adminToken: string, eventId: string) {
  return runLoadTest(
    parseLoadTestOptions({
      target,
      privateTarget,
      eventId,
      adminToken,
      visitors: '240',
      arrivalRate: '80/s',
      pollInterval: '100ms',
      sessionTime: '300ms',
      prequeue: '40',
      pauseAt: '3s',
      pauseFor: '3s',
      reclaims: '1',
      duration: '90s',
      reset: true,
    }),
  );
}

function assertRoomRun(result: LoadTestResult): void {
  const s = result.summary;
  const failing = result.verdicts.filter((v) => !v.ok).map((v) => `${v.name}: ${v.detail} ${v.examples.join('; ')}`);
  assert.deepEqual(failing, []);
  assert.equal(s.ended_by, 'journey');
  assert.deepEqual(s.visitors, { planned: 240, joined: 240, placed: 240, served: 240, done: 240, failed: 0, unfinished: 0 });
  assert.deepEqual(s.plan.admission, { by: 'room', new_users_per_minute: 6000, total_active_users: 40 });
  assert.equal(s.latency_ms.increment_serving_counter?.count ?? 0, 0, 'nobody but the room moved the counter');
  assert.equal(s.latency_ms.update_session?.count, 240, 'every visitor ended its session');
  // No driver, no increments: the summary shows no admission → token figure rather than zeros.
  assert.equal(s.admission_to_token_ms.count, 0);
  assert.doesNotMatch(formatSummary(s), /admission → token/);
  assert.deepEqual(
    result.verdicts.map((v) => v.name).filter((name) => ['admission_rate', 'admission_capacity', 'paused_holds', 'draw_order'].includes(name)),
    ['admission_rate', 'admission_capacity', 'paused_holds', 'draw_order'],
  );
  const draw = s.verdicts.draw_order!.detail;
  const drawn = Number(/^(\d+) entries drawn/.exec(draw)?.[1]);
  assert.ok(drawn >= 40 && drawn < 240, draw);
  assert.match(s.verdicts.admission_capacity!.detail, /At most (\d+) visitors/);
  assert.ok(Number(/At most (\d+)/.exec(s.verdicts.admission_capacity!.detail)![1]) <= 40);
}

describe('load test of an automatic room with a pre-queue and a pause: one node, embedded store', () => {
  let node: AnteroomNode;
  let dataDir: string;
  let result: LoadTestResult;
  before(async () => {
    const base = testConfig();
    dataDir = base.dataDir;
    const config = { ...base, store: { kind: 'sqlite' as const, path: joinPath(dataDir, 'anteroom.db') } };
    node = await startNode(config, { credentials: TEST_CREDENTIALS });
    await putRoom(node.privateUrl, TEST_CREDENTIALS.adminToken!, 'Drop');
    result = await run(node.publicUrl, node.privateUrl, TEST_CREDENTIALS.adminToken!, 'Drop');
  });
  after(async () => {
    await node?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('every visitor goes through; the rate, capacity, pause and draw verdicts are there and hold', () => assertRoomRun(result));

  it('the room gets back the settings the run changed', async () => {
    const room = await getRoom(node.privateUrl, TEST_CREDENTIALS.adminToken!, 'Drop');
    assert.equal(room.state, 'open');
    assert.equal(room.prequeue_start_time, undefined);
    assert.equal(room.event_start_time, undefined);
    assert.equal(room.shuffle_at_event_start ?? false, false);
  });
});

describe('load test of an automatic room with a pre-queue and a pause: three nodes on one Redis', () => {
  let redis: RedisServer;
  let nodes: ChildNode[];
  let result: LoadTestResult;
  before(async () => {
    redis = await startRedisServer();
    nodes = await startNodes(3, redis.url, ['--redis-key-prefix', freshPrefix(), '--admin-token', ADMIN_TOKEN]);
    await putRoom(`${nodes[1]!.url}/private`, ADMIN_TOKEN, 'Drop');
    // Every node serves the new room within 2 s (it polls the rooms version every second).
    for (const node of nodes) {
      await waitFor(`${node.url} to serve the room`, async () => (await fetch(`${node.url}/serving_num?event_id=Drop`)).status === 200, 5000, 50);
    }
    result = await run(nodes[0]!.url, `${nodes[2]!.url}/private`, ADMIN_TOKEN, 'Drop');
  });
  after(async () => {
    await stopNodes(nodes ?? []);
    await redis?.destroy();
  });

  it('every visitor goes through; the rate, capacity, pause and draw verdicts are there and hold', () => assertRoomRun(result));
});
