// After-event reports: each room's counters sampled once a minute into the store (the history job), read back
// at GET /private/rooms/{id}/report as movements per minute, as JSON or CSV; kept across a restart, trimmed to
// the retention period.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { join as joinQueue } from '../support/api-calls.ts';
import { startTestNode, TEST_CREDENTIALS, TestClock } from '../support/node.ts';

const ADMIN = { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' };

describe('after-event report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-report-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reports arrivals, admissions and the waiting line minute by minute, as JSON and CSV, after a restart', async () => {
    const store = { kind: 'sqlite' as const, path: join(dir, 'report.db') };
    const clock = new TestClock(Date.UTC(2026, 10, 24, 12, 0, 0));
    const start = clock.now() / 1000;
    let node = await startTestNode({ store, dataDir: dir }, { clock });
    try {
      for (let i = 0; i < 3; i++) await joinQueue(node);
      await node.room.recordHistory(86_400);
      clock.advance(60);
      await fetch(`${node.privateUrl}/increment_serving_counter`, { method: 'POST', headers: ADMIN, body: JSON.stringify({ event_id: 'Sample', increment_by: 2 }) });
      await joinQueue(node);
      await node.room.recordHistory(86_400);
    } finally {
      await node.close();
    }
    node = await startTestNode({ store, dataDir: dir }, { clock });
    try {
      const base = `${node.privateUrl}/rooms/Sample/report?from=${start}&to=${start + 120}`;
      const json = await fetch(base, { headers: ADMIN });
      assert.equal(json.status, 200);
      const report = (await json.json()) as { minutes: Record<string, number>[] };
      assert.deepEqual(
        report.minutes.map((m) => [m.minute! - start, m.arrivals, m.admissions, m.waiting]),
        [[0, 3, 0, 3], [60, 1, 2, 2]],
      );
      const csv = await fetch(`${base}&format=csv`, { headers: ADMIN });
      assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
      const lines = (await csv.text()).trim().split('\n');
      assert.equal(lines[0], 'minute,arrivals,admissions,claims,leaves,completions,abandons,expiries,waiting,active_sessions');
      assert.equal(lines.length, 3);
      assert.ok(lines[2]!.startsWith(`${start + 60},1,2,`));
      // Only the second minute: its movements still come from the sample before it.
      const later = (await (await fetch(`${node.privateUrl}/rooms/Sample/report?from=${start + 60}&to=${start + 120}`, { headers: ADMIN })).json()) as {
        minutes: Record<string, number>[];
      };
      assert.deepEqual(later.minutes.map((m) => [m.arrivals, m.admissions]), [[1, 2]]);
      assert.equal((await fetch(`${node.privateUrl}/rooms/Nope/report`, { headers: ADMIN })).status, 404);
    } finally {
      await node.close();
    }
  });

  it('samples older than the retention period are dropped', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 24, 12, 0, 0));
    const start = clock.now() / 1000;
    const node = await startTestNode({}, { clock });
    try {
      await node.room.recordHistory(120);
      clock.advance(180);
      await node.room.recordHistory(120);
      const report = (await (await fetch(`${node.privateUrl}/rooms/Sample/report?from=${start}&to=${start + 180}`, { headers: ADMIN })).json()) as {
        minutes: { minute: number }[];
      };
      assert.deepEqual(report.minutes.map((m) => m.minute - start), [180]);
    } finally {
      await node.close();
    }
  });
});
