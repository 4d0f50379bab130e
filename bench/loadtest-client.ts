// What one polling request costs the load tester's own process, per HTTP client: CPU µs per request
// (process.cpuUsage over a fixed number of requests, which the noise of a shared machine moves far less than
// req/s) and the rate reached. Each client runs in its own process pinned to CPU 0; the target is pinned to
// CPU 1: by default a canned server (bench/canned-http-server.ts, which costs almost nothing per request, so
// the figures are the client's), or any server given with --target (e.g. `anteroom serve --store memory`).
//
//   node bench/loadtest-client.ts [--target http://127.0.0.1:8080] [--clients undici-p1,undici-p8,raw]
//        [--mode closed|paced] [--requests 200000] [--inflight 2000] [--rate 50000] [--seconds 10]
//        [--connections 128] [--rounds 3]
//
// closed: `--inflight` visitors each send their next poll as soon as the previous one is answered — the
//         client's ceiling; `--requests` are timed after a warm-up of a fifth as many.
// paced:  `--rate` visitors each poll once a second on the load tester's timer wheel, exactly as waiting
//         visitors do in `anteroom loadtest`; `--seconds` are timed after 3 s of warm-up. CPU per request
//         then includes the wheel and the idle turns of a loop that is not saturated.
//
// Clients: undici-pN = src/loadtest/http-client.ts (undici Pool, `dispatch`) with pipelining N;
// raw-pN = src/loadtest/poll-connections.ts (keep-alive node:net sockets, at most N requests in flight per
// connection; `raw` = its default). Rounds interleave the clients; the table gives medians and the ratio of
// CPU per request to the first client's.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { pinnedCommand } from '../test/support/child-node.ts';
import { ApiClient, type Reply } from '../src/loadtest/http-client.ts';
import { percentilesOf } from '../src/loadtest/stats.ts';
import { TimerWheel } from '../src/loadtest/timer-wheel.ts';
import type { GetClient } from '../src/loadtest/visitor.ts';
import { median } from './proc-stats.ts';

const SELF = fileURLToPath(import.meta.url);
const PATH = '/serving_num?event_id=Sample';

interface ChildResult {
  client: string;
  requests: number;
  cpuUsPerRequest: number;
  userUsPerRequest: number;
  sysUsPerRequest: number;
  rps: number;
  /** Event-loop utilisation over the timed part (the `client busy` of a load test). */
  busy: number;
  errors: number;
  p50: number;
  p99: number;
  rssMb: number;
}

const { values: args } = parseArgs({
  options: {
    child: { type: 'string' },
    target: { type: 'string' },
    clients: { type: 'string', default: 'undici-p1,undici-p4,undici-p8,undici-p16,raw' },
    mode: { type: 'string', default: 'closed' },
    requests: { type: 'string', default: '200000' },
    inflight: { type: 'string', default: '2000' },
    rate: { type: 'string', default: '50000' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '128' },
    rounds: { type: 'string', default: '3' },
  },
});

type PollClient = GetClient & { close(): Promise<void> };

async function makeClient(name: string, target: string, connections: number, origin: number): Promise<PollClient> {
  const undici = /^undici-p(\d+)$/.exec(name);
  if (undici) return new ApiClient(target, { connections, pipelining: Number(undici[1]), origin });
  const raw = /^raw(?:-p(\d+))?$/.exec(name);
  const { PollConnections } = await import('../src/loadtest/poll-connections.ts');
  if (raw) return new PollConnections(target, { connections, origin, ...(raw[1] ? { pipelining: Number(raw[1]) } : {}) });
  throw new Error(`unknown client ${name}`);
}

async function child(name: string): Promise<ChildResult> {
  const target = args.target!;
  const origin = performance.now();
  const client = await makeClient(name, target, Number(args.connections), origin);
  let errors = 0;
  const latencies: number[] = [];
  let counting = false;
  let done = 0;
  const note = (reply: Reply) => {
    if (!counting) return;
    done++;
    if (reply.status !== 200) errors++;
    latencies.push(reply.receivedAt - reply.sentAt);
  };
  let cpu0 = process.cpuUsage();
  let t0 = performance.now();
  let elu0 = performance.eventLoopUtilization();
  let result: ChildResult;
  const finish = (): ChildResult => {
    const cpu = process.cpuUsage(cpu0);
    const seconds = (performance.now() - t0) / 1000;
    const latency = percentilesOf(latencies);
    return {
      client: name,
      requests: done,
      cpuUsPerRequest: (cpu.user + cpu.system) / done,
      userUsPerRequest: cpu.user / done,
      sysUsPerRequest: cpu.system / done,
      rps: done / seconds,
      busy: performance.eventLoopUtilization(elu0).utilization,
      errors,
      p50: latency.p50,
      p99: latency.p99,
      rssMb: process.memoryUsage().rss / 1048576,
    };
  };
  if (args.mode === 'closed') {
    const measured = Number(args.requests);
    const warmup = Math.round(measured / 5);
    let sent = 0;
    const total = warmup + measured;
    result = await new Promise<ChildResult>((resolve) => {
      let over = false;
      const loop = (reply?: Reply) => {
        if (over) return;
        if (reply) {
          note(reply);
          if (!counting && sent >= warmup) {
            counting = true;
            cpu0 = process.cpuUsage();
            t0 = performance.now();
            elu0 = performance.eventLoopUtilization();
          }
          if (counting && done >= measured) {
            over = true;
            return resolve(finish());
          }
        }
        if (sent < total) {
          sent++;
          void client.get(PATH).then(loop);
        }
      };
      for (let i = 0; i < Number(args.inflight); i++) loop();
    });
  } else {
    // Paced: one visitor per request per second, each polling one second after its previous poll was sent.
    const wheel = new TimerWheel(() => performance.now() - origin);
    const visitors = Number(args.rate);
    const poll = () => {
      void client.get(PATH).then((reply) => {
        note(reply);
        wheel.at(reply.sentAt + 1000, poll);
      });
    };
    wheel.start();
    const start = wheel.now();
    // Spread the visitors' first polls over the first second, as steady arrivals would.
    for (let i = 0; i < visitors; i++) wheel.at(start + (1000 * i) / visitors, poll);
    await new Promise((r) => setTimeout(r, 3000));
    counting = true;
    cpu0 = process.cpuUsage();
    t0 = performance.now();
    elu0 = performance.eventLoopUtilization();
    await new Promise((r) => setTimeout(r, Number(args.seconds) * 1000));
    result = finish();
    wheel.stop();
  }
  await client.close();
  return result;
}

async function spawnTarget(): Promise<{ url: string; stop: () => void }> {
  const script = fileURLToPath(new URL('./canned-http-server.ts', import.meta.url));
  const [command, argv] = pinnedCommand(1, [process.execPath, script]);
  const server = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(server.stdout!, 'data')) as [Buffer];
  const port = /listening (\d+)/.exec(line.toString())?.[1];
  if (!port) throw new Error(`canned server: ${line.toString()}`);
  return { url: `http://127.0.0.1:${port}`, stop: () => server.kill('SIGTERM') };
}

async function runChild(name: string, target: string): Promise<ChildResult> {
  const passOn = ['mode', 'requests', 'inflight', 'rate', 'seconds', 'connections'] as const;
  const flags = passOn.flatMap((k) => [`--${k}`, String(args[k])]);
  const [command, argv] = pinnedCommand(0, [process.execPath, SELF, '--child', name, '--target', target, ...flags]);
  const proc = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await once(proc, 'exit');
  return JSON.parse(out.trim().split('\n').pop()!) as ChildResult;
}

async function main(): Promise<void> {
  if (args.child) {
    process.stdout.write(`${JSON.stringify(await child(args.child))}\n`);
    process.exit(0);
  }
  const canned = args.target ? null : await spawnTarget();
  const target = args.target ?? canned!.url;
  const clients = args.clients.split(',');
  const rounds = Number(args.rounds);
  const results = new Map<string, ChildResult[]>(clients.map((c) => [c, []]));
  const what = args.mode === 'closed' ? `closed loop, ${args.inflight} in flight, ${args.requests} requests timed` : `paced, ${args.rate} visitors polling 1/s, ${args.seconds} s timed`;
  process.stdout.write(`target ${canned ? 'canned server' : target} (CPU 1), clients on CPU 0, ${args.connections} connections, ${what}, ${rounds} rounds\n`);
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const name of clients) {
        const r = await runChild(name, target);
        results.get(name)!.push(r);
        process.stdout.write(
          `  round ${round} ${name.padEnd(11)} ${r.cpuUsPerRequest.toFixed(1).padStart(6)} µs/req (user ${r.userUsPerRequest.toFixed(1)}, sys ${r.sysUsPerRequest.toFixed(1)})` +
            `  ${Math.round(r.rps).toLocaleString('en-US').padStart(7)} req/s  busy ${Math.round(r.busy * 100)}%  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  errors ${r.errors}  rss ${Math.round(r.rssMb)} MB\n`,
        );
      }
    }
  } finally {
    canned?.stop();
  }
  const base = median(results.get(clients[0]!)!.map((r) => r.cpuUsPerRequest));
  process.stdout.write(`\nclient        CPU µs/req (median)   req/s (median)   vs ${clients[0]} (CPU/req)\n`);
  for (const name of clients) {
    const rs = results.get(name)!;
    const cpu = median(rs.map((r) => r.cpuUsPerRequest));
    const rps = median(rs.map((r) => r.rps));
    process.stdout.write(
      `${name.padEnd(14)}${cpu.toFixed(1).padStart(10)}            ${Math.round(rps).toLocaleString('en-US').padStart(7)}          ${(cpu / base).toFixed(2)}×\n`,
    );
  }
}

await main();
