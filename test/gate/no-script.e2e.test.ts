// The gate's waiting page in headless Chromium (Debian's) with JavaScript off (issue 38): it shows the visitor's
// place and, once they are let in, takes them to the page first asked for by itself (its <noscript> meta
// refresh). With JavaScript on, the refresh is inert: the page follows the gate by its script alone.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { ensurePagesBuilt, launchChromium } from '../web/support.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

describe('the gate in Chromium without JavaScript', () => {
  let origin: Origin;
  let node: GateNode;
  let browser: Browser;

  before(async () => {
    ensurePagesBuilt();
    origin = await startOrigin();
    // Automatic admission at 10 a second: near the front the page asks again every 5 s (the floor). Admission
    // ticks are run by the test (the node runs no jobs), so the visitor is let in exactly when the test says.
    node = await startGateNode([
      gatedRoom('Shop', origin.url, { admission: 'automatic', new_users_per_minute: 600, total_active_users: 1 }),
    ]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
    await origin?.close();
  });

  it('shows the place, then lands on the page first asked for by itself once let in', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const documents: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'document') documents.push(request.url());
    });

    const waiting = await page.goto(`${node.gateUrl}/product/7?size=m`);
    assert.equal(waiting?.headers()['content-encoding'], 'gzip', 'the spliced gzip, decoded by the browser');
    assert.equal(await page.locator('#queue').isVisible(), true, 'the queue card, without script');
    assert.equal(await page.locator('#intro').isVisible(), false, 'no Reserve button behind the gate');
    assert.equal((await page.locator('#my-position').textContent())?.trim(), '1');
    // Place 1, counter 0: the next in line, nobody ahead (issue 33).
    assert.equal((await page.locator('#ahead').textContent())?.trim(), '0');
    assert.match((await page.locator('#noscript-status').textContent()) ?? '', /updates itself every 5 seconds/);
    assert.equal(await page.locator('meta[http-equiv="refresh"]').getAttribute('content'), '5;url=/product/7?size=m');

    await node.room.admission.admitAutomatically('Shop');
    assert.equal((await node.room.reports.counters('Shop')).serving, 1, 'let in by the tick');
    // The refresh (5 s) loads the same URL, now answered by the origin.
    await page.locator('#origin-page').filter({ hasText: 'Origin page /product/7?size=m' }).waitFor({ timeout: 20_000 });
    assert.equal(page.url(), `${node.gateUrl}/product/7?size=m`);
    assert.ok(documents.length >= 2, 'the page asked again by itself');
    assert.equal((await node.room.reports.counters('Shop')).queue, 1, 'one place');
    await context.close();
  });

  it('with JavaScript on, the meta refresh is inert: no reload while the script polls', async () => {
    // The one place is taken (the visitor above holds it: total_active_users 1), so this visitor waits.
    const ahead = new CookieJar();
    await (await ahead.fetch(`${node.gateUrl}/`)).text();
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    let documents = 0;
    let polls = 0;
    let enoughPolls: () => void = () => {};
    // 4 polls of the script (every 2 s) span more than the 5 s the meta refresh names.
    const polled = new Promise<void>((resolve) => (enoughPolls = resolve));
    page.on('request', (request) => {
      if (request.resourceType() === 'document') documents++;
      else if (request.headers().accept === 'application/json' && ++polls === 4) enoughPolls();
    });

    await page.goto(`${node.gateUrl}/product/9`);
    await page.locator('#my-position').filter({ hasText: '3' }).waitFor();
    assert.equal(await page.locator('noscript').first().count(), 1);
    assert.equal(await page.locator('meta[http-equiv="refresh"]').count(), 0, 'with script, <noscript> in <head> is text: no refresh element');
    assert.match(await page.content(), /<noscript><meta http-equiv="refresh" content="5;url=\/product\/9"><\/noscript>/);
    await polled;
    assert.equal(documents, 1, 'the page was loaded once: no refresh by the meta tag');
    assert.equal(page.url(), `${node.gateUrl}/product/9`);
    assert.deepEqual(errors, []);
    await context.close();
  });
});
