// Joins/s and polls/s on Redis — one node, and two worker processes (--workers 2) — next to the embedded
// store, all measured in the same run with autocannon (bench/load.ts, in its own process). Starts its own
// redis-server with the append-only file on and `appendfsync everysec` (the usual production setting; set
// BENCH_APPENDFSYNC=always for the strictest one). Prints one line per run and a Markdown section for
// docs/benchmarks.md; never fails a test suite.
//
//   ./node_modules/.bin/node bench/redis.ts          BENCH_SECONDS (default 10), BENCH_CONNECTIONS (100),
//                                                    BENCH_PIN=0 to run unpinned, BENCH_APPENDFSYNC
//
// Anteroom's processes run on CPU 1 and the load generator on CPU 0 when taskset exists; redis-server is not
// pinned. Two workers pinned to one core measure the cost of the extra process, not a gain: on a machine
// with spare cores, run with BENCH_PIN=0 (or adapt SERVER_CPU) to see workers scale.

import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startChildNode, type ChildNode } from '../test/support/child-node.ts';
import { runLoad, type LoadResult } from './load-runner.ts';
import { startRedisServer } from '../test/support/redis-server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const PIN = process.env.BENCH_PIN !== '0';
const SERVER_CPU = PIN ? 1 : undefined;
const LOAD_CPU = PIN ? 0 : undefined;
const APPENDFSYNC = (process.env.BENCH_APPENDFSYNC ?? 'everysec') as 'everysec' | 'always';
const ADMIN_TOKEN = 'bench-admin-token-0123456789';

interface Row {
  label: string;
  joins?: LoadResult;
  polls?: LoadResult;
}

const load = (spec: Record<string, unknown>) => runLoad(spec, LOAD_CPU);

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const errors = (r: LoadResult) => r.non2xx + r.errors + r.timeouts;
const line = (label: string, r: LoadResult) =>
  `${label.padEnd(58)} ${fmt(r.rps).padStart(8)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   errors ${errors(r)}`;

async function measure(label: string, args: string[], what: { joins: boolean; polls: boolean }): Promise<Row> {
  const node: ChildNode = await startChildNode(
    ['--admin-token', ADMIN_TOKEN, '--queue-position-expiry-period', '86400', ...args],
    {},
    { cpu: SERVER_CPU },
  );
  const row: Row = { label };
  try {
    if (what.polls) {
      row.polls = await load({ url: `${node.url}/serving_num?event_id=Sample`, connections: CONNECTIONS, durationSec: SECONDS });
      console.log(line(`${label}: GET /serving_num`, row.polls));
    }
    if (what.joins) {
      row.joins = await load({
        url: `${node.url}/assign_queue_num`,
        connections: CONNECTIONS,
        durationSec: SECONDS,
        method: 'POST',
        body: '{"event_id":"Sample"}',
      });
      console.log(line(`${label}: POST /assign_queue_num`, row.joins));
    }
  } finally {
    node.process.kill('SIGTERM');
    await node.exited;
  }
  return row;
}

function markdown(rows: readonly Row[], header: string): string {
  const cell = (r: LoadResult | undefined) => (r ? `${fmt(r.rps)} | ${r.p99} ms${errors(r) ? ` (${errors(r)} errors)` : ''}` : '– | –');
  return [
    `### Redis store (${header})`,
    '',
    '| configuration | joins/s | joins p99 | polls/s (`/serving_num`) | polls p99 |',
    '|---|---:|---:|---:|---:|',
    ...rows.map((row) => `| ${row.label} | ${cell(row.joins)} | ${cell(row.polls)} |`),
    '',
  ].join('\n');
}

/** Runs every configuration; returns the Markdown section (also printed). */
export async function runRedisBench(): Promise<string> {
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const header = `${new Date().toISOString().slice(0, 10)}, ${machine}; ${SECONDS} s per run, ${CONNECTIONS} connections; redis-server AOF appendfsync ${APPENDFSYNC}; ${PIN ? `Anteroom on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}` : 'unpinned'}`;
  console.log(`Anteroom on Redis — ${header}\n`);
  const redis = await startRedisServer({ appendonly: true, appendfsync: APPENDFSYNC });
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-bench-redis-'));
  const rows: Row[] = [];
  try {
    const all = { joins: true, polls: true };
    rows.push(await measure('embedded SQLite, 1 process', ['--data-dir', dir], all));
    rows.push(await measure('Redis, 1 node', ['--store', redis.url, '--redis-key-prefix', 'bench-1:'], all));
    rows.push(await measure('Redis, 2 workers (--workers 2)', ['--store', redis.url, '--redis-key-prefix', 'bench-2:', '--workers', '2'], all));
    rows.push(
      await measure('Redis, 1 node, hot-read cache off', ['--store', redis.url, '--redis-key-prefix', 'bench-3:', '--hot-read-ttl-ms', '0'], {
        joins: false,
        polls: true,
      }),
    );
  } finally {
    await redis.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  const section = markdown(rows, header);
  console.log(`\n${section}`);
  return section;
}

if (import.meta.main) await runRedisBench();
