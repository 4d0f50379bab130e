// What the embedded store keeps on the JS heap with few and with many token sets, and what a full garbage
// collection then costs (issue 15: GC pauses of 100–270 ms had been seen with 1M token sets in the server).
// For each size: a database of N positions each with a token set (expiries spread over an hour), opened by
// SqliteStore (which builds its request index and active-token count from it); then five forced full GCs,
// their wall time and CPU time, the heap in use, the memory outside the heap (typed arrays), and the RSS.
//
//   ./node_modules/.bin/node --expose-gc bench/store-heap.ts        SIZES (default 1000,1000000)

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { prefillTokenSets } from './prefill-token-sets.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('usage: node --expose-gc bench/store-heap.ts');
  process.exit(2);
}
const SIZES = (process.env.SIZES ?? '1000,1000000').split(',').map(Number);
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const dir = mkdtempSync(join(tmpdir(), 'anteroom-store-heap-'));
try {
  console.log(`the store's heap, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const count of SIZES) {
    const path = join(dir, `${count}.db`);
    await prefillTokenSets(path, count, { expSpread: 3600 });
    gc();
    const before = getHeapStatistics().used_heap_size;
    const opening = performance.now();
    const store = new SqliteStore({ path });
    const opened = performance.now() - opening;
    const pauses: string[] = [];
    for (let i = 0; i < 5; i++) {
      const wall = performance.now();
      const cpu = process.cpuUsage();
      gc();
      const used = process.cpuUsage(cpu);
      pauses.push(`${(performance.now() - wall).toFixed(1)}/${((used.user + used.system) / 1000).toFixed(1)}`);
    }
    const heap = getHeapStatistics();
    console.log(
      `  ${count.toLocaleString('en-US').padStart(9)} token sets: opened in ${(opened / 1000).toFixed(1)} s; heap in use ${mib(before)} → ${mib(heap.used_heap_size)} MiB, ` +
        `outside the heap ${mib(heap.external_memory)} MiB, RSS ${mib(process.memoryUsage().rss)} MiB; full GCs (ms wall/CPU) ${pauses.join(', ')}`,
    );
    await store.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
