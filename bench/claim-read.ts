// What a claim reads of SQLite, in-process, with 20,000 and 1,000,000 token sets: the four statements the store
// ran before (position row, when it was served, token set, left) against the one statement it runs now
// (findClaimRow in src/store/sqlite/token-sets.ts), each with the memory map off and on (PRAGMA mmap_size, the
// store's MMAP_BYTES). CPU and wall time per read, over random positions, measured in the same process in
// alternation; the second of two passes is reported (the first warms the page cache).
//
//   ./node_modules/.bin/node bench/claim-read.ts        READS (per pass, default 200,000), SIZES (default 20000,1000000)

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { CLAIM_ROW_SQL } from '../src/store/sqlite/token-sets.ts';
import { prefillTokenSets } from './prefill-token-sets.ts';

const READS = Number(process.env.READS ?? 200_000);
const SIZES = (process.env.SIZES ?? '20000,1000000').split(',').map(Number);
const MMAP = 2 ** 31;

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
  const claimRow = db.prepare(CLAIM_ROW_SQL);
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
    const signature = 'substr(hex(randomblob(43)), 1, 86)';
    await prefillTokenSets(path, count, { signatures: `${signature} || '.' || ${signature} || '.' || ${signature}` });
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
