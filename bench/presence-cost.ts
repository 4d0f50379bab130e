// Issue 34 item 1: what presence costs a poll. GET /queue_num with a request ID and beat=1 is the poll that marks
// a visitor seen (the waiting page sends one every 10 s, the gate page's requests do the same). One Anteroom process
// (SQLite, pinned to the server core) serves two rooms that differ only in presence_timeout — "Off" (0: no mark)
// and "On" (60 s: every poll adds the position to the node's set, merged every 2 s) — polled alternately, ROUNDS
// times, beside a bare node:http handler measured in the same rounds. CPU µs per request, medians; the ratio
// On/Off is the figure the issue bounds (≤ 1.05). On a loud machine the rounds of one configuration spread far
// more than 5 %, so the bench also measures what presence adds to a poll on its own, in this process: a
// PresenceTracker's seen() for BEATS beats over VISITORS positions, and its merge every 2000 beats (the beats of
// 10,000 visitors in one 2 s flush) into a store that keeps a last-beat second per position as SQLite's does —
// CPU µs per beat, set beside the Off poll's CPU. `BENCH_ONLY=presence npm run bench`, or run this file.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PresenceStore } from '../src/domain/ports/presence.ts';
import { PresenceTracker } from '../src/domain/presence.ts';
import { defaultSettings } from '../src/domain/room-settings.ts';
import { startChildNode } from '../test/support/child-node.ts';
import { startBare } from './bare-costs.ts';
import { runLoad } from './load-runner.ts';
import { cpuSeconds, median } from './proc-stats.ts';

const SERVER_CPU = 1;
const LOAD_CPU = 0;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

async function cpuPerRequest(url: string, pid: number | undefined): Promise<{ micros: number; rps: number }> {
  const before = cpuSeconds(pid) ?? 0;
  const r = await runLoad({ url, connections: CONNECTIONS, durationSec: SECONDS }, LOAD_CPU);
  if (r.non2xx > 0 || r.total === 0) throw new Error(`${url}: ${r.non2xx} answers not 2xx of ${r.total}`);
  return { micros: (((cpuSeconds(pid) ?? 0) - before) * 1e6) / r.total, rps: r.rps };
}

const BEATS = 2_000_000;
const VISITORS = 20_000;
const BEATS_PER_FLUSH = 2000;

/** CPU µs per beat of PresenceTracker.seen() and its share of the merges (see the top of this file). */
async function markCost(): Promise<number> {
  const room = { ...defaultSettings('On'), presence_timeout: 60 };
  let now = 1_900_000_000;
  const lastBeat = new Uint32Array(VISITORS + 1);
  const store: PresenceStore = {
    inProcess: true,
    markSeen: async (_eventId, positions, second) => {
      for (const position of positions) if (lastBeat[position]! < second) lastBeat[position] = second;
    },
    presenceView: () => Promise.reject(new Error('not measured')),
    recordTick: () => Promise.reject(new Error('not measured')),
    recordClaim: () => Promise.reject(new Error('not measured')),
  };
  const tracker = new PresenceTracker({ store, now: () => now, room: () => room, flushMs: 3_600_000 });
  const start = process.cpuUsage();
  for (let i = 0; i < BEATS; i++) {
    tracker.seen('On', (i % VISITORS) + 1);
    if ((i + 1) % BEATS_PER_FLUSH === 0) {
      now += 2;
      await tracker.flush();
    }
  }
  await tracker.close();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / BEATS;
}

export async function runPresenceBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-presence-bench-'));
  const config = join(dir, 'events.json');
  writeFileSync(config, JSON.stringify({ events: [{ event_id: 'Off', presence_timeout: 0 }, { event_id: 'On', presence_timeout: 60 }] }));
  // PRESENCE_CPU_PROF=<dir>: the server writes a V8 CPU profile there when it exits (to see where a poll's time goes).
  const profile: Record<string, string> = process.env.PRESENCE_CPU_PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PRESENCE_CPU_PROF}` } : {};
  const node = await startChildNode(['--data-dir', dir, '--admin-token', 'bench-admin-token-0123456789', '--config', config], profile, { cpu: SERVER_CPU });
  const bare = await startBare(SERVER_CPU);
  try {
    const ids: Record<string, string> = {};
    for (const room of ['Off', 'On']) {
      const res = await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: room }) });
      ids[room] = ((await res.json()) as { api_request_id: string }).api_request_id;
    }
    const rounds: Record<'bare' | 'Off' | 'On', number[]> = { bare: [], Off: [], On: [] };
    for (let round = 0; round < ROUNDS; round++) {
      rounds.bare.push((await cpuPerRequest(`${bare.url}/`, bare.pid)).micros);
      // The pair's order alternates: the first of a pair ran measurably slower on a loud machine (0.75× "On/Off"
      // with Off always first, which is below the floor: a measurement bug, not a saving).
      for (const room of round % 2 === 0 ? (['Off', 'On'] as const) : (['On', 'Off'] as const)) {
        rounds[room].push((await cpuPerRequest(`${node.url}/queue_num?event_id=${room}&request_id=${ids[room]}&beat=1`, node.process.pid)).micros);
      }
    }
    const show = (label: string, values: number[]) =>
      console.log(`${label.padEnd(44)} ${median(values).toFixed(1).padStart(6)} µs CPU/request (${values.map((v) => v.toFixed(1)).join(', ')})`);
    console.log(`Presence on the polling path — ${new Date().toISOString()}; ${ROUNDS} rounds of ${SECONDS} s, ${CONNECTIONS} connections`);
    show('bare node:http GET', rounds.bare);
    show('anteroom GET /queue_num&beat=1, presence off', rounds.Off);
    show('anteroom GET /queue_num&beat=1, presence on (60 s)', rounds.On);
    const marks: number[] = [];
    for (let round = 0; round < ROUNDS; round++) marks.push(await markCost());
    console.log(`${'a beat on its own: seen() + its share of a merge'.padEnd(44)} ${median(marks).toFixed(3).padStart(6)} µs CPU/beat (${marks.map((v) => v.toFixed(3)).join(', ')})`);
    console.log(`that beat beside the Off poll: ${(1 + median(marks) / median(rounds.Off)).toFixed(3)}× (target ≤ 1.05×)`);
    // Each round measures Off and On back to back: the median of the rounds' own ratios is less shaken by a load
    // that changes from one round to the next than the ratio of the medians.
    const paired = rounds.On.map((on, i) => on / rounds.Off[i]!);
    console.log(`presence on / off, per round: ${paired.map((r) => r.toFixed(3)).join(', ')}; median ${median(paired).toFixed(3)}×`);
    const ratio = median(rounds.On) / median(rounds.Off);
    console.log(`presence on / off: ${ratio.toFixed(3)}× CPU per poll (target ≤ 1.05×)  ${ratio <= 1.05 ? 'met' : 'NOT met'}`);
    console.log(`off / bare: ${(median(rounds.Off) / median(rounds.bare)).toFixed(2)}×, on / bare: ${(median(rounds.On) / median(rounds.bare)).toFixed(2)}×`);
  } finally {
    await bare.stop();
    node.process.kill('SIGTERM');
    await node.exited;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runPresenceBench();
