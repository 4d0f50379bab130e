// Issue 15's figures, side by side in one run on the embedded SQLite store (one server process pinned to CPU 1,
// autocannon on CPU 0), each bounded in time:
//
//   1. new token sets/s and CPU per set, RS256 vs ES256 vs EdDSA rooms (signing_algorithm), each beside its floor
//      measured on the same core in the same run: a bare node:http POST plus three bare signatures (bench/bare-costs.ts);
//   2. re-claims/s (stored sets, nothing signed) with 20,000 vs 1,000,000 token sets issued, beside a bare POST;
//   3. num_active_tokens and a /metrics scrape with 20,000 vs 1,000,000 active token sets (server CPU per call);
//   4. a reset of a queue of 1,000,000 positions while polls run: how long it takes, the slowest poll, the
//      polls' errors (dropped keep-alive connections), and the longest the event loop was held, measured inside
//      the server by bench/loop-stall.ts (CPU, and wall clock less the time the scheduler kept it waiting);
//      meanwhile 2 connections join another room (writes that need the write lock the purge takes chunk by chunk);
//   5. the same for the room of 1,000,000 positions with 1,000,000 token sets (BENCH_SKIP_BIG_RESET=1 skips it).
//
// The 1M rooms are prefilled in the database before the server starts (room Big: positions and ES256 token
// records with stored signatures, random bytes as nothing verifies them here; room Queue: positions only), so no
// step waits on a million requests.
//
//   ./node_modules/.bin/node bench/issue15.ts      BENCH_SECONDS (re-claim runs, default 8), BIG (default 1,000,000),
//                                                 BENCH_CONNECTIONS (claim runs, default 100),
//                                                 BENCH_PARTS (the sections, default 1,2,3,4,5)

import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { Agent, request } from 'undici';
import { startChildNode, type ChildNode } from '../test/support/child-node.ts';
import { joinAndServe } from './join-and-serve.ts';
import { runLoad } from './load-runner.ts';
import { cpuSeconds } from './proc-stats.ts';
import { barePostCost, bareSignCost } from './bare-costs.ts';
import type { SigningAlgorithm } from '../src/domain/ports/tokens.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/** The sections to run (BENCH_PARTS=2,5, say); all by default. BENCH_SKIP_BIG_RESET=1 leaves out 5. */
const PARTS = new Set((process.env.BENCH_PARTS ?? '1,2,3,4,5').split(',').map(Number));
if (process.env.BENCH_SKIP_BIG_RESET === '1') PARTS.delete(5);
const BIG = Number(process.env.BIG ?? 1_000_000);
const SMALL = 20_000;
const SERVER_CPU = 1;
const LOAD_CPU = 0;
/** Client connections of the claim runs (BENCH_CONNECTIONS): first claims in flight at once, so the group commit's batch size. */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ROOMS = { RS256: 'Rsa', ES256: 'Ec', EdDSA: 'Ed' } as const;
const LOOP_STALL = fileURLToPath(new URL('./loop-stall.ts', import.meta.url));

interface LoopStall {
  ticks: number;
  wallMaxMs: number;
  stallMaxMs: number;
  stallAtMs: number;
  stallAtTime: string;
  watchedMs: number;
  cpuMaxMs: number;
  gcMaxMs: number;
  gcAtMs: number;
  delayMaxMs: number;
  delayP99Ms: number;
}

/** Runs `work` inside a bench/loop-stall.ts watch of the server's event loop (SIGUSR2 starts and ends it). */
async function watchLoop<T>(node: ChildNode, work: () => Promise<T>): Promise<{ result: T; stall: LoopStall }> {
  const seen = node.output().split('loop-stall ').length;
  node.process.kill('SIGUSR2');
  const result = await work();
  const reported = new Promise<void>((resolve) => {
    const check = () => {
      if (node.output().split('loop-stall ').length > seen && node.output().endsWith('\n')) {
        node.process.stderr?.off('data', check);
        resolve();
      }
    };
    node.process.stderr?.on('data', check);
  });
  node.process.kill('SIGUSR2');
  await reported;
  const line = node.output().split('loop-stall ')[seen]!.split('\n')[0]!;
  return { result, stall: JSON.parse(line) as LoopStall };
}

const stallLine = (s: LoopStall) =>
  `event loop held at most ${s.stallMaxMs} ms (wall clock less scheduler wait; target ≤ 50 ms; at ${(s.stallAtMs / 1000).toFixed(1)} s of ${(s.watchedMs / 1000).toFixed(1)}, ${s.stallAtTime}), ` +
  `at most ${s.cpuMaxMs} ms of CPU between two 1 ms ticks; longest GC pause ${s.gcMaxMs} ms (at ${(s.gcAtMs / 1000).toFixed(1)} s); ` +
  `longest wall-clock gap ${s.wallMaxMs} ms (monitorEventLoopDelay max ${s.delayMaxMs} ms, p99 ${s.delayP99Ms} ms)`;

/** Claims every ID once (autocannon, `amount` = the IDs): rate and server CPU per claim. */
async function claimAll(node: ChildNode, eventId: string, ids: string[], dir: string, seconds?: number) {
  const file = join(dir, `${eventId}-${ids.length}.txt`);
  writeFileSync(file, ids.join('\n'));
  const before = cpuSeconds(node.process.pid) ?? 0;
  const r = await runLoad(
    {
      url: `${node.url}/generate_token`,
      connections: CONNECTIONS,
      ...(seconds ? { durationSec: seconds } : { amount: ids.length }),
      method: 'POST',
      claimIdsFile: file,
      eventId,
    },
    LOAD_CPU,
  );
  const cpu = (cpuSeconds(node.process.pid) ?? 0) - before;
  return { rps: r.rps, p99: r.p99, errors: r.non2xx + r.errors + r.timeouts, cpuMicros: (cpu * 1e6) / Math.max(1, r.ok) };
}

/** Server CPU per request of `path` (sequential calls, `calls` of them) and the slowest answer. */
async function perCall(node: ChildNode, path: string, calls: number) {
  const before = cpuSeconds(node.process.pid) ?? 0;
  let slowest = 0;
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    const reply = await fetch(`${node.url}${path}`, { headers: admin });
    await reply.arrayBuffer();
    if (!reply.ok) throw new Error(`${path}: ${reply.status}`);
    slowest = Math.max(slowest, performance.now() - started);
  }
  return { cpuMicros: (((cpuSeconds(node.process.pid) ?? 0) - before) * 1e6) / calls, slowest };
}

/** The database with a room "Big" of `count` positions, all served, each with an ES256 token set (stored signatures). */
function prefillBig(path: string, count: number): void {
  const db = new DatabaseSync(path);
  db.exec('PRAGMA synchronous = OFF');
  const kid = (db.prepare("SELECT kid FROM signing_keys WHERE event_id = 'Big'").get() as { kid: string }).kid;
  const uuid = `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-a' ||
    substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;
  const now = Math.floor(Date.now() / 1000);
  // 64-byte ES256 signatures, base64url: 86 characters each. Random: nothing verifies them in this benchmark.
  const signature = `replace(replace(rtrim(base64(randomblob(64)), '='), '+', '-'), '/', '_')`;
  const hasBase64 = (() => {
    try {
      db.prepare('SELECT base64(x\'00\')').get();
      return true;
    } catch {
      return false;
    }
  })();
  const fakeSignatures = hasBase64 ? `${signature} || '.' || ${signature} || '.' || ${signature}` : `'${[0, 1, 2].map(() => randomBytes(64).toString('base64url')).join('.')}'`;
  db.exec('BEGIN');
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO positions (event_id, position, request_id, entry_time) SELECT 'Big', i, ${uuid}, ? FROM n`,
  ).run(count, now);
  db.prepare(
    `INSERT INTO tokens (event_id, request_id, position, iat, nbf, exp, iss, kid, status, nonce, signatures)
     SELECT 'Big', request_id, position, ?1, ?1, ?1 + 86400, 'https://bench.example', ?2, 0, NULL, ${fakeSignatures} FROM positions WHERE event_id = 'Big' ORDER BY request_id`,
  ).run(now, `${kid}-es256`);
  db.prepare("UPDATE events SET queue = ?1, serving = ?1, max_serving = ?1, tokens = ?1 WHERE event_id = 'Big'").run(count);
  db.prepare("INSERT OR REPLACE INTO serving_history (event_id, value, reached_at) VALUES ('Big', ?, ?)").run(count, now);
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO positions (event_id, position, request_id, entry_time) SELECT 'Queue', i, ${uuid}, ? FROM n`,
  ).run(count, now);
  db.prepare("UPDATE events SET queue = ? WHERE event_id = 'Queue'").run(count);
  db.exec('COMMIT');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  // Written with synchronous=OFF: hundreds of MB may still wait in the page cache for write-back. A database
  // filled over hours would be on disk; flushed here, so that the first fsync of the server's (the reset's
  // first checkpoint) does not pay for the prefill (it held a join's commit 300 ms in one run).
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function sampleIds(path: string, eventId: string, n: number): string[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return (db.prepare('SELECT request_id FROM positions WHERE event_id = ? ORDER BY random() LIMIT ?').all(eventId, n) as { request_id: string }[]).map(
      (r) => r.request_id,
    );
  } finally {
    db.close();
  }
}

/**
 * Polls the room's /serving_num from 20 keep-alive connections while `work` runs, and joins room `Writes` from 2
 * more (writes of another room: each needs the write lock the reset's purge thread takes chunk by chunk): the
 * slowest poll and join, and the errors.
 */
async function pollWhile(node: ChildNode, room: string, work: () => Promise<void>) {
  const agent = new Agent({ connections: 22, pipelining: 1 });
  let running = true;
  let slowest = 0;
  let polls = 0;
  let errors = 0;
  let joins = 0;
  let slowestJoin = 0;
  const joiner = async () => {
    while (running) {
      const started = performance.now();
      try {
        const reply = await request(`${node.url}/assign_queue_num`, {
          dispatcher: agent,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ event_id: 'Writes' }),
        });
        await reply.body.arrayBuffer();
        if (reply.statusCode !== 200) errors++;
      } catch {
        errors++;
      }
      slowestJoin = Math.max(slowestJoin, performance.now() - started);
      joins++;
    }
  };
  const poller = async () => {
    while (running) {
      const started = performance.now();
      try {
        const reply = await request(`${node.url}/serving_num?event_id=${room}`, { dispatcher: agent });
        await reply.body.arrayBuffer();
        if (reply.statusCode !== 200) errors++;
      } catch {
        errors++;
      }
      slowest = Math.max(slowest, performance.now() - started);
      polls++;
    }
  };
  const pollers = [...Array.from({ length: 20 }, poller), joiner(), joiner()];
  const started = performance.now();
  await work();
  const took = performance.now() - started;
  running = false;
  await Promise.all(pollers);
  await agent.close();
  return { took, slowest, polls, errors, joins, slowestJoin };
}

export async function runIssue15Bench(): Promise<string[]> {
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-bench-15-'));
  const dataDir = join(dir, 'data');
  const config = join(dir, 'rooms.json');
  writeFileSync(
    config,
    JSON.stringify({
      events: [
        { event_id: ROOMS.RS256 },
        { event_id: ROOMS.ES256, signing_algorithm: 'ES256' },
        { event_id: ROOMS.EdDSA, signing_algorithm: 'EdDSA' },
        { event_id: 'Small', signing_algorithm: 'ES256', validity_period: 86400 },
        { event_id: 'Big', signing_algorithm: 'ES256' },
        { event_id: 'Queue' },
        { event_id: 'Writes' },
      ],
    }),
  );
  const args = ['--data-dir', dataDir, '--config', config, '--admin-token', ADMIN_TOKEN, '--queue-position-expiry-period', '86400'];
  try {
    // A first start creates the rooms' keys; the 1M room is then written into the database directly.
    let node = await startChildNode(args, {}, { cpu: SERVER_CPU });
    await fetch(`${node.url}/public_key?event_id=Big`);
    await fetch(`${node.url}/serving_num?event_id=Queue`);
    node.process.kill('SIGTERM');
    await node.exited;
    const started = Date.now();
    prefillBig(join(dataDir, 'anteroom.db'), BIG);
    say(`prefilled ${fmt(BIG)} positions with ES256 token sets (room Big) and ${fmt(BIG)} positions (room Queue) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // What num_active_tokens and every /metrics scrape ran before issue 15, on the same database, for the ratio.
    const before = (() => {
      const db = new DatabaseSync(join(dataDir, 'anteroom.db'), { readOnly: true });
      try {
        const statement = db.prepare('SELECT count(*) AS n FROM tokens WHERE event_id = ? AND exp >= ? AND status = 0');
        statement.get('Big', 0);
        const t = performance.now();
        for (let i = 0; i < 3; i++) statement.get('Big', Math.floor(Date.now() / 1000));
        return (performance.now() - t) / 3;
      } finally {
        db.close();
      }
    })();
    const opening = Date.now();
    node = await startChildNode(args, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${LOOP_STALL}` }, { cpu: SERVER_CPU });
    say(`server started on the prefilled database in ${((Date.now() - opening) / 1000).toFixed(1)} s (request index and active-token count built at open)`);
    try {
      // The floor beside parts 1 and 2, on the server's core in this run: a bare node:http POST.
      const post = PARTS.has(1) || PARTS.has(2) ? await barePostCost(SERVER_CPU, LOAD_CPU, { connections: CONNECTIONS, amount: 15_000 }) : 0;
      if (PARTS.has(1)) {
        say('\n1. New token sets (each visitor claims once), by signing_algorithm');
        const issue: Record<string, { rps: number; cpuMicros: number }> = {};
        for (const [algorithm, room] of Object.entries(ROOMS)) {
          const ids = await joinAndServe(node, room, algorithm === 'RS256' ? 4000 : 15_000, ADMIN_TOKEN);
          const r = await claimAll(node, room, ids, dir);
          issue[algorithm] = r;
          say(`   ${algorithm.padEnd(6)} ${fmt(r.rps).padStart(7)} new token sets/s   ${r.cpuMicros.toFixed(0).padStart(5)} µs server CPU per set   p99 ${r.p99} ms   errors ${r.errors}`);
      }
      say(`   the floor on the same core: a bare node:http POST ${post.toFixed(0)} µs CPU; three bare signatures (a set's three tokens):`);
      for (const algorithm of Object.keys(ROOMS) as SigningAlgorithm[]) {
        const signatures = bareSignCost(SERVER_CPU, algorithm).micros;
        const floor = post + signatures;
        say(
          `   ${algorithm.padEnd(6)} ${signatures.toFixed(0).padStart(5)} µs; a set ÷ (bare POST + bare signatures) = ${(issue[algorithm]!.cpuMicros / floor).toFixed(2)}×, ` +
            `the server's own part ${(issue[algorithm]!.cpuMicros - floor).toFixed(0)} µs`,
        );
      }
      const rs = issue.RS256!;
      say(
        `   ratios to RS256 by CPU per set: ES256 ${(rs.cpuMicros / issue.ES256!.cpuMicros).toFixed(1)}×, EdDSA ${(rs.cpuMicros / issue.EdDSA!.cpuMicros).toFixed(1)}×; ` +
          `ES256 on one core ≈ ${fmt(1e6 / issue.ES256!.cpuMicros)} sets/s (target ≥ 5,000)`,
      );
      }

      if (PARTS.has(2) || PARTS.has(3)) {
        say(`\n2. Re-claims (stored sets, nothing signed), ${SECONDS} s each, 20,000 IDs cycled`);
        const smallIds = await joinAndServe(node, 'Small', SMALL, ADMIN_TOKEN);
        await claimAll(node, 'Small', smallIds, dir);
        const small = await claimAll(node, 'Small', smallIds, dir, SECONDS);
        const big = await claimAll(node, 'Big', sampleIds(join(dataDir, 'anteroom.db'), 'Big', SMALL), dir, SECONDS);
        say(`   ${fmt(SMALL)} sets issued     ${fmt(small.rps).padStart(7)} re-claims/s   ${small.cpuMicros.toFixed(0).padStart(4)} µs CPU each   p99 ${small.p99} ms   errors ${small.errors}`);
        say(`   ${fmt(BIG)} sets issued ${fmt(big.rps).padStart(7)} re-claims/s   ${big.cpuMicros.toFixed(0).padStart(4)} µs CPU each   p99 ${big.p99} ms   errors ${big.errors}`);
        say(`   a re-claim ÷ a bare POST (${post.toFixed(0)} µs, same core, same run): ${(small.cpuMicros / post).toFixed(2)}× at ${fmt(SMALL)}, ${(big.cpuMicros / post).toFixed(2)}× at ${fmt(BIG)}`);
        say(`   1M vs 20k: ${(big.rps / small.rps).toFixed(2)}× by rate, ${(small.cpuMicros / big.cpuMicros).toFixed(2)}× by CPU (1.00× = not data-sized; target ≥ 10,000/s at 1M)`);

        say('\n3. Data-sized reads: server CPU per call (sequential calls)');
        for (const [label, room, count] of [['num_active_tokens', 'Small', SMALL], ['num_active_tokens', 'Big', BIG]] as const) {
          const r = await perCall(node, `/private/num_active_tokens?event_id=${room}`, 200);
          say(`   ${label} with ${fmt(count).padStart(9)} active sets: ${r.cpuMicros.toFixed(0).padStart(5)} µs CPU per call, slowest ${r.slowest.toFixed(1)} ms`);
      }
      const metrics = await perCall(node, '/metrics', 50);
      say(`   /metrics scrape (all rooms, ${fmt(BIG + SMALL)} active sets): ${metrics.cpuMicros.toFixed(0)} µs CPU per scrape, slowest ${metrics.slowest.toFixed(1)} ms`);
      say(`   before (the count(*) over the tokens table each of them ran, same database, in-process): ${before.toFixed(1)} ms for the ${fmt(BIG)} sets`);
      }

      const resetWatched = async (room: string, label: string) => {
        say(`\n${label}, 20 keep-alive pollers running`);
        const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
        const { result: reset, stall } = await watchLoop(node, () =>
          pollWhile(node, room, async () => {
            const reply = await fetch(`${node.url}/private/reset_initial_state`, {
              method: 'POST',
              headers: admin,
              body: JSON.stringify({ event_id: room }),
            });
            if (!reply.ok) throw new Error(`reset_initial_state: ${reply.status} ${await reply.text()}`);
          }),
        );
        say(
          `   reset took ${(reset.took / 1000).toFixed(1)} s (load average ${load}); ${fmt(reset.polls)} polls meanwhile, slowest ${reset.slowest.toFixed(0)} ms; ` +
            `${fmt(reset.joins)} joins of another room, slowest ${reset.slowestJoin.toFixed(0)} ms; errors ${reset.errors}`,
        );
        say(`   ${stallLine(stall)}`);
      };
      if (PARTS.has(4)) await resetWatched('Queue', `4. reset_initial_state of a queue of ${fmt(BIG)} positions`);
      if (PARTS.has(5)) {
        await resetWatched('Big', `5. reset_initial_state of ${fmt(BIG)} positions with ${fmt(BIG)} token sets`);
      }
    } finally {
      node.process.kill('SIGTERM');
      await node.exited;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

if (import.meta.main) await runIssue15Bench();
