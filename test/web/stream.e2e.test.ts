// The waiting-room page in headless Chromium hears the counters through the stream (GET /stream) once its place
// is known, instead of polling /serving_num and /waiting_num: a move of the counter shows without a poll, and
// reaching the place takes the visitor to checkout. Where the server has no stream the page polls as before.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TEST_CREDENTIALS } from '../support/node.ts';
import { ensurePagesBuilt, launchChromium, newPage, startWebNode, type WebNode } from './support.ts';

const TIMEOUT = 20_000;

async function reserve(page: Page, url: string): Promise<number> {
  await page.goto(`${url}/waiting-room-site/?eventId=Sample`);
  await page.getByRole('button', { name: 'Reserve' }).click();
  await page.waitForFunction(() => /^\d+$/.test(document.querySelector('#my-position')?.textContent ?? ''), null, { timeout: TIMEOUT });
  return Number(await page.locator('#my-position').textContent());
}

/** Counts the page's requests to each path from now on. */
function countRequests(page: Page): Map<string, number> {
  const counts = new Map<string, number>();
  page.on('request', (request) => {
    const path = new URL(request.url()).pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
  });
  return counts;
}

async function increment(node: WebNode, by: number): Promise<void> {
  const response = await fetch(`${node.privateUrl}/increment_serving_counter`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ event_id: 'Sample', increment_by: by }),
  });
  assert.equal(response.status, 200);
}

describe('the waiting page hears the counters through the stream', { timeout: 120_000 }, () => {
  let browser: Browser;
  before(async () => {
    ensurePagesBuilt();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  it('no polls while the stream is open; a counter move shows at once; the turn leads to checkout', async () => {
    const node = await startWebNode();
    try {
      // Three visitors ahead, so the counter can move without reaching this page's place.
      for (let i = 0; i < 3; i++) await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: 'Sample' }) });
      const visitor = await newPage(browser);
      const counts = countRequests(visitor.page);
      const position = await reserve(visitor.page, node.url);
      assert.equal(position, 4);
      // The page says how it hears the counters once the stream's first frame arrived.
      await visitor.page.locator('#queue[data-updates="stream"]').waitFor({ state: 'attached', timeout: TIMEOUT });
      const pollsBefore = (counts.get('/serving_num') ?? 0) + (counts.get('/waiting_num') ?? 0);

      await increment(node, 2);
      await visitor.page.waitForFunction(() => document.querySelector('#serving')?.textContent?.trim() === '2', null, { timeout: TIMEOUT });
      const pollsAfter = (counts.get('/serving_num') ?? 0) + (counts.get('/waiting_num') ?? 0);
      assert.equal(pollsAfter, pollsBefore, 'the move arrived through the stream, not a poll');
      // The room's watch (opened at load, for the phase) gives way to the visit's stream, which names the
      // request ID (an open stream is a sign of life: presence, issue 34): two in the page's life, one at a time.
      assert.equal(counts.get('/stream'), 2, 'the room watch, then the visit\'s own stream');

      await increment(node, 2);
      await visitor.page.getByText('Your pass is ready').waitFor({ timeout: TIMEOUT });
      assert.deepEqual(visitor.errors, []);
    } finally {
      await node.stop();
    }
  });

  it('a server without streams: the page polls and still gets its turn', async () => {
    const node = await startWebNode({ streamMaxConnections: 0 });
    try {
      const visitor = await newPage(browser);
      const counts = countRequests(visitor.page);
      await reserve(visitor.page, node.url);
      await increment(node, 1);
      await visitor.page.getByText('Your pass is ready').waitFor({ timeout: TIMEOUT });
      assert.ok((counts.get('/serving_num') ?? 0) >= 1, 'it polled');
      assert.equal(await visitor.page.locator('#queue').getAttribute('data-updates'), 'poll');
      // The refused stream is a 404 on the network, not an error of the page's script.
      assert.deepEqual(visitor.errors.filter((e) => !/404|stream/.test(e)), []);
    } finally {
      await node.stop();
    }
  });
});
