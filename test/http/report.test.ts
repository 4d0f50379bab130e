// After-event reports: each room's counters sampled once a minute into the store (the history job), read back
// at GET /private/rooms/{id}/report as movements per minute, as JSON or CSV; kept across a restart, trimmed to
// the retention period.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { join as joinQueue, read, serveUpTo } from '../support/api-calls.ts';
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
      await node.room.reports.recordHistory(86_400);
      clock.advance(60);
      await fetch(`${node.privateUrl}/increment_serving_counter`, { method: 'POST', headers: ADMIN, body: JSON.stringify({ event_id: 'Sample', increment_by: 2 }) });
      await joinQueue(node);
      await node.room.reports.recordHistory(86_400);
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
      assert.equal(
        lines[0],
        'minute,arrivals,admissions,claims,leaves,completions,abandons,expiries,waiting,active_sessions,serving_counter,' +
          'waits_measured,wait_p50_s,wait_p90_s,wait_p99_s,estimates_judged,estimate_error_p50_s,estimate_error_p90_s,prequeue,' +
          'present_waiting,absent_waiting,no_shows,late_arrivals',
      );
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

  it('reports presence each minute: present and absent waiting, no-shows, late arrivals (issue 34)', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 24, 12, 0, 0));
    const start = clock.now() / 1000;
    const node = await startTestNode({}, { clock });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(await joinQueue(node));
      const beat = (id: string) => read(node.get(`/queue_num?event_id=Sample&request_id=${id}&beat=1`));
      await beat(ids[1]!);
      await beat(ids[2]!);
      clock.advance(70);
      await beat(ids[2]!);
      // 1 never beat (present), 2 beat 70 s ago (absent: the default presence_timeout is 60), 3 beats.
      await node.room.reports.recordHistory(86_400);
      const report = (await (await fetch(`${node.privateUrl}/rooms/Sample/report?from=${start}&to=${start + 120}`, { headers: ADMIN })).json()) as {
        minutes: Record<string, number>[];
        totals: Record<string, number>;
      };
      assert.deepEqual(
        report.minutes.map((m) => [m.present_waiting, m.absent_waiting, m.no_shows, m.late_arrivals]),
        [[2, 1, 0, 0]],
      );
      assert.equal(report.totals.peak_absent_waiting, 1);
      assert.equal(report.totals.late_arrivals, 0);
    } finally {
      await node.close();
    }
  });

  it('samples older than the retention period are dropped', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 24, 12, 0, 0));
    const start = clock.now() / 1000;
    const node = await startTestNode({}, { clock });
    try {
      await node.room.reports.recordHistory(120);
      clock.advance(180);
      await node.room.reports.recordHistory(120);
      const report = (await (await fetch(`${node.privateUrl}/rooms/Sample/report?from=${start}&to=${start + 180}`, { headers: ADMIN })).json()) as {
        minutes: { minute: number }[];
      };
      assert.deepEqual(report.minutes.map((m) => m.minute - start), [180]);
    } finally {
      await node.close();
    }
  });

  it("reports the waits of the visitors admitted each minute and their turn estimates' errors", async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 24, 12, 0, 0));
    const start = clock.now() / 1000;
    const node = await startTestNode({}, { clock });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push(await joinQueue(node));
      await node.room.reports.recordHistory(86_400);
      await read(node.get('/serving_num?event_id=Sample'));
      clock.advance(30);
      await serveUpTo(node, 1);
      await read(node.get('/serving_num?event_id=Sample'));
      // The pace is known (1 every 30 s): visitor 3 is told about 60 s, 2 places × 30 s.
      const looked = await read<{ wait_estimate_s?: [number, number] }>(node.get(`/queue_num?event_id=Sample&request_id=${ids[2]}`));
      assert.deepEqual(looked.body.wait_estimate_s, [48, 75]);
      const claim = (id: string) => read(node.post('/generate_token', { event_id: 'Sample', request_id: id }));
      assert.equal((await claim(ids[0]!)).status, 200);
      clock.advance(60);
      await serveUpTo(node, 3);
      clock.advance(5);
      assert.equal((await claim(ids[2]!)).status, 200);
      // A second claim of the same token set is not a second admission.
      assert.equal((await claim(ids[2]!)).status, 200);
      await node.room.reports.recordHistory(86_400);
      const report = (await (await fetch(`${node.privateUrl}/rooms/Sample/report?from=${start}&to=${start + 120}`, { headers: ADMIN })).json()) as {
        minutes: Record<string, number | null>[];
      };
      const [first, second] = report.minutes;
      // Visitor 1: admitted at 12:00:30 after 30 s, no estimate given. Visitor 3: admitted at 12:01:30 (the
      // counter reached 3; claimed 5 s later) after 90 s, told 48–75 s: an error of 28.5 s.
      assert.deepEqual([first!.minute, first!.waits_measured, first!.estimates_judged, first!.estimate_error_p50_s], [start, 1, 0, null]);
      assert.ok(first!.wait_p50_s! > 25 && first!.wait_p50_s! <= 30, `${first!.wait_p50_s}`);
      assert.deepEqual([second!.minute, second!.waits_measured, second!.estimates_judged], [start + 60, 1, 1]);
      assert.ok(second!.wait_p99_s! > 75 && second!.wait_p99_s! <= 90, `${second!.wait_p99_s}`);
      assert.ok(second!.estimate_error_p50_s! > 25 && second!.estimate_error_p50_s! <= 30, `${second!.estimate_error_p50_s}`);
      // The range as a whole: both waits, their buckets added up.
      const totals = (report as unknown as { totals: Record<string, number | null> }).totals;
      assert.deepEqual([totals.arrivals, totals.admissions, totals.claims, totals.waits_measured, totals.estimates_judged], [4, 3, 2, 2, 1]);
      assert.ok(totals.wait_p50_s! > 25 && totals.wait_p50_s! <= 30, `${totals.wait_p50_s}`);
      assert.ok(totals.wait_p99_s! > 75 && totals.wait_p99_s! <= 90, `${totals.wait_p99_s}`);
      assert.deepEqual([totals.peak_waiting, totals.peak_waiting_minute], [4, start]);
    } finally {
      await node.close();
    }
  });

  it('--history-retention-days 0 tallies no waits', async () => {
    for (const [days, measured] of [[0, 0], [1, 1]] as const) {
      const clock = new TestClock(Date.UTC(2026, 10, 24, 12, 0, 0));
      const node = await startTestNode({ historyRetentionDays: days }, { clock });
      try {
        const id = await joinQueue(node);
        await serveUpTo(node, 1);
        assert.equal((await read(node.post('/generate_token', { event_id: 'Sample', request_id: id }))).status, 200);
        await node.room.reports.flushWaits(3600);
        const waits = await node.store.readWaits('Sample', 0, clock.now() / 1000);
        assert.equal(waits.reduce((sum, m) => sum + (m.counts.w0 ?? 0), 0), measured, `retention ${days}`);
      } finally {
        await node.close();
      }
    }
  });
});
