// A crowd of waiting visitors polling once a second, measured from outside both processes: starts
// `anteroom serve` on CPU 1 (on the embedded SQLite store by default; --store memory, or redis for a private
// redis-server of its own), runs the real `anteroom loadtest` CLI on CPU 0 (visitors join at
// --arrival-rate, admit 1/s, poll 1 s), and samples every second the CPU time of both processes
// (/proc/<pid>/stat) and the requests the server counted (its /metrics). Over the steady part of the run —
// from 5 s after the last visitor joined to 3 s before the end — it prints requests/s, each process's CPU
// share and CPU µs per request, then the load test's own figures (serving_num percentiles, errors, verdicts)
// and, as the last line, its whole JSON result.
//
//   node bench/loadtest-pollers.ts [--visitors 50000] [--arrival-rate 2500/s] [--duration 60s]
//        [--store embedded|memory|redis] [--pipelining N] [--connections N] [--report docs/loadtest-pollers-50k.html]
//
// Linux only (/proc). The server (and its redis-server) are stopped and their data directories removed at the end.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseDuration, parseRate } from '../src/loadtest/options.ts';
import type { LoadTestSummary } from '../src/loadtest/summary.ts';
import { pinnedCommand, startChildNode } from '../test/support/child-node.ts';
import { cpuSeconds } from './proc-stats.ts';
import { startRedisServer, type RedisServer } from '../test/support/redis-server.ts';

const BIN = fileURLToPath(new URL('../bin/anteroom.js', import.meta.url));
const ADMIN_TOKEN = 'bench-admin-token-0123456789';

const { values: args } = parseArgs({
  options: {
    visitors: { type: 'string', default: '50000' },
    'arrival-rate': { type: 'string', default: '2500/s' },
    duration: { type: 'string', default: '60s' },
    store: { type: 'string', default: 'embedded' },
    pipelining: { type: 'string' },
    connections: { type: 'string' },
    report: { type: 'string' },
  },
});

interface Reading {
  t: number;
  testerCpu: number;
  serverCpu: number;
  requests: number;
}

async function serverRequests(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const m of text.matchAll(/^anteroom_http_requests_total\{[^}]*\} (\d+)/gm)) total += Number(m[1]);
  return total;
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main(): Promise<void> {
  if (!['embedded', 'memory', 'redis'].includes(args.store)) throw new Error('--store must be embedded, memory or redis');
  const dataDir = mkdtempSync(join(tmpdir(), 'anteroom-pollers-'));
  // Redis as in bench/redis.ts: AOF with fsync every second.
  const redis: RedisServer | null = args.store === 'redis' ? await startRedisServer({ appendfsync: 'everysec' }) : null;
  const store = args.store === 'memory' ? ['--store', 'memory'] : redis ? ['--store', redis.url] : [];
  const server = await startChildNode([...store, '--data-dir', dataDir, '--admin-token', ADMIN_TOKEN], {}, { cpu: 1 });
  const readings: Reading[] = [];
  try {
    const loadArgs = [
      BIN, 'loadtest', '--target', server.url, '--private-target', `${server.url}/private`, '--event-id', 'Sample',
      '--visitors', args.visitors, '--arrival-rate', args['arrival-rate'], '--admit-rate', '1/s', '--poll-interval', '1s',
      '--duration', args.duration, '--admin-token', ADMIN_TOKEN, '--reset', '--json',
      ...(args.pipelining ? ['--pipelining', args.pipelining] : []),
      ...(args.connections ? ['--connections', args.connections] : []),
      ...(args.report ? ['--report', args.report] : []),
    ];
    const [command, argv] = pinnedCommand(0, [process.execPath, ...loadArgs]);
    const tester = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    tester.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = once(tester, 'exit');
    const start = performance.now();
    const serverPid = server.process.pid!;
    const sample = async () => {
      try {
        const requests = await serverRequests(server.url);
        const testerCpu = cpuSeconds(tester.pid);
        const serverCpu = cpuSeconds(serverPid);
        // null: the tester has exited (its /proc entry is gone); the last readings stand.
        if (testerCpu !== null && serverCpu !== null) readings.push({ t: (performance.now() - start) / 1000, testerCpu, serverCpu, requests });
      } catch {
        // The server stopped answering /metrics at the end: the last readings stand.
      }
    };
    const timer = setInterval(() => void sample(), 1000);
    await exited;
    clearInterval(timer);

    const joinedBy = Number(args.visitors) / parseRate(args['arrival-rate']);
    const from = joinedBy + 5;
    const to = parseDuration(args.duration) / 1000 - 3;
    const window = readings.filter((r) => r.t >= from && r.t <= to);
    const summary = JSON.parse(stdout.trim().split('\n').pop()!) as LoadTestSummary;
    const s = summary.latency_ms.serving_num;
    console.log(`\nstore: ${args.store}; steady state, ${fmt(from, 1)}–${fmt(to, 1)} s after the tester started (every visitor joined and polling):`);
    if (window.length >= 2) {
      const a = window[0]!;
      const b = window.at(-1)!;
      const dt = b.t - a.t;
      const requests = b.requests - a.requests;
      const tester = b.testerCpu - a.testerCpu;
      const srv = b.serverCpu - a.serverCpu;
      console.log(`  requests/s (server-counted)  ${fmt(requests / dt)}`);
      console.log(`  tester CPU                   ${fmt((100 * tester) / dt)} % of a core, ${fmt((tester * 1e6) / requests, 1)} µs per request`);
      console.log(`  server CPU                   ${fmt((100 * srv) / dt)} % of a core, ${fmt((srv * 1e6) / requests, 1)} µs per request`);
    } else {
      console.log('  (the run was too short for a steady window)');
    }
    console.log('whole run (the load test\'s own summary):');
    console.log(`  verdicts ${summary.ok ? 'all pass' : 'FAIL'}; visitors joined ${fmt(summary.visitors.joined)}, failed ${summary.visitors.failed}; errors ${summary.errors.total} ${JSON.stringify(summary.errors.by_status)}`);
    console.log(`  requests ${fmt(summary.requests.total)}, ${fmt(summary.requests.per_s)}/s average, ${fmt(summary.requests.peak_per_s)}/s peak`);
    if (s) console.log(`  serving_num p50 ${s.p50} ms, p95 ${s.p95} ms, p99 ${s.p99} ms, max ${s.max} ms (${fmt(s.count)} polls)`);
    console.log(`  tester: ${summary.client.cpu_s} s CPU in all, max RSS ${summary.client.max_rss_mb} MB, event loop busy ${fmt(summary.client.busy_mean * 100)} % mean, ${fmt(summary.client.busy_max * 100)} % max, saturated ${summary.client.saturated_s} s`);
    if (summary.server_cpu) console.log(`  server CPU (its /metrics): ${fmt(summary.server_cpu.mean * 100)} % mean, ${fmt(summary.server_cpu.max * 100)} % max`);
    // The load test's whole JSON result, as its own last line.
    console.log(JSON.stringify(summary));
  } finally {
    server.process.kill('SIGTERM');
    await server.exited;
    await redis?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
