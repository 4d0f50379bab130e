// `npm run bench`: throughput and latency of one Anteroom process on the embedded store, next to a bare
// node:http handler measured in the same run. Server and load generator are pinned to different cores
// when taskset exists. Prints each figure and the ratios against the targets of the core issue; it never
// fails a test suite. BENCH_SECONDS (default 10) sets each run's length. BENCH_ONLY=polls stops after the
// polling rounds (bare handler vs Anteroom); BENCH_PUBLIC_API_KEY runs Anteroom with that origin key and sends it
// on every request (the bare handler ignores it), to measure the key check on the polling path.
// Then issue 15's figures (bench/join-writes.ts: bytes written and CPU per join on SQLite at a 1M queue vs Redis;
// bench/issue15.ts: RS256 vs ES256 vs EdDSA token issue, re-claims at 20k vs 1M sets, active-token counts, a 1M
// reset under polling); BENCH_ONLY=issue15 runs only those, BENCH_SKIP_15=1 skips them. The gate's comparison
// (bench/gate.ts: gate vs nginx vs a bare undici pass-through) runs last (BENCH_SKIP_GATE=1 skips it;
// BENCH_ONLY=gate runs only it). Then verify at the edge (bench/edge-nginx.ts: nginx alone vs nginx + njs vs
// forward auth; BENCH_SKIP_EDGE=1 skips it, BENCH_ONLY=edge runs only it). Issue 37's hot paths (bench/hot-paths.ts:
// /serving_num and /queue_num on SQLite and Redis beside a bare handler, under autocannon and wrk; then
// bench/claim-cost.ts: new ES256 sets and re-claims beside a bare POST and bare signatures): BENCH_ONLY=hotpaths,
// BENCH_SKIP_HOT=1 skips them.
// BENCH_ONLY=presence: what presence costs a poll (bench/presence-cost.ts, issue 34).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChildNode } from '../test/support/child-node.ts';
import { cpuSeconds, median } from './proc-stats.ts';
import { runLoad, type LoadResult } from './load-runner.ts';
import { runRedisBench } from './redis.ts';
import { runGateBench } from './gate.ts';
import { runEdgeBench } from './edge-nginx.ts';
import { runIssue15Bench } from './issue15.ts';
import { runJoinWrites } from './join-writes.ts';
import { startBare } from './bare-costs.ts';
import { runHotPathsBench } from './hot-paths.ts';
import { runPresenceBench } from './presence-cost.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ONLY_POLLS = process.env.BENCH_ONLY === 'polls';
const PUBLIC_API_KEY = process.env.BENCH_PUBLIC_API_KEY || undefined;
const SERVER_CPU = 1;
const LOAD_CPU = 0;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

const load = (spec: Record<string, unknown>) => runLoad(spec, LOAD_CPU);

interface PollRound {
  rps: number;
  p99: number;
  /** Server CPU time per request, µs: steadier than req/s on a noisy machine. */
  cpuMicros: number | null;
}

/** One polling run against a server process, with its CPU time per request. */
async function pollRound(url: string, pid: number | undefined, seconds: number): Promise<PollRound> {
  const before = cpuSeconds(pid);
  const r = await load({
    url: `${url}/serving_num?event_id=Sample`,
    connections: CONNECTIONS,
    durationSec: seconds,
    ...(PUBLIC_API_KEY ? { headers: { 'x-api-key': PUBLIC_API_KEY } } : {}),
  });
  const after = cpuSeconds(pid);
  const cpuMicros = before === null || after === null || r.total === 0 ? null : ((after - before) * 1e6) / r.total;
  return { rps: r.rps, p99: r.p99, cpuMicros };
}


const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const line = (label: string, r: LoadResult) =>
  `${label.padEnd(34)} ${fmt(r.rps).padStart(8)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   non-2xx ${r.non2xx}   errors ${r.errors + r.timeouts}`;

function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

async function issue15(): Promise<void> {
  console.log(`\nIssue 15 — ${new Date().toISOString()}, ${machine()}; server on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}`);
  console.log('\nJoins on SQLite (synchronous=FULL) at a queue of 1M, next to Redis');
  await runJoinWrites();
  console.log('');
  await runIssue15Bench();
}

/** Issue 37: the position polls beside their floors under two load generators, then token sets beside theirs. */
async function hotPaths(): Promise<void> {
  await runHotPathsBench();
  console.log('\nIssue 37 — token sets (ES256) beside their floors (bench/claim-cost.ts)');
  execFileSync(process.execPath, [here('./claim-cost.ts')], { stdio: 'inherit' });
}

async function main(): Promise<void> {
  if (process.env.BENCH_ONLY === 'gate') return runGateBench();
  if (process.env.BENCH_ONLY === 'presence') return runPresenceBench();
  if (process.env.BENCH_ONLY === 'edge') return runEdgeBench();
  if (process.env.BENCH_ONLY === 'issue15') return issue15();
  if (process.env.BENCH_ONLY === 'hotpaths') return hotPaths();
  console.log(`Anteroom benchmark — ${new Date().toISOString()}`);
  console.log(`machine: ${machine()}; ${SECONDS} s per run, ${CONNECTIONS} connections, server on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}\n`);
  const results: Record<string, LoadResult> = {};

  const bare = await startBare(SERVER_CPU);
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-bench-'));
  const node = await startChildNode(
    [
      '--data-dir', dir, '--admin-token', 'bench-admin-token-0123456789', '--queue-position-expiry-period', '86400',
      ...(PUBLIC_API_KEY ? ['--public-api-key', PUBLIC_API_KEY] : []),
    ],
    {},
    { cpu: SERVER_CPU },
  );
  const admin = { authorization: 'Bearer bench-admin-token-0123456789' };
  let pollRatio: { rps: number; cpu: number | null };
  try {
    // Polling: bare handler and Anteroom alternately, ROUNDS times each, medians reported (the machine is
    // noisy: one-off runs vary by tens of percent).
    const bareRounds: PollRound[] = [];
    const pollRounds: PollRound[] = [];
    const roundSeconds = Math.max(3, Math.round(SECONDS / 2));
    for (let round = 0; round < ROUNDS; round++) {
      bareRounds.push(await pollRound(bare.url, bare.pid, roundSeconds));
      pollRounds.push(await pollRound(node.url, node.process.pid, roundSeconds));
    }
    await bare.stop();
    const summary = (label: string, rounds: PollRound[]) => {
      const cpu = rounds.every((r) => r.cpuMicros !== null) ? median(rounds.map((r) => r.cpuMicros as number)) : null;
      console.log(
        `${label.padEnd(34)} ${fmt(median(rounds.map((r) => r.rps))).padStart(8)} req/s (median of ${rounds.length}: ${rounds.map((r) => fmt(r.rps)).join(', ')})   p99 ${median(rounds.map((r) => r.p99))} ms` +
          (cpu === null ? '' : `   ${cpu.toFixed(1)} µs CPU/request (${rounds.map((r) => (r.cpuMicros as number).toFixed(1)).join(', ')})`),
      );
      return { rps: median(rounds.map((r) => r.rps)), cpu };
    };
    const bareSummary = summary('bare node:http GET', bareRounds);
    const pollSummary = summary('anteroom GET /serving_num', pollRounds);
    pollRatio = {
      rps: pollSummary.rps / bareSummary.rps,
      cpu: bareSummary.cpu !== null && pollSummary.cpu !== null ? bareSummary.cpu / pollSummary.cpu : null,
    };
    if (ONLY_POLLS) {
      console.log(`\npolling vs bare handler: ${pollRatio.rps.toFixed(2)}× by req/s, ${pollRatio.cpu?.toFixed(2) ?? '–'}× by CPU per request`);
      return;
    }

    results.joins = await load({
      url: `${node.url}/assign_queue_num`,
      connections: CONNECTIONS,
      durationSec: SECONDS,
      method: 'POST',
      body: '{"event_id":"Sample"}',
    });
    console.log(line('anteroom POST /assign_queue_num', results.joins));

    // Token issue: fresh visitors, all served, each claiming once; then the same claims again (re-issue).
    const claimers = 20_000;
    const ids: string[] = [];
    const joinBatch = async (n: number) => {
      const responses = await Promise.all(
        Array.from({ length: n }, () =>
          fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: '{"event_id":"Sample"}' }).then(
            (r) => r.json() as Promise<{ api_request_id: string }>,
          ),
        ),
      );
      ids.push(...responses.map((r) => r.api_request_id));
    };
    while (ids.length < claimers) await joinBatch(Math.min(500, claimers - ids.length));
    const counters = await (await fetch(`${node.url}/waiting_num?event_id=Sample`)).json();
    void counters;
    await fetch(`${node.url}/private/increment_serving_counter`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ event_id: 'Sample', increment_by: 10_000_000 }),
    });
    const idsFile = join(dir, 'ids.txt');
    writeFileSync(idsFile, ids.join('\n'));
    results.issue = await load({
      url: `${node.url}/generate_token`,
      connections: CONNECTIONS,
      amount: claimers,
      method: 'POST',
      claimIdsFile: idsFile,
      eventId: 'Sample',
    });
    console.log(line('anteroom POST /generate_token (new)', results.issue));
    results.reissue = await load({
      url: `${node.url}/generate_token`,
      connections: CONNECTIONS,
      amount: claimers,
      method: 'POST',
      claimIdsFile: idsFile,
      eventId: 'Sample',
    });
    console.log(line('anteroom POST /generate_token (again)', results.reissue));
  } finally {
    node.process.kill('SIGTERM');
    await node.exited;
    rmSync(dir, { recursive: true, force: true });
  }

  const signCost = execFileSync(process.execPath, [here('./sign-cost.ts')], { encoding: 'utf8' }).trim();

  console.log('\nTargets (core issue)');
  const ratioText = `${pollRatio.rps.toFixed(2)}× by req/s` + (pollRatio.cpu === null ? '' : `, ${pollRatio.cpu.toFixed(2)}× by CPU per request`);
  const ratioMet = Math.max(pollRatio.rps, pollRatio.cpu ?? 0) >= 0.7;
  console.log(`  polling vs bare handler   ${ratioText}  (target ≥ 0.70×)  ${ratioMet ? 'met' : 'NOT met'}`);
  const j = results.joins!;
  const joinsOk = j.rps >= 10_000 && j.p99 <= 50 && j.non2xx === 0 && j.errors === 0;
  console.log(`  joins                     ${fmt(j.rps)}/s, p99 ${j.p99} ms, ${j.non2xx + j.errors} errors  (target ≥ 10,000/s, p99 ≤ 50 ms, 0 errors)  ${joinsOk ? 'met' : 'NOT met'}`);
  console.log(`  token sets issued         ${fmt(results.issue!.rps)}/s (3 RS256 signatures each); re-claims ${fmt(results.reissue!.rps)}/s (cached, no signing)`);
  console.log(`  signing cost              ${signCost}`);

  if (process.env.BENCH_SKIP_REDIS !== '1') {
    console.log('');
    await runRedisBench();
  }
  if (process.env.BENCH_SKIP_HOT !== '1') {
    console.log('');
    await hotPaths();
  }
  if (process.env.BENCH_SKIP_GATE !== '1') {
    console.log('');
    await runGateBench();
  }
  if (process.env.BENCH_SKIP_EDGE !== '1') {
    console.log('');
    await runEdgeBench();
  }
  if (process.env.BENCH_SKIP_15 !== '1') await issue15();
}

await main();
