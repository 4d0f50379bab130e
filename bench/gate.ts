// The gate's cost (issue 13, docs/benchmarks.md "Gate"): proxied requests per second and server CPU per
// proxied request, one core each, for
//   (a) Anteroom's gate (`anteroom serve --gate-port`), a visitor with a valid admission cookie;
//   (b) Debian's nginx, proxy_pass with upstream keep-alive, one process;
//   (c) bare pass-throughs in Node (bench/pass-through.ts, one process per variant: undici request / stream /
//       dispatch / pipeline / pipelining, node:http with a keep-alive Agent, Fastify + @fastify/reply-from on undici or on
//       node:http, Fastify + @fastify/http-proxy): the floor for a Node proxy, and which client is cheapest.
//       `http-proxy` is the library the gate is built on, bare, and `reply-from-undici` the layer under it: the
//       gate's floors (issue 30 item 9: the gate ≤ 1.2× its library);
// all to the same origin (bench/canned-http-server.ts, which costs next to nothing) in one run, alternated
// ROUNDS times, medians reported. Then the queued visitor's waiting page against /serving_num on the same
// process. Proxies on CPU 1; origin and load generator on CPU 0.
//
//   node bench/gate.ts        (also the last part of `npm run bench`; BENCH_GATE_SECONDS per run, default 4)
//   BENCH_GATE_PROFILE=<dir>  also writes V8 CPU profiles of the gate's process and of each bare pass-through
//                             there (node --cpu-prof; bare-<variant>.cpuprofile)
//   BENCH_GATE_RATE=<req/s>   a fixed offered rate for every contender instead of as fast as answered
//   BENCH_GATE_QUEUED=0       skips the queued page's rounds (so a profile holds the admitted path only)
//   BENCH_GATE_VARIANTS=a,b  only these pass-through variants (default: all; `undici-request` is the reference)
//   BENCH_GATE_BASELINE=<dir> also runs the gate of another checkout (e.g. `git worktree add /tmp/base main`,
//                             with node_modules linked) in the same rounds: before/after side by side

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinnedCommand, startChildNode } from '../test/support/child-node.ts';
import { freePort, startNginx } from '../test/support/nginx.ts';
import { runLoad } from './load-runner.ts';
import { cpuSeconds, median } from './proc-stats.ts';

const SECONDS = Number(process.env.BENCH_GATE_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_GATE_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
/** A fixed offered rate (req/s over all connections) instead of as fast as answered: every contender then
 * serves the same number of requests per second, so none gets cheaper per request by batching more. */
const RATE = process.env.BENCH_GATE_RATE ? Number(process.env.BENCH_GATE_RATE) : undefined;
const SERVER_CPU = 1;
const LOAD_CPU = 0;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
/** bench/pass-through.ts's variants, in the order they run. */
const PASS_THROUGHS = ['undici-request', 'undici-stream', 'undici-dispatch', 'undici-pipeline', 'undici-pipelining', 'node-agent', 'reply-from-undici', 'reply-from-http', 'http-proxy', 'fastify-undici-stream'];
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

interface Round {
  rps: number;
  p99: number;
  cpuMicros: number | null;
  non2xx: number;
}

async function round(url: string, pid: number | undefined, headers: Record<string, string> = {}): Promise<Round> {
  const before = cpuSeconds(pid);
  const r = await runLoad({ url, connections: CONNECTIONS, durationSec: SECONDS, headers, ...(RATE ? { rate: RATE } : {}) }, LOAD_CPU);
  const after = cpuSeconds(pid);
  return {
    rps: r.rps,
    p99: r.p99,
    non2xx: r.non2xx + r.errors,
    cpuMicros: before === null || after === null || r.total === 0 ? null : ((after - before) * 1e6) / r.total,
  };
}

/** Starts a process that prints "listening <port>" (a bench server), pinned to `cpu`. */
export async function spawnListening(argv: string[], cpu: number, env: Record<string, string> = {}): Promise<{ url: string; pid: number | undefined; stop: () => Promise<void> }> {
  const [command, args] = pinnedCommand(cpu, argv);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
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
    `${label.padEnd(42)} ${fmt(rps).padStart(8)} req/s (${rounds.map((r) => fmt(r.rps)).join(', ')})   p99 ${median(rounds.map((r) => r.p99))} ms` +
      (cpu === null ? '' : `   ${cpu.toFixed(1)} µs CPU/request (${rounds.map((r) => (r.cpuMicros as number).toFixed(1)).join(', ')})`) +
      (errors ? `   non-2xx/errors ${errors}` : ''),
  );
  return { rps, cpu };
}

export async function runGateBench(): Promise<void> {
  console.log(`Gate — ${SECONDS} s per run, ${ROUNDS} rounds alternated, ${CONNECTIONS} connections${RATE ? `, ${RATE} req/s offered` : ''}; proxies on CPU ${SERVER_CPU}, origin and load on CPU ${LOAD_CPU}`);
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
    // (c) the bare pass-throughs, one process each.
    const variants = (process.env.BENCH_GATE_VARIANTS ?? PASS_THROUGHS.join(',')).split(',').filter(Boolean);
    const bare: { name: string; url: string; pid: number | undefined }[] = [];
    for (const name of variants) {
      const profile = process.env.BENCH_GATE_PROFILE;
      const server = await spawnListening([process.execPath, here('./pass-through.ts'), name, origin.url], SERVER_CPU, profile ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profile} --cpu-prof-name=bare-${name}.cpuprofile` } : {});
      stops.unshift(server.stop);
      bare.push({ name, ...server });
    }

    // One round runs every contender once, in the same order (a, b, c…, a, b, c…), so load from other work
    // falls on all alike; the load average is read at the start of each round.
    const contenders: { label: string; url: string; pid: number | undefined; headers?: Record<string, string> }[] = [
      { label: '(a) anteroom gate, admitted visitor', url: `${gateUrl}/product`, pid: node.process.pid, headers: { cookie: admitted } },
      ...(baseline ? [{ label: '(a0) baseline gate (BENCH_GATE_BASELINE)', url: `${baseline.gateUrl}/product`, pid: baseline.node.process.pid, headers: { cookie: baseline.admitted } }] : []),
      { label: '(b) nginx proxy_pass (1 process)', url: `${nginx.url}/product`, pid: nginx.pid },
      ...bare.map((b) => ({ label: `(c) bare ${b.name}`, url: `${b.url}/product`, pid: b.pid })),
    ];
    const rounds = new Map<string, Round[]>(contenders.map((c) => [c.label, []]));
    const loads: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      loads.push(loadavg()[0] as number);
      for (const c of contenders) (rounds.get(c.label) as Round[]).push(await round(c.url, c.pid, c.headers));
    }
    const queuedRounds: Round[] = [];
    const servingRounds: Round[] = [];
    for (let i = 0; i < (process.env.BENCH_GATE_QUEUED === '0' ? 0 : ROUNDS); i++) {
      queuedRounds.push(await round(`${gateUrl}/product`, node.process.pid, { cookie: queuedPlace, accept: 'text/html', 'accept-encoding': 'gzip, deflate, br' }));
      servingRounds.push(await round(`${node.url}/serving_num?event_id=Bench`, node.process.pid));
    }
    console.log(`load average (1 min) at the start of each round: ${loads.map((l) => l.toFixed(2)).join(', ')}`);
    const results = new Map(contenders.map((c) => [c.label, summary(c.label, rounds.get(c.label) as Round[])]));
    const queued = queuedRounds.length > 0 ? summary('anteroom gate, queued visitor (page)', queuedRounds) : undefined;
    const serving = servingRounds.length > 0 ? summary('anteroom GET /serving_num', servingRounds) : undefined;

    // Per round, as a markdown table (CPU µs per request), for docs/benchmarks.md.
    console.log(`\n| Round | load avg | ${contenders.map((c) => c.label).join(' | ')} |`);
    console.log(`|---|---|${contenders.map(() => '---').join('|')}|`);
    for (let i = 0; i < ROUNDS; i++) {
      console.log(`| ${i + 1} | ${(loads[i] as number).toFixed(2)} | ${contenders.map((c) => (rounds.get(c.label) as Round[])[i]?.cpuMicros?.toFixed(1) ?? '–').join(' | ')} |`);
    }
    console.log(`| median | | ${contenders.map((c) => results.get(c.label)?.cpu?.toFixed(1) ?? '–').join(' | ')} |`);
    // Each contender against nginx in the same round (so a busy round weighs on both sides), median of rounds.
    const nginxRounds = rounds.get('(b) nginx proxy_pass (1 process)') as Round[];
    const perRoundRatio = (label: string): number | null => {
      const ratios = (rounds.get(label) as Round[]).flatMap((r, i) => (r.cpuMicros !== null && nginxRounds[i]?.cpuMicros ? [r.cpuMicros / (nginxRounds[i].cpuMicros as number)] : []));
      return ratios.length > 0 ? median(ratios) : null;
    };
    console.log(`| ÷ nginx, median of per-round ratios | | ${contenders.map((c) => `${perRoundRatio(c.label)?.toFixed(2) ?? '–'}×`).join(' | ')} |`);

    const cpuOf = (label: string) => results.get(label)?.cpu ?? null;
    const gate = cpuOf('(a) anteroom gate, admitted visitor');
    const ngx = cpuOf('(b) nginx proxy_pass (1 process)');
    // The gate is Fastify + @fastify/http-proxy, which is @fastify/reply-from on its default undici client: its
    // floor is that library's bare pass-through (issue 30 item 9; the old "≤ 2× nginx" target is withdrawn for the
    // Node gate — nginx's cost is the edge verification's goal). Both layers are shown, per-round ratios, median.
    const gateRounds = rounds.get('(a) anteroom gate, admitted visitor') as Round[];
    const versus = (label: string): number | null => {
      const floor = rounds.get(label);
      if (!floor) return null;
      const ratios = gateRounds.flatMap((r, i) => (r.cpuMicros !== null && floor[i]?.cpuMicros ? [r.cpuMicros / (floor[i].cpuMicros as number)] : []));
      return ratios.length > 0 ? median(ratios) : null;
    };
    const cheapest = bare.map((b) => ({ name: b.name, cpu: cpuOf(`(c) bare ${b.name}`) })).filter((b) => b.cpu !== null).sort((x, y) => (x.cpu as number) - (y.cpu as number))[0];
    console.log('\nTargets (issue 30 item 9)');
    if (gate !== null && ngx !== null) {
      console.log(`  gate CPU/request vs nginx                 ${(gate / ngx).toFixed(2)}×  (information: the Node gate's nginx target is withdrawn)`);
      for (const [label, name] of [
        ['(c) bare http-proxy', '@fastify/http-proxy (the library the gate registers)'],
        ['(c) bare reply-from-undici', '@fastify/reply-from on undici (the layer under it)'],
      ] as const) {
        const ratio = versus(label);
        if (ratio === null) {
          console.log(`  gate vs bare ${name}: not measured (add ${label.slice(9)} to BENCH_GATE_VARIANTS)`);
          continue;
        }
        console.log(`  gate CPU/request vs bare ${name.padEnd(52)} ${ratio.toFixed(2)}×  (median of per-round ratios; target ≤ 1.2×)  ${ratio <= 1.2 ? 'met' : 'NOT met'}`);
        if (ratio < 1) console.log('  (a gate cheaper than its own library\'s bare pass-through is a measurement bug: look at the rounds above)');
      }
      if (cheapest) {
        console.log(`  cheapest bare pass-through: ${cheapest.name}, ${(cheapest.cpu as number).toFixed(1)} µs = ${((cheapest.cpu as number) / ngx).toFixed(2)}× nginx (the floor for a Node proxy); gate ÷ it ${(gate / (cheapest.cpu as number)).toFixed(2)}×`);
      }
      const before = baseline ? cpuOf('(a0) baseline gate (BENCH_GATE_BASELINE)') : null;
      if (before) {
        console.log(`  baseline gate vs nginx                    ${(before / ngx).toFixed(2)}×`);
        console.log(`  gate ÷ baseline gate                      ${(gate / before).toFixed(2)}×`);
      }
    }
    const pageRatio = queued && serving ? queued.rps / serving.rps : NaN;
    if (queued) console.log(`  queued page rate vs /serving_num  ${pageRatio.toFixed(2)}×  (target ≥ 0.7×)  ${pageRatio >= 0.7 ? 'met' : 'NOT met'}`);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runGateBench();
