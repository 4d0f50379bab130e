// `npm run screenshots`: regenerates docs/img/*.png, the README's pictures of the pages, from a short simulated
// sale (a crowd joins, the line is let in a few at a time) so the estimate and the charts have something to
// show. Takes about a minute. Not part of `npm test`: images differ on every run.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { TEST_CREDENTIALS } from '../support/node.ts';
import { bucketOf } from '../../src/domain/wait-histogram.ts';
import { ensurePagesBuilt, launchChromium, newPage, startWebNode } from './support.ts';

const OUT = fileURLToPath(new URL('../../docs/img/', import.meta.url));
const SIMULATED_SECONDS = 50;

ensurePagesBuilt();
mkdirSync(OUT, { recursive: true });
const node = await startWebNode();
const browser = await launchChromium();

const joinQueue = async (): Promise<string> => {
  const response = await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: 'Sample' }) });
  return ((await response.json()) as { api_request_id: string }).api_request_id;
};
const admin = (path: string, body: unknown) =>
  fetch(`${node.privateUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` },
    body: JSON.stringify(body),
  });
const shoot = (page: Page, name: string) => page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });

/**
 * The after-event report of a sale an hour long, recorded minute by minute into the history of a room of its
 * own ("Sale": a rush at the start, the line let in 40 a minute, waits that grow then shrink), then opened from
 * the panel for the last hour.
 */
async function shootReport(panel: Page): Promise<void> {
  await fetch(`${node.privateUrl}/rooms/Sale`, { method: 'PUT', headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` }, body: '{}' });
  const now = Math.floor(Date.now() / 1000);
  const first = now - (now % 60) - 59 * 60;
  const counters = { queue: 0, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0 };
  for (let i = 0; i < 60; i++) {
    const minute = first + i * 60;
    const arrivals = Math.round(i < 10 ? 120 - i * 9 : Math.max(5, 40 - i / 2));
    counters.queue += arrivals;
    const admitted = Math.min(40, counters.queue - counters.serving);
    counters.serving += admitted;
    counters.tokens += Math.round(admitted * 0.9);
    counters.left += Math.round(arrivals * 0.03);
    counters.completed += Math.round(admitted * 0.7);
    const active = Math.min(counters.tokens - counters.completed, 150);
    await node.store.recordHistory('Sale', { minute, counters: { ...counters }, active }, 86_400);
    const waiting = counters.queue - counters.serving;
    const typical = Math.max(5, Math.round((waiting / 40) * 60));
    const counts: Record<string, number> = {};
    for (let v = 0; v < admitted; v++) {
      const wait = Math.round(typical * (0.6 + (v / admitted) * 0.8));
      counts[`w${bucketOf(wait)}`] = (counts[`w${bucketOf(wait)}`] ?? 0) + 1;
      if (v % 3 === 0) counts[`e${bucketOf(Math.abs(wait - typical) + 10)}`] = (counts[`e${bucketOf(Math.abs(wait - typical) + 10)}`] ?? 0) + 1;
    }
    await node.store.addWaits('Sale', { minute, counts }, 86_400);
  }
  await panel.getByRole('button', { name: 'Open room Sale' }).click();
  await panel.getByLabel('Range', { exact: true }).selectOption('3600');
  await panel.waitForFunction(() => /on record/.test(document.querySelector('#chart-status')?.textContent ?? ''));
  const [report] = await Promise.all([panel.waitForEvent('popup'), panel.getByRole('button', { name: 'After-event report' }).click()]);
  await report.setViewportSize({ width: 900, height: 900 });
  await report.locator('#report-body[data-rendered="true"]').waitFor();
  await shoot(report, 'after-event-report');
  await report.close();
}

try {
  // A second room, with a pre-queue and a draw at the start, so that the panel's list shows two phases.
  const hour = (h: number) => new Date(Math.floor(Date.now() / 3_600_000 + h) * 3_600_000).toISOString().replace('.000Z', 'Z');
  await fetch(`${node.privateUrl}/rooms/Launch`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` },
    body: JSON.stringify({ prequeue_start_time: hour(-1), event_start_time: hour(2), shuffle_at_event_start: true }),
  });
  const operator = await newPage(browser, { width: 1100, height: 900 });
  await operator.page.goto(`${node.url}/control-panel/`);
  await operator.page.getByLabel('Access key ID').fill(TEST_CREDENTIALS.accessKeyId);
  await operator.page.getByLabel('Secret access key').fill(TEST_CREDENTIALS.secretAccessKey);
  await operator.page.getByRole('button', { name: 'Connect', exact: true }).click();

  const crowd: string[] = [];
  for (let i = 0; i < 120; i++) crowd.push(await joinQueue());
  const visitor = await newPage(browser, { width: 390, height: 844 });
  await visitor.page.goto(`${node.url}/waiting-room-site/`);
  await visitor.page.getByRole('button', { name: 'Reserve' }).click();
  await visitor.page.waitForFunction(() => /^\d+$/.test(document.querySelector('#my-position')?.textContent ?? ''));
  const position = Number(await visitor.page.locator('#my-position').textContent());

  // Let people in a few at a time while more arrive; most of those let in claim their token.
  let serving = 0;
  for (let second = 0; second < SIMULATED_SECONDS; second += 2) {
    for (let i = 0; i < 2; i++) crowd.push(await joinQueue());
    const step = second % 6 === 0 ? 2 : 1;
    if (serving + step < position) {
      serving = ((await (await admin('/increment_serving_counter', { event_id: 'Sample', increment_by: step })).json()) as { serving_num: number }).serving_num;
      for (const id of crowd.slice(serving - step, serving)) {
        if (Math.random() < 0.8) await fetch(`${node.url}/generate_token`, { method: 'POST', body: JSON.stringify({ event_id: 'Sample', request_id: id }) });
      }
    }
    await sleep(2_000);
  }
  await shoot(visitor.page, 'waiting-room-waiting');
  // The same line in Arabic (right-to-left), chosen by the browser's language.
  const arabic = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'ar' });
  const arabicPage = await arabic.newPage();
  await arabicPage.goto(`${node.url}/waiting-room-site/`);
  await arabicPage.getByRole('button', { name: 'احجز' }).click();
  await arabicPage.waitForFunction(() => /^[\d٠-٩٬,]+$/.test(document.querySelector('#ahead')?.textContent ?? ''));
  await shoot(arabicPage, 'waiting-room-arabic');
  await arabic.close();
  await shoot(operator.page, 'control-panel');
  const phone = await newPage(browser, { width: 390, height: 844 });
  await phone.page.goto(`${node.url}/control-panel/`);
  await phone.page.getByRole('radio', { name: 'Admin token (Bearer)' }).check();
  await phone.page.getByLabel('Admin token', { exact: true }).fill(TEST_CREDENTIALS.adminToken);
  await phone.page.getByRole('button', { name: 'Connect', exact: true }).click();
  await phone.page.getByRole('button', { name: 'Open room Launch' }).click();
  await phone.page.locator('#draw-commitment').waitFor();
  await phone.page.locator('#rooms-card').scrollIntoViewIfNeeded();
  await phone.page.screenshot({ path: join(OUT, 'control-panel-phone.png') });
  await shootReport(operator.page);

  await admin('/increment_serving_counter', { event_id: 'Sample', increment_by: position - serving });
  await visitor.page.getByRole('button', { name: 'Purchase now' }).waitFor({ timeout: 20_000 });
  await visitor.page.waitForFunction(() => !(document.querySelector('#purchase') as HTMLButtonElement).disabled);
  await visitor.page.getByRole('button', { name: 'Purchase now' }).click();
  await visitor.page.locator('#receipt').waitFor({ state: 'visible' });
  await shoot(visitor.page, 'waiting-room-served');
  process.stdout.write(`screenshots written to ${OUT}\n`);
} finally {
  await browser.close();
  await node.stop();
}
