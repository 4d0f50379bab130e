// The visitor's page in headless Chromium (issue 16): people ahead is position − serving; a reset is said at
// once ("the queue was restarted") through the room generation on the stream; the turn changes the tab title
// and icon; Arabic is right-to-left; and axe-core finds 0 violations at desktop and phone sizes, for every phase
// and both text directions (previews of each phase, and the live page).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { PAGE_PHASES } from '../../src/web/page-template.ts';
import { TEST_CREDENTIALS } from '../support/node.ts';
import { axeViolations, ensurePagesBuilt, launchChromium, startWebNode, watchErrors, type WebNode } from './support.ts';

const TIMEOUT = 20_000;
const SIZES = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'phone', width: 390, height: 844 },
];
const auth = { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' };

async function admin(node: WebNode, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${node.privateUrl}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
  assert.equal(response.status, 200, path);
}

/** axe-core's violations on the page as it is now (WCAG 2.1 AA and best practices), as "rule: target" lines. */

/** Content wider than the viewport (a phone must not scroll sideways). */
async function overflowsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);
}

describe("the visitor's page", { timeout: 240_000 }, () => {
  let browser: Browser;
  let node: WebNode;
  before(async () => {
    ensurePagesBuilt();
    browser = await launchChromium();
    node = await startWebNode();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
  });

  it('people ahead are those still waiting between the counter and the place; a reset says at once that the queue was restarted', async () => {
    await admin(node, '/reset_initial_state', { event_id: 'Sample' });
    for (let i = 0; i < 3; i++) await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: 'Sample' }) });
    await admin(node, '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 });
    const context = await browser.newContext({ viewport: SIZES[0] });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${node.url}/waiting-room-site/`);
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForFunction(() => document.querySelector('#my-position')?.textContent === '4', null, { timeout: TIMEOUT });
    // Serving 1, place 4: places 2 and 3 wait ahead (issue 33: not position − serving, which counted the place itself).
    await page.waitForFunction(() => document.querySelector('#ahead')?.textContent === '2', null, { timeout: TIMEOUT });
    // Live through the stream, then the organiser resets the room.
    await page.waitForFunction(() => document.querySelector<HTMLElement>('#queue')?.dataset.updates === 'stream', null, { timeout: TIMEOUT });
    await admin(node, '/reset_initial_state', { event_id: 'Sample' });
    await page.getByText('The queue was restarted by the organiser').waitFor({ timeout: TIMEOUT });
    assert.equal(await page.getByRole('button', { name: 'Start over' }).isVisible(), true);
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('the page beats (presence, issue 34): its place lookup carries beat=1, answered no-store', async () => {
    await admin(node, '/reset_initial_state', { event_id: 'Sample' });
    const context = await browser.newContext({ viewport: SIZES[0] });
    const page = await context.newPage();
    const beat = page.waitForResponse((r) => /\/queue_num\?event_id=Sample&request_id=[0-9a-f-]{36}&beat=1$/.test(r.url()), { timeout: TIMEOUT });
    await page.goto(`${node.url}/waiting-room-site/`);
    await page.getByRole('button', { name: 'Reserve' }).click();
    const answer = await beat;
    assert.equal(answer.status(), 200);
    assert.equal(answer.headers()['cache-control'], 'no-store');
    await context.close();
  });

  it('the turn changes the tab title and icon; the notification waits for its button', async () => {
    await admin(node, '/reset_initial_state', { event_id: 'Sample' });
    const context = await browser.newContext({ viewport: SIZES[0] });
    const page = await context.newPage();
    await page.goto(`${node.url}/waiting-room-site/`);
    const title = await page.title();
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForFunction(() => document.querySelector('#my-position')?.textContent === '1', null, { timeout: TIMEOUT });
    assert.equal(await page.evaluate(() => Notification.permission), 'default', 'never asked on load');
    await admin(node, '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 });
    await page.getByRole('heading', { name: 'Check out now!' }).waitFor({ timeout: TIMEOUT });
    assert.equal(await page.title(), `Your turn! · ${title}`);
    assert.match((await page.locator('#favicon').getAttribute('href')) ?? '', /^data:image\/png/);
    await context.close();
  });

  it('Arabic is right-to-left, chosen by Accept-Language, with numbers formatted for it', async () => {
    const context = await browser.newContext({ viewport: SIZES[1], locale: 'ar' });
    const page = await context.newPage();
    await page.goto(`${node.url}/waiting-room-site/?eventId=Sample`);
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).direction), 'rtl');
    assert.equal(await page.getByRole('button', { name: 'احجز' }).isVisible(), true);
    await context.close();
  });

  it('before the start: the notice names the start, a countdown runs, and the live page passes axe at phone size', async () => {
    const at = (hours: number) => new Date(Math.floor(Date.now() / 1000 + hours * 3600) * 1000).toISOString().replace('.000Z', 'Z');
    const put = await fetch(`${node.privateUrl}/rooms/Soon`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ prequeue_start_time: at(-1), event_start_time: at(2) }),
    });
    assert.equal(put.status, 201);
    const context = await browser.newContext({ viewport: SIZES[1] });
    const page = await context.newPage();
    await page.goto(`${node.url}/waiting-room-site/?eventId=Soon`);
    // The start in the visitor's own time zone (the browser's; no "UTC" label any more).
    await page.getByText(/The sale starts at /).waitFor({ timeout: TIMEOUT });
    await page.waitForFunction(() => /^Starts in 1:59:\d\d$/.test(document.querySelector('#countdown')?.textContent ?? ''), null, { timeout: TIMEOUT });
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForFunction(() => /^\d+$/.test(document.querySelector('#my-position')?.textContent ?? ''), null, { timeout: TIMEOUT });
    assert.deepEqual(await axeViolations(page), []);
    assert.equal(await overflowsSideways(page), false);
    await context.close();
  });

  for (const size of SIZES) {
    it(`axe-core: 0 violations on every phase in both directions, ${size.name} (${size.width} px), no sideways scroll`, async () => {
      const context = await browser.newContext({ viewport: size, extraHTTPHeaders: auth });
      const page = await context.newPage();
      const found: string[] = [];
      // Also a branded room with a draw: its message and the link to check the draw.
      const drawn = await fetch(`${node.privateUrl}/rooms/Drawn`, {
        method: 'PUT',
        headers: auth,
        body: JSON.stringify({ event_start_time: '2030-01-01T10:00:00Z', shuffle_at_event_start: true, branding: { title: 'Sneaker drop', message: 'One pair per customer.', colors: { accent: '#7a1f5c' } } }),
      });
      assert.ok(drawn.status === 201 || drawn.status === 200, await drawn.text());
      for (const room of ['Sample', 'Drawn']) {
        for (const lang of ['en', 'ar']) {
          for (const phase of PAGE_PHASES) {
            await page.goto(`${node.url}/private/rooms/${room}/preview?phase=${phase}&lang=${lang}`);
            if (room === 'Drawn' && phase !== 'before') assert.equal(await page.locator('#draw-check-link').isVisible(), true, `${lang} ${phase}`);
            for (const v of await axeViolations(page)) found.push(`${room} ${lang} ${phase}: ${v}`);
            if (await overflowsSideways(page)) found.push(`${room} ${lang} ${phase}: wider than ${size.width} px`);
          }
        }
      }
      assert.deepEqual(found, []);
      await context.close();
    });
  }
});
