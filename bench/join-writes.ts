// Joins on the embedded SQLite store with a long queue: bytes written to disk and CPU per join, next to the
// Redis path measured in the same run (issue 15). The SQLite database is prefilled with QUEUE positions
// (default 1,000,000) in one bulk statement before the server starts, so the measurement itself is bounded
// (BENCH_SECONDS per run, default 10). Disk writes are /proc/<pid>/io `write_bytes` of the server process
// (the WAL and its checkpoints into the database file); CPU is user + system time from /proc/<pid>/stat; on
// Redis it is the Anteroom process plus redis-server (INFO cpu). Both are put beside a bare node:http POST
// measured on the same core in the same run (bench/bare-costs.ts).
//
//   ./node_modules/.bin/node bench/join-writes.ts     QUEUE, BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_SKIP_REDIS=1

import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Redis } from 'ioredis';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { startChildNode } from '../test/support/child-node.ts';
import { startRedisServer } from '../test/support/redis-server.ts';
import { runLoad } from './load-runner.ts';
import { cpuSeconds } from './proc-stats.ts';
import { barePostCost } from './bare-costs.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const QUEUE = Number(process.env.QUEUE ?? 1_000_000);
const SERVER_CPU = 1;
const LOAD_CPU = 0;
const ADMIN = ['--admin-token', 'bench-admin-token-0123456789', '--queue-position-expiry-period', '86400'];

export interface JoinCost {
  label: string;
  joins: number;
  rps: number;
  p99: number;
  errors: number;
  /** Bytes written to disk per join (SQLite only). */
  bytesPerJoin: number | null;
  /** CPU µs per join: the Anteroom process, plus redis-server on Redis. */
  cpuMicros: number;
}

function writeBytes(pid: number | undefined): number {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  return Number(/write_bytes: (\d+)/.exec(io)?.[1]);
}

/** Creates the database with `count` positions of event Sample, numbered 1..count, random UUIDs. */
function prefill(path: string, count: number): void {
  const store = new SqliteStore({ path, synchronous: 'normal' });
  void store.close();
  const db = new DatabaseSync(path);
  db.exec('PRAGMA synchronous = OFF');
  db.exec('BEGIN');
  const uuid = `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-a' ||
    substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO positions (event_id, position, request_id, entry_time) SELECT 'Sample', i, ${uuid}, 1700000000 FROM n`,
  ).run(count);
  db.prepare("INSERT INTO events (event_id, queue) VALUES ('Sample', ?) ON CONFLICT (event_id) DO UPDATE SET queue = excluded.queue").run(count);
  db.exec('COMMIT');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
}

async function measureJoins(label: string, args: string[], extraCpu: () => Promise<number>, disk: boolean): Promise<JoinCost> {
  const node = await startChildNode([...ADMIN, ...args], {}, { cpu: SERVER_CPU });
  const pid = node.process.pid;
  try {
    // Warm-up: the first joins load the event's row and compile the code paths.
    await runLoad({ url: `${node.url}/assign_queue_num`, connections: CONNECTIONS, amount: 2000, method: 'POST', body: '{"event_id":"Sample"}' }, LOAD_CPU);
    const bytesBefore = disk ? writeBytes(pid) : 0;
    const cpuBefore = (cpuSeconds(pid) ?? 0) + (await extraCpu());
    const r = await runLoad(
      { url: `${node.url}/assign_queue_num`, connections: CONNECTIONS, durationSec: SECONDS, method: 'POST', body: '{"event_id":"Sample"}' },
      LOAD_CPU,
    );
    const cpuAfter = (cpuSeconds(pid) ?? 0) + (await extraCpu());
    const bytesAfter = disk ? writeBytes(pid) : 0;
    const joins = r.ok;
    return {
      label,
      joins,
      rps: r.rps,
      p99: r.p99,
      errors: r.non2xx + r.errors + r.timeouts,
      bytesPerJoin: disk ? (bytesAfter - bytesBefore) / joins : null,
      cpuMicros: ((cpuAfter - cpuBefore) * 1e6) / joins,
    };
  } finally {
    node.process.kill('SIGTERM');
    await node.exited;
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export function joinCostLine(c: JoinCost): string {
  return (
    `${c.label.padEnd(40)} ${fmt(c.rps).padStart(7)} joins/s  p99 ${String(c.p99).padStart(4)} ms  ` +
    `${c.cpuMicros.toFixed(1).padStart(6)} µs CPU/join  ${c.bytesPerJoin === null ? '        –' : `${fmt(c.bytesPerJoin).padStart(6)} B written/join`}  errors ${c.errors}`
  );
}

/** SQLite at QUEUE positions, and Redis, side by side. */
export async function runJoinWrites(): Promise<JoinCost[]> {
  const results: JoinCost[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-bench-joins-'));
  try {
    const started = Date.now();
    prefill(join(dir, 'anteroom.db'), QUEUE);
    console.log(`prefilled ${fmt(QUEUE)} positions in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    results.push(await measureJoins(`SQLite (FULL), queue ${fmt(QUEUE)}`, ['--data-dir', dir], async () => 0, true));
    console.log(joinCostLine(results.at(-1)!));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (process.env.BENCH_SKIP_REDIS !== '1') {
    const redis = await startRedisServer({ appendonly: true, appendfsync: 'everysec' });
    const client = new Redis(redis.url);
    const redisCpu = async () => {
      const info = await client.info('cpu');
      const get = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
      return get('used_cpu_sys') + get('used_cpu_user');
    };
    try {
      results.push(await measureJoins('Redis (AOF everysec), node + redis-server', ['--store', redis.url, '--redis-key-prefix', 'bench-j:'], redisCpu, false));
      console.log(joinCostLine(results.at(-1)!));
    } finally {
      client.disconnect();
      await redis.destroy();
    }
    const [sqlite, onRedis] = results as [JoinCost, JoinCost];
    console.log(`SQLite vs Redis, CPU per join: ${(sqlite.cpuMicros / onRedis.cpuMicros).toFixed(2)}× (target ≤ 1.5×)`);
  }
  // The floor, on the same core in the same run: a bare node:http handler answering the same POST.
  const post = await barePostCost(SERVER_CPU, LOAD_CPU, { connections: CONNECTIONS, durationSec: SECONDS });
  console.log(
    `bare node:http POST ${post.toFixed(1)} µs CPU; CPU per join ÷ bare POST: ` +
      results.map((r) => `${r.label.split(',')[0]} ${(r.cpuMicros / post).toFixed(2)}×`).join(', '),
  );
  return results;
}

if (import.meta.main) await runJoinWrites();
