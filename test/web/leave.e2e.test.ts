// The waiting-room page in headless Chromium: a visitor leaves the line (spec/rooms.md §4) after a confirmation,
// the page forgets the place, and the waiting room no longer counts it; a closed room says so on Reserve.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { defaultSettings } from '../../src/domain/room-settings.ts';
import { newPage, PAGE_TIMEOUT, pagesInChromium, text, type WebNode } from './support.ts';

const TIMEOUT = PAGE_TIMEOUT;

async function reserve(page: Page, url: string, eventId = 'Sample'): Promise<string> {
  await page.goto(`${url}/waiting-room-site/?eventId=${eventId}`);
  await page.getByRole('button', { name: 'Reserve' }).click();
  await page.waitForFunction(() => /^\d+$/.test(document.querySelector('#my-position')?.textContent ?? ''), null, { timeout: TIMEOUT });
  return text(page, '#detail-request');
}

describe('leaving the line from the waiting-room page', { timeout: 120_000 }, () => {
  const web = pagesInChromium();
  let node: WebNode;
  let browser: Browser;
  before(() => ({ node, browser } = web));

  const waiting = async (eventId = 'Sample') =>
    ((await (await fetch(`${node.url}/waiting_num?event_id=${eventId}`)).json()) as { waiting_num: number }).waiting_num;

  it('asks first; on "Yes" gives the place up, forgets it and offers Reserve again', async () => {
    const leaver = await newPage(browser, { width: 390, height: 844 }); // a phone
    const stayer = await newPage(browser);
    const leaverId = await reserve(leaver.page, node.url);
    await reserve(stayer.page, node.url);
    assert.equal(await waiting(), 2);

    // "Leave the line" asks; "Stay in line" keeps everything as it was.
    await leaver.page.getByRole('button', { name: 'Leave the line' }).click();
    await leaver.page.getByText('Give up your place?').waitFor({ timeout: TIMEOUT });
    await leaver.page.getByRole('button', { name: 'Stay in line' }).click();
    await leaver.page.getByRole('button', { name: 'Leave the line' }).waitFor({ timeout: TIMEOUT });
    assert.equal(await leaver.page.locator('#leave-confirm').isVisible(), false);
    assert.equal(await waiting(), 2);

    await leaver.page.getByRole('button', { name: 'Leave the line' }).click();
    await leaver.page.getByRole('button', { name: 'Yes, leave the line' }).click();
    await leaver.page.getByRole('button', { name: 'Reserve' }).waitFor({ timeout: TIMEOUT });
    assert.match(await text(leaver.page, '#status'), /You left the line/);
    assert.equal(await leaver.page.evaluate(() => localStorage.length), 0, 'the place is forgotten');
    assert.equal(await waiting(), 1);
    const claim = await fetch(`${node.url}/generate_token`, {
      method: 'POST',
      body: JSON.stringify({ event_id: 'Sample', request_id: leaverId }),
    });
    assert.equal(claim.status, 410);

    // A reload shows the intro, not the old place; the other visitor is still in line at their number.
    await leaver.page.reload();
    await leaver.page.getByRole('button', { name: 'Reserve' }).waitFor({ timeout: TIMEOUT });
    assert.equal(await leaver.page.locator('#queue').isVisible(), false);
    assert.equal(await text(stayer.page, '#my-position'), '2');
    assert.deepEqual([...leaver.errors, ...stayer.errors], []);
  });

  it('a closed room says so at once: its ending, no Reserve to press (issue 33)', async () => {
    await node.rooms.put({ ...defaultSettings('Shut'), state: 'closed' });
    const visitor = await newPage(browser);
    await visitor.page.goto(`${node.url}/waiting-room-site/?eventId=Shut`);
    await visitor.page.getByText('The line is closed and not taking new visitors.').waitFor({ timeout: TIMEOUT });
    assert.equal(await visitor.page.getByRole('button', { name: 'Reserve' }).isVisible(), false);
    assert.equal(await visitor.page.locator('#queue').isVisible(), false);
  });
});
