// The waiting-room page against a room whose bot defence asks a proof of work (docs/bots.md), in headless
// Chromium: the join is refused, the page fetches a challenge, solves it in Web Workers without asking the
// visitor anything (under the page's Content-Security-Policy), and joins with the solution.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { defaultSettings } from '../../src/domain/room-settings.ts';
import { ensurePagesBuilt, launchChromium, newPage, startWebNode, type WebNode } from './support.ts';

describe('the waiting-room page solves the challenge by itself', { timeout: 120_000 }, () => {
  let node: WebNode;
  let browser: Browser;

  before(async () => {
    ensurePagesBuilt();
    node = await startWebNode({
      events: [
        defaultSettings('Sample'),
        {
          ...defaultSettings('Guarded'),
          bot_defence: {
            challenge: 'always',
            difficulty: 20_000,
            max_difficulty: 1_000_000,
            room_threshold_per_minute: 600,
            client_threshold_per_minute: 5,
            challenge_ttl: 120,
            require_enqueue_key: false,
    infinite_queue: false,
          },
        },
      ],
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
  });

  it('a visitor presses Reserve and gets a place: refused, challenge, solved in the page, joined', async () => {
    const { page, context, errors } = await newPage(browser);
    const joins: number[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/assign_queue_num')) joins.push(response.status());
    });
    const challenges: number[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/challenge?')) challenges.push(response.status());
    });
    await page.goto(`${node.url}/waiting-room-site/?eventId=Guarded`);
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForFunction(() => /^\d+$/.test(document.querySelector('#my-position')?.textContent?.trim() ?? ''), undefined, {
      timeout: 60_000,
    });
    assert.deepEqual(joins, [403, 200]);
    assert.deepEqual(challenges, [200]);
    assert.equal((await node.room.reports.counters('Guarded')).queue, 1);
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('a room without a challenge is joined with one request, as before', async () => {
    const { page, context, errors } = await newPage(browser);
    const joins: number[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/assign_queue_num')) joins.push(response.status());
    });
    await page.goto(`${node.url}/waiting-room-site/`);
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForFunction(() => /^\d+$/.test(document.querySelector('#my-position')?.textContent?.trim() ?? ''), undefined, {
      timeout: 20_000,
    });
    assert.deepEqual(joins, [200]);
    assert.deepEqual(errors, []);
    await context.close();
  });
});
