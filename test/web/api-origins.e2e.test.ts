// The waiting-room page in headless Chromium calls only its own origin and the origins its room lists in
// allowed_api_origins (rendered into <meta name="anteroom-api-origins">): a crafted link's publicApiUrl
// elsewhere is ignored — the page says so and sends nothing there — so the official page never hands a
// visitor's place, token or hand-off to another server.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { eventSettings } from '../support/node.ts';
import { ensurePagesBuilt, launchChromium, newPage, startWebNode, type WebNode } from './support.ts';

const TIMEOUT = 20_000;
/** Another origin (nothing listens there: the test watches what the page tries to reach). */
const ELSEWHERE = 'http://127.0.0.1:9';

describe('the waiting page and other API origins', { timeout: 120_000 }, () => {
  let browser: Browser;
  let node: WebNode;
  before(async () => {
    ensurePagesBuilt();
    browser = await launchChromium();
    node = await startWebNode({ events: [eventSettings('Sample'), eventSettings('Partner', { allowed_api_origins: [ELSEWHERE] })] });
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
  });

  /** The URLs the page requested after loading `query` and pressing Reserve. */
  async function requestsAfterReserve(query: string, expectPosition: boolean): Promise<{ urls: string[]; error: string }> {
    const { context, page } = await newPage(browser);
    const urls: string[] = [];
    page.on('request', (request) => urls.push(request.url()));
    await page.goto(`${node.url}/waiting-room-site/${query}`);
    // What the page says on load (the join's success clears it later).
    const error = (await page.locator('#error').textContent()) ?? '';
    await page.getByRole('button', { name: 'Reserve' }).click();
    if (expectPosition) await page.waitForFunction(() => /^\d+$/.test(document.querySelector('#my-position')?.textContent ?? ''), null, { timeout: TIMEOUT });
    else await page.waitForFunction((elsewhere) => performance.getEntriesByType('resource').some((entry) => entry.name.startsWith(elsewhere)), ELSEWHERE, { timeout: TIMEOUT }).catch(() => undefined);
    await context.close();
    return { urls, error };
  }

  it("a link's publicApiUrl on another origin is ignored: the page joins through its own origin and says so", async () => {
    const { urls, error } = await requestsAfterReserve(`?publicApiUrl=${encodeURIComponent(`${ELSEWHERE}/api`)}`, true);
    assert.ok(urls.some((url) => url.startsWith(`${node.url}/assign_queue_num`)), 'joined through its own origin');
    assert.deepEqual(urls.filter((url) => url.startsWith(ELSEWHERE)), [], 'nothing sent elsewhere');
    assert.match(error, /publicApiUrl/);
  });

  it('an origin the room lists in allowed_api_origins is used', async () => {
    const { urls } = await requestsAfterReserve(`?eventId=Partner&publicApiUrl=${encodeURIComponent(`${ELSEWHERE}/api`)}`, false);
    assert.ok(urls.some((url) => url.startsWith(`${ELSEWHERE}/api/`)), `the listed API is called: ${urls.join(' ')}`);
    assert.ok(!urls.some((url) => url.startsWith(`${node.url}/assign_queue_num`)));
  });
});
