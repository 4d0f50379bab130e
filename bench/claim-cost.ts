// Server CPU per new ES256 token set (a visitor's first claim) and per re-claim of it, this checkout against
// another one side by side in one run, next to the bare cost of the three ES256 signatures and of a bare
// node:http POST (bench/bare-server.ts), both measured on the same core in the same rounds.
// Both servers run pinned to CPU 1 (one at a time busy), autocannon on CPU 0; rounds alternate between them, so
// the machine's load falls on both alike. Each round joins CLAIMS visitors, serves them (joins are not counted)
// and claims each once; the server's CPU over the claims (/proc/<pid>/stat) divided by the claims answered 200,
// and the bytes it wrote to disk over them (/proc/<pid>/io write_bytes) per set.
//
//   node bench/claim-cost.ts [<other checkout>]   (default: none, this checkout alone)
//   CLAIMS (per round, default 5,000), ROUNDS (default 3), CPU_PROF=<dir> (servers write .cpuprofile files there),
//   OTHER_ARGS (more `anteroom serve` arguments for the other checkout's server, e.g. `--sqlite-synchronous normal`)

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startChildNode, type ChildNode } from '../test/support/child-node.ts';
import { joinAndServe } from './join-and-serve.ts';
import { runLoad } from './load-runner.ts';
import { cpuSeconds, median } from './proc-stats.ts';
import { bareSignCost, startBare } from './bare-costs.ts';

const CLAIMS = Number(process.env.CLAIMS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
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
  const r = await runLoad({ connections: 100, method: 'POST', ...spec }, LOAD_CPU);
  const cpu = (cpuSeconds(pid) ?? 0) - before;
  const bytes = (writeBytes(pid) - written) / Math.max(1, r.ok);
  return { cpuMicros: (cpu * 1e6) / Math.max(1, r.ok), bytes, rps: r.rps, errors: r.non2xx + r.errors + r.timeouts };
}

/** First claims of CLAIMS new visitors, then one re-claim of each. */
async function claimRound(node: ChildNode, dir: string, round: number): Promise<{ first: Measured; again: Measured }> {
  const ids = await joinAndServe(node, 'Ec', CLAIMS, ADMIN_TOKEN);
  const file = join(dir, `ids-${node.process.pid}-${round}.txt`);
  writeFileSync(file, ids.join('\n'));
  const spec = { url: `${node.url}/generate_token`, amount: ids.length, claimIdsFile: file, eventId: 'Ec' };
  const first = await measure(node.process.pid!, spec);
  const again = await measure(node.process.pid!, spec);
  return { first, again };
}

const checkouts = [{ label: 'this checkout', bin: undefined as string | undefined, args: [] as string[] }];
if (process.argv[2]) {
  const args = (process.env.OTHER_ARGS ?? '').split(' ').filter(Boolean);
  checkouts.unshift({ label: `other (${[process.argv[2], ...args].join(' ')})`, bin: resolve(process.argv[2], 'bin/anteroom.js'), args });
}

const dir = mkdtempSync(join(tmpdir(), 'anteroom-claim-cost-'));
const nodes: ChildNode[] = [];
const bareServer = await startBare(SERVER_CPU);
try {
  const config = join(dir, 'rooms.json');
  writeFileSync(config, JSON.stringify({ events: [{ event_id: 'Ec', signing_algorithm: 'ES256' }] }));
  for (const [i, c] of checkouts.entries()) {
    const env: Record<string, string> = process.env.CPU_PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${resolve(process.env.CPU_PROF)}` } : {};
    const args = ['--data-dir', join(dir, `data-${i}`), '--config', config, '--admin-token', ADMIN_TOKEN, ...c.args];
    nodes.push(await startChildNode(args, env, { cpu: SERVER_CPU, ...(c.bin ? { bin: c.bin } : {}) }));
  }
  // Warm-up: keys created and loaded, code compiled.
  for (const node of nodes) await claimRound(node, dir, -1);
  const perSet: number[][] = checkouts.map(() => []);
  const bytesPerSet: number[][] = checkouts.map(() => []);
  const rates: number[][] = checkouts.map(() => []);
  const perReclaim: number[][] = checkouts.map(() => []);
  const reclaimRates: number[][] = checkouts.map(() => []);
  const barePost: number[] = [];
  const bare: number[] = [];
  const bareP1363: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const cost = bareSignCost(SERVER_CPU, 'ES256');
    bare.push(cost.micros);
    bareP1363.push(cost.p1363!);
    barePost.push((await measure(bareServer.pid!, { url: `${bareServer.url}/`, amount: CLAIMS, body: JSON.stringify({ event_id: 'Ec' }) })).cpuMicros);
    for (const [i, node] of nodes.entries()) {
      const { first, again } = await claimRound(node, dir, round);
      if (first.errors + again.errors > 0) throw new Error(`${checkouts[i]!.label}: ${first.errors + again.errors} failed claims`);
      perSet[i]!.push(first.cpuMicros);
      bytesPerSet[i]!.push(first.bytes);
      rates[i]!.push(first.rps);
      perReclaim[i]!.push(again.cpuMicros);
      reclaimRates[i]!.push(again.rps);
    }
  }
  const load = (await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ');
  const b = median(bare);
  console.log(`ES256 first claims, ${ROUNDS} rounds × ${CLAIMS} claims, server on CPU ${SERVER_CPU}; load average ${load}`);
  console.log(
    `  bare 3 ES256 signatures: ${b.toFixed(0)} µs CPU as src/tokens/signer.ts signs (KeyObject, DER → r || s; rounds ${bare.map((v) => v.toFixed(0)).join(', ')}), ` +
      `${median(bareP1363).toFixed(0)} µs with dsaEncoding 'ieee-p1363' (rounds ${bareP1363.map((v) => v.toFixed(0)).join(', ')})`,
  );
  for (const [i, c] of checkouts.entries()) {
    const m = median(perSet[i]!);
    console.log(
      `  ${c.label.padEnd(40)} ${m.toFixed(0).padStart(4)} µs CPU per new set (rounds ${perSet[i]!.map((v) => v.toFixed(0)).join(', ')}), ` +
        `${(m / b).toFixed(2)}× the bare signatures (signer's way), the rest ${(m - b).toFixed(0)} µs, ≈ ${Math.round(1e6 / m)} sets/s per core; ` +
        `measured rate ${Math.round(median(rates[i]!))}/s; written to disk ${Math.round(median(bytesPerSet[i]!))} B per set`,
    );
  }
  const post = median(barePost);
  // Issue 37: a new set beside its floor, a bare POST and three bare signatures measured in the same rounds.
  for (const [i, c] of checkouts.entries()) {
    const ratio = median(perSet[i]!) / (post + b);
    console.log(
      `  ${c.label.padEnd(40)} new set = ${ratio.toFixed(2)}× (bare POST ${post.toFixed(0)} µs + 3 bare ES256 signatures ${b.toFixed(0)} µs)  (target ≤ 1.5×) ${ratio < 1 ? 'UNDER ITS FLOOR: a measurement bug' : ratio <= 1.5 ? 'met' : 'NOT met'}`,
    );
  }
  console.log(`  re-claims of the same visitors (stored sets); bare node:http POST ${post.toFixed(0)} µs CPU (rounds ${barePost.map((v) => v.toFixed(0)).join(', ')})`);
  for (const [i, c] of checkouts.entries()) {
    const m = median(perReclaim[i]!);
    console.log(
      `  ${c.label.padEnd(40)} ${m.toFixed(0).padStart(4)} µs CPU per re-claim (rounds ${perReclaim[i]!.map((v) => v.toFixed(0)).join(', ')}), ` +
        `${(m / post).toFixed(2)}× a bare POST (target ≤ 1.5×) ${m / post < 1 ? 'UNDER ITS FLOOR: a measurement bug' : m / post <= 1.5 ? 'met' : 'NOT met'}, ≈ ${Math.round(1e6 / m)} re-claims/s per core; measured rate ${Math.round(median(reclaimRates[i]!))}/s`,
    );
  }
  if (checkouts.length === 2) {
    console.log(
      `  this / other, CPU per new set: ${(median(perSet[1]!) / median(perSet[0]!)).toFixed(2)}×, per re-claim: ${(median(perReclaim[1]!) / median(perReclaim[0]!)).toFixed(2)}×`,
    );
  }
} finally {
  await bareServer.stop();
  for (const node of nodes) {
    node.process.kill('SIGTERM');
    await node.exited;
  }
  rmSync(dir, { recursive: true, force: true });
}
