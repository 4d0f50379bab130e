// Fairness under bots (docs/bots.md): scripted bots beside human-paced visitors against one node, and the share
// of the first K places (admission is in place order) that went to bots, per defence. Every client has its own
// loopback source address (127.0.0.0/8 all reaches the node on Linux): humans 127.1.x.y, bots 127.2.x.y.
//   humans: HUMANS visitors, arriving evenly over ARRIVAL_SECONDS, each joins once; asked for a proof of work,
//           it fetches a challenge, solves it (altcha-lib, node:crypto — faster than the page) and joins again.
//   bots:   BOTS addresses joining back to back from the first second, BOT_JOINS attempts each (so bots make half
//           of the arrivals), never solving a challenge ("fast joiners").
// The node runs as a child process (`anteroom serve`, embedded store in memory); bots and humans share this
// process and the machine's two cores, so the difficulty is kept small (DIFFICULTY, default 1,000): what is
// measured is who gets the places, not the cost of the work — a single machine cannot stand for a thousand
// visitors' own CPUs, and bots that solve at full CPU are therefore not simulated here (their cost per place is
// in bench/pow-cost.ts). Bounded: each scenario ends when every client is done (about ARRIVAL_SECONDS).
// Run: node bench/bot-fairness.ts

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import type { Challenge } from 'altcha-lib/types';
import { startChildNode } from '../test/support/child-node.ts';

const HUMANS = Number(process.env.FAIR_HUMANS ?? 1000);
const BOTS = Number(process.env.FAIR_BOTS ?? 50);
const BOT_JOINS = Number(process.env.FAIR_BOT_JOINS ?? HUMANS / BOTS);
const ARRIVAL_SECONDS = Number(process.env.FAIR_ARRIVAL_SECONDS ?? 10);
const FIRST = Number(process.env.FAIR_FIRST ?? 1000);
const DIFFICULTY = Number(process.env.FAIR_DIFFICULTY ?? 1000);

interface Answer {
  status: number;
  body: string;
}

function call(base: string, localAddress: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, localAddress, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function solveFor(base: string, address: string): Promise<string | undefined> {
  const answer = await call(base, address, 'GET', '/challenge?event_id=Fair');
  if (answer.status !== 200) return undefined;
  const challenge = JSON.parse(answer.body) as Challenge;
  const solution = await solveChallenge({ challenge, deriveKey });
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

/** One join, solving when asked (if `solves`); the request ID, or undefined when refused. */
async function joinOnce(base: string, address: string, solves: boolean): Promise<string | undefined> {
  let answer = await call(base, address, 'POST', '/assign_queue_num', { event_id: 'Fair' });
  if (answer.status === 403 && solves && answer.body.includes('Proof of work')) {
    const proof = await solveFor(base, address);
    if (proof) answer = await call(base, address, 'POST', '/assign_queue_num', { event_id: 'Fair', proof_of_work: proof });
  }
  return answer.status === 200 ? (JSON.parse(answer.body) as { api_request_id: string }).api_request_id : undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function scenario(name: string, botDefence: Record<string, unknown> | undefined, botsSolve: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-fairness-'));
  const config = join(dir, 'events.json');
  const defence = botDefence ? { difficulty: DIFFICULTY, max_difficulty: 4 * DIFFICULTY, ...botDefence } : undefined;
  writeFileSync(config, JSON.stringify({ events: [{ event_id: 'Fair', ...(defence ? { bot_defence: defence } : {}) }] }));
  const node = await startChildNode(['--store', 'memory', '--data-dir', dir, '--config', config, '--admin-token', 'fairness-admin-token-0123456789']);
  const started = performance.now();
  try {
    const humanIds: string[] = [];
    const botIds: string[] = [];
    let botRefused = 0;
    const bots = Array.from({ length: BOTS }, async (_, b) => {
      const address = `127.2.${Math.floor(b / 250)}.${(b % 250) + 1}`;
      for (let i = 0; i < BOT_JOINS; i++) {
        const id = await joinOnce(node.url, address, botsSolve);
        if (id) botIds.push(id);
        else botRefused++;
      }
    });
    const humans = Array.from({ length: HUMANS }, async (_, h) => {
      await sleep((h / HUMANS) * ARRIVAL_SECONDS * 1000);
      const id = await joinOnce(node.url, `127.1.${Math.floor(h / 250)}.${(h % 250) + 1}`, true);
      if (id) humanIds.push(id);
    });
    await Promise.all([...bots, ...humans]);
    const seconds = (performance.now() - started) / 1000;
    // Places in order: read each place's position.
    const positions = new Map<string, number>();
    for (const id of [...humanIds, ...botIds]) {
      const answer = await call(node.url, '127.0.0.1', 'GET', `/queue_num?event_id=Fair&request_id=${id}`);
      positions.set(id, (JSON.parse(answer.body) as { queue_number: number }).queue_number);
    }
    const botsInFirst = botIds.filter((id) => (positions.get(id) as number) <= FIRST).length;
    const placesInFirst = Math.min(FIRST, positions.size);
    console.log(
      `| ${name} | ${humanIds.length}/${HUMANS} | ${botIds.length}/${BOTS * BOT_JOINS} (${botRefused} refused) | ${botsInFirst}/${placesInFirst} = ${((100 * botsInFirst) / placesInFirst).toFixed(1)} % | ${seconds.toFixed(1)} s |`,
    );
  } finally {
    node.process.kill('SIGTERM');
    await node.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`bot fairness — ${new Date().toISOString()}, Node ${process.version}: ${HUMANS} humans over ${ARRIVAL_SECONDS} s, ${BOTS} bot addresses × ${BOT_JOINS} joins`);
console.log(`| defence | humans placed | bot places | bots among the first ${FIRST} places | run |`);
console.log('|---|---:|---:|---:|---:|');
await scenario('none', undefined, false);
await scenario('joins_per_client_per_minute 1', { joins_per_client_per_minute: 1 }, false);
await scenario('challenge auto (defaults: room 600/min, client 1/min)', { challenge: 'auto' }, false);
await scenario('challenge auto, room_threshold_per_minute 100', { challenge: 'auto', room_threshold_per_minute: 100 }, false);
await scenario('challenge always', { challenge: 'always' }, false);
