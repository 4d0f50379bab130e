// Fairness under bots (docs/bots.md), per defence: `anteroom loadtest --bots` (src/loadtest/bots.ts) against one
// node per scenario — human-paced visitors from 127.1.x.y beside bots from 127.2.x.y that join back to back and
// never solve — and the share of the first FIRST places (= admissions) that went to bots. The node runs as a
// child process (`anteroom serve`, embedded store in memory); visitors solve in this process, on the machine's
// two cores, so the difficulty is kept small (DIFFICULTY, default 1,000): what is measured is who gets the
// places, not the cost of the work (bench/pow-cost.ts). Bounded: each scenario lasts about
// HUMANS / (HUMANS / ARRIVAL_SECONDS) seconds. Run: node bench/bot-fairness.ts (FAIR_BOTS=500 for 500 addresses).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBotFairness } from '../src/loadtest/bots.ts';
import { startChildNode } from '../test/support/child-node.ts';

const HUMANS = Number(process.env.FAIR_HUMANS ?? 1000);
const BOTS = Number(process.env.FAIR_BOTS ?? 50);
const BOT_JOINS = Number(process.env.FAIR_BOT_JOINS ?? HUMANS / BOTS);
const ARRIVAL_SECONDS = Number(process.env.FAIR_ARRIVAL_SECONDS ?? 10);
const FIRST = Number(process.env.FAIR_FIRST ?? 1000);
const DIFFICULTY = Number(process.env.FAIR_DIFFICULTY ?? 1000);

async function scenario(name: string, botDefence: Record<string, unknown> | undefined): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-fairness-'));
  const config = join(dir, 'events.json');
  const defence = botDefence ? { difficulty: DIFFICULTY, max_difficulty: 4 * DIFFICULTY, ...botDefence } : undefined;
  writeFileSync(config, JSON.stringify({ events: [{ event_id: 'Fair', ...(defence ? { bot_defence: defence } : {}) }] }));
  const node = await startChildNode(['--store', 'memory', '--data-dir', dir, '--config', config, '--admin-token', 'fairness-admin-token-0123456789']);
  try {
    const r = await runBotFairness({
      target: node.url,
      eventId: 'Fair',
      visitors: HUMANS,
      arrivalRate: HUMANS / ARRIVAL_SECONDS,
      bots: BOTS,
      botJoins: BOT_JOINS,
      botsSolve: false,
      first: FIRST,
    });
    console.log(
      `| ${name} | ${r.visitorsPlaced}/${HUMANS}${Object.keys(r.visitorRefusals).length ? ` (refused: ${JSON.stringify(r.visitorRefusals)})` : ''} | ${r.botPlaces}/${r.botAttempts} (${r.botAttempts - r.botPlaces} refused) | ${r.botsInFirst}/${r.placesInFirst} = ${(100 * r.botShare).toFixed(1)} % | ${r.seconds.toFixed(1)} s |`,
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
await scenario('none', undefined);
await scenario('joins_per_client_per_minute 1', { joins_per_client_per_minute: 1 });
await scenario('challenge auto (defaults: room 600/min, client 1/min)', { challenge: 'auto' });
await scenario('challenge auto, room_threshold_per_minute 100', { challenge: 'auto', room_threshold_per_minute: 100 });
await scenario('challenge always', { challenge: 'always' });
