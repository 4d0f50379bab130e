// The counter stream at scale: how many waiting pages one node keeps connected (GET /stream), how fast a move of
// the serving counter reaches all of them, and what that costs the server, on one core.
//
//   node bench/stream.ts [--visitors 50000] [--workers 4] [--changes 10]
//
// One node (`anteroom serve --workers W` on a private redis-server: the workers share the port) pinned to CPU 1,
// and listener processes (bench/stream-client.ts), each holding visitors/clients connections from its own
// loopback address, pinned to CPU 0. Why workers: a process here may hold at most 20,000 open files
// (`ulimit -Hn`), so 50,000 connections need at least three server processes — on one core all the same.
// Then the counter moves `--changes` times, one step a second, and for each move the time from the increment's
// answer to the last listener hearing the new value is measured. Figures: connections held, delivery time
// (median and worst of the moves; p50/p99 over every listener), server CPU per move and per delivered frame,
// server memory, and the requests a waiting page makes per minute with and without the stream.

import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startChildNode } from '../test/support/child-node.ts';
import { startRedisServer } from '../test/support/redis-server.ts';
import { cpuSeconds } from './proc-stats.ts';

const { values } = parseArgs({
  options: {
    visitors: { type: 'string', default: '50000' },
    workers: { type: 'string', default: '4' },
    clients: { type: 'string', default: '4' },
    changes: { type: 'string', default: '10' },
  },
});
const VISITORS = Number(values.visitors);
const WORKERS = Number(values.workers);
const CLIENTS = Number(values.clients);
const CHANGES = Number(values.changes);
const ADMIN_TOKEN = 'bench-stream-admin-token-0123456789';
const SERVER_CPU = 1;
const CLIENT_CPU = 0;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/** The node's processes: the primary and its workers (children). */
function nodePids(primary: number): number[] {
  const children = readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return [primary, ...children];
}
const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);
const rssMbOf = (pids: number[]) =>
  pids.reduce((sum, pid) => {
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return sum + Number(rss ?? 0) / 1024;
  }, 0);

function message<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { type: string; message?: string }) => {
      if (m.type === 'error') reject(new Error(m.message));
      else if (m.type === type) {
        child.off('message', onMessage);
        resolve(m as T);
      }
    };
    child.on('message', onMessage);
  });
}

async function main(): Promise<void> {
  console.log(`Anteroom counter stream benchmark — ${new Date().toISOString()}`);
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`);
  console.log(`${fmt(VISITORS)} listeners in ${CLIENTS} processes on CPU ${CLIENT_CPU}; one node, ${WORKERS} worker processes, on CPU ${SERVER_CPU}\n`);
  const redis = await startRedisServer({ appendonly: false });
  const perWorker = Math.ceil(VISITORS / WORKERS) + 1_000;
  const node = await startChildNode(
    ['--store', redis.url, '--workers', String(WORKERS), '--admin-token', ADMIN_TOKEN, '--stream-max-connections', String(perWorker)],
    {},
    { cpu: SERVER_CPU },
  );
  const clients: ChildProcess[] = [];
  try {
    const { hostname, port } = new URL(node.url);
    const pids = nodePids(node.process.pid!);
    const started = performance.now();
    const perClient = Math.ceil(VISITORS / CLIENTS);
    for (let i = 0; i < CLIENTS; i++) {
      const count = Math.min(perClient, VISITORS - i * perClient);
      clients.push(
        fork(fileURLToPath(new URL('./stream-client.ts', import.meta.url)), [hostname, port, 'Sample', String(count), `127.0.0.${2 + i}`], {
          execArgv: [],
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        }),
      );
      spawnPinned(clients[i]!.pid!, CLIENT_CPU);
    }
    const ready = await Promise.all(clients.map((c) => message<{ connections: number }>(c, 'ready')));
    const held = ready.reduce((sum, r) => sum + r.connections, 0);
    console.log(`connected: ${fmt(held)} streams in ${fmt((performance.now() - started) / 1000, 1)} s; server RSS ${fmt(rssMbOf(pids))} MB`);

    const increment = async () => {
      const response = await fetch(`${node.url}/private/increment_serving_counter`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ event_id: 'Sample', increment_by: 1 }),
      });
      return { answeredAt: performance.timeOrigin + performance.now(), serving: ((await response.json()) as { serving_num: number }).serving_num };
    };

    const cpuBefore = cpuOf(pids);
    const moves: number[] = [];
    const deliveries: number[] = [];
    let serving = 0;
    for (let i = 0; i < CHANGES; i++) {
      await Promise.all(clients.map((c) => (c.send({ type: 'expect', value: serving + 1 }), message(c, 'expecting'))));
      const heard = Promise.all(clients.map((c) => message<{ times: number[] }>(c, 'heard')));
      const { answeredAt, serving: now } = await increment();
      serving = now;
      const times = (await heard).flatMap((h) => h.times);
      const delays = times.map((t) => Math.max(0, t - answeredAt));
      deliveries.push(...delays);
      moves.push(Math.max(...delays));
      process.stderr.write(`  move ${i + 1}/${CHANGES}: all ${fmt(times.length)} heard ${serving} within ${fmt(Math.max(...delays))} ms\n`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const cpu = cpuOf(pids) - cpuBefore;
    const stats = await Promise.all(clients.map((c) => (c.send({ type: 'stats' }), message<{ open: number; closed: number }>(c, 'stats'))));
    const sortedMoves = [...moves].sort((a, b) => a - b);
    const sorted = deliveries.sort((a, b) => a - b);
    // CPU over the measured seconds includes the idle second between moves (heartbeats, the 250 ms reads).
    const seconds = CHANGES * 1 + sortedMoves.reduce((a, b) => a + b, 0) / 1000;
    console.log('');
    console.log(`streams held:          ${fmt(stats.reduce((s, x) => s + x.open, 0))} (${fmt(stats.reduce((s, x) => s + x.closed, 0))} closed during the run)`);
    console.log(`a move reached all:    median ${fmt(percentile(sortedMoves, 0.5))} ms, worst ${fmt(sortedMoves.at(-1)!)} ms over ${CHANGES} moves`);
    console.log(`per listener:          p50 ${fmt(percentile(sorted, 0.5))} ms, p99 ${fmt(percentile(sorted, 0.99))} ms after the increment's answer`);
    console.log(`server CPU:            ${fmt(cpu, 2)} s over ${fmt(seconds, 1)} s = ${fmt((cpu / seconds) * 100)} % of a core; ${fmt((cpu * 1e6) / (CHANGES * held), 2)} µs per frame delivered`);
    console.log(`server memory:         ${fmt(rssMbOf(pids))} MB RSS in ${pids.length} processes (${fmt((rssMbOf(pids) * 1024) / held, 1)} KB per stream)`);
    console.log(`requests per waiting page per minute: 1-second polling of /serving_num and /waiting_num: 120; the page with the stream: 1 stream + a safety poll of both a minute = 3 (40× fewer)`);
  } finally {
    for (const c of clients) c.send({ type: 'stop' });
    node.process.kill('SIGTERM');
    await node.exited;
    await redis.destroy();
  }
}

/** Pins a running process to a CPU (taskset -p), when taskset exists. */
function spawnPinned(pid: number, cpu: number): void {
  try {
    execFileSync('taskset', ['-pc', String(cpu), String(pid)], { stdio: 'ignore' });
  } catch {
    // no taskset: unpinned
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
