// The control panel as a sale-day tool, in headless Chromium (Debian's): every problem of a refused save shown
// at once beside its field; the schedule picked in the operator's time zone (Europe/Berlin here) with the UTC
// value shown and saved; a warning while a change would take the room to another phase; the audit log, who
// changed what with before → after, filtered by room; and axe-core finds 0 violations (desktop and phone).
// SCREENSHOTS_DIR=docs/img writes the pictures docs/rooms.md shows.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TEST_CREDENTIALS } from '../support/node.ts';
import { adminCall, axeViolations, connectPanel, pagesInChromium, waitForText, watchErrors, type WebNode } from './support.ts';


/** The card `selector` as a picture, only when SCREENSHOTS_DIR is set (docs/img: the pictures of docs/rooms.md). */
async function screenshot(page: Page, name: string, selector: string): Promise<void> {
  const dir = process.env.SCREENSHOTS_DIR;
  if (dir) await page.locator(selector).screenshot({ path: join(dir, name) });
}

describe('control panel on sale day', { timeout: 240_000 }, () => {
  const web = pagesInChromium();
  let node: WebNode;
  let browser: Browser;
  before(() => ({ node, browser } = web));

  const room = (id: string) => adminCall(node, 'GET', `/rooms/${id}`);

  for (const viewport of [{ name: 'desktop', width: 1280, height: 900 }, { name: 'phone', width: 390, height: 844 }] as const) {
    it(`at ${viewport.name} size: all problems at once, local time pickers, the phase warning, the audit log, axe`, async () => {
      const context = await browser.newContext({ viewport, timezoneId: 'Europe/Berlin' });
      const page = await context.newPage();
      const errors = watchErrors(page);
      const id = `Sale-${viewport.name}`;
      await connectPanel(page, node.url, 'token');
      await waitForText(page, '#connection-status', /Connected to /);

      // Two wrong fields: both are named at once, each beside its own field; nothing is created.
      await page.getByRole('button', { name: 'New room' }).click();
      await page.getByLabel('Room ID (event_id)').fill(id);
      await page.getByLabel('Token lifetime (validity_period, s)').fill('0');
      await page.getByLabel('Claim window (queue_position_expiry_period, s)').fill('99999999999');
      await page.getByRole('button', { name: 'Create room' }).click();
      await waitForText(page, '#settings-status', /^Not saved — 2 problems, each shown beside its field\.$/);
      assert.match((await page.locator('#s-validity-period-error').textContent()) ?? '', /^validity_period: must be a whole number/);
      assert.match((await page.locator('#s-queue-position-expiry-period-error').textContent()) ?? '', /^queue_position_expiry_period: must be a whole number/);
      assert.equal(await page.locator('#s-validity-period').getAttribute('aria-invalid'), 'true');
      assert.equal((await room(id)).status, 404);
      assert.deepEqual(await axeViolations(page), [], 'with the problems shown');
      await screenshot(page, `panel-settings-problems-${viewport.name}.png`, '#settings-card');

      // The start picked in Berlin time (UTC+1 in December); the UTC value shown under it is what is saved.
      await page.getByLabel('Token lifetime (validity_period, s)').fill('1800');
      await page.getByLabel('Claim window (queue_position_expiry_period, s)').fill('300');
      await page.locator('#s-event-start-time').fill('2026-12-01T10:00:00');
      await waitForText(page, '#s-event-start-time-utc', /^In UTC: 2026-12-01T09:00:00Z$/);
      await page.getByRole('button', { name: 'Create room' }).click();
      await waitForText(page, '#action-status', new RegExp(`Room ${id} was created`));
      const created = await room(id);
      assert.equal(created.body.event_start_time, '2026-12-01T09:00:00Z');
      assert.equal(created.body.phase, 'prequeue');

      // Editing: the picker shows the saved time in Berlin time; removing the start would open the room now.
      await page.getByRole('button', { name: `Open room ${id}` }).click();
      await page.getByRole('button', { name: 'Edit settings' }).click();
      // (Chromium drops ":00" seconds from the value it shows.)
      assert.match(await page.inputValue('#s-event-start-time'), /^2026-12-01T10:00(:00)?$/);
      assert.equal(await page.locator('#s-event-start-time-utc').textContent(), 'In UTC: 2026-12-01T09:00:00Z');
      assert.equal(await page.locator('#settings-phase-warning').textContent(), '');
      await page.locator('#s-event-start-time').fill('');
      await waitForText(page, '#settings-phase-warning', /^Saving takes the room from Pre-queue to Open now: joins are accepted and people are let in\.$/);
      await screenshot(page, `panel-phase-warning-${viewport.name}.png`, '#settings-card');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await waitForText(page, '#action-status', new RegExp(`The settings of room ${id} were saved`));
      assert.equal((await room(id)).body.phase, 'open');

      // The audit log: both changes of this room, newest first, the edit with its before → after — found by the
      // server's room filter among 120 later changes of another room (more than the panel's page of 100).
      const other = `Busy-${viewport.name}`;
      const admin = { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' };
      assert.equal((await fetch(`${node.privateUrl}/rooms/${other}`, { method: 'PUT', headers: admin, body: '{}' })).status, 201);
      for (let i = 0; i < 120; i++) {
        const moved = await fetch(`${node.privateUrl}/increment_serving_counter`, { method: 'POST', headers: admin, body: JSON.stringify({ event_id: other, increment_by: 1 }) });
        assert.equal(moved.status, 200);
      }
      await page.getByLabel('Room', { exact: true }).fill(id);
      await page.getByRole('button', { name: 'Load the latest changes' }).click();
      await waitForText(page, '#audit-status', /^2 latest changes \(room Sale-/);
      const rows = page.locator('#audit-rows tr');
      assert.equal(await rows.count(), 2);
      assert.match((await rows.nth(0).textContent()) ?? '', /Sale-.*PUT \/private\/rooms\/:event_id.*event_start_time: "2026-12-01T09:00:00Z" → \(none\).*phase: "prequeue" → "open"/);
      assert.match((await rows.nth(1).textContent()) ?? '', /admin token.*created/);
      await page.getByLabel('Room', { exact: true }).fill('NoSuchRoom');
      await page.getByLabel('Room', { exact: true }).press('Enter');
      await waitForText(page, '#audit-status', /^0 latest changes \(room NoSuchRoom\)/);
      await page.getByLabel('Room', { exact: true }).fill('not a room');
      await page.getByRole('button', { name: 'Load the latest changes' }).click();
      await waitForText(page, '#audit-status', /^A room ID is/);
      assert.equal(await page.getByLabel('Room', { exact: true }).getAttribute('aria-invalid'), 'true');
      await page.getByLabel('Room', { exact: true }).fill('');
      await page.getByRole('button', { name: 'Load the latest changes' }).click();
      await waitForText(page, '#audit-status', /^100 latest changes \(every room\), more with Load older\./);
      await page.getByLabel('Room', { exact: true }).fill(id);
      await page.getByRole('button', { name: 'Load the latest changes' }).click();
      await waitForText(page, '#audit-status', /^2 latest/);
      assert.deepEqual(await axeViolations(page), [], 'the panel with a room and its audit log');
      await screenshot(page, `panel-audit-${viewport.name}.png`, '#audit-card');
      assert.deepEqual(errors, []);
      await context.close();
    });
  }
});
