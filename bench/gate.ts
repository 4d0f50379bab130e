// The gate's cost (issue 13, docs/benchmarks.md "Gate"): proxied requests per second and server CPU per
// proxied request, one core each, for
//   (a) Anteroom's gate (`anteroom serve --gate-port`), a visitor with a valid admission cookie;
//   (b) Debian's nginx, proxy_pass with upstream keep-alive, one process;
//   (c) a bare undici pass-through in Node (bench/undici-pass-through.ts): the floor for a Node proxy;
// all to the same origin (bench/canned-http-server.ts, which costs next to nothing) in one run, alternated
// ROUNDS times, medians reported. Then the queued visitor's waiting page against /serving_num on the same
// process. Proxies on CPU 1; origin and load generator on CPU 0.
//
//   node bench/gate.ts        (also the last part of `npm run bench`; BENCH_GATE_SECONDS per run, default 4)
//   BENCH_GATE_PROFILE=<dir>  also writes a V8 CPU profile of the gate's process there (node --cpu-prof)
//   BENCH_GATE_BASELINE=<dir> also runs the gate of another checkout (e.g. `git worktree add /tmp/base main`,
//                             with node_modules linked) in the same rounds: before/after side by side

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinnedCommand, startChildNode } from '../test/support/child-node.ts';
import { freePort, startNginx } from '../test/support/nginx.ts';
import { runLoad } from './load-runner.ts';
import { cpuSeconds, median } from './proc-stats.ts';

const SECONDS = Number(process.env.BENCH_GATE_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_GATE_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const SERVER_CPU = 1;
const LOAD_CPU = 0;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

interface Round {
  rps: number;
  p99: number;
  cpuMicros: number | null;
  non2xx: number;
}

async function round(url: string, pid: number | undefined, headers: Record<string, string> = {}): Promise<Round> {
  const before = cpuSeconds(pid);
  const r = await runLoad({ url, connections: CONNECTIONS, durationSec: SECONDS, headers }, LOAD_CPU);
  const after = cpuSeconds(pid);
  return {
    rps: r.rps,
    p99: r.p99,
    non2xx: r.non2xx + r.errors,
    cpuMicros: before === null || after === null || r.total === 0 ? null : ((after - before) * 1e6) / r.total,
  };
}

async function spawnListening(argv: string[], cpu: number): Promise<{ url: string; pid: number | undefined; stop: () => Promise<void> }> {
  const [command, args] = pinnedCommand(cpu, argv);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  const port = /listening (\d+)/.exec(chunk.toString())?.[1];
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

function summary(label: string, rounds: Round[]): { rps: number; cpu: number | null } {
  const cpu = rounds.every((r) => r.cpuMicros !== null) ? median(rounds.map((r) => r.cpuMicros as number)) : null;
  const rps = median(rounds.map((r) => r.rps));
  const errors = rounds.reduce((sum, r) => sum + r.non2xx, 0);
  console.log(
    `${label.padEnd(40)} ${fmt(rps).padStart(8)} req/s (${rounds.map((r) => fmt(r.rps)).join(', ')})   p99 ${median(rounds.map((r) => r.p99))} ms` +
      (cpu === null ? '' : `   ${cpu.toFixed(1)} µs CPU/request (${rounds.map((r) => (r.cpuMicros as number).toFixed(1)).join(', ')})`) +
      (errors ? `   non-2xx/errors ${errors}` : ''),
  );
  return { rps, cpu };
}

export async function runGateBench(): Promise<void> {
  console.log(`Gate — ${SECONDS} s per run, ${ROUNDS} rounds alternated, ${CONNECTIONS} connections; proxies on CPU ${SERVER_CPU}, origin and load on CPU ${LOAD_CPU}`);
  const origin = await spawnListening([process.execPath, here('./canned-http-server.ts')], LOAD_CPU);
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-bench-gate-'));
  const stops: (() => Promise<void>)[] = [origin.stop, async () => rmSync(dir, { recursive: true, force: true })];
  try {
    // (a) the gate: one room whose gate protects the origin, manual admission.
    const startGate = async (bin?: string, env: Record<string, string> = {}) => {
      const gateDir = mkdtempSync(join(tmpdir(), 'anteroom-bench-gate-node-'));
      stops.push(async () => rmSync(gateDir, { recursive: true, force: true }));
      const gatePort = await freePort();
      const config = join(gateDir, 'rooms.json');
      writeFileSync(config, JSON.stringify({ events: [{ event_id: 'Bench', gate: { origin: origin.url, routes: [{ path: '/' }] } }] }));
      const node = await startChildNode(
        ['--data-dir', gateDir, '--config', config, '--gate-port', String(gatePort), '--admin-token', 'bench-admin-token-0123456789', '--queue-position-expiry-period', '86400'],
        env,
        { cpu: SERVER_CPU, ...(bin ? { bin } : {}) },
      );
      stops.unshift(async () => {
        node.process.kill('SIGTERM');
        await node.exited;
      });
      const gateUrl = `http://127.0.0.1:${gatePort}`;
      const cookieOf = (response: Response) => response.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      // One admitted visitor (its token cookie), and one kept waiting (its place cookie) for the queued page.
      const admittedPlace = cookieOf(await fetch(`${gateUrl}/`, { redirect: 'manual' }));
      await fetch(`${node.url}/private/increment_serving_counter`, {
        method: 'POST',
        headers: { authorization: 'Bearer bench-admin-token-0123456789' },
        body: JSON.stringify({ event_id: 'Bench', increment_by: 1 }),
      });
      const admitted = cookieOf(await fetch(`${gateUrl}/`, { redirect: 'manual', headers: { cookie: admittedPlace } }));
      if (!admitted.includes('anteroom_token=')) throw new Error('the benchmark visitor was not admitted');
      const queuedPlace = cookieOf(await fetch(`${gateUrl}/`, { redirect: 'manual' }));
      return { node, gateUrl, admitted, queuedPlace };
    };
    const { node, gateUrl, admitted, queuedPlace } = await startGate(
      undefined,
      process.env.BENCH_GATE_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_GATE_PROFILE}` } : {},
    );
    const baselineDir = process.env.BENCH_GATE_BASELINE;
    const baseline = baselineDir ? await startGate(join(baselineDir, 'bin', 'anteroom.js')) : undefined;

    // (b) nginx, one process, upstream keep-alive.
    const nginxPort = await freePort();
    const nginx = await startNginx(
      `upstream origin { server ${new URL(origin.url).host}; keepalive 64; }
  server {
    listen 127.0.0.1:${nginxPort};
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $host;
    }
  }`,
      nginxPort,
      { workers: 0, cpu: SERVER_CPU },
    );
    stops.unshift(nginx.stop);
    // (c) the bare undici pass-through.
    const passThrough = await spawnListening([process.execPath, here('./undici-pass-through.ts'), origin.url], SERVER_CPU);
    stops.unshift(passThrough.stop);

    const rounds = { baseline: [] as Round[], gate: [] as Round[], nginx: [] as Round[], undici: [] as Round[], queued: [] as Round[], serving: [] as Round[] };
    for (let i = 0; i < ROUNDS; i++) {
      rounds.gate.push(await round(`${gateUrl}/product`, node.process.pid, { cookie: admitted }));
      if (baseline) rounds.baseline.push(await round(`${baseline.gateUrl}/product`, baseline.node.process.pid, { cookie: baseline.admitted }));
      rounds.nginx.push(await round(`${nginx.url}/product`, nginx.pid));
      rounds.undici.push(await round(`${passThrough.url}/product`, passThrough.pid));
    }
    for (let i = 0; i < ROUNDS; i++) {
      rounds.queued.push(await round(`${gateUrl}/product`, node.process.pid, { cookie: queuedPlace, accept: 'text/html', 'accept-encoding': 'gzip, deflate, br' }));
      rounds.serving.push(await round(`${node.url}/serving_num?event_id=Bench`, node.process.pid));
    }
    const gate = summary('(a) anteroom gate, admitted visitor', rounds.gate);
    const before = baseline ? summary('(a0) baseline gate (BENCH_GATE_BASELINE)', rounds.baseline) : undefined;
    const ngx = summary('(b) nginx proxy_pass (1 process)', rounds.nginx);
    const bare = summary('(c) bare undici pass-through', rounds.undici);
    const queued = summary('anteroom gate, queued visitor (page)', rounds.queued);
    const serving = summary('anteroom GET /serving_num', rounds.serving);
    console.log('\nTargets (issue 13)');
    if (gate.cpu !== null && ngx.cpu !== null && bare.cpu !== null) {
      const vsNginx = gate.cpu / ngx.cpu;
      const vsBare = gate.cpu / bare.cpu;
      console.log(`  gate CPU/request vs nginx         ${vsNginx.toFixed(2)}×  (target ≤ 2×)    ${vsNginx <= 2 ? 'met' : 'NOT met'}`);
      console.log(`  gate CPU/request vs bare undici   ${vsBare.toFixed(2)}×  (target ≤ 1.2×)  ${vsBare <= 1.2 ? 'met' : 'NOT met'}`);
      if (before?.cpu) {
        console.log(`  baseline gate vs nginx            ${(before.cpu / ngx.cpu).toFixed(2)}×;  vs bare undici ${(before.cpu / bare.cpu).toFixed(2)}×`);
        console.log(`  gate ÷ baseline gate              ${(gate.cpu / before.cpu).toFixed(2)}×`);
      }
    }
    const pageRatio = queued.rps / serving.rps;
    console.log(`  queued page rate vs /serving_num  ${pageRatio.toFixed(2)}×  (target ≥ 0.7×)  ${pageRatio >= 0.7 ? 'met' : 'NOT met'}`);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runGateBench();
