// The pages in a real browser (headless Chromium): visitors wait, the operator lets one in from the control
// panel (signing with SigV4 like VWR's panel), that visitor buys from the protected store while the other waits.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TEST_CREDENTIALS } from '../support/node.ts';
import { adminCall, connectPanel, newPage, PAGE_TIMEOUT, pagesInChromium, text, waitForText, type WebNode } from './support.ts';

const TIMEOUT = PAGE_TIMEOUT;

async function reserve(page: Page, url: string): Promise<string> {
  await page.goto(`${url}/waiting-room-site/`);
  await page.getByRole('button', { name: 'Reserve' }).click();
  await waitForText(page, '#my-position', /^\d+$/);
  return text(page, '#detail-request');
}


describe('waiting-room page and control panel in Chromium', { timeout: 120_000 }, () => {
  const web = pagesInChromium();
  let node: WebNode;
  let browser: Browser;
  before(() => ({ node, browser } = web));

  /** A private API call with the admin token (tests set up the state they start from; none relies on another). */
  const admin = async (path: string, body: Record<string, unknown>) => {
    const response = await adminCall(node, 'POST', path, body);
    assert.equal(response.status, 200, JSON.stringify(response.body));
  };

  it('two visitors reserve; the panel (SigV4) lets one in; that one buys while the other still waits', async () => {
    const first = await newPage(browser);
    const second = await newPage(browser, { width: 390, height: 844 }); // a phone
    const operator = await newPage(browser, { width: 1100, height: 900 });
    // An empty line: positions 1 and 2, nobody served yet, whatever ran before on this node.
    await admin('/reset_initial_state', { event_id: 'Sample' });

    const firstId = await reserve(first.page, node.url);
    assert.equal(await text(first.page, '#my-position'), '1');
    const secondId = await reserve(second.page, node.url);
    assert.equal(await text(second.page, '#my-position'), '2');
    assert.notEqual(firstId, secondId);

    await connectPanel(operator.page, node.url, { sigv4: TEST_CREDENTIALS.secretAccessKey });
    await waitForText(operator.page, '#connection-status', /Connected to .*access key AKARTESTACCESSKEY001/);
    await waitForText(operator.page, '#c-waiting', '2');
    assert.equal(await text(operator.page, '#c-serving'), '0');

    await operator.page.getByLabel('Let in this many more visitors').fill('1');
    await operator.page.getByRole('button', { name: 'Increment serving counter' }).click();
    await waitForText(operator.page, '#action-status', 'Serving counter is now 1.');

    // The first visitor is served: token claimed, purchase at the protected store, receipt.
    await first.page.getByRole('heading', { name: 'Check out now!' }).waitFor({ timeout: TIMEOUT });
    await waitForText(first.page, '#token-status', /Your pass is ready/);
    await first.page.getByRole('button', { name: 'Purchase now' }).click();
    await first.page.locator('#receipt').waitFor({ state: 'visible', timeout: TIMEOUT });
    assert.equal(await text(first.page, '#receipt-result'), 'Success');
    assert.equal(await text(first.page, '#receipt-order'), firstId);
    assert.equal(await text(first.page, '#receipt-position'), '1');

    // The second one still waits, and sees the line move.
    await waitForText(second.page, '#serving', '1');
    assert.equal(await second.page.locator('#queue').isVisible(), true);
    assert.equal(await second.page.locator('#checkout').isVisible(), false);
    assert.equal(await text(second.page, '#my-position'), '2');

    // The panel sees the claimed token.
    await waitForText(operator.page, '#c-active', '1');
    await waitForText(operator.page, '#c-waiting', '1');
    await waitForText(operator.page, '#c-awaiting', '0'); // let in and arrived: nobody let in is still to come
    assert.equal(await operator.page.locator('#queue-chart canvas').count(), 1);
    assert.equal(await operator.page.locator('#rate-chart canvas').count(), 1);

    // A reload keeps the place: same request ID, same position, no new entry in the line.
    await second.page.reload();
    await waitForText(second.page, '#my-position', '2');
    assert.equal(await text(second.page, '#detail-request'), secondId);
    const waiting = (await (await fetch(`${node.url}/waiting_num?event_id=Sample`)).json()) as { waiting_num: number };
    assert.equal(waiting.waiting_num, 1);

    // The served visitor's reload shows the receipt again, without offering to buy twice.
    await first.page.reload();
    await first.page.locator('#receipt').waitFor({ state: 'visible', timeout: TIMEOUT });
    assert.equal(await first.page.getByRole('button', { name: 'Purchased' }).isDisabled(), true);

    // "Start over" gives up the place and offers Reserve again.
    await first.page.getByRole('button', { name: 'Start over' }).click();
    await first.page.getByRole('button', { name: 'Reserve' }).waitFor({ timeout: TIMEOUT });
    assert.equal(await first.page.evaluate(() => Object.keys(localStorage).length), 0);

    // The operator's secret never reaches browser storage.
    const stored = await operator.page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
    assert.ok(!stored.includes(TEST_CREDENTIALS.secretAccessKey));
    assert.equal(await operator.page.evaluate(() => localStorage.length), 0);

    for (const { errors } of [first, second, operator]) assert.deepEqual(errors, []);
    await Promise.all([first.context.close(), second.context.close(), operator.context.close()]);
  });

  it('the control panel shows an error, not "connected", when the credentials are wrong', async () => {
    const { page, context } = await newPage(browser);
    await connectPanel(page, node.url, { sigv4: 'wrong-secret-access-key-0123456789abc' });
    await waitForText(page, '#connection-status', /Error — .*403 Forbidden.*refused these credentials/);
    assert.equal(await page.locator('#connection-status').getAttribute('role'), 'alert');
    assert.equal(await page.getByRole('button', { name: 'Increment serving counter' }).isDisabled(), true);

    // The admin token path reports the same way, and works with the right token.
    await page.getByRole('radio', { name: 'Admin token (Bearer)' }).check();
    await page.getByLabel('Admin token', { exact: true }).fill('not-the-admin-token');
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await waitForText(page, '#connection-status', /Error — .*403 Forbidden/);
    await page.getByLabel('Admin token', { exact: true }).fill(TEST_CREDENTIALS.adminToken);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await waitForText(page, '#connection-status', /Connected to .*admin token/);
    await context.close();
  });

  it('reset asks for confirmation first', async () => {
    const { page, context, errors } = await newPage(browser);
    await admin('/increment_serving_counter', { event_id: 'Sample', increment_by: 3 }); // something to reset
    await connectPanel(page, node.url, { sigv4: TEST_CREDENTIALS.secretAccessKey });
    await waitForText(page, '#connection-status', /Connected/);
    await page.getByRole('button', { name: 'Reset waiting room…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset this waiting room?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await dialog.isVisible(), false);
    const before = (await (await fetch(`${node.url}/serving_num?event_id=Sample`)).json()) as { serving_counter: number };
    assert.ok(before.serving_counter > 0);

    await page.getByRole('button', { name: 'Reset waiting room…' }).click();
    await dialog.getByRole('button', { name: 'Reset event' }).click();
    await waitForText(page, '#action-status', 'Event Sample was reset.');
    await waitForText(page, '#c-serving', '0');
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('a failed join is never sent again by the page; polling failures are retried', async () => {
    const { page, context, errors } = await newPage(browser);
    let joins = 0;
    await page.route('**/assign_queue_num', async (route) => {
      joins++;
      await route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":"Service unavailable"}' });
    });
    await page.goto(`${node.url}/waiting-room-site/`);
    await page.getByRole('button', { name: 'Reserve' }).click();
    await waitForText(page, '#error', /You could not join the line just now. Press Reserve to try again./);
    await page.waitForTimeout(1_500);
    assert.equal(joins, 1);

    // The visitor presses Reserve again; then two failed polls are retried with back-off until one succeeds.
    await page.unroute('**/assign_queue_num');
    let failures = 0;
    await page.route('**/serving_num?*', async (route) => {
      if (failures++ < 2) await route.fulfill({ status: 502, body: 'Bad gateway' });
      else await route.continue();
    });
    await page.getByRole('button', { name: 'Reserve' }).click();
    await waitForText(page, '#status', /The connection was lost. Your place is kept/);
    await waitForText(page, '#serving', /^\d+$/);
    assert.equal(await text(page, '#status'), '');
    assert.ok(failures >= 3);
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('text has at least 4.5:1 contrast on both pages', async () => {
    const { page, context } = await newPage(browser);
    for (const path of ['/waiting-room-site/', '/control-panel/']) {
      await page.goto(`${node.url}${path}`);
      // Show the states that are hidden at first, so their colours are checked too.
      await page.evaluate(() => {
        for (const element of document.querySelectorAll<HTMLElement>('[hidden]')) element.hidden = false;
        for (const notice of document.querySelectorAll<HTMLElement>('.notice')) notice.textContent ||= 'Sample text';
      });
      const failures = await page.evaluate(lowContrastTexts);
      assert.deepEqual(failures, [], path);
    }
    await context.close();
  });

  it('is usable from the keyboard alone', async () => {
    const { page, context } = await newPage(browser);
    await page.goto(`${node.url}/waiting-room-site/`);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'reserve');
    await page.keyboard.press('Enter');
    await waitForText(page, '#my-position', /^\d+$/);
    // Focus moves to the new section's heading, and the position is announced politely.
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'queue-title');
    await waitForText(page, '#announcer', /You are number \d+/);
    assert.equal(await page.locator('#announcer').getAttribute('aria-live'), 'polite');
    await context.close();
  });
});

/** Runs in the page: every visible text element whose colour has less than 4.5:1 contrast on its background. */
function lowContrastTexts(): string[] {
  const parse = (color: string): number[] => (color.match(/[\d.]+/g) ?? []).map(Number);
  const luminance = ([r, g, b]: number[]) => {
    const [R, G, B] = [r!, g!, b!].map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * R! + 0.7152 * G! + 0.0722 * B!;
  };
  const background = (element: Element | null): number[] => {
    for (let e = element; e; e = e.parentElement) {
      const value = parse(getComputedStyle(e).backgroundColor);
      if (value.length === 3 || (value[3] ?? 1) > 0) return value;
    }
    return [255, 255, 255];
  };
  const failures: string[] = [];
  for (const element of document.querySelectorAll('h1, h2, h3, p, dt, dd, label, legend, button, summary, input, figcaption, code')) {
    const box = element.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || !element.textContent?.trim() && element.tagName !== 'INPUT') continue;
    const style = getComputedStyle(element);
    if (style.visibility === 'hidden' || element.closest('.visually-hidden, .u-legend')) continue;
    const fg = luminance(parse(style.color));
    const bg = luminance(background(element));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    if (ratio < 4.5) failures.push(`${element.tagName.toLowerCase()}#${element.id} "${element.textContent?.trim().slice(0, 30)}" ${ratio.toFixed(2)}`);
  }
  return failures;
}
