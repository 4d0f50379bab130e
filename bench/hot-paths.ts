// Issue 37: the position polls beside their floors, and the floors checked by a second load generator.
//
// One bare node:http handler (bench/bare-server.ts) and Anteroom on SQLite and on Redis, all pinned to the same
// core (CPU 1), the load on the other (CPU 0); each measured with autocannon (bench/load.ts) and with wrk
// (bench/wrk-load.ts) in interleaved rounds — every round runs every target under both generators, so the
// machine's load falls on all alike. The figure is the server process's CPU time per answered request
// (/proc/<pid>/stat), its median over the rounds; each is printed as a ratio to the bare handler measured by the
// same generator right before it (its floor): the median of those pairs' ratios. /queue_num cycles through the
// positions of VISITORS visitors (each asked once per pass, as many waiting pages would), the bare floor
// through the same paths.
//
// The floors themselves: the bare handler's CPU per request under autocannon and under wrk must agree within
// 15 %; a figure under its floor is printed as a measurement bug.
//
//   BENCH_ONLY=hotpaths npm run bench     (or node bench/hot-paths.ts)
//   BENCH_HOT_SECONDS per measurement (default 3), BENCH_HOT_ROUNDS (default 3), BENCH_CONNECTIONS (default 100),
//   BENCH_SKIP_REDIS=1 leaves Redis out, BENCH_HOT_VISITORS (default 5,000).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startChildNode, type ChildNode } from '../test/support/child-node.ts';
import { startRedisServer, type RedisServer } from '../test/support/redis-server.ts';
import { startBare, type BareServer } from './bare-costs.ts';
import { runLoad, type LoadResult } from './load-runner.ts';
import { cpuSeconds, median } from './proc-stats.ts';
import { runWrk } from './wrk-load.ts';
import { joinOnce } from './join-and-serve.ts';

const SECONDS = Number(process.env.BENCH_HOT_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_HOT_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const VISITORS = Number(process.env.BENCH_HOT_VISITORS ?? 5_000);
const SKIP_REDIS = process.env.BENCH_SKIP_REDIS === '1';
const SERVER_CPU = 1;
const LOAD_CPU = 0;
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
/** How far two generators' measures of one bare handler may differ for it to count as a floor. */
export const FLOOR_AGREEMENT = 0.15;

type Generator = 'autocannon' | 'wrk';
const GENERATORS: readonly Generator[] = ['autocannon', 'wrk'];

interface Target {
  label: string;
  /** The floor's label, for a target that has one (the bare handlers have none). */
  floor?: string;
  /** The target ratio to the floor, e.g. 1.5. */
  limit?: number;
  pid: () => number | undefined;
  url: string;
  pathsFile?: string;
}

interface Sample {
  cpuMicros: number;
  rps: number;
  bad: number;
}

async function measure(target: Target, generator: Generator, seconds: number): Promise<Sample> {
  const pid = target.pid();
  const before = cpuSeconds(pid) ?? 0;
  const spec = { url: target.url, connections: CONNECTIONS, durationSec: seconds, ...(target.pathsFile ? { pathsFile: target.pathsFile } : {}) };
  const r: LoadResult = generator === 'wrk' ? await runWrk(spec, LOAD_CPU) : await runLoad(spec, LOAD_CPU);
  const cpu = (cpuSeconds(pid) ?? 0) - before;
  return { cpuMicros: (cpu * 1e6) / Math.max(1, r.ok), rps: r.rps, bad: r.non2xx + r.errors + r.timeouts };
}

async function joinVisitors(node: ChildNode, count: number): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < count) {
    const replies = await Promise.all(Array.from({ length: Math.min(200, count - ids.length) }, () => joinOnce(node, 'Sample')));
    ids.push(...replies.map((r) => r.api_request_id));
  }
  return ids;
}

export function machine(): string {
  return `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

export async function runHotPathsBench(): Promise<void> {
  console.log(`Issue 37 — position polls and their floors — ${new Date().toISOString()}, ${machine()}`);
  console.log(`  ${ROUNDS} rounds × ${SECONDS} s per target and generator, ${CONNECTIONS} connections; server on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}; load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-bench-hot-'));
  let bare: BareServer | undefined;
  let redis: RedisServer | undefined;
  const nodes: ChildNode[] = [];
  try {
    bare = await startBare(SERVER_CPU);
    const sqlite = await startChildNode(['--data-dir', join(dir, 'data'), '--admin-token', ADMIN_TOKEN], {}, { cpu: SERVER_CPU });
    nodes.push(sqlite);
    let onRedis: ChildNode | undefined;
    if (!SKIP_REDIS) {
      redis = await startRedisServer({ appendonly: true, appendfsync: 'everysec' });
      onRedis = await startChildNode(['--store', redis.url, '--redis-key-prefix', 'hot:', '--admin-token', ADMIN_TOKEN], {}, { cpu: SERVER_CPU });
      nodes.push(onRedis);
    }
    const paths = async (node: ChildNode, name: string) => {
      const file = join(dir, `${name}.txt`);
      writeFileSync(file, (await joinVisitors(node, VISITORS)).map((id) => `/queue_num?event_id=Sample&request_id=${id}`).join('\n'));
      return file;
    };
    const sqlitePaths = await paths(sqlite, 'sqlite');
    const redisPaths = onRedis ? await paths(onRedis, 'redis') : undefined;
    const b = bare;
    const targets: Target[] = [
      { label: 'bare GET (the /serving_num request line)', pid: () => b.pid, url: `${b.url}/serving_num?event_id=Sample` },
      { label: 'bare GET (the /queue_num request lines)', pid: () => b.pid, url: b.url, pathsFile: sqlitePaths },
      { label: 'SQLite GET /serving_num', floor: 'bare GET (the /serving_num request line)', limit: 1.11, pid: () => sqlite.process.pid, url: `${sqlite.url}/serving_num?event_id=Sample` },
      { label: 'SQLite GET /queue_num', floor: 'bare GET (the /queue_num request lines)', limit: 1.5, pid: () => sqlite.process.pid, url: sqlite.url, pathsFile: sqlitePaths },
    ];
    if (onRedis && redisPaths) {
      const r = onRedis;
      targets.push(
        { label: 'Redis GET /serving_num', floor: 'bare GET (the /serving_num request line)', limit: 1.11, pid: () => r.process.pid, url: `${r.url}/serving_num?event_id=Sample` },
        { label: 'Redis GET /queue_num', floor: 'bare GET (the /queue_num request lines)', limit: 1.5, pid: () => r.process.pid, url: r.url, pathsFile: redisPaths },
      );
    }
    // Warm-up: every position asked once (the ordinary path finds it, later polls do not), code compiled.
    for (const [node, file] of [[sqlite, sqlitePaths], ...(onRedis && redisPaths ? [[onRedis, redisPaths] as const] : [])] as const) {
      const lines = readFileSync(file, 'utf8').split('\n');
      for (let i = 0; i < lines.length; i += 100) await Promise.all(lines.slice(i, i + 100).map(async (path) => (await fetch(`${node.url}${path}`)).text()));
    }
    for (const target of targets) {
      for (const generator of GENERATORS) await measure(target, generator, 1);
    }
    // Each figure right after its floor (a pair), so that both meet the same moment of the machine's load; the
    // ratio of each pair is kept, and the median of the pairs' ratios is the figure's ratio.
    const samples = new Map<string, Sample[]>();
    const ratios = new Map<string, number[]>();
    const key = (t: Target, g: Generator) => `${t.label}|${g}`;
    const push = <T>(map: Map<string, T[]>, k: string, v: T) => map.set(k, [...(map.get(k) ?? []), v]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const generator of round % 2 === 0 ? GENERATORS : [...GENERATORS].reverse()) {
        for (const target of targets.filter((t) => t.floor !== undefined)) {
          const floor = targets.find((t) => t.label === target.floor)!;
          const base = await measure(floor, generator, SECONDS);
          const mine = await measure(target, generator, SECONDS);
          push(samples, key(floor, generator), base);
          push(samples, key(target, generator), mine);
          push(ratios, key(target, generator), mine.cpuMicros / base.cpuMicros);
        }
      }
    }
    // How many /queue_num answers took the ordinary (routed) path, over all: the warm-up's first pass should be all.
    for (const node of nodes) {
      const metrics = await (await fetch(`${node.url}/metrics`)).text();
      const count = (prefix: string) => Number(metrics.split('\n').find((l) => l.startsWith(prefix))?.split(' ').pop() ?? 0);
      console.log(
        `  ${node === sqlite ? 'SQLite' : 'Redis'} node: /queue_num answered ${count('anteroom_http_requests_total{route="/queue_num",method="GET",status="200"}')}, ` +
          `of which routed ${count('anteroom_http_request_duration_seconds_count{route="/queue_num",method="GET"}')}`,
      );
    }
    const cpu = (t: Target, g: Generator) => median(samples.get(key(t, g))!.map((s) => s.cpuMicros));
    const rounds = (t: Target, g: Generator) => samples.get(key(t, g))!.map((s) => s.cpuMicros.toFixed(1)).join(', ');
    console.log(`  load average at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
    console.log('  The floors: one bare handler, two load generators (CPU µs per request of the server, median of the rounds)');
    for (const target of targets.filter((t) => t.floor === undefined)) {
      const [a, w] = [cpu(target, 'autocannon'), cpu(target, 'wrk')];
      const rps = (g: Generator) => Math.round(median(samples.get(key(target, g))!.map((s) => s.rps))).toLocaleString('en-US');
      const apart = Math.abs(a - w) / Math.min(a, w);
      console.log(
        `    ${target.label.padEnd(44)} autocannon ${a.toFixed(1)} µs (${rounds(target, 'autocannon')}; ${rps('autocannon')} req/s), ` +
          `wrk ${w.toFixed(1)} µs (${rounds(target, 'wrk')}; ${rps('wrk')} req/s): ${(apart * 100).toFixed(0)} % apart — ${apart <= FLOOR_AGREEMENT ? 'agree (≤ 15 %)' : 'DO NOT AGREE (> 15 %)'}`,
      );
    }
    console.log('\n  The polls beside their floors (each measured right after its floor, same generator)');
    for (const target of targets.filter((t) => t.floor !== undefined)) {
      const floor = targets.find((t) => t.label === target.floor)!;
      for (const generator of GENERATORS) {
        const [mine, base] = [cpu(target, generator), cpu(floor, generator)];
        const pairs = ratios.get(key(target, generator))!;
        const ratio = median(pairs);
        const bad = samples.get(key(target, generator))!.reduce((n, s) => n + s.bad, 0);
        const verdict = ratio < 1 ? 'UNDER ITS FLOOR: a measurement bug' : ratio <= target.limit! ? 'met' : 'NOT met';
        console.log(
          `    ${target.label.padEnd(26)} ${generator.padEnd(10)} ${mine.toFixed(1).padStart(6)} µs (${rounds(target, generator)}) beside ${floor.label} ${base.toFixed(1)} µs: ` +
            `${ratio.toFixed(2)}× (median of the pairs ${pairs.map((r) => r.toFixed(2)).join(', ')})` +
            `  (target ≤ ${target.limit}×) ${verdict}${bad ? `; ${bad} answers not 200` : ''}`,
        );
      }
    }
  } finally {
    await bare?.stop();
    for (const node of nodes) {
      node.process.kill('SIGTERM');
      await node.exited;
    }
    await redis?.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runHotPathsBench();
