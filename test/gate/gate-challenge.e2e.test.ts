// A gate visitor of a room with `challenge: always`, in headless Chromium (Debian's): the gate answers the
// challenge page at the URL asked for, the page fetches a challenge from the gate (same host, /_anteroom/),
// solves it in Web Workers, asks the same URL again with the solution, gets a place, waits, and is admitted to
// the page first asked for.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { botDefence } from '../support/bot-defence-settings.ts';
import { solvedProof } from '../support/proof-of-work.ts';
import { ensurePagesBuilt, launchChromium, newPage } from '../web/support.ts';
import { gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

describe('a gate visitor solves the challenge in Chromium and waits in line', { timeout: 120_000 }, () => {
  let origin: Origin;
  let node: GateNode;
  let browser: Browser;

  before(async () => {
    ensurePagesBuilt();
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Guarded', origin.url, { bot_defence: botDefence({ challenge: 'always', difficulty: 20_000 }) })]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
    await origin?.close();
  });

  it('challenge page → solved in the page → a place → admitted to the page first asked for', async () => {
    // One visitor ahead, so the place shown is not a default.
    const ahead = await node.post('/assign_queue_num', { event_id: 'Guarded', proof_of_work: await solvedProof(node.url, 'Guarded') });
    assert.equal(ahead.status, 200);

    const { page, context, errors } = await newPage(browser);
    const gateAnswers: string[] = [];
    const proofsSent: string[] = [];
    page.on('response', (response) => {
      const url = new URL(response.url());
      const answer = response.headers()['anteroom-gate'];
      if (url.pathname === '/_anteroom/challenge') gateAnswers.push(`challenge ${response.status()}`);
      else if (answer) gateAnswers.push(`${answer} ${response.status()}`);
    });
    page.on('request', (request) => {
      const proof = request.headers()['anteroom-proof-of-work'];
      if (proof) proofsSent.push(new URL(request.url()).pathname);
    });

    await page.goto(`${node.gateUrl}/product/7?size=m`);
    await page.locator('#queue').waitFor({ state: 'visible' });
    await page.locator('#my-position').filter({ hasText: '2' }).waitFor({ timeout: 60_000 });
    assert.deepEqual(gateAnswers.slice(0, 3), ['challenge 403', 'challenge 200', 'queued 200']);
    assert.deepEqual(proofsSent, ['/product/7'], 'the solution went to the gate, at the URL asked for, once');
    assert.equal((await node.room.reports.counters('Guarded')).queue, 2);

    // A reload keeps the place (the cookie's): no second challenge, no second place.
    await page.reload();
    await page.locator('#my-position').filter({ hasText: '2' }).waitFor();
    assert.equal(gateAnswers.filter((a) => a.startsWith('challenge')).length, 2);
    assert.equal((await node.room.reports.counters('Guarded')).queue, 2);

    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Guarded', increment_by: 2 })).status, 200);
    await page.waitForURL(`${node.gateUrl}/product/7?size=m`);
    await page.locator('#origin-page').filter({ hasText: 'Origin page /product/7?size=m' }).waitFor();
    assert.deepEqual(errors, []);
    await context.close();
  });
});
