// `anteroom loadtest --abandon --come-back` against a real automatic room (one node, embedded store): the seeded
// visitors close the tab and come back, the room's arrival window is set for the run and put back after, late
// arrivals enter within the bound the capacity verdict allows, and the summary and the report carry the figures.
// Presence itself needs a timeout of at least 30 s (too long for a test): the runs here use the arrival window;
// bench/no-shows.ts measures presence on and off (docs/benchmarks.md).

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startNode, type AnteroomNode } from '../../src/app.ts';
import { abandonPlanOf } from '../../src/loadtest/abandon-plan.ts';
import { parseLoadTestOptions } from '../../src/loadtest/options.ts';
import { renderReport } from '../../src/loadtest/report.ts';
import { runLoadTest, type LoadTestResult } from '../../src/loadtest/run.ts';
import { formatSummary } from '../../src/loadtest/summary.ts';
import { TEST_CREDENTIALS, testConfig } from '../support/node.ts';

const ROOM = {
  admission: 'automatic',
  new_users_per_minute: 6000,
  total_active_users: 5,
  enable_queue_position_expiry: true,
  queue_position_expiry_period: 60,
};
const VISITORS = 40;

function run(node: AnteroomNode, arrivalWindow: string): Promise<LoadTestResult> {
  return runLoadTest(
    parseLoadTestOptions({
      target: node.publicUrl,
      privateTarget: node.privateUrl,
      eventId: 'Leave',
      adminToken: TEST_CREDENTIALS.adminToken,
      visitors: String(VISITORS),
      arrivalRate: '40/s',
      pollInterval: '100ms',
      sessionTime: '1s',
      reclaims: '1',
      duration: '90s',
      reset: true,
      abandon: '50%',
      comeBack: '1',
      comeBackAfter: '3s',
      seed: '42',
      presenceBeat: '500ms',
      presenceTimeout: '0',
      arrivalWindow,
    }),
  );
}

describe('load test with visitors who close the tab and come back (automatic room, embedded store)', () => {
  let node: AnteroomNode;
  let dataDir: string;
  let withWindow: LoadTestResult;
  let withoutWindow: LoadTestResult;
  let roomAfter: Record<string, unknown>;
  before(async () => {
    const base = testConfig();
    dataDir = base.dataDir;
    node = await startNode({ ...base, store: { kind: 'sqlite' as const, path: joinPath(dataDir, 'anteroom.db') } }, { credentials: TEST_CREDENTIALS });
    const headers = { authorization: `Bearer ${TEST_CREDENTIALS.adminToken!}`, 'content-type': 'application/json' };
    const put = await fetch(`${node.privateUrl}/rooms/Leave`, { method: 'PUT', headers, body: JSON.stringify(ROOM) });
    assert.ok(put.status === 200 || put.status === 201, `PUT room: ${put.status} ${await put.text()}`);
    withWindow = await run(node, '1');
    withoutWindow = await run(node, '0');
    roomAfter = (await (await fetch(`${node.privateUrl}/rooms/Leave`, { headers })).json()) as Record<string, unknown>;
  });
  after(async () => {
    await node?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the seeded visitors leave, all come back and are served; every verdict holds', () => {
    const planned = Array.from({ length: VISITORS }, (_, i) => abandonPlanOf({ abandon: 0.5, comeBack: 1, comeBackAfterMs: 3000, seed: 42 }, i));
    const leavers = planned.flatMap((p, i) => (p === null ? [] : [i]));
    assert.ok(leavers.length > 5 && leavers.length < 35, `${leavers.length} of ${VISITORS} planned to leave`);
    for (const result of [withWindow, withoutWindow]) {
      const failing = result.verdicts.filter((v) => !v.ok).map((v) => `${v.name}: ${v.detail} ${v.examples.join('; ')}`);
      assert.deepEqual(failing, []);
      const s = result.summary;
      assert.equal(s.ended_by, 'journey');
      assert.equal(s.visitors.served, VISITORS, 'everyone came back and claimed');
      assert.equal(s.visitors.failed, 0);
      const n = s.no_shows!;
      assert.equal(n.abandoned, leavers.length, 'the visitors the seed picks leave, in each run');
      assert.equal(n.left_waiting + n.left_admitted, n.abandoned);
      assert.equal(n.came_back, leavers.length);
      assert.equal(n.came_back_claimed, leavers.length);
      assert.equal(n.stayers, VISITORS - leavers.length);
      assert.equal(n.stayers_served, n.stayers);
      assert.ok(n.capacity_used !== null && n.capacity_used > 0 && n.capacity_used <= 1, String(n.capacity_used));
      // Waiting visitors asked /queue_num with their request ID every 500 ms: more than placing and confirming.
      assert.ok(s.latency_ms.queue_num!.count > 2 * VISITORS, `${s.latency_ms.queue_num!.count} /queue_num`);
    }
  });

  it('with an arrival window, visitors who come back late enter as late arrivals, the room over by at most that many', () => {
    const n = withWindow.summary.no_shows!;
    assert.deepEqual(withWindow.summary.plan.abandon, {
      share: 0.5,
      come_back: 1,
      come_back_after_ms: 3000,
      seed: 42,
      presence_beat_ms: 500,
      presence_timeout: 0,
      arrival_window: 1,
    });
    assert.ok(n.server_late_arrivals !== null && n.server_late_arrivals > 0, `the room counted ${n.server_late_arrivals} late arrivals`);
    assert.ok(n.overshoot <= n.server_late_arrivals, `overshoot ${n.overshoot} ≤ late arrivals ${n.server_late_arrivals}`);
    assert.match(withWindow.summary.verdicts.admission_capacity!.detail, /At most \d+ visitors were certainly in/);
    // Without the window nobody stops counting: no late arrivals, never over the capacity.
    const off = withoutWindow.summary.no_shows!;
    assert.equal(off.server_late_arrivals, 0);
    assert.equal(off.overshoot, 0);
  });

  it('the room gets its arrival window and presence back after the run', () => {
    assert.equal(roomAfter.arrival_window ?? 120, 120);
    assert.equal(roomAfter.presence_timeout ?? 0, 0);
  });

  it('the summary and the report show the figures', () => {
    const text = formatSummary(withWindow.summary);
    assert.match(text, /abandon +\d+ closed the tab \(\d+ waiting, \d+ let in before claiming\), \d+ came back \(\d+ claimed\); seed 42/);
    assert.match(text, /stayers +\d+ of \d+ served; wait p50 [\d.]+ s, p90 [\d.]+ s/);
    assert.match(text, /capacity +[\d.]+ % used in session while stayers waited/);
    const html = renderReport(withWindow);
    assert.match(html, /<h2>Visitors who closed the tab<\/h2>/);
    for (const chart of ['no-show-capacity', 'no-show-waiting', 'no-show-waits']) assert.match(html, new RegExp(`<section class="chart" id="${chart}">`));
    assert.doesNotMatch(renderReport(withoutWindow), /undefined|NaN/);
  });
});
