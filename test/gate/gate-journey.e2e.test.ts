// A visitor's journey through the gate in headless Chromium (Debian's): ask for a page of the protected site,
// wait in line on the waiting page, reload without losing the place, be admitted and land on the page first
// asked for; the origin revokes the session and the visitor is back in line.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { ensurePagesBuilt, launchChromium } from '../web/support.ts';
import { gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

describe('a visitor in Chromium through the gate', () => {
  let origin: Origin;
  let node: GateNode;
  let browser: Browser;

  before(async () => {
    ensurePagesBuilt();
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Shop', origin.url)]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
    await origin?.close();
  });

  it('join, reload keeps the place, admitted to the page first asked for, revoked, back in line', async () => {
    // Two visitors ahead, so the place is not the first.
    for (let i = 0; i < 2; i++) await (await fetch(`${node.gateUrl}/`)).text();
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));

    await page.goto(`${node.gateUrl}/product/7?size=m`);
    await page.locator('#queue').waitFor({ state: 'visible' });
    await page.locator('#my-position').filter({ hasText: '3' }).waitFor();
    assert.equal(await page.locator('#intro').isVisible(), false);

    await page.reload();
    await page.locator('#my-position').filter({ hasText: '3' }).waitFor();
    const secondTab = await context.newPage();
    await secondTab.goto(`${node.gateUrl}/elsewhere`);
    await secondTab.locator('#my-position').filter({ hasText: '3' }).waitFor();
    await secondTab.close();

    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Shop', increment_by: 3 })).status, 200);
    await page.waitForURL(`${node.gateUrl}/product/7?size=m`);
    await page.locator('#origin-page').filter({ hasText: 'Origin page /product/7?size=m' }).waitFor();

    await page.goto(`${node.gateUrl}/revoke`);
    assert.match((await page.textContent('body')) ?? '', /thanks, you are done/);
    await page.goto(`${node.gateUrl}/product/7?size=m`);
    await page.locator('#queue').waitFor({ state: 'visible' });
    await page.locator('#my-position').filter({ hasText: '4' }).waitFor();
    assert.deepEqual(errors, []);
    await context.close();
  });

  it("the operator's words changed while the page is open reach it without a reload (the gate's answers carry them)", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${node.gateUrl}/news`);
    await page.locator('#queue').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#room-message').isVisible(), false);
    await page.evaluate(() => ((window as unknown as { kept: number }).kept = 1));
    const changedAt = Date.now();
    const patch = (body: unknown) => node.admin('PATCH', '/rooms/Shop', body).then((r) => assert.equal(r.status, 200));
    await patch({ branding: { message: 'Restock at noon.', paused_message: 'Checking stock, back shortly.' } });
    await page.locator('#room-message').filter({ hasText: 'Restock at noon.' }).waitFor({ timeout: 5_000 });
    assert.ok(Date.now() - changedAt <= 5_000);
    assert.equal(await page.locator('#paused-message').isVisible(), false, 'the pause words only while paused');
    await patch({ state: 'paused' });
    await page.locator('#paused-message').filter({ hasText: 'Checking stock, back shortly.' }).waitFor({ timeout: 5_000 });
    await patch({ branding: { message: 'Restock at noon.', paused_message: 'Two more minutes.' } });
    await page.locator('#paused-message').filter({ hasText: 'Two more minutes.' }).waitFor({ timeout: 5_000 });
    await patch({ state: 'open', branding: null });
    await page.locator('#room-message').waitFor({ state: 'hidden', timeout: 5_000 });
    assert.equal(await page.evaluate(() => (window as unknown as { kept?: number }).kept), 1, 'the same page: never reloaded');
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe("the gate's waiting page speaks the visitor's language", () => {
  let origin: Origin;
  let node: GateNode;
  let browser: Browser;

  before(async () => {
    ensurePagesBuilt();
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Laden', origin.url)]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
  });

  it("in German: the place is the gate's, and a site that does not answer is said in German", async () => {
    const context = await browser.newContext({ locale: 'de-DE' });
    const page = await context.newPage();
    await page.goto(`${node.gateUrl}/artikel/1`);
    await page.locator('#queue').waitFor({ state: 'visible' });
    await page.locator('#my-position').filter({ hasText: '1' }).waitFor();
    // The visitor's own request ID, which the HttpOnly cookie hides from them: handed to them on the page.
    const own = ((await (await page.request.get(`${node.gateUrl}/artikel/1`, { headers: { accept: 'application/json' } })).json()) as { request_id: string }).request_id;
    assert.match(own, /^[0-9a-f-]{36}$/);
    assert.equal(await page.locator('#detail-request').textContent(), own);

    // Admitted while the protected site is down: the visitor is sent on and the gate answers its 502 page.
    await origin.close();
    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Laden', increment_by: 1 })).status, 200);
    await page.locator('#status').filter({ hasText: 'Die Website antwortet gerade nicht.' }).waitFor();
    await context.close();
  });
});
