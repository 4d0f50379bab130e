// Redis memory per queued visitor: starts a private redis-server, joins N visitors (default 1,000,000)
// through the Redis store in batches, and prints the growth of used_memory divided by N. Target: ≤ 200 bytes.
//
//   ./node_modules/.bin/node bench/redis-memory.ts [--visitors 1000000] [--batch 500] [--concurrency 8]
//                                                  [--joins-per-second 10000]
//
// Entry times advance by one second every --joins-per-second joins, as they would under that intake rate;
// the store keeps one entry-time run per distinct second, so the rate barely changes the result.

import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { RedisStore } from '../src/store/redis/redis-store.ts';
import { startRedisServer } from '../test/support/redis-server.ts';

const { values } = parseArgs({
  options: {
    visitors: { type: 'string', default: '1000000' },
    batch: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '8' },
    'joins-per-second': { type: 'string', default: '10000' },
  },
});
const visitors = Number(values.visitors);
const batchSize = Number(values.batch);
const concurrency = Number(values.concurrency);
const joinsPerSecond = Number(values['joins-per-second']);

async function usedMemory(client: Redis): Promise<number> {
  const info = await client.info('memory');
  const match = /^used_memory:(\d+)/m.exec(info);
  if (!match) throw new Error('INFO memory has no used_memory');
  return Number(match[1]);
}

// No append-only file: its rewrite buffers would be counted in used_memory and blur the figure.
const server = await startRedisServer({ appendonly: false });
const store = new RedisStore({ url: server.url, keyPrefix: 'bench:', commandTimeoutMs: 30_000 });
const inspector = new Redis(server.url);
try {
  // Load every script and create the event's counters first, so only per-visitor growth is measured.
  const event = 'memory-bench';
  await store.assignPositions('warm-up', [{ requestId: randomUUID(), entryTime: 0 }]);
  await store.incrementServing(event, 0, 0);
  const before = await usedMemory(inspector);

  const startedAt = performance.now();
  const baseTime = Math.floor(Date.now() / 1000);
  let next = 0;
  const worker = async () => {
    while (next < visitors) {
      const first = next;
      const count = Math.min(batchSize, visitors - first);
      next += count;
      const joins = Array.from({ length: count }, (_, i) => ({
        requestId: randomUUID(),
        entryTime: baseTime + Math.floor((first + i) / joinsPerSecond),
      }));
      await store.assignPositions(event, joins);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - startedAt) / 1000;

  const after = await usedMemory(inspector);
  const counters = await store.getCounters(event);
  if (counters.queue !== visitors) throw new Error(`expected ${visitors} positions, store has ${counters.queue}`);
  const positionsKey = await inspector.call('MEMORY', 'USAGE', `bench:{${event}}:rq`, 'SAMPLES', '0');
  const runs = await inspector.zcard(`bench:{${event}}:et`);

  const perVisitor = (after - before) / visitors;
  console.log(`visitors:            ${visitors.toLocaleString('en')} in batches of ${batchSize} (${concurrency} in flight)`);
  console.log(`join time:           ${seconds.toFixed(1)} s (${Math.round(visitors / seconds).toLocaleString('en')} joins/s)`);
  console.log(`used_memory delta:   ${(after - before).toLocaleString('en')} bytes`);
  console.log(`per visitor:         ${perVisitor.toFixed(1)} bytes (target ≤ 200)`);
  console.log(`MEMORY USAGE rq:     ${Number(positionsKey).toLocaleString('en')} bytes; entry-time runs: ${runs}`);
  if (perVisitor > 200) process.exitCode = 1;
} finally {
  inspector.disconnect();
  await store.close();
  await server.destroy();
}
