// What a claim reads of SQLite, in-process, with 20,000 and 1,000,000 token sets: the four statements the store
// ran before (position row, when it was served, token set, left) against the one statement it runs now
// (findClaimRow in src/store/sqlite/sqlite-store.ts), each with the memory map off and on (PRAGMA mmap_size, the
// store's MMAP_BYTES). CPU and wall time per read, over random positions, measured in the same process in
// alternation; the second of two passes is reported (the first warms the page cache).
//
//   ./node_modules/.bin/node bench/claim-read.ts        READS (per pass, default 200,000), SIZES (default 20000,1000000)

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

const READS = Number(process.env.READS ?? 200_000);
const SIZES = (process.env.SIZES ?? '20000,1000000').split(',').map(Number);
const MMAP = 2 ** 31;

/** A database (the store's schema) with `count` positions, each with a token set of three 86-character signatures. */
async function prefill(path: string, count: number): Promise<void> {
  await new SqliteStore({ path }).close();
  const db = new DatabaseSync(path);
  db.exec('PRAGMA synchronous = OFF');
  const signature = 'substr(hex(randomblob(43)), 1, 86)';
  db.exec('BEGIN');
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO positions (event_id, position, request_id, entry_time) SELECT 'Big', i, lower(hex(randomblob(16))), 1 FROM n`,
  ).run(count);
  db.prepare(
    `INSERT INTO tokens (event_id, request_id, position, iat, nbf, exp, iss, kid, status, nonce, signatures)
     SELECT 'Big', request_id, position, 1, 1, 99999999999, 'https://bench.example', 'k', 0, NULL,
       ${signature} || '.' || ${signature} || '.' || ${signature}
     FROM positions WHERE event_id = 'Big' ORDER BY request_id`,
  ).run();
  db.prepare("INSERT OR REPLACE INTO serving_history (event_id, value, reached_at) VALUES ('Big', ?, 1)").run(count);
  db.exec('COMMIT');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
}

function measure(path: string, count: number, mmap: number): Record<'four' | 'one', { cpu: number; wall: number }> {
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA mmap_size = ${mmap}`);
  const positionRow = db.prepare('SELECT request_id, entry_time FROM positions WHERE event_id = ? AND position = ?');
  const servedAt = db.prepare('SELECT reached_at FROM serving_history WHERE event_id = ? AND value >= ? ORDER BY value LIMIT 1');
  const getToken = db.prepare(
    'SELECT request_id, position, iat, nbf, exp, iss, kid, status, nonce, signatures FROM tokens WHERE event_id = ? AND position = ?',
  );
  const isLeft = db.prepare('SELECT 1 AS found FROM left_positions WHERE event_id = ? AND position = ?');
  const claimRow = db.prepare(
    `SELECT p.request_id AS position_request_id, p.position AS at, p.entry_time,
       (SELECT reached_at FROM serving_history WHERE event_id = ?1 AND value >= ?2 ORDER BY value LIMIT 1) AS served_at,
       EXISTS (SELECT 1 FROM left_positions WHERE event_id = ?1 AND position = ?2) AS is_left,
       t.request_id, t.position, t.iat, t.nbf, t.exp, t.iss, t.kid, t.status, t.nonce, t.signatures
     FROM positions p LEFT JOIN tokens t ON t.event_id = ?1 AND t.position = ?2
     WHERE p.event_id = ?1 AND p.position = ?2`,
  );
  const ways = {
    four: (p: number) => [positionRow.get('Big', p), servedAt.get('Big', p), getToken.get('Big', p), isLeft.get('Big', p)],
    one: (p: number) => claimRow.get('Big', p),
  };
  const positions = Array.from({ length: READS }, () => 1 + Math.floor(Math.random() * count));
  const result = { four: { cpu: 0, wall: 0 }, one: { cpu: 0, wall: 0 } };
  for (let pass = 0; pass < 2; pass++) {
    for (const [name, read] of Object.entries(ways) as ['four' | 'one', (p: number) => unknown][]) {
      const cpu = process.cpuUsage();
      const wall = performance.now();
      for (const p of positions) read(p);
      const used = process.cpuUsage(cpu);
      result[name] = { cpu: (used.user + used.system) / READS, wall: ((performance.now() - wall) * 1000) / READS };
    }
  }
  db.close();
  return result;
}

const dir = mkdtempSync(join(tmpdir(), 'anteroom-claim-read-'));
try {
  console.log(`claim reads, in-process, ${READS.toLocaleString('en-US')} random positions per pass; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const count of SIZES) {
    const path = join(dir, `${count}.db`);
    const started = Date.now();
    await prefill(path, count);
    console.log(`  ${count.toLocaleString('en-US')} token sets (prefilled in ${((Date.now() - started) / 1000).toFixed(1)} s):`);
    const off = measure(path, count, 0);
    const on = measure(path, count, MMAP);
    const line = (label: string, m: { cpu: number; wall: number }) =>
      console.log(`    ${label.padEnd(34)} ${m.cpu.toFixed(1).padStart(5)} µs CPU (${(m.cpu / off.four.cpu).toFixed(2)}×), ${m.wall.toFixed(1).padStart(5)} µs wall`);
    line('four statements, no memory map', off.four);
    line('one statement, no memory map', off.one);
    line('four statements, memory map', on.four);
    line('one statement, memory map (now)', on.one);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
