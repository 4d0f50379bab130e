// Server CPU per new ES256 token set (a visitor's first claim) and per re-claim of it, on SQLite and on Redis, in a
// store already holding PREFILL token sets, beside the floors measured on the same core in the same rounds: a bare
// node:http POST (bench/bare-server.ts) and three bare ES256 signatures (issue 37: a new set ≤ 1.5× (bare POST +
// 3 signatures), a re-claim ≤ 1.5× a bare POST). Optionally this checkout against another one side by side.
// Every server runs pinned to CPU 1 (one at a time busy), autocannon on CPU 0; rounds alternate between them, so
// the machine's load falls on all alike. Each round joins CLAIMS visitors (their CPU per join is printed too),
// serves them and claims each once, then once again; the server's CPU over the claims (/proc/<pid>/stat) divided by the
// claims answered 200, and the bytes it wrote to disk over them (/proc/<pid>/io write_bytes) per set. A claim
// that times out or fails is counted and reported, not fatal: on a busy machine the server gets a fraction of a
// core, and the figure is still CPU per claim answered.
//
//   node bench/claim-cost.ts [<other checkout>]   (default: none, this checkout alone)
//   CLAIMS (per round, default 3,000), ROUNDS (default 3), STORES (default sqlite,redis), PREFILL (token sets in
//   the store before the rounds, default 20,000; in a room of their own, "Big"), CPU_PROF=<dir> (servers write
//   .cpuprofile files there), OTHER_ARGS (more `anteroom serve` arguments for the other checkout's server),
//   TIMEOUT_S (per claim, default 120)

import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { startChildNode, type ChildNode } from '../test/support/child-node.ts';
import { startRedisServer, type RedisServer } from '../test/support/redis-server.ts';
import { joinAndServe } from './join-and-serve.ts';
import { runLoad } from './load-runner.ts';
import { cpuSeconds, median } from './proc-stats.ts';
import { bareSignCost, startBare } from './bare-costs.ts';
import { prefillTokenSets } from './prefill-token-sets.ts';

const CLAIMS = Number(process.env.CLAIMS ?? 3000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const STORES = (process.env.STORES ?? 'sqlite,redis').split(',').filter(Boolean) as ('sqlite' | 'redis')[];
const PREFILL = Number(process.env.PREFILL ?? 20_000);
const TIMEOUT_S = Number(process.env.TIMEOUT_S ?? 120);
const SERVER_CPU = 1;
const LOAD_CPU = 0;
const ADMIN_TOKEN = 'bench-admin-token-0123456789';

function writeBytes(pid: number): number {
  try {
    return Number(/write_bytes: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

interface Measured {
  cpuMicros: number;
  /** Bytes the server wrote to disk per answered request (/proc/<pid>/io write_bytes). */
  bytes: number;
  rps: number;
  errors: number;
}

async function measure(pid: number, spec: Record<string, unknown>): Promise<Measured> {
  const before = cpuSeconds(pid) ?? 0;
  const written = writeBytes(pid);
  const r = await runLoad({ connections: 100, method: 'POST', timeoutSec: TIMEOUT_S, ...spec }, LOAD_CPU);
  const cpu = (cpuSeconds(pid) ?? 0) - before;
  const bytes = (writeBytes(pid) - written) / Math.max(1, r.ok);
  return { cpuMicros: (cpu * 1e6) / Math.max(1, r.ok), bytes, rps: r.rps, errors: r.non2xx + r.errors + r.timeouts };
}

/** CLAIMS joins (CPU per join, issue 37 item 4: no regression), first claims of them, then one re-claim of each. */
async function claimRound(node: ChildNode, dir: string, round: number): Promise<{ joinMicros: number; first: Measured; again: Measured }> {
  const cpuBefore = cpuSeconds(node.process.pid!) ?? 0;
  const ids = await joinAndServe(node, 'Ec', CLAIMS, ADMIN_TOKEN);
  const joinMicros = (((cpuSeconds(node.process.pid!) ?? 0) - cpuBefore) * 1e6) / CLAIMS;
  const file = join(dir, `ids-${node.process.pid}-${round}.txt`);
  writeFileSync(file, ids.join('\n'));
  const spec = { url: `${node.url}/generate_token`, amount: ids.length, claimIdsFile: file, eventId: 'Ec' };
  const first = await measure(node.process.pid!, spec);
  const again = await measure(node.process.pid!, spec);
  return { joinMicros, first, again };
}

/**
 * PREFILL token sets in room "Big" of a Redis store (key layout: src/store/redis/keys.ts), written by Redis itself in
 * scripts of 100,000: the request index and the tokens hash (IDs as 32 hex digits, not the store's 16 bytes: they
 * are never claimed, only there).
 */
async function prefillRedis(url: string, count: number): Promise<void> {
  const client = new Redis(url);
  try {
    const script = `
      local from, to = tonumber(ARGV[1]), tonumber(ARGV[2])
      local sig = string.rep('A', 86)
      for p = from, to do
        local id = string.format('%08x%08x', p, (p * 2654435761) % 4294967296) .. string.format('%016x', p)
        redis.call('HSET', KEYS[1], id, p)
        redis.call('HSET', KEYS[2], id, '0,' .. p .. ',[1,1,99999999999,"https://bench.example","k",null,"' .. sig .. '.' .. sig .. '.' .. sig .. '"]')
      end
      return to`;
    for (let from = 1; from <= count; from += 100_000) {
      await client.eval(script, 2, 'ar:{Big}:rq', 'ar:{Big}:tk', from, Math.min(count, from + 99_999));
    }
    await client.hset('ar:{Big}:c', 'q', count, 's', count, 't', count);
  } finally {
    client.disconnect();
  }
}

interface Target {
  label: string;
  bin: string | undefined;
  args: string[];
  store: 'sqlite' | 'redis';
}

const checkouts = [{ label: 'this checkout', bin: undefined as string | undefined, args: [] as string[] }];
if (process.argv[2]) {
  const args = (process.env.OTHER_ARGS ?? '').split(' ').filter(Boolean);
  checkouts.unshift({ label: `other (${[process.argv[2], ...args].join(' ')})`, bin: resolve(process.argv[2], 'bin/anteroom.js'), args });
}
const targets: Target[] = STORES.flatMap((store) => checkouts.map((c) => ({ ...c, label: `${c.label}, ${store}`, store })));

const dir = mkdtempSync(join(tmpdir(), 'anteroom-claim-cost-'));
const nodes: ChildNode[] = [];
const redisServers: RedisServer[] = [];
const bareServer = await startBare(SERVER_CPU);
try {
  const config = join(dir, 'rooms.json');
  writeFileSync(config, JSON.stringify({ events: [{ event_id: 'Ec', signing_algorithm: 'ES256' }] }));
  const started = Date.now();
  // One prefilled database, copied for each SQLite server (the prefill takes about a minute per million sets).
  const prefilled = join(dir, 'prefilled.db');
  if (STORES.includes('sqlite') && PREFILL > 0) {
    const signature = 'substr(hex(randomblob(43)), 1, 86)';
    await prefillTokenSets(prefilled, PREFILL, { signatures: `${signature} || '.' || ${signature} || '.' || ${signature}` });
  }
  for (const [i, t] of targets.entries()) {
    const env: Record<string, string> = process.env.CPU_PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${resolve(process.env.CPU_PROF)}` } : {};
    let storeArgs: string[];
    if (t.store === 'redis') {
      const redis = await startRedisServer({ appendonly: true, appendfsync: 'everysec' });
      redisServers.push(redis);
      if (PREFILL > 0) await prefillRedis(redis.url, PREFILL);
      storeArgs = ['--store', redis.url];
    } else {
      mkdirSync(join(dir, `data-${i}`));
      if (PREFILL > 0) copyFileSync(prefilled, join(dir, `data-${i}`, 'anteroom.db'));
      storeArgs = ['--data-dir', join(dir, `data-${i}`)];
    }
    nodes.push(await startChildNode([...storeArgs, '--config', config, '--admin-token', ADMIN_TOKEN, ...t.args], env, { cpu: SERVER_CPU, ...(t.bin ? { bin: t.bin } : {}) }));
  }
  console.log(`${PREFILL.toLocaleString('en-US')} token sets prefilled in each store (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  // Warm-up: keys created and loaded, code compiled.
  for (const node of nodes) await claimRound(node, dir, -1);
  const perSet: number[][] = targets.map(() => []);
  const bytesPerSet: number[][] = targets.map(() => []);
  const rates: number[][] = targets.map(() => []);
  const perReclaim: number[][] = targets.map(() => []);
  const reclaimRates: number[][] = targets.map(() => []);
  const failed: number[] = targets.map(() => 0);
  const perJoin: number[][] = targets.map(() => []);
  const barePost: number[] = [];
  const bare: number[] = [];
  const bareP1363: number[] = [];
  const loadBefore = loadavg()[0]!.toFixed(2);
  for (let round = 0; round < ROUNDS; round++) {
    const cost = bareSignCost(SERVER_CPU, 'ES256');
    bare.push(cost.micros);
    bareP1363.push(cost.p1363!);
    barePost.push((await measure(bareServer.pid!, { url: `${bareServer.url}/`, amount: CLAIMS, body: JSON.stringify({ event_id: 'Ec' }) })).cpuMicros);
    for (const [i, node] of nodes.entries()) {
      const { joinMicros, first, again } = await claimRound(node, dir, round);
      perJoin[i]!.push(joinMicros);
      failed[i]! += first.errors + again.errors;
      perSet[i]!.push(first.cpuMicros);
      bytesPerSet[i]!.push(first.bytes);
      rates[i]!.push(first.rps);
      perReclaim[i]!.push(again.cpuMicros);
      reclaimRates[i]!.push(again.rps);
    }
  }
  const load = loadavg().map((l) => l.toFixed(2)).join(' ');
  const b = median(bare);
  const post = median(barePost);
  const verdict = (ratio: number) => (ratio < 1 ? 'UNDER ITS FLOOR: a measurement bug' : ratio <= 1.5 ? 'met' : 'NOT met');
  console.log(
    `ES256 token sets, ${ROUNDS} rounds × ${CLAIMS} claims, ${PREFILL.toLocaleString('en-US')} sets prefilled, server on CPU ${SERVER_CPU}; ` +
      `load average ${loadBefore} at the start, ${load} at the end`,
  );
  console.log(
    `  floors: bare node:http POST ${post.toFixed(0)} µs CPU (rounds ${barePost.map((v) => v.toFixed(0)).join(', ')}); ` +
      `bare 3 ES256 signatures ${b.toFixed(0)} µs as src/tokens/signer.ts signs (rounds ${bare.map((v) => v.toFixed(0)).join(', ')}), ` +
      `${median(bareP1363).toFixed(0)} µs with dsaEncoding 'ieee-p1363'`,
  );
  for (const [i, t] of targets.entries()) {
    const m = median(perSet[i]!);
    const ratio = m / (post + b);
    console.log(
      `  ${t.label.padEnd(34)} new set  ${m.toFixed(0).padStart(4)} µs CPU (rounds ${perSet[i]!.map((v) => v.toFixed(0)).join(', ')}) = ` +
        `${ratio.toFixed(2)}× (bare POST + 3 signatures) (target ≤ 1.5×) ${verdict(ratio)}; ${Math.round(median(rates[i]!))}/s; ` +
        `${Math.round(median(bytesPerSet[i]!))} B written per set`,
    );
    const r = median(perReclaim[i]!);
    console.log(
      `  ${t.label.padEnd(34)} re-claim ${r.toFixed(0).padStart(4)} µs CPU (rounds ${perReclaim[i]!.map((v) => v.toFixed(0)).join(', ')}) = ` +
        `${(r / post).toFixed(2)}× a bare POST (target ≤ 1.5×) ${verdict(r / post)}; ${Math.round(median(reclaimRates[i]!))}/s` +
        `${failed[i]! > 0 ? `; ${failed[i]} claims failed or timed out (not counted)` : ''}`,
    );
    const j = median(perJoin[i]!);
    console.log(
      `  ${t.label.padEnd(34)} join     ${j.toFixed(0).padStart(4)} µs CPU (rounds ${perJoin[i]!.map((v) => v.toFixed(0)).join(', ')}) = ` +
        `${(j / post).toFixed(2)}× a bare POST (200 at a time from fetch, with the serving counter's move)`,
    );
  }
  if (checkouts.length === 2) {
    for (let i = 0; i < targets.length; i += 2) {
      console.log(
        `  ${targets[i + 1]!.store}: this / other, CPU per new set ${(median(perSet[i + 1]!) / median(perSet[i]!)).toFixed(2)}×, ` +
          `per re-claim ${(median(perReclaim[i + 1]!) / median(perReclaim[i]!)).toFixed(2)}×, per join ${(median(perJoin[i + 1]!) / median(perJoin[i]!)).toFixed(2)}×`,
      );
    }
  }
} finally {
  await bareServer.stop();
  for (const node of nodes) {
    node.process.kill('SIGTERM');
    await node.exited;
  }
  for (const redis of redisServers) await redis.destroy();
  rmSync(dir, { recursive: true, force: true });
}
