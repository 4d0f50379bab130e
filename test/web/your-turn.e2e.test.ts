// "Your turn" belongs to the room's site (issue 33 item 1, docs/pages.md "Your turn"), in headless Chromium against
// a real node: a room that is not the demo's sample room says "It's your turn" and continues to the site — its
// link back (branding.link_url), through the hand-off when the room allows that origin — with no trace of the
// sample store (no Purchase now, widget or receipt); the sample room (`sample_store`) still buys and gets a receipt.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TEST_CREDENTIALS } from '../support/node.ts';
import { ensurePagesBuilt, launchChromium, startWebNode, watchErrors, type WebNode } from './support.ts';

const TIMEOUT = 20_000;
const auth = { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' };
const SITE = 'https://kicks.example';

describe('your turn: on to the room\'s site; the sample store only in the sample room', { timeout: 180_000 }, () => {
  let browser: Browser;
  let node: WebNode;

  before(async () => {
    ensurePagesBuilt();
    browser = await launchChromium();
    node = await startWebNode(); // the room Sample, with sample_store (as deploy/demo/sample-gate.json)
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
  });

  const put = async (id: string, body: unknown) => {
    const response = await fetch(`${node.privateUrl}/rooms/${id}`, { method: 'PUT', headers: auth, body: JSON.stringify(body) });
    assert.equal(response.status, 201, await response.clone().text());
  };

  /** Opens the room's page, joins, lets the visitor in through the private API, and waits for their turn. */
  async function reachTurn(page: Page, room: string): Promise<void> {
    await page.goto(`${node.url}/waiting-room-site/?eventId=${room}&lang=en`);
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForFunction(() => document.querySelector('#my-position')?.textContent === '1', null, { timeout: TIMEOUT });
    const moved = await fetch(`${node.privateUrl}/increment_serving_counter`, { method: 'POST', headers: auth, body: JSON.stringify({ event_id: room, increment_by: 1 }) });
    assert.equal(moved.status, 200);
  }

  it('a room that is not the sample room: "It\'s your turn" and a link on to the site, nothing of the store', async () => {
    await put('Drop', { admission: 'manual', branding: { site_name: 'Kicks & Co', link_url: `${SITE}/drop`, link_text: 'Back to Kicks & Co' } });
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = watchErrors(page);
    await reachTurn(page, 'Drop');
    await page.getByRole('heading', { name: "It's your turn" }).waitFor({ timeout: TIMEOUT });
    await page.locator('#token-status').filter({ hasText: 'You are let in.' }).waitFor({ timeout: TIMEOUT });
    const link = page.getByRole('link', { name: 'Continue to the site' });
    assert.equal(await link.getAttribute('href'), `${SITE}/drop`);
    const seen = await page.evaluate(() => document.body.innerText);
    assert.doesNotMatch(seen, /purchase|widget|receipt|check out|store/i);
    // Not in the page at all, hidden or not.
    assert.equal(await page.locator('#purchase, #receipt, #detail-commerce').count(), 0);
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('a room that allows the link\'s origin for the hand-off: the link goes there with a one-time code', async () => {
    await put('Handed', { admission: 'manual', allowed_return_origins: [SITE], branding: { link_url: `${SITE}/checkout` } });
    const context = await browser.newContext();
    // The site itself is elsewhere: the browser's request for it is answered here, as its server would.
    await context.route(`${SITE}/**`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Kicks</title><h1>The site</h1>' }));
    const page = await context.newPage();
    await reachTurn(page, 'Handed');
    await page.locator('#token-status').filter({ hasText: 'You are let in.' }).waitFor({ timeout: TIMEOUT });
    await page.getByRole('link', { name: 'Continue to the site' }).click();
    await page.waitForURL(/^https:\/\/kicks\.example\/checkout\?anteroom_handoff=/, { timeout: TIMEOUT });
    const code = new URL(page.url()).searchParams.get('anteroom_handoff')!;
    // The site exchanges the code once for the visitor's token set.
    const exchanged = await fetch(`${node.url}/handoff`, { method: 'POST', body: JSON.stringify({ event_id: 'Handed', code }) });
    assert.equal(exchanged.status, 200, await exchanged.clone().text());
    assert.equal(typeof ((await exchanged.json()) as { access_token?: unknown }).access_token, 'string');
    await context.close();
  });

  it('the sample room (sample_store) still buys at the sample store and shows the receipt', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = watchErrors(page);
    await reachTurn(page, 'Sample');
    await page.getByRole('heading', { name: 'Check out now!' }).waitFor({ timeout: TIMEOUT });
    await page.locator('#token-status').filter({ hasText: 'Your pass is ready' }).waitFor({ timeout: TIMEOUT });
    await page.getByRole('button', { name: 'Purchase now' }).click();
    await page.locator('#receipt').waitFor({ state: 'visible', timeout: TIMEOUT });
    assert.equal(await page.locator('#receipt-result').textContent(), 'Success');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
