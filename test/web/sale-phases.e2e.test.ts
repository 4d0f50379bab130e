// Sale day as visitors see it (issue 33), in headless Chromium against a real node: every phase has its page and
// open pages follow the room live (the operator's changes are made through the rooms API, as the panel makes them:
// PATCH /private/rooms/{id}); a reload in a closed room shows one phase only; people ahead, the estimate's words and
// the queue ID in a capacity-bound room; the room's own words and look; axe-core 0 violations in every phase at
// phone and desktop sizes.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TEST_CREDENTIALS } from '../support/node.ts';
import { axeViolations, DESKTOP, pagesInChromium, PHONE, SHOP_BRANDING, watchErrors, type WebNode } from './support.ts';

/** A change of phase must reach an open page within 5 s (issue 33). */
const PHASE_MS = 5_000;
const TIMEOUT = 20_000;
const auth = { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' };
const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** axe at both sizes on the page as it is now, and nothing wider than a phone. */
async function accessibleAtBothSizes(page: Page, what: string): Promise<void> {
  for (const size of [PHONE, DESKTOP]) {
    await page.setViewportSize(size);
    assert.deepEqual(await axeViolations(page), [], `${what} at ${size.width} px`);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1), true, `${what}: nothing wider than ${size.width} px`);
  }
}

/** The texts a visitor can see (hidden elements left out). */
async function visibleText(page: Page): Promise<string> {
  return page.evaluate(() => document.body.innerText);
}

describe('sale day in the browser: every phase, live', { timeout: 300_000 }, () => {
  const web = pagesInChromium({}, { jobs: true });
  let browser: Browser;
  let node: WebNode;
  const put = async (id: string, body: unknown) => {
    const response = await fetch(`${node.privateUrl}/rooms/${id}`, { method: 'PUT', headers: auth, body: JSON.stringify(body) });
    assert.equal(response.status, 201, await response.clone().text());
  };
  const patch = async (id: string, body: unknown) => {
    const response = await fetch(`${node.privateUrl}/rooms/${id}`, { method: 'PATCH', headers: auth, body: JSON.stringify(body) });
    assert.equal(response.status, 200, await response.clone().text());
  };
  const join = async (id: string) =>
    ((await (await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: id }) })).json()) as { api_request_id: string }).api_request_id;

  before(() => ({ node, browser } = web));

  it('before the pre-queue: a countdown to the opening, no refusal; the page turns into the join page by itself', async () => {
    // Far enough ahead for a busy machine to load the page before it.
    const opens = Date.now() + 25_000;
    await put('Soon', { prequeue_start_time: iso(opens), event_start_time: iso(opens + 3_600_000) });
    const context = await browser.newContext({ viewport: PHONE, timezoneId: 'Asia/Tokyo' });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${node.url}/waiting-room-site/?eventId=Soon`);
    await page.waitForFunction(() => /^Opens in 00:[0-2]\d$/.test(document.querySelector('#countdown')?.textContent ?? ''), null, { timeout: TIMEOUT });
    // The opening in the visitor's own time zone (Tokyo: UTC+9), never a 403 "closed" page.
    const tokyo = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'Asia/Tokyo' }).format(Math.floor(opens / 1000) * 1000);
    assert.match(await page.locator('#phase-notice').innerText(), new RegExp(`The line opens at ${tokyo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.equal(await page.getByRole('button', { name: 'Reserve' }).isVisible(), false);
    assert.doesNotMatch(await visibleText(page), /closed|not open/i);
    await accessibleAtBothSizes(page, 'before the opening');
    // The opening: Reserve appears by itself (the stream's phase), within 5 s of the time.
    await page.getByRole('button', { name: 'Reserve' }).waitFor({ timeout: opens - Date.now() + PHASE_MS });
    assert.ok(Date.now() <= opens + PHASE_MS, 'within 5 s of the opening');
    assert.match(await page.locator('#phase-notice').innerText(), /You can join now|The sale starts at/);
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForFunction(() => /^\d+$/.test(document.querySelector('#my-position')?.textContent ?? ''), null, { timeout: TIMEOUT });
    await accessibleAtBothSizes(page, 'the pre-queue');
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('pause and close reach an open page within 5 s, with the operator\'s words; a reload in a closed room shows one phase', async () => {
    await put('Live', {
      branding: SHOP_BRANDING,

    });
    for (let i = 0; i < 2; i++) await join('Live');
    const context = await browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${node.url}/waiting-room-site/?eventId=Live`);
    // The room's words, never the sample store's.
    assert.equal(await page.title(), 'Sneaker drop · Kicks & Co');
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Sneaker drop');
    assert.doesNotMatch(await visibleText(page), /Sample store|widget/i);
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('#reserve')!).backgroundColor), 'rgb(122, 31, 92)');
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForFunction(() => document.querySelector('#my-position')?.textContent === '3', null, { timeout: TIMEOUT });
    // Places 1 and 2 wait ahead of 3 (nobody let in yet).
    assert.equal(await page.locator('#ahead').innerText(), '2');
    await page.waitForFunction(() => document.querySelector<HTMLElement>('#queue')?.dataset.updates === 'stream', null, { timeout: TIMEOUT });
    await accessibleAtBothSizes(page, 'waiting, branded');

    // Pause (a second "tab": the rooms API the panel calls).
    let changedAt = Date.now();
    await patch('Live', { state: 'paused' });
    await page.getByText('Payment provider hiccup: back in a few minutes.').waitFor({ timeout: PHASE_MS });
    assert.ok(Date.now() - changedAt <= PHASE_MS);
    assert.equal(await page.locator('#eta').innerText(), 'Paused');
    assert.match(await page.locator('#phase-notice').innerText(), /paused/);
    await accessibleAtBothSizes(page, 'paused');

    // Resume: the pause words go.
    await patch('Live', { state: 'open' });
    await page.locator('#paused-message').waitFor({ state: 'hidden', timeout: PHASE_MS });
    assert.notEqual(await page.locator('#eta').innerText(), 'Paused');

    // Close (sold out): an ending for the visitor in line, with the operator's message and link.
    changedAt = Date.now();
    await patch('Live', { state: 'closed' });
    await page.getByRole('heading', { name: 'The line is closed' }).waitFor({ timeout: PHASE_MS });
    assert.ok(Date.now() - changedAt <= PHASE_MS);
    assert.equal(await page.locator('#ending-text').innerText(), 'The line closed before your turn came: nobody more is let in.');
    assert.equal(await page.getByText('Sold out — thank you for waiting!').isVisible(), true);
    assert.equal(await page.locator('#ending-link').getAttribute('href'), 'https://kicks.example/');
    assert.equal(await page.locator('#queue').isVisible(), false);
    await accessibleAtBothSizes(page, 'closed');

    // A reload in the closed room: the ending only, never "You are in line… keep this page open" beside it.
    await page.reload();
    await page.getByRole('heading', { name: 'The line is closed' }).waitFor({ timeout: TIMEOUT });
    const text = await visibleText(page);
    assert.doesNotMatch(text, /You are in line|Keep this page open|Reserve/);
    assert.match(text, /Sold out — thank you for waiting!/);
    // A newcomer in the closed room: the phase's sentence, not "before your turn came".
    const other = await browser.newContext({ viewport: PHONE });
    const newcomer = await other.newPage();
    await newcomer.goto(`${node.url}/waiting-room-site/?eventId=Live&lang=en`);
    assert.equal(await newcomer.locator('#ending-text').innerText(), 'The line is closed and not taking new visitors.');
    await other.close();

    // Ended (the schedule's end passes): the same ending, live.
    const ends = Date.now() + 8_000;
    await patch('Live', { state: 'open', event_end_time: iso(ends) });
    await page.waitForFunction(() => document.body.dataset.phase === 'waiting', null, { timeout: PHASE_MS });
    assert.equal(await page.locator('#queue').isVisible(), true, 'reopened: back in line');
    await page.locator('#ending-text').filter({ hasText: 'The sale ended before your turn came.' }).waitFor({ timeout: ends - Date.now() + PHASE_MS });
    await accessibleAtBothSizes(page, 'ended');
    assert.deepEqual(errors, []);
    await context.close();
  });

  it("the operator's words changed while pages are open reach them without a reload: in line, before joining, paused, closed", async () => {
    await put('Words', { branding: { title: 'Sneaker drop', message: 'One pair per customer.' } });
    await join('Words');
    const context = await browser.newContext({ viewport: PHONE });
    const inLine = await context.newPage();
    const errors = watchErrors(inLine);
    await inLine.goto(`${node.url}/waiting-room-site/?eventId=Words`);
    await inLine.getByRole('button', { name: 'Reserve' }).click();
    await inLine.waitForFunction(() => document.querySelector<HTMLElement>('#queue')?.dataset.updates === 'stream', null, { timeout: TIMEOUT });
    // A second visitor who has not joined (the room's watch, not a visit's stream).
    const other = await browser.newContext({ viewport: PHONE });
    const notJoined = await other.newPage();
    await notJoined.goto(`${node.url}/waiting-room-site/?eventId=Words`);
    await notJoined.getByRole('button', { name: 'Reserve' }).waitFor();
    for (const page of [inLine, notJoined]) await page.evaluate(() => ((window as unknown as { kept: number }).kept = 1));

    let changedAt = Date.now();
    await patch('Words', { branding: { title: 'Sneaker drop', message: 'Two pairs per customer now.', paused_message: 'Checking stock.', closed_message: 'All gone!' } });
    for (const page of [inLine, notJoined]) await page.locator('#room-message').filter({ hasText: 'Two pairs per customer now.' }).waitFor({ timeout: PHASE_MS });
    assert.ok(Date.now() - changedAt <= PHASE_MS);
    assert.equal(await inLine.locator('#paused-message').isVisible(), false, 'the pause words only while paused');
    await patch('Words', { state: 'paused' });
    await inLine.locator('#paused-message').filter({ hasText: 'Checking stock.' }).waitFor({ timeout: PHASE_MS });
    changedAt = Date.now();
    // A merge patch: `message: null` removes the message, the rest is kept.
    await patch('Words', { branding: { message: null, paused_message: 'Back in two minutes.' } });
    await inLine.locator('#paused-message').filter({ hasText: 'Back in two minutes.' }).waitFor({ timeout: PHASE_MS });
    assert.ok(Date.now() - changedAt <= PHASE_MS);
    await inLine.locator('#room-message').waitFor({ state: 'hidden', timeout: PHASE_MS });
    await accessibleAtBothSizes(inLine, 'paused, words changed live');
    await patch('Words', { state: 'closed' });
    await inLine.getByRole('heading', { name: 'The line is closed' }).waitFor({ timeout: PHASE_MS });
    await patch('Words', { branding: { closed_message: 'Sold out: see you next drop.' } });
    for (const page of [inLine, notJoined]) await page.locator('#closed-message').filter({ hasText: 'Sold out: see you next drop.' }).waitFor({ timeout: PHASE_MS });
    for (const page of [inLine, notJoined]) assert.equal(await page.evaluate(() => (window as unknown as { kept?: number }).kept), 1, 'never reloaded');
    assert.deepEqual(errors, []);
    await other.close();
    await context.close();
  });

  it('a second tab is the control panel: its Pause… and a message saved in its settings reach the open page within 5 s', async () => {
    await put('Tabs', { branding: { title: 'Sneaker drop', paused_message: 'Back in ten minutes.' } });
    const context = await browser.newContext({ viewport: DESKTOP });
    const visitor = await context.newPage();
    const errors = watchErrors(visitor);
    await visitor.goto(`${node.url}/waiting-room-site/?eventId=Tabs`);
    await visitor.getByRole('button', { name: 'Reserve' }).click();
    await visitor.waitForFunction(() => document.querySelector<HTMLElement>('#queue')?.dataset.updates === 'stream', null, { timeout: TIMEOUT });
    await visitor.evaluate(() => ((window as unknown as { kept: number }).kept = 1));

    const panel = await context.newPage();
    await panel.goto(`${node.url}/control-panel/`);
    await panel.getByRole('radio', { name: 'Admin token (Bearer)' }).check();
    await panel.getByLabel('Admin token', { exact: true }).fill(TEST_CREDENTIALS.adminToken);
    await panel.getByRole('button', { name: 'Connect', exact: true }).click();
    await panel.getByRole('button', { name: 'Open room Tabs' }).click();
    await panel.getByRole('button', { name: 'Pause…' }).click();
    const dialog = panel.getByRole('dialog', { name: 'Pause room Tabs?' });
    await dialog.getByRole('button', { name: 'Pause room', exact: true }).click();
    let changedAt = Date.now();
    await visitor.locator('#paused-message').filter({ hasText: 'Back in ten minutes.' }).waitFor({ timeout: PHASE_MS });
    assert.ok(Date.now() - changedAt <= PHASE_MS);
    assert.equal(await visitor.locator('#eta').innerText(), 'Paused');

    await panel.getByRole('button', { name: 'Edit settings' }).click();
    await panel.getByLabel('Message while paused (branding.paused_message)').fill('Back in two minutes.');
    await panel.getByRole('button', { name: 'Save settings' }).click();
    changedAt = Date.now();
    await visitor.locator('#paused-message').filter({ hasText: 'Back in two minutes.' }).waitFor({ timeout: PHASE_MS });
    assert.ok(Date.now() - changedAt <= PHASE_MS);
    assert.equal(await visitor.evaluate(() => (window as unknown as { kept?: number }).kept), 1, 'never reloaded');
    // The save kept the rest of the room's words (found here: the panel's PUT used to leave branding out).
    assert.equal(((await (await fetch(`${node.privateUrl}/rooms/Tabs`, { headers: auth })).json()) as { branding?: { title?: string } }).branding?.title, 'Sneaker drop');
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('your turn, live: the checkout the page turns into when the counter reaches the visitor, axe at both sizes', async () => {
    // The sample store takes the tokens of the server's configured room (Sample), so the purchase is made there.
    await patch('Sample', { branding: { title: 'Sneaker drop', site_name: 'Kicks & Co', link_url: 'https://kicks.example/', colors: { accent: '#7a1f5c' } } });
    const context = await browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${node.url}/waiting-room-site/?eventId=Sample`);
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForFunction(() => document.querySelector('#my-position')?.textContent === '1', null, { timeout: TIMEOUT });
    await accessibleAtBothSizes(page, 'waiting, next in line');
    // The operator lets one person in (the panel's "Let people in"): the open page turns into the checkout.
    const moved = await fetch(`${node.privateUrl}/increment_serving_counter`, { method: 'POST', headers: auth, body: JSON.stringify({ event_id: 'Sample', increment_by: 1 }) });
    assert.equal(moved.status, 200);
    await page.getByRole('heading', { name: 'Check out now!' }).waitFor({ timeout: PHASE_MS });
    await page.locator('#token-status').filter({ hasText: 'Your pass is ready' }).waitFor({ timeout: TIMEOUT });
    assert.equal(await page.getByRole('button', { name: 'Purchase now' }).isEnabled(), true);
    assert.equal(await page.locator('#queue').isVisible(), false);
    await accessibleAtBothSizes(page, 'your turn (live)');
    // And after the purchase, the receipt.
    await page.getByRole('button', { name: 'Purchase now' }).click();
    await page.locator('#receipt').waitFor({ state: 'visible', timeout: TIMEOUT });
    await accessibleAtBothSizes(page, 'your turn, purchased (live)');
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('a capacity-bound room: people ahead without those who left, 0 for the next in line; the estimate says what it waits for; a queue ID', async () => {
    await put('Cap', { admission: 'automatic', new_users_per_minute: 600, total_active_users: 1, queue_position_expiry_period: 600 });
    const first = await join('Cap');
    // The first visitor is let in and claims: the one place is taken until their session ends.
    await waitFor(async () => (await fetch(`${node.url}/serving_num?event_id=Cap`).then((r) => r.json()) as { serving_counter: number }).serving_counter === 1);
    const claim = await fetch(`${node.url}/generate_token`, { method: 'POST', body: JSON.stringify({ event_id: 'Cap', request_id: first }) });
    assert.equal(claim.status, 200);
    const second = await join('Cap');
    const third = await join('Cap');
    const context = await browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${node.url}/waiting-room-site/?eventId=Cap`);
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForFunction(() => document.querySelector('#my-position')?.textContent === '4', null, { timeout: TIMEOUT });
    assert.equal(await page.locator('#ahead').innerText(), '2', 'places 2 and 3 wait ahead of 4');
    const requestId = (await page.locator('#detail-request').textContent()) ?? '';
    const queueId = await page.locator('#queue-id').innerText();
    assert.match(queueId, /^[0-9A-F]{4}-[0-9A-F]{4}$/);
    assert.equal(queueId.replace('-', ''), requestId.replaceAll('-', '').slice(0, 8).toUpperCase());
    // Nobody is let in while the one place is taken: after the estimator's 15 s, it says what it waits for.
    await page.waitForFunction(() => document.querySelector('#eta')?.textContent === 'Waiting for someone to finish', null, { timeout: 30_000 });
    assert.doesNotMatch(await visibleText(page), /Paused|paused/);
    assert.match(await page.locator('#eta-note').innerText(), /as others finish/);
    await accessibleAtBothSizes(page, 'waiting in a capacity-bound room');
    // Place 2 leaves: the server counts one ahead of 4; place 3 is next in line with 0 ahead.
    assert.equal((await fetch(`${node.url}/leave_queue`, { method: 'POST', body: JSON.stringify({ event_id: 'Cap', request_id: second }) })).status, 200);
    const lookup = async (id: string) => (await (await fetch(`${node.url}/queue_num?event_id=Cap&request_id=${id}`)).json()) as { people_ahead: number };
    assert.equal((await lookup(requestId)).people_ahead, 1);
    assert.equal((await lookup(third)).people_ahead, 0);
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('branding is checked strictly: a javascript: URL, a colour that is not #rgb, unreadable colours are 400s naming the field', async () => {
    for (const [branding, field] of [
      [{ logo_url: 'javascript:alert(1)' }, 'branding.logo_url'],
      [{ link_url: '//evil.example/' }, 'branding.link_url'],
      [{ link_url: 'http://shop.example/' }, 'branding.link_url'],
      [{ colors: { accent: 'red;}body{display:none' } }, 'branding.colors.accent'],
      [{ colors: { text: '#eeeeee' } }, 'branding.colors.text'],
      [{ extra: 1 }, 'branding'],
    ] as const) {
      const response = await fetch(`${node.privateUrl}/rooms/Bad`, { method: 'PUT', headers: auth, body: JSON.stringify({ branding }) });
      assert.equal(response.status, 400, JSON.stringify(branding));
      const body = (await response.json()) as { error: string };
      assert.ok(body.error.includes(field), `${body.error} names ${field}`);
    }
    assert.equal((await fetch(`${node.privateUrl}/rooms/Bad`, { headers: auth })).status, 404, 'nothing stored');
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = TIMEOUT): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
