// Issue 34 item 6: what visitors who close the tab cost the others, with the room's presence off and on, same
// seed (so the same visitors leave at the same points). Starts `anteroom serve` (embedded SQLite by default) on
// CPU 1, puts an automatic room, and runs the journey load test (src/loadtest, in this process) once per
// setting with --abandon/--come-back, each run after a reset of the room:
//
//   off   presence_timeout 0, arrival_window 0: admission as before issue 34
//   on    presence_timeout --presence-timeout, arrival_window --arrival-window
//   none  (with --baseline) presence on and nobody leaving: the ceiling of "capacity used" with these timings
//
// Prints the figures side by side (no-show-figures.ts) and, as the last line, a JSON object; with --report,
// writes one HTML page with the runs' charts side by side (no-show-report.ts).
//
//   node bench/no-shows.ts [--visitors 240] [--arrival-rate 20/s] [--total-active-users 60] [--session-time 30s]
//        [--claim-window 90] [--abandon 0.3] [--come-back 0.3] [--come-back-after 30s] [--seed 1]
//        [--presence-timeout 30] [--arrival-window 15] [--poll-interval 1s] [--baseline] [--store embedded|memory]
//        [--report docs/loadtest-no-shows.html] [--save runs.json]
//
// --save writes every run's summary, per-second series and stayers' waits, from which the page can be drawn again.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseLoadTestOptions } from '../src/loadtest/options.ts';
import { renderNoShowComparison, type NoShowRun } from '../src/loadtest/no-show-report.ts';
import { runLoadTest } from '../src/loadtest/run.ts';
import { startChildNode } from '../test/support/child-node.ts';

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const EVENT = 'NoShows';

const { values: args } = parseArgs({
  options: {
    visitors: { type: 'string', default: '240' },
    'arrival-rate': { type: 'string', default: '20/s' },
    'total-active-users': { type: 'string', default: '60' },
    'session-time': { type: 'string', default: '30s' },
    'claim-window': { type: 'string', default: '90' },
    abandon: { type: 'string', default: '0.3' },
    'come-back': { type: 'string', default: '0.3' },
    'come-back-after': { type: 'string', default: '30s' },
    seed: { type: 'string', default: '1' },
    'presence-timeout': { type: 'string', default: '30' },
    'arrival-window': { type: 'string', default: '15' },
    'poll-interval': { type: 'string', default: '1s' },
    duration: { type: 'string', default: '280s' },
    baseline: { type: 'boolean', default: false },
    store: { type: 'string', default: 'embedded' },
    report: { type: 'string' },
    save: { type: 'string' },
  },
});

interface Setting {
  label: string;
  presenceTimeout: string;
  arrivalWindow: string;
  abandon: string;
}

async function main(): Promise<void> {
  if (!['embedded', 'memory'].includes(args.store)) throw new Error('--store must be embedded or memory');
  const dataDir = mkdtempSync(join(tmpdir(), 'anteroom-no-shows-'));
  const server = await startChildNode([...(args.store === 'memory' ? ['--store', 'memory'] : []), '--data-dir', dataDir, '--admin-token', ADMIN_TOKEN], {}, { cpu: 1 });
  const settings: Setting[] = [
    { label: 'presence off', presenceTimeout: '0', arrivalWindow: '0', abandon: args.abandon },
    { label: 'presence on', presenceTimeout: args['presence-timeout'], arrivalWindow: args['arrival-window'], abandon: args.abandon },
    ...(args.baseline ? [{ label: 'nobody leaves', presenceTimeout: args['presence-timeout'], arrivalWindow: args['arrival-window'], abandon: '0' }] : []),
  ];
  const runs: NoShowRun[] = [];
  const loads: string[] = [];
  try {
    const room = {
      admission: 'automatic',
      new_users_per_minute: 6000,
      total_active_users: Number(args['total-active-users']),
      enable_queue_position_expiry: true,
      queue_position_expiry_period: Number(args['claim-window']),
    };
    const put = await fetch(`${server.url}/private/rooms/${EVENT}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(room),
    });
    if (put.status !== 200 && put.status !== 201) throw new Error(`PUT room: ${put.status} ${await put.text()}`);
    // Every node serves a new room within 2 s.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    for (const setting of settings) {
      const options = parseLoadTestOptions({
        target: server.url,
        eventId: EVENT,
        adminToken: ADMIN_TOKEN,
        visitors: args.visitors,
        arrivalRate: args['arrival-rate'],
        pollInterval: args['poll-interval'],
        sessionTime: args['session-time'],
        reclaims: '1',
        duration: args.duration,
        reset: true,
        // "nobody leaves" keeps the presence beat of the others, so the three runs send the same kinds of request.
        abandon: setting.abandon,
        comeBack: setting.abandon === '0' ? '0' : args['come-back'],
        comeBackAfter: args['come-back-after'],
        presenceBeat: '10s',
        seed: args.seed,
        presenceTimeout: setting.presenceTimeout,
        arrivalWindow: setting.arrivalWindow,
      });
      const started = loadavg()[0]!.toFixed(2);
      process.stderr.write(`${setting.label}: running (load average ${started})…\n`);
      const result = await runLoadTest(options);
      loads.push(`${setting.label}: load average ${started} → ${loadavg()[0]!.toFixed(2)}`);
      const failing = result.verdicts.filter((v) => !v.ok).map((v) => `${v.name}: ${v.detail}`);
      if (failing.length > 0) process.stderr.write(`${setting.label}: verdicts failing: ${failing.join('; ')}\n`);
      // Every run sets the room's presence, so each has its figures (nobody leaving included).
      runs.push({ label: setting.label, summary: result.summary, ...result.noShows! });
    }
  } finally {
    server.process.kill('SIGTERM');
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }

  const row = (name: string, f: (r: NoShowRun) => string) => `  ${name.padEnd(34)}${runs.map((r) => f(r).padStart(16)).join('')}`;
  const n = (r: NoShowRun) => r.summary.no_shows!;
  const lines = [
    '',
    `store ${args.store}; ${args.visitors} visitors at ${args['arrival-rate']}, total_active_users ${args['total-active-users']}, sessions ${args['session-time']}, ` +
      `claim window ${args['claim-window']} s, abandon ${args.abandon}, come back ${args['come-back']} after ~${args['come-back-after']}, seed ${args.seed}`,
    row('', (r) => r.label),
    row('ended by / elapsed (s)', (r) => `${r.summary.ended_by} ${r.summary.elapsed_s.toFixed(0)}`),
    row('verdicts', (r) => (r.summary.ok ? 'all pass' : 'FAIL')),
    row('closed the tab (waiting/let in)', (r) => `${n(r).abandoned} (${n(r).left_waiting}/${n(r).left_admitted})`),
    row('came back (claimed)', (r) => `${n(r).came_back} (${n(r).came_back_claimed})`),
    row('stayers served', (r) => `${n(r).stayers_served}/${n(r).stayers}`),
    row('stayer wait p50 (s)', (r) => n(r).stayer_wait_s.p50.toFixed(1)),
    row('stayer wait p90 (s)', (r) => n(r).stayer_wait_s.p90.toFixed(1)),
    row('capacity used while stayers wait', (r) => (n(r).capacity_used === null ? '–' : `${(n(r).capacity_used! * 100).toFixed(1)} %`)),
    row('  over (s)', (r) => n(r).waited_over_s.toFixed(0)),
    row('max in session / overshoot', (r) => `${n(r).max_in_session} / ${n(r).overshoot}`),
    row('late arrivals (the room)', (r) => String(n(r).server_late_arrivals ?? '–')),
    ...loads.map((l) => `  ${l}`),
  ];
  console.log(lines.join('\n'));
  if (args.report) {
    const command = `node bench/no-shows.ts ${process.argv.slice(2).join(' ')}`;
    writeFileSync(args.report, renderNoShowComparison(runs, { command, note: loads.join('; ') }));
    process.stderr.write(`report written to ${args.report}\n`);
  }
  if (args.save) writeFileSync(args.save, JSON.stringify(runs));
  console.log(JSON.stringify(runs.map((r) => ({ label: r.label, ok: r.summary.ok, plan: r.summary.plan.abandon, no_shows: r.summary.no_shows }))));
}

await main();
