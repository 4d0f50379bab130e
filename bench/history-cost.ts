// What recording the after-event history costs during a join storm (issue 18): two Anteroom processes side by
// side in one run, the same build and store (SQLite, a file each), one with the history on (the default: the
// history job once a minute, and each token set issued tallied in the wait histogram, added to the store every
// 5 s) and one with it off (--history-retention-days 0). Each visitor joins and claims at once (the serving
// counter is far ahead), so every join also exercises the wait tally. Rounds alternate between the two
// processes (on, off, off, on, …) so that a noisy neighbour hurts both alike; the figure is CPU per visitor
// (join + claim) of the server process, user + system from /proc/<pid>/stat, the median over the rounds.
//
// The history job itself runs once a minute whatever the load: a few store calls per room. Its cost is timed
// here too, in this process (recordHistory on a SQLite store with one room), and set against a minute of storm.
//
//   ./node_modules/.bin/node bench/history-cost.ts     BENCH_ROUNDS (6), BENCH_SECONDS (8), BENCH_CONCURRENCY (32)

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startNode } from '../src/app.ts';
import { WaitTally } from '../src/domain/wait-histogram.ts';
import { testConfig } from '../test/support/node.ts';
import { startChildNode, type ChildNode } from '../test/support/child-node.ts';
import { cpuSeconds, median } from './proc-stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const SERVER_CPU = 1;

const agent = new Agent({ connections: CONCURRENCY, pipelining: 1 });

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await request(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers }, dispatcher: agent });
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
}

/** Visitors who join and claim, CONCURRENCY at a time, for `seconds`; answers how many went through. */
async function storm(node: ChildNode, seconds: number): Promise<{ visitors: number; errors: number }> {
  const until = performance.now() + seconds * 1000;
  let visitors = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const joined = await post(`${node.url}/assign_queue_num`, { event_id: 'Sample' });
        const id = joined.body.api_request_id;
        const claimed = joined.status === 200 ? await post(`${node.url}/generate_token`, { event_id: 'Sample', request_id: id }) : joined;
        if (claimed.status === 200) visitors++;
        else errors++;
      }
    }),
  );
  return { visitors, errors };
}

async function start(label: string, historyDays: number, dir: string): Promise<{ label: string; node: ChildNode; cpuPerVisitor: number[]; visitors: number; errors: number }> {
  const data = join(dir, label);
  const node = await startChildNode(
    ['--admin-token', ADMIN_TOKEN, '--data-dir', data, '--history-retention-days', String(historyDays)],
    {},
    { cpu: SERVER_CPU },
  );
  // Everyone who joins is let in at once: each claim issues a token set (and, history on, tallies its wait).
  const served = await post(`${node.url}/private/increment_serving_counter`, { event_id: 'Sample', increment_by: 100_000_000 }, { authorization: `Bearer ${ADMIN_TOKEN}` });
  if (served.status !== 200) throw new Error(`${label}: increment_serving_counter answered ${served.status}`);
  await storm(node, 2); // warm-up
  return { label, node, cpuPerVisitor: [], visitors: 0, errors: 0 };
}

/** CPU µs of one WaitTally.add (what each token set issued costs with the history on), over a million. */
function tallyCost(): number {
  const tally = new WaitTally();
  const n = 1_000_000;
  const now = Math.floor(Date.now() / 1000);
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    tally.add('Sample', now + (i % 120), i % 900, i % 3 === 0 ? i % 60 : undefined);
    if (i % 50_000 === 0) tally.drain();
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

async function historyJobCost(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-history-job-'));
  const node = await startNode(testConfig({ dataDir: dir }), { credentials: { adminToken: ADMIN_TOKEN, accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench-secret-0123456789' }, jobs: false });
  try {
    const calls = 200;
    for (let i = 0; i < 20; i++) await node.room.reports.recordHistory(86_400);
    const before = process.cpuUsage();
    for (let i = 0; i < calls; i++) await node.room.reports.recordHistory(86_400);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / calls;
  } finally {
    await node.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const dir = mkdtempSync(join(tmpdir(), 'anteroom-history-cost-'));
const nodes = [await start('history-on', 30, dir), await start('history-off', 0, dir)];
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? nodes : [...nodes].reverse();
    for (const n of order) {
      const before = cpuSeconds(n.node.process.pid) ?? 0;
      const r = await storm(n.node, SECONDS);
      const used = (cpuSeconds(n.node.process.pid) ?? 0) - before;
      n.cpuPerVisitor.push((used * 1e6) / Math.max(1, r.visitors));
      n.visitors += r.visitors;
      n.errors += r.errors;
    }
  }
  const jobMicros = await historyJobCost();
  const tallyMicros = tallyCost();
  const [on, off] = nodes.map((n) => ({ ...n, median: median(n.cpuPerVisitor) }));
  // Round by round (the two ran back to back): on / off, then the median of those ratios.
  const ratios = on!.cpuPerVisitor.map((v, i) => v / off!.cpuPerVisitor[i]!);
  const line = (n: typeof on) =>
    `${n!.label.padEnd(12)} ${n!.median.toFixed(0).padStart(5)} µs CPU per visitor (join + claim), median of ${ROUNDS} rounds` +
    ` [${n!.cpuPerVisitor.map((v) => v.toFixed(0)).join(', ')}]; ${n!.visitors} visitors, ${n!.errors} errors`;
  const extra = ((on!.median - off!.median) / off!.median) * 100;
  const visitorsPerMinute = (on!.visitors / (ROUNDS * SECONDS)) * 60;
  const jobShare = (jobMicros / (on!.median * visitorsPerMinute)) * 100;
  process.stdout.write(
    [
      `history cost, ${new Date().toISOString()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
      line(on),
      line(off),
      `history on vs off: ${extra >= 0 ? '+' : ''}${extra.toFixed(1)} % CPU per visitor (medians); round by round on/off ${ratios.map((r) => r.toFixed(2)).join(', ')}, median ${median(ratios).toFixed(3)}`,
      `wait tally: ${(tallyMicros * 1000).toFixed(0)} ns CPU per token set issued = ${((tallyMicros / off!.median) * 100).toFixed(3)} % of a visitor's CPU with the history off`,
      `history job: ${jobMicros.toFixed(0)} µs CPU per run (one room, SQLite), once a minute = ${jobShare.toFixed(3)} % of a minute of this storm`,
      '',
    ].join('\n'),
  );
} finally {
  for (const n of nodes) {
    n.node.process.kill('SIGTERM');
    await n.node.exited;
  }
  await agent.close();
  rmSync(dir, { recursive: true, force: true });
}
