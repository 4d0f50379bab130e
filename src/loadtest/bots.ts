// `anteroom loadtest --bots N`: scripted bots beside human-paced visitors, and the share of the first K places
// that went to bots (places are admitted in order, so that is the share of the first K admissions). Every
// client joins from its own loopback source address (all of 127.0.0.0/8 reaches a server listening on the
// loopback interface, on Linux), so per-client defences see them apart: visitors from 127.1.x.y, bots from
// 127.2.x.y. Visitors arrive evenly at --arrival-rate and join once, solving a challenge when asked (as the
// waiting-room page does); bots join back to back from the start, --bot-joins attempts each, and solve only with
// --bots-solve (at full CPU, sharing this process's CPU with the visitors' solving). Each client's join is
// sent once per attempt and never retried on failure, so refused attempts are counted as refused. Solving is
// CPU work in this one process, so at most one challenge per core is solved at a time (the others wait their
// turn): hundreds solving at once would starve this process's sockets, and the server answers 408 to a request
// whose headers come too late — a failure of the harness, not of the people it plays, who each solve on their
// own device.

import { request } from 'node:http';
import { availableParallelism } from 'node:os';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import type { Challenge } from 'altcha-lib/types';

export interface BotRunOptions {
  /** Public base URL of a loopback target. */
  target: string;
  eventId: string;
  visitors: number;
  /** Visitors joining per second. */
  arrivalRate: number;
  bots: number;
  botJoins: number;
  botsSolve: boolean;
  /** The first this many places are judged. */
  first: number;
  publicApiKey?: string | undefined;
}

export interface BotRunResult {
  visitorsPlaced: number;
  botPlaces: number;
  botAttempts: number;
  botsInFirst: number;
  placesInFirst: number;
  /** botsInFirst / placesInFirst, 0–1. */
  botShare: number;
  seconds: number;
  /** Why visitors who got no place were refused: "<status> <error>" → how many (empty when all were placed). */
  visitorRefusals: Record<string, number>;
}

interface Reply {
  status: number;
  body: string;
}

/** Whole octets for client number `n` under 127.<block>: 250 per third octet, never .0 or .255. */
export const clientAddress = (block: number, n: number): string => `127.${block}.${Math.floor(n / 250)}.${(n % 250) + 1}`;

export async function runBotFairness(options: BotRunOptions): Promise<BotRunResult> {
  const base = new URL(options.target);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(options.publicApiKey ? { 'x-api-key': options.publicApiKey } : {}) };
  const prefix = base.pathname.replace(/\/+$/, '');
  const call = (localAddress: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const req = request(
        { host: base.hostname, port: base.port, path: `${prefix}${path}`, method, localAddress, agent: false, headers },
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
  const event = encodeURIComponent(options.eventId);
  const visitorRefusals: Record<string, number> = {};
  // One solver per core: a slot is taken for the solving only, not for the HTTP calls around it.
  let freeSolvers = availableParallelism();
  const waitingForSolver: (() => void)[] = [];
  const solve = async (challenge: Challenge) => {
    if (freeSolvers > 0) freeSolvers--;
    else await new Promise<void>((resolve) => waitingForSolver.push(resolve));
    try {
      return await solveChallenge({ challenge, deriveKey });
    } finally {
      const next = waitingForSolver.shift();
      if (next) next();
      else freeSolvers++;
    }
  };
  const joinOnce = async (address: string, solves: boolean): Promise<string | undefined> => {
    let reply = await call(address, 'POST', '/assign_queue_num', { event_id: options.eventId });
    if (reply.status === 403 && solves && reply.body.includes('Proof of work')) {
      reply = await call(address, 'GET', `/challenge?event_id=${event}`);
      if (reply.status === 200) {
        const challenge = JSON.parse(reply.body) as Challenge;
        const solution = await solve(challenge);
        const proof = Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
        reply = solution
          ? await call(address, 'POST', '/assign_queue_num', { event_id: options.eventId, proof_of_work: proof })
          : { status: 0, body: 'not solved before the solver gave up' };
      }
    }
    if (reply.status === 200) return (JSON.parse(reply.body) as { api_request_id: string }).api_request_id;
    if (solves) {
      const reason = `${reply.status} ${reply.body.slice(0, 120)}`;
      visitorRefusals[reason] = (visitorRefusals[reason] ?? 0) + 1;
    }
    return undefined;
  };

  const started = performance.now();
  const visitorIds: string[] = [];
  const botIds: string[] = [];
  const bots = Array.from({ length: options.bots }, async (_, b) => {
    for (let i = 0; i < options.botJoins; i++) {
      const id = await joinOnce(clientAddress(2, b), options.botsSolve);
      if (id) botIds.push(id);
    }
  });
  const visitors = Array.from({ length: options.visitors }, async (_, v) => {
    const due = started + (v / options.arrivalRate) * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
    const id = await joinOnce(clientAddress(1, v), true);
    if (id) visitorIds.push(id);
  });
  await Promise.all([...bots, ...visitors]);
  const seconds = (performance.now() - started) / 1000;

  let botsInFirst = 0;
  let placesInFirst = 0;
  const bot = new Set(botIds);
  for (const id of [...visitorIds, ...botIds]) {
    const reply = await call('127.0.0.1', 'GET', `/queue_num?event_id=${event}&request_id=${id}`);
    if (reply.status !== 200) continue;
    if ((JSON.parse(reply.body) as { queue_number: number }).queue_number > options.first) continue;
    placesInFirst++;
    if (bot.has(id)) botsInFirst++;
  }
  return {
    visitorsPlaced: visitorIds.length,
    botPlaces: botIds.length,
    botAttempts: options.bots * options.botJoins,
    botsInFirst,
    placesInFirst,
    botShare: placesInFirst === 0 ? 0 : botsInFirst / placesInFirst,
    seconds,
    visitorRefusals,
  };
}

export function formatBotRun(options: BotRunOptions, result: BotRunResult): string {
  return [
    `bots beside visitors: ${options.visitors} visitors at ${options.arrivalRate}/s, ${options.bots} bot addresses × ${options.botJoins} joins (${options.botsSolve ? 'solving' : 'not solving'} challenges)`,
    `  visitors placed  ${result.visitorsPlaced}/${options.visitors}`,
    `  bot places       ${result.botPlaces}/${result.botAttempts} attempts`,
    `  first ${options.first} places: ${result.botsInFirst} of ${result.placesInFirst} to bots = ${(100 * result.botShare).toFixed(1)} %`,
    ...Object.entries(result.visitorRefusals).map(([reason, n]) => `  visitors refused ${n}: ${reason}`),
    `  run              ${result.seconds.toFixed(1)} s`,
    '',
  ].join('\n');
}
