// The cost of the bot defence's proof of work (docs/bots.md), measured side by side in one run:
//   1. the server: issuing a challenge and verifying a solution (AltchaProofOfWork, one core), next to one RS256
//      signature (a token set is three);
//   2. the visitor: the waiting-room page solving a challenge in headless Chromium, per difficulty — the time from
//      the GET /challenge answer to the join that carries the solution, i.e. what the visitor waits — next to a
//      bot solving the same difficulty with node:crypto on one thread.
// Bounded: at most POW_SAMPLES (default 12) page solves per difficulty and POW_SECONDS (default 25) per
// difficulty. Run: node bench/pow-cost.ts (needs /usr/bin/chromium and the built pages).

import { generateKeyPairSync, sign } from 'node:crypto';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { defaultSettings, type RoomSettings } from '../src/domain/room-settings.ts';
import { AltchaProofOfWork } from '../src/pow/altcha.ts';
import { ensurePagesBuilt, launchChromium, startWebNode } from '../test/web/support.ts';
import { median } from './proc-stats.ts';

const DIFFICULTIES = (process.env.POW_DIFFICULTIES ?? '10000,50000,200000,1000000').split(',').map(Number);
const SAMPLES = Number(process.env.POW_SAMPLES ?? 12);
const SECONDS_PER_DIFFICULTY = Number(process.env.POW_SECONDS ?? 25);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};
const ms = (n: number) => `${n.toFixed(n < 10 ? 2 : 0)} ms`;

async function serverCost(): Promise<void> {
  const pow = new AltchaProofOfWork('bench-secret-0123456789abcdef0123456789');
  const rounds = 2000;
  let start = performance.now();
  const challenges = [];
  for (let i = 0; i < rounds; i++) challenges.push(await pow.issue('Bench', 1000, Date.now() + 60_000));
  const issueUs = ((performance.now() - start) * 1000) / rounds;
  const payloads: string[] = [];
  for (const challenge of challenges.slice(0, 200)) {
    const solution = await solveChallenge({ challenge, deriveKey });
    payloads.push(Buffer.from(JSON.stringify({ challenge, solution })).toString('base64'));
  }
  start = performance.now();
  for (let i = 0; i < rounds; i++) await pow.verify('Bench', payloads[i % payloads.length] as string);
  const verifyUs = ((performance.now() - start) * 1000) / rounds;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const input = Buffer.from('eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJTYW1wbGUiLCJzdWIiOiJ4In0');
  for (let i = 0; i < 50; i++) sign('sha256', input, privateKey);
  start = performance.now();
  for (let i = 0; i < 300; i++) sign('sha256', input, privateKey);
  const rsaUs = ((performance.now() - start) * 1000) / 300;
  console.log(`server, one core: issue ${issueUs.toFixed(0)} µs, verify ${verifyUs.toFixed(0)} µs per solution; one RS256 signature ${rsaUs.toFixed(0)} µs`);
  console.log(`  verify / RS256 signature = ${(verifyUs / rsaUs).toFixed(2)}×; verify / token set (3 signatures) = ${(verifyUs / (3 * rsaUs)).toFixed(2)}×`);
}

async function botSolve(difficulty: number, samples: number): Promise<number[]> {
  const pow = new AltchaProofOfWork('bench-secret-0123456789abcdef0123456789');
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const challenge = await pow.issue('Bench', difficulty, Date.now() + 600_000);
    const start = performance.now();
    await solveChallenge({ challenge, deriveKey });
    times.push(performance.now() - start);
  }
  return times;
}

async function pageSolves(): Promise<void> {
  ensurePagesBuilt();
  const room = (difficulty: number): RoomSettings => ({
    ...defaultSettings(`Pow${difficulty}`),
    bot_defence: {
      challenge: 'always',
      difficulty,
      max_difficulty: Math.max(difficulty, 1_000_000),
      room_threshold_per_minute: 1_000_000,
      client_threshold_per_minute: 5,
      challenge_ttl: 600,
      require_enqueue_key: false,
    infinite_queue: false,
    },
  });
  const node = await startWebNode({ events: DIFFICULTIES.map(room) });
  const browser = await launchChromium();
  console.log(`page (headless Chromium ${browser.version()}, ${SAMPLES} solves at most, ${SECONDS_PER_DIFFICULTY} s at most per difficulty):`);
  console.log('| difficulty | page solves | page median | page p95 | bot (node:crypto, 1 thread) median | page / bot |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  try {
    for (const difficulty of DIFFICULTIES) {
      const times: number[] = [];
      const deadline = performance.now() + SECONDS_PER_DIFFICULTY * 1000;
      while (times.length < SAMPLES && performance.now() < deadline) {
        const context = await browser.newContext();
        const page = await context.newPage();
        let challengeAt = 0;
        let solvedAt = 0;
        page.on('response', (response) => {
          if (response.url().includes('/challenge?')) challengeAt = performance.now();
        });
        page.on('request', (request) => {
          if (request.url().endsWith('/assign_queue_num') && request.postData()?.includes('proof_of_work')) solvedAt = performance.now();
        });
        await page.goto(`${node.url}/waiting-room-site/?eventId=Pow${difficulty}`);
        await page.getByRole('button', { name: 'Reserve' }).click();
        await page.waitForFunction(() => /^\d+$/.test(document.querySelector('#my-position')?.textContent?.trim() ?? ''), undefined, {
          timeout: 120_000,
        });
        times.push(solvedAt - challengeAt);
        await context.close();
      }
      const bot = await botSolve(difficulty, Math.max(3, Math.min(times.length, 8)));
      console.log(
        `| ${difficulty.toLocaleString('en')} | ${times.length} | ${ms(median(times))} | ${ms(percentile(times, 95))} | ${ms(median(bot))} | ${(median(times) / median(bot)).toFixed(1)}× |`,
      );
    }
  } finally {
    await browser.close();
    await node.close();
  }
}

console.log(`bot defence proof of work — ${new Date().toISOString()}, Node ${process.version}`);
await serverCost();
await pageSolves();
