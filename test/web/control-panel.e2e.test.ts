// The control panel's rooms in a real browser (headless Chromium), at a desktop and at a phone size: the list
// of rooms, creating a room (the API's 400 shown next to the field it names, then a valid one), editing a
// setting, pause / resume / close each with a confirmation (the server's state checked through the API), the
// warning before letting in more than are waiting, and the draw's commitment, then its seed, for a room with a
// draw. Each step waits for what the panel shows once the server answered, never for time to pass.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TEST_CREDENTIALS } from '../support/node.ts';
import { adminCall, connectPanel, newPage, PAGE_TIMEOUT, pagesInChromium, waitForText, watchErrors, type WebNode } from './support.ts';

const TIMEOUT = PAGE_TIMEOUT;

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 900, auth: 'sigv4' },
  { name: 'phone', width: 390, height: 844, auth: 'token' },
] as const;

describe('control panel: rooms', { timeout: 180_000 }, () => {
  const web = pagesInChromium();
  let node: WebNode;
  let browser: Browser;
  before(() => ({ node, browser } = web));

  const admin = (method: string, path: string, body?: unknown) => adminCall(node, method, path, body);
  const join = async (eventId: string) => {
    const response = await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: eventId }) });
    assert.equal(response.status, 200);
  };

  /** Connects with the access key pair (every call signed with SigV4, PUT and PATCH too) or the admin token. */
  async function connect(page: Page, auth: 'sigv4' | 'token'): Promise<void> {
    await connectPanel(page, node.url, auth === 'sigv4' ? { sigv4: TEST_CREDENTIALS.secretAccessKey } : 'token');
    await waitForText(page, '#connection-status', auth === 'sigv4' ? /Connected to .*access key/ : /Connected to .*admin token/);
  }

  async function confirm(page: Page, title: string, action: string): Promise<void> {
    const dialog = page.getByRole('dialog', { name: title });
    await dialog.waitFor({ timeout: TIMEOUT });
    await dialog.getByRole('button', { name: action, exact: true }).click();
    await dialog.waitFor({ state: 'hidden', timeout: TIMEOUT });
  }

  for (const viewport of VIEWPORTS) {
    it(`at ${viewport.name} size (${viewport.width}×${viewport.height}, ${viewport.auth}): list, create, edit, pause, resume, close, over-admit, draw`, async () => {
      const { page, context, errors } = await newPage(browser, { width: viewport.width, height: viewport.height });
      const id = `Drop-${viewport.name}`;
      await connect(page, viewport.auth);

      // The list: every room with its phase and its people.
      const sample = page.locator('#rooms-list li', { has: page.getByRole('button', { name: 'Open room Sample' }) });
      await sample.waitFor({ timeout: TIMEOUT });
      await waitForText(page, '#rooms-list', /Sample\s*Open/);
      for (const label of ['Waiting', 'Let in, not yet arrived', 'Active sessions', 'Serving counter']) {
        assert.equal(await sample.getByText(label, { exact: true }).count(), 1, label);
      }
      // Figures explain themselves; nothing is "available", nothing negative.
      assert.match((await page.locator('#c-awaiting-help').textContent()) ?? '', /not claimed their token yet/);
      for (const selector of ['#figures', '#rooms-list']) {
        assert.doesNotMatch((await page.locator(selector).textContent()) ?? '', /available|[−-]\d/i, selector);
      }

      // Create: an invalid value is refused by the API, and its message shows next to the field.
      await page.getByRole('button', { name: 'New room' }).click();
      await page.getByLabel('Room ID (event_id)').fill(id);
      const lifetime = page.getByLabel('Token lifetime (validity_period, s)');
      await lifetime.fill('0');
      await page.getByRole('button', { name: 'Create room' }).click();
      await waitForText(page, '#s-validity-period-error', /^validity_period: must be/);
      assert.equal(await lifetime.getAttribute('aria-invalid'), 'true');
      assert.equal((await admin('GET', `/rooms/${id}`)).status, 404);
      await lifetime.fill('600');
      await page.getByRole('button', { name: 'Create room' }).click();
      await waitForText(page, '#action-status', `Room ${id} was created.`);
      assert.equal((await admin('GET', `/rooms/${id}`)).body.validity_period, 600);
      await waitForText(page, '#room-title', `Room ${id}`);
      await page.getByRole('button', { name: `Open room ${id}` }).waitFor({ timeout: TIMEOUT });

      // Edit a setting; a rule across fields is named too.
      await page.getByRole('button', { name: 'Edit settings' }).click();
      await page.getByLabel('Claim window (queue_position_expiry_period, s)').fill('120');
      await page.getByLabel('Admission', { exact: true }).selectOption('automatic');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await waitForText(page, '#s-new-users-per-minute-error', 'new_users_per_minute: is required with admission "automatic"');
      await page.getByLabel('Admission', { exact: true }).selectOption('manual');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await waitForText(page, '#action-status', `The settings of room ${id} were saved.`);
      const edited = (await admin('GET', `/rooms/${id}`)).body;
      assert.equal(edited.queue_position_expiry_period, 120);
      assert.equal(edited.validity_period, 600, 'the other settings are kept');

      // Pause: Cancel changes nothing; confirming pauses the room on the server.
      await page.getByRole('button', { name: 'Pause…' }).click();
      await confirm(page, `Pause room ${id}?`, 'Cancel');
      assert.equal((await admin('GET', `/rooms/${id}`)).body.state, 'open');
      await page.getByRole('button', { name: 'Pause…' }).click();
      await confirm(page, `Pause room ${id}?`, 'Pause room');
      await waitForText(page, '#action-status', `Room ${id} is paused.`);
      assert.equal((await admin('GET', `/rooms/${id}`)).body.phase, 'paused');
      await waitForText(page, '#room-phase', 'Paused');
      await waitForText(page, '#phase-text', /nobody is let in/);

      await page.getByRole('button', { name: 'Resume…' }).click();
      await confirm(page, `Resume room ${id}?`, 'Resume room');
      await waitForText(page, '#action-status', `Room ${id} is open.`);
      assert.equal((await admin('GET', `/rooms/${id}`)).body.phase, 'open');

      await page.getByRole('button', { name: 'Close…' }).click();
      await confirm(page, `Close room ${id}?`, 'Close room');
      await waitForText(page, '#action-status', `Room ${id} is closed.`);
      assert.equal((await admin('GET', `/rooms/${id}`)).body.phase, 'closed');
      await waitForText(page, '#room-phase', 'Closed');
      const refused = await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: id }) });
      assert.equal(refused.status, 403);
      await page.getByRole('button', { name: 'Reopen…' }).click();
      await confirm(page, `Resume room ${id}?`, 'Resume room');
      await waitForText(page, '#action-status', `Room ${id} is open.`);

      // Over-admit: 2 waiting; letting in 5 asks first, from the counters read at the click.
      await join(id);
      await join(id);
      await waitForText(page, '#c-waiting', '2');
      await page.getByLabel('Let in this many more visitors').fill('5');
      await page.getByRole('button', { name: 'Increment serving counter' }).click();
      const warning = page.getByRole('dialog', { name: 'Let in more than are waiting?' });
      await warning.waitFor({ timeout: TIMEOUT });
      assert.match((await warning.textContent()) ?? '', /Only 2 people are waiting.*the next 3 people to join in at once/s);
      await confirm(page, 'Let in more than are waiting?', 'Cancel');
      await waitForText(page, '#action-status', 'Nothing changed: the serving counter stays at 0.');
      assert.equal(((await (await fetch(`${node.url}/serving_num?event_id=${id}`)).json()) as { serving_counter: number }).serving_counter, 0);
      // Exactly as many as are waiting: no question.
      await page.getByLabel('Let in this many more visitors').fill('2');
      await page.getByRole('button', { name: 'Increment serving counter' }).click();
      await waitForText(page, '#action-status', 'Serving counter is now 2.');
      await waitForText(page, '#c-awaiting', '2');
      await waitForText(page, '#c-waiting', '0');
      // One more than are waiting: asked, and done when confirmed; the panel then says what it means.
      await page.getByLabel('Let in this many more visitors').fill('1');
      await page.getByRole('button', { name: 'Increment serving counter' }).click();
      await confirm(page, 'Let in more than are waiting?', 'Let in 1 anyway');
      await waitForText(page, '#action-status', 'Serving counter is now 3.');
      await waitForText(page, '#ahead', /1 place past the last position handed out: the next 1 person to join will be let in at once/);

      // A room with a draw: the commitment before the start, the seed and the result after the draw.
      const drawn = `Drawn-${viewport.name}`;
      const iso = (s: number) => new Date(Math.floor(Date.now() / 1000 + s) * 1000).toISOString().replace('.000Z', 'Z');
      const put = await admin('PUT', `/rooms/${drawn}`, {
        prequeue_start_time: iso(-7200),
        event_start_time: iso(3600),
        shuffle_at_event_start: true,
      });
      assert.equal(put.status, 201);
      await join(drawn);
      await page.getByRole('button', { name: `Open room ${drawn}` }).click();
      await waitForText(page, '#room-phase', 'Pre-queue');
      await waitForText(page, '#phase-text', /nobody is let in before the start in (59 min|1 h)/);
      await waitForText(page, '#draw-commitment', /^[0-9a-f]{64}$/);
      const published = (await (await fetch(`${node.url}/draw?event_id=${drawn}`)).json()) as { commitment: string };
      assert.equal(await page.locator('#draw-commitment').textContent(), published.commitment);
      assert.equal(await page.locator('#draw-seed').count(), 0);
      // The start moves into the past; the draw job's tick runs the draw (the node runs no jobs by itself).
      assert.equal((await admin('PATCH', `/rooms/${drawn}`, { event_start_time: iso(-60) })).status, 200);
      await node.room.draws.runDraws();
      await waitForText(page, '#draw-seed', /^[0-9a-f]{64}$/);
      await waitForText(page, '#draw-result', /1 entry drawn; place 1 got position 1/);
      assert.equal(await page.locator('#draw-result a').getAttribute('href'), `${node.url}/draw?event_id=${drawn}`);
      assert.equal(await page.locator('#draw-commitment').textContent(), published.commitment);
      // How anyone checks it: the browser page Anteroom serves, or the command from a checkout (never `npx`, which
      // would fetch an unrelated npm package of that name).
      assert.equal(await page.locator('#draw-check a').getAttribute('href'), `${node.url}/draw-check/?event_id=${drawn}`);
      const how = (await page.locator('#draw-check').textContent()) ?? '';
      assert.match(how, new RegExp(`node bin/anteroom\\.js verify-draw --public-url ${node.url} --event-id ${drawn} --commitment ${published.commitment}`));
      assert.doesNotMatch(how, /npx/);
      assert.match((await page.locator('#draw-committed-at').textContent()) ?? '', /^Published at .*; drawn at .*\.$/);

      // The bot defence's figures: none for a room without bot_defence; for one with it, what it did.
      assert.equal(await page.locator('#b-issued-box').isHidden(), true);
      const guarded = `Guarded-${viewport.name}`;
      assert.equal((await admin('PUT', `/rooms/${guarded}`, { bot_defence: { challenge: 'always' } })).status, 201);
      const bare = await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: guarded }) });
      assert.equal(bare.status, 403);
      await fetch(`${node.url}/challenge?event_id=${guarded}`);
      await page.getByRole('button', { name: `Open room ${guarded}` }).click();
      await waitForText(page, '#b-missing', '1');
      await waitForText(page, '#b-issued', '1');
      await waitForText(page, '#b-issued-label', 'Challenges issued');
      for (const id of ['#b-solved', '#b-failed', '#b-limited', '#b-parked', '#b-floods']) assert.equal(await page.locator(id).textContent(), '0', id);

      // Nothing wider than the screen.
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true);
      assert.deepEqual(errors, []);
      await context.close();
    });
  }

  it('against a private API without the rooms API (VWR) it drives the one event with its counters', async () => {
    const { page, context, errors } = await newPage(browser, { width: 390, height: 844 });
    // VWR's private API has no /rooms: it answers 404 there.
    await page.route('**/private/rooms', (route) => route.fulfill({ status: 404, contentType: 'application/json', body: '{"message":"Not Found"}' }));
    await connect(page, 'token');
    await waitForText(page, '#room-title', 'Event Sample');
    await waitForText(page, '#phase-text', /no rooms API/);
    await waitForText(page, '#c-waiting-help', /VWR's waiting_num/);
    assert.equal(await page.locator('#rooms-card').isVisible(), false);
    assert.equal(await page.locator('#state-actions').isVisible(), false);
    assert.equal(await page.locator('#c-awaiting-box').isVisible(), false, 'not known from VWR');
    await waitForText(page, '#c-serving', /^\d+$/);
    assert.equal(await page.getByRole('button', { name: 'Increment serving counter' }).isEnabled(), true);
    assert.deepEqual(errors, []);
    await context.close();
  });

  it("the charts load the room's history from the server: a reload keeps them, a past range shows only the record", async () => {
    const id = 'Charted';
    assert.equal((await admin('PUT', `/rooms/${id}`, {})).status, 201);
    for (let i = 0; i < 5; i++) await join(id);
    // The history job's sample of this minute: 5 waiting. Then everyone is let in: the page's own samples
    // see nobody waiting, so a 5 on the chart can only come from the server's history.
    await node.room.reports.recordHistory(86_400);
    const sampledAt = Math.floor(Date.now() / 1000);
    assert.equal((await admin('POST', '/increment_serving_counter', { event_id: id, increment_by: 5 })).status, 200);

    const { page, context, errors } = await newPage(browser);
    const openCharted = async () => {
      await connect(page, 'token');
      await page.getByRole('button', { name: `Open room ${id}` }).click();
      await waitForText(page, '#room-title', `Room ${id}`);
    };
    await openCharted();
    await waitForText(page, '#chart-status', '1 minute on record for this range.');
    await waitForText(page, '#queue-chart-summary', /Latest: 0 waiting; .*Most waiting in the range: 5\./);

    await page.reload();
    await openCharted();
    await waitForText(page, '#chart-status', '1 minute on record for this range.');
    await waitForText(page, '#queue-chart-summary', /Latest: 0 waiting; .*Most waiting in the range: 5\./);

    // A range in the past: the record only, no live samples added.
    await page.getByLabel('Range', { exact: true }).selectOption('custom');
    const local = (seconds: number) =>
      page.evaluate((s) => {
        const d = new Date(s * 1000);
        const pad = (n: number) => String(n).padStart(2, '0');
        return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
      }, seconds);
    await page.getByLabel('From', { exact: true }).fill(await local(sampledAt - 120));
    await page.getByLabel('To', { exact: true }).fill(await local(sampledAt + 60));
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await waitForText(page, '#chart-status', '1 minute on record for this range.');
    await waitForText(page, '#queue-chart-summary', /Latest: 5 waiting;/);
    assert.equal(await page.locator('#queue-chart').getAttribute('data-samples'), '1');
    // The figures go on refreshing (every 2 s); a past range gains no sample from them.
    await page.waitForFunction(() => document.querySelector('#c-serving')?.textContent === '5', undefined, { timeout: TIMEOUT });
    assert.equal(await page.locator('#queue-chart').getAttribute('data-samples'), '1');
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('the after-event report page: totals and five charts for the room, on a phone, and on paper without its buttons', async () => {
    const id = 'Reported';
    assert.equal((await admin('PUT', `/rooms/${id}`, {})).status, 201);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: id }) });
      ids.push(((await response.json()) as { api_request_id: string }).api_request_id);
    }
    assert.equal((await admin('POST', '/increment_serving_counter', { event_id: id, increment_by: 4 })).status, 200);
    for (const requestId of ids.slice(0, 3)) {
      const response = await fetch(`${node.url}/generate_token`, { method: 'POST', body: JSON.stringify({ event_id: id, request_id: requestId }) });
      assert.equal(response.status, 200);
    }
    await node.room.reports.recordHistory(86_400);

    const { page, context, errors } = await newPage(browser, { width: 390, height: 844 });
    await connect(page, 'token');
    await page.getByRole('button', { name: `Open room ${id}` }).click();
    await waitForText(page, '#room-title', `Room ${id}`);
    await waitForText(page, '#chart-status', '1 minute on record for this range.');
    const [report] = await Promise.all([page.waitForEvent('popup'), page.getByRole('button', { name: 'After-event report' }).click()]);
    const reportErrors = watchErrors(report);
    await report.locator('#report-body[data-rendered="true"]').waitFor({ timeout: TIMEOUT });
    await waitForText(report, '#report-title', `After-event report: room ${id}`);
    const totals = Object.fromEntries(
      await report.locator('#totals > div').evaluateAll((items) => items.map((item) => [item.querySelector('dt')?.textContent, item.querySelector('dd')?.textContent])),
    ) as Record<string, string>;
    assert.equal(totals['Arrivals'], '6');
    assert.equal(totals['Let in'], '4');
    assert.equal(totals['Tokens claimed'], '3');
    assert.equal(totals['Waits measured'], '3');
    assert.match(totals['Median wait'] ?? '', /^\d+ s$/);
    assert.equal(await report.locator('.report-chart canvas').count(), 5);
    // A phone: nothing wider than the screen.
    assert.equal(await report.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true);
    // Paper: the Print button and the banner are not printed; the charts and totals are.
    assert.equal(await report.getByRole('button', { name: 'Print' }).isVisible(), true);
    await report.emulateMedia({ media: 'print' });
    assert.equal(await report.getByRole('button', { name: 'Print' }).isVisible(), false);
    assert.equal(await report.locator('header.top').isVisible(), false);
    assert.equal(await report.locator('#totals').isVisible(), true);
    assert.equal(await report.locator('#wait-chart canvas').isVisible(), true);
    assert.deepEqual([...errors, ...reportErrors], []);

    // Opened on its own, it has no report to show and says where to open it from.
    const alone = await context.newPage();
    await alone.goto(`${node.url}/control-panel/report.html`);
    await waitForText(alone, '#report-status', /Open this page from the control panel/);
    assert.equal(await alone.locator('#report-body').isVisible(), false);
    await context.close();
  });
});
