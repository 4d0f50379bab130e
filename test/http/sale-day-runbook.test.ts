// docs/rooms.md "Sale day: a runbook", walked end to end against a real node on each store (SQLite on disk,
// Redis): the room created the day before with the runbook's own settings, the commitment published, the
// pre-queue watched grow (prequeue_num in the figures, anteroom_prequeue_waiting in /metrics, while VWR's
// waiting_num stays what VWR clients expect), the draw at the start checked with `anteroom verify-draw`, the
// pace raised live, pause and resume, close, the after-event report, the end, and the room deleted.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { killWithTest } from '../support/children.ts';
import { read } from '../support/api-calls.ts';
import { startTestNode, TestClock, type TestNode } from '../support/node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

const BIN = fileURLToPath(new URL('../../bin/anteroom.js', import.meta.url));
const at = (iso: string) => Date.parse(iso);

async function verifyDraw(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = killWithTest(spawn(process.execPath, [BIN, 'verify-draw', ...args], { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] }));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

for (const storeKind of ['sqlite', 'redis'] as const) describe(`the sale-day runbook (${storeKind} store)`, { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-runbook-'));
  let redis: RedisServer | undefined;
  let node: TestNode;
  const visitors: string[] = [];

  before(async () => {
    if (storeKind === 'redis') redis = await startRedisServer();
    const store = redis ? { kind: 'redis' as const, url: redis.url } : { kind: 'sqlite' as const, path: join(dir, 'anteroom.db') };
    // The day before the drop.
    node = await startTestNode({ store, dataDir: dir }, { clock: new TestClock(at('2026-11-24T15:00:00Z')) });
  });
  after(async () => {
    await node?.stop();
    await redis?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const room = async () => (await read<Record<string, unknown>>(node.admin('GET', '/rooms/Drop'))).body;
  const figures = async () => (await read<Record<string, number | string>>(node.admin('GET', '/rooms/Drop/figures'))).body;
  const prequeueMetric = async () => {
    const text = await (await node.get('/metrics')).text();
    const line = text.split('\n').find((l) => l.startsWith('anteroom_prequeue_waiting{event_id="Drop"}'));
    return line === undefined ? undefined : Number(line.split(' ').at(-1));
  };
  const waitingNum = async () => (await read<{ waiting_num: number }>(node.get('/waiting_num?event_id=Drop'))).body.waiting_num;
  const patch = async (body: unknown) => assert.equal((await node.admin('PATCH', '/rooms/Drop', body)).status, 200);
  const join_ = () => read<{ api_request_id?: string; error?: string }>(node.post('/assign_queue_num', { event_id: 'Drop' }));

  it('the day before: the room with its schedule, phase "before"; the commitment published', async () => {
    // Step 2, the runbook's body as written.
    const put = await node.admin('PUT', '/rooms/Drop', {
      admission: 'automatic', new_users_per_minute: 60, total_active_users: 300,
      queue_position_expiry_period: 300, validity_period: 1800,
      prequeue_start_time: '2026-11-25T09:30:00Z', event_start_time: '2026-11-25T10:00:00Z',
      event_end_time: '2026-11-25T14:00:00Z', shuffle_at_event_start: true,
    });
    assert.equal(put.status, 201, await put.text());
    assert.equal((await room()).phase, 'before');
    // Step 4: the commitment, and when it was published.
    const draw = (await read<{ commitment: string; committed_at: string }>(node.get('/draw?event_id=Drop'))).body;
    assert.match(draw.commitment, /^[0-9a-f]{64}$/);
    assert.equal(draw.committed_at, '2026-11-24T15:00:00.000Z');
    assert.equal((await join_()).status, 403, 'joins are refused before the pre-queue opens');
  });

  it('09:30: the pre-queue opens; the operator watches it grow in the figures and /metrics', async () => {
    node.clock.ms = at('2026-11-25T09:30:00Z');
    assert.equal((await room()).phase, 'prequeue');
    for (let i = 0; i < 25; i++) {
      const res = await join_();
      assert.equal(res.status, 200);
      visitors.push(res.body.api_request_id as string);
    }
    assert.equal((await node.post('/leave_queue', { event_id: 'Drop', request_id: visitors.pop() })).status, 200);
    const f = await figures();
    assert.equal(f.prequeue_num, 24);
    assert.equal(f.in_line, 0, 'nobody has a position yet');
    assert.equal(f.waiting_num, 0, "VWR's waiting_num counts positions only");
    assert.equal(await waitingNum(), 0);
    assert.equal(await prequeueMetric(), 24);
    await node.room.reports.recordHistory(86_400);
  });

  it('10:00: the draw gives everyone a place; anyone checks it with verify-draw', async () => {
    node.clock.ms = at('2026-11-25T10:00:00Z');
    while (!(await node.room.draws.drawDone('Drop'))) await node.room.draws.runDraws();
    const f = await figures();
    assert.equal(f.prequeue_num, 0);
    assert.equal(f.waiting_num, 24);
    assert.equal(await waitingNum(), 24);
    assert.equal(await prequeueMetric(), 0);
    const draw = (await read<{ commitment: string; committed_at: string; drawn_at: string; entries: string[] }>(node.get('/draw?event_id=Drop'))).body;
    assert.equal(draw.entries.length, 24);
    assert.equal(draw.committed_at, '2026-11-24T15:00:00.000Z');
    assert.equal(draw.drawn_at, '2026-11-25T10:00:00.000Z');
    const checked = await verifyDraw(['--public-url', node.url, '--event-id', 'Drop', '--request-id', visitors[5]!, '--commitment', draw.commitment]);
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(checked.stdout, /first published at 2026-11-24T15:00:00\.000Z, before the draw at 2026-11-25T10:00:00\.000Z/);
    assert.match(checked.stdout, /\/queue_num gives the same position/);
    await node.room.reports.recordHistory(86_400);
  });

  it('during the sale: the pace raised live; pause and resume; sold out: close', async () => {
    node.clock.ms = at('2026-11-25T10:05:00Z');
    await patch({ new_users_per_minute: 120 });
    assert.equal((await room()).new_users_per_minute, 120);
    await patch({ state: 'paused' });
    assert.equal((await room()).phase, 'paused');
    assert.equal((await join_()).status, 200, 'joins still queue while paused');
    await patch({ state: 'open' });
    assert.equal((await room()).phase, 'open');
    await patch({ state: 'closed' });
    const refused = await join_();
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error, 'Waiting room is closed');
  });

  it('after: the report shows the pre-queue and the line; 14:00 the room ends; DELETE removes it', async () => {
    const report = (await read<{ totals: Record<string, number>; minutes: Record<string, number>[] }>(
      node.admin('GET', `/rooms/Drop/report?from=${at('2026-11-25T09:00:00Z') / 1000}&to=${at('2026-11-25T10:10:00Z') / 1000}`),
    )).body;
    assert.deepEqual(report.minutes.map((m) => [m.prequeue, m.waiting]), [[24, 0], [0, 24]]);
    assert.equal(report.totals.peak_prequeue, 24);
    node.clock.ms = at('2026-11-25T14:00:01Z');
    await patch({ state: 'open' });
    assert.equal((await room()).phase, 'ended');
    assert.equal((await node.admin('DELETE', '/rooms/Drop')).status, 200);
    assert.equal((await node.admin('GET', '/rooms/Drop')).status, 404);
  });
});
