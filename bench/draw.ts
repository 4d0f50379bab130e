// The draw of a large pre-queue while visitors poll: how long the draw takes, and the longest time the event
// loop of the node running it was blocked (perf_hooks.monitorEventLoopDelay, max) — the target is < 50 ms, so
// that no poll waits behind the draw for longer. Also the first GET /draw after it (built once, ≈ 6.6 MB for
// 100,000 entries) and the same loop measure while it is built. Never fails a test suite.
//
//   ./node_modules/.bin/node bench/draw.ts        BENCH_DRAW_ENTRIES (default 100000),
//                                                 BENCH_DRAW_STORE=sqlite (a file, WAL, synchronous FULL) | redis,
//                                                 BENCH_DRAW_POLL_RATE (req/s of each poller, default 1000),
//                                                 BENCH_DRAW_POLL_SECONDS (default 30)
//
// The node runs in this process; the pollers (autocannon, bench/load.ts) in two others, pinned to CPU 0 when
// taskset exists: /serving_num (the fast path) and /queue_num of a visitor waiting for the draw (a store read).

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startNode } from '../src/app.ts';
import { checkPublishedDraw } from '../src/domain/draw.ts';
import { newDrawCandidate } from '../src/domain/draw-runner.ts';
import type { Store } from '../src/domain/ports/store.ts';
import { RedisStore } from '../src/store/redis/redis-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { eventSettings, TEST_CREDENTIALS, testConfig, TestClock } from '../test/support/node.ts';
import { startRedisServer, type RedisServer } from '../test/support/redis-server.ts';
import { runLoad, type LoadResult } from './load-runner.ts';

const ENTRIES = Number(process.env.BENCH_DRAW_ENTRIES ?? 100_000);
const STORE = (process.env.BENCH_DRAW_STORE ?? 'sqlite') as 'sqlite' | 'redis';
const LOAD_CPU = 0;
const START_MS = Date.UTC(2026, 10, 24, 18, 0, 0);
const EVENT = 'drop';

const ms = (ns: number) => ns / 1e6;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const sleep = (delayMs: number) => new Promise((resolve) => setTimeout(resolve, delayMs));

/** The longest event-loop block while `work` runs, in ms (resolution 1 ms), and how long it took. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; maxBlockMs: number; p99BlockMs: number; tookMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const started = performance.now();
  const result = await work();
  const tookMs = performance.now() - started;
  histogram.disable();
  return { result, maxBlockMs: ms(histogram.max), p99BlockMs: ms(histogram.percentile(99)), tookMs };
}

async function openStore(dir: string): Promise<{ store: Store; redis?: RedisServer }> {
  if (STORE === 'redis') {
    const redis = await startRedisServer();
    return { store: new RedisStore({ url: redis.url, readyTimeoutMs: 5000 }), redis };
  }
  return { store: new SqliteStore({ path: join(dir, 'anteroom.db') }) };
}

const dir = mkdtempSync(join(tmpdir(), 'anteroom-bench-draw-'));
const { store, redis } = await openStore(dir);
const clock = new TestClock(START_MS - 600_000);
const node = await startNode(
  testConfig(
    {
      events: [
        eventSettings(EVENT, {
          prequeue_start_time: new Date(START_MS - 3_600_000).toISOString(),
          event_start_time: new Date(START_MS).toISOString(),
          shuffle_at_event_start: true,
        }),
      ],
    },
    dir,
  ),
  { credentials: TEST_CREDENTIALS, jobs: false, clock: clock.now, store },
);

try {
  process.stdout.write(`Draw of ${fmt(ENTRIES)} pre-queue entries, store ${STORE}; ${cpus()[0]?.model ?? 'unknown CPU'} ×${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB\n`);
  const filling = performance.now();
  const candidate = newDrawCandidate();
  let waiting = '';
  for (let i = 0; i < ENTRIES; i += 1000) {
    const joins = Array.from({ length: Math.min(1000, ENTRIES - i) }, () => ({ requestId: randomUUID(), entryTime: Math.floor(clock.now() / 1000) }));
    waiting ||= joins[0]!.requestId;
    await store.joinPrequeue(EVENT, joins, candidate);
  }
  process.stdout.write(`pre-queue filled in ${fmt(performance.now() - filling)} ms\n`);

  // Pollers for longer than the draw and the first /draw take together; the draw starts once they run.
  const POLL_SECONDS = Number(process.env.BENCH_DRAW_POLL_SECONDS ?? 30);
  // A steady rate the node answers without queueing, so that a late answer is the draw's doing, not the load's.
  const POLL_RATE = Number(process.env.BENCH_DRAW_POLL_RATE ?? 1000);
  const polls: Promise<LoadResult>[] = [
    runLoad({ url: `${node.publicUrl}/serving_num?event_id=${EVENT}`, connections: 50, durationSec: POLL_SECONDS, rate: POLL_RATE }, LOAD_CPU),
    runLoad(
      { url: `${node.publicUrl}/queue_num?event_id=${EVENT}&request_id=${waiting}`, connections: 50, durationSec: POLL_SECONDS, rate: POLL_RATE },
      LOAD_CPU,
    ),
  ];
  await sleep(2000);
  const idle = await measured(() => sleep(2000));

  clock.ms = START_MS;
  const draw = await measured(() => node.room.runDraws());
  const counters = await node.room.counters(EVENT);
  if (counters.queue !== ENTRIES || !(await node.room.drawDone(EVENT))) throw new Error(`the draw numbered ${counters.queue} of ${ENTRIES}`);

  clock.advance(2); // past the draw record's one-second freshness
  const published = await measured(async () => {
    const response = await fetch(`${node.publicUrl}/draw?event_id=${EVENT}`);
    return { bytes: (await response.arrayBuffer()).byteLength, status: response.status };
  });
  const again = await measured(async () => (await fetch(`${node.publicUrl}/draw?event_id=${EVENT}`)).arrayBuffer());
  const [servingPolls, queuePolls] = await Promise.all(polls);

  const body = JSON.parse((await (await fetch(`${node.publicUrl}/draw?event_id=${EVENT}`)).text())) as {
    algorithm: string; commitment: string; seed: string; entries: string[];
  };
  const verified = await checkPublishedDraw(body);
  if (!verified.ok || body.entries.length !== ENTRIES) throw new Error('the published draw does not verify');

  const row = (label: string, m: { maxBlockMs: number; p99BlockMs: number; tookMs: number }) =>
    `${label.padEnd(44)} took ${fmt(m.tookMs).padStart(6)} ms   longest event-loop block ${m.maxBlockMs.toFixed(1).padStart(6)} ms   p99 ${m.p99BlockMs.toFixed(1)} ms`;
  process.stdout.write(`${row('polls only (2 s, before the start)', idle)}\n`);
  process.stdout.write(`${row(`the draw (${fmt(ENTRIES)} entries)`, draw)}\n`);
  process.stdout.write(`${row(`first GET /draw (${(published.result.bytes / 1e6).toFixed(1)} MB, built)`, published)}\n`);
  process.stdout.write(`${row('second GET /draw (from memory)', again)}\n`);
  for (const [label, r] of [['/serving_num polls', servingPolls], ['/queue_num polls (waiting for the draw)', queuePolls]] as [string, LoadResult][]) {
    process.stdout.write(`${label.padEnd(44)} ${fmt(r.rps).padStart(6)} req/s   p99 ${r.p99} ms   max ${r.max} ms   errors ${r.non2xx + r.errors + r.timeouts}\n`);
  }
  process.stdout.write(`target: longest block < 50 ms — ${draw.maxBlockMs < 50 && published.maxBlockMs < 50 ? 'met' : 'NOT met'}\n`);
} finally {
  await node.close();
  await redis?.destroy();
  rmSync(dir, { recursive: true, force: true });
}
