// The draw-check page in headless Chromium (Debian's): on Anteroom's own address (/draw-check/) a visitor of
// the site sees the commitment before the draw, then their place after it, recomputed in the browser with
// WebCrypto — and a tampered publication fails; on the gate, /_anteroom/draw brings a visitor to the page with
// their own request ID (from their cookie) and the page finds their place. The waiting page links the check page,
// with the visitor's request ID (behind the gate: shown on the page and carried in the link, for after the cookie).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { drawCommitment, drawEntry, drawOrder, newDrawSeed, placesOf } from '../../src/domain/draw.ts';
import { TEST_CREDENTIALS, TestClock } from '../support/node.ts';
import { gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from '../gate/support.ts';
import { serveRaw, type RawServer } from '../support/raw-http.ts';
import { axeViolations, ensurePagesBuilt, launchChromium, newPage, startWebNode, type WebNode } from './support.ts';

const ADMIN = { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' };
const iso = (ms: number) => new Date(ms).toISOString();
/** A request ID in a made-up publication of another host. */
const MADE_UP = '6f1c2a3e-5b7d-4c1e-9a2b-0d3c4e5f6a7b';

interface Published {
  commitment: string;
  seed?: string;
  first_position?: number;
  entries?: string[];
}

describe('the draw, checked in the browser', { timeout: 180_000 }, () => {
  let browser: Browser;
  before(async () => {
    ensurePagesBuilt();
    browser = await launchChromium();
  });
  after(() => browser?.close());

  describe('on the site', () => {
    let node: WebNode;
    const visitors: string[] = [];
    before(async () => {
      node = await startWebNode();
      const now = Date.now();
      const put = await fetch(`${node.privateUrl}/rooms/Drop`, {
        method: 'PUT',
        headers: ADMIN,
        body: JSON.stringify({ prequeue_start_time: iso(now - 60_000), event_start_time: iso(now + 3_600_000), shuffle_at_event_start: true }),
      });
      assert.equal(put.status, 201, await put.text());
      for (let i = 0; i < 30; i++) {
        const res = await fetch(`${node.url}/assign_queue_num`, { method: 'POST', body: JSON.stringify({ event_id: 'Drop' }) });
        visitors.push(((await res.json()) as { api_request_id: string }).api_request_id);
      }
    });
    after(() => node?.stop());

    it('before the draw: the commitment, kept by the browser; after it: the place, the one committed to before the draw', async () => {
      const { page, context, errors } = await newPage(browser);
      // The waiting-room page's visit in this browser: the check page finds the request ID there.
      await page.addInitScript((id: string) => {
        if (!localStorage.getItem('anteroom.visit:seeded')) {
          localStorage.setItem(`anteroom.visit:${location.origin}#Drop`, JSON.stringify({ requestId: id, joinedAt: 1 }));
          localStorage.setItem('anteroom.visit:seeded', '1');
        }
      }, visitors[11]!);
      await page.goto(`${node.url}/draw-check/?event_id=Drop`);
      await page.locator('#result-place').filter({ hasText: 'The draw has not taken place yet.' }).waitFor();
      const before_ = (await (await fetch(`${node.url}/draw?event_id=Drop`)).json()) as Published;
      assert.equal(await page.locator('#result-commitment').textContent(), before_.commitment);
      assert.equal(await page.inputValue('#request-id'), visitors[11]);

      // The start is moved to now (after the commitment was published) and the draw runs.
      const patch = await fetch(`${node.privateUrl}/rooms/Drop`, { method: 'PATCH', headers: ADMIN, body: JSON.stringify({ event_start_time: iso(Date.now() + 5) }) });
      assert.equal(patch.status, 200, await patch.text());
      while (!(await node.room.draws.drawDone('Drop'))) await node.room.draws.runDraws();

      const position = ((await (await fetch(`${node.url}/queue_num?event_id=Drop&request_id=${visitors[11]}`)).json()) as { queue_number: number }).queue_number;
      // GET /draw is cached for up to a second (the server's poll cache, and CDNs): the page is reloaded once the
      // publication answered carries the draw.
      while (((await (await fetch(`${node.url}/draw?event_id=Drop`)).json()) as Published).seed === undefined) await new Promise((r) => setTimeout(r, 100));
      await page.reload();
      await page.locator('#result-place').filter({ hasText: `Your place is ${position} (position ${position}).` }).waitFor({ timeout: 60_000 });
      const text = (await page.locator('#result-text').textContent()) ?? '';
      assert.match(text, /The order is the one committed to at .*, before the draw at .*\. It is the commitment this browser saw before the draw\./);
      assert.match(await page.locator('#result-entries').textContent() ?? '', /^30$/);
      assert.deepEqual(errors, []);

      // A publication whose seed and commitment were swapped after the draw: this browser saw the old commitment.
      const otherSeed = newDrawSeed();
      await page.route('**/draw?event_id=Drop*', async (route) => {
        const response = await route.fetch();
        const body = { ...((await response.json()) as Published), seed: otherSeed, commitment: drawCommitment(otherSeed) };
        await route.fulfill({ response, body: JSON.stringify(body) });
      });
      await page.reload();
      await page.locator('#status').filter({ hasText: 'The draw does not check out. The commitment changed' }).waitFor();
      assert.equal(await page.locator('#result').isHidden(), true);
      await context.close();
    });

    it('a request ID in the address is used and removed from the address bar; a tampered seed fails for anyone', async () => {
      const { page, context } = await newPage(browser, { width: 390, height: 844 });
      await page.route('**/draw?event_id=Drop*', async (route) => {
        const response = await route.fetch();
        await route.fulfill({ response, body: JSON.stringify({ ...((await response.json()) as Published), seed: newDrawSeed() }) });
      });
      await page.goto(`${node.url}/draw-check/?event_id=Drop#request_id=${visitors[3]}`);
      await page.locator('#status').filter({ hasText: 'The seed does not match the commitment' }).waitFor();
      assert.equal(new URL(page.url()).hash, '');
      assert.equal(await page.inputValue('#request-id'), visitors[3]);
      await page.unroute('**/draw?event_id=Drop*');
      await page.click('#check');
      const position = ((await (await fetch(`${node.url}/queue_num?event_id=Drop&request_id=${visitors[3]}`)).json()) as { queue_number: number }).queue_number;
      await page.locator('#result-place').filter({ hasText: `Your place is ${position} ` }).waitFor({ timeout: 60_000 });
      await context.close();
    });
    it('the waiting page links the check page with the visitor\'s own request ID; the check page is filled in with it', async () => {
      const { page, context, errors } = await newPage(browser, { width: 390, height: 844 });
      await page.goto(`${node.url}/waiting-room-site/?eventId=Drop`);
      await page.getByRole('button', { name: 'Reserve' }).click();
      await page.waitForFunction(() => /^[0-9a-f-]{36}$/.test(document.querySelector('#detail-request')?.textContent ?? ''), null, { timeout: 20_000 });
      const mine = (await page.locator('#detail-request').textContent())!;
      const link = page.getByRole('link', { name: 'Check the draw' });
      assert.equal(await link.isVisible(), true);
      const href = new URL((await link.getAttribute('href'))!);
      assert.equal(`${href.origin}${href.pathname}${href.search}`, `${node.url}/draw-check/?event_id=Drop`);
      assert.equal(href.hash, `#request_id=${mine}`);
      await link.click();
      await page.waitForURL(`${node.url}/draw-check/?event_id=Drop`);
      assert.equal(await page.inputValue('#request-id'), mine);
      // Joined after the draw: the page says so, with the ID it was given.
      await page.locator('#result-place').filter({ hasText: 'not among the draw\u2019s entries' }).waitFor({ timeout: 60_000 });
      assert.deepEqual(errors, []);
      await context.close();
    });
  });

  describe('a link is anyone\'s to write', () => {
    let node: WebNode;
    let fake: RawServer;
    before(async () => {
      node = await startWebNode();
      // Another host publishing a made-up draw that is consistent in itself (CORS open, as an API is).
      const seed = newDrawSeed();
      const body = JSON.stringify({
        algorithm: 'fisher-yates/hmac-sha256-48/v1', commitment: drawCommitment(seed), seed, committed_at: '2026-01-01T00:00:00Z',
        drawn_at: '2026-01-01T01:00:00Z', first_position: 1, entries: [drawEntry(MADE_UP)], total_entries: 1, page: 1, pages: 1,
      });
      fake = await serveRaw((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' }).end(body));
    });
    after(async () => {
      await node?.stop();
      await fake?.close();
    });

    it('?draw= is this site\'s only; another host\'s publication (?api=) is named, never vouched for as this site\'s; no markup runs', async () => {
      const { page, context, errors } = await newPage(browser);
      const here = new URL(node.url).host;
      const there = `localhost:${fake.port}`;
      page.on('dialog', (dialog) => errors.push(`dialog: ${dialog.message()}`));
      for (const draw of [`//${there}/draw`, `/\\${there}/draw`, `http://${there}/draw`, 'javascript:alert(1)']) {
        await page.goto(`${node.url}/draw-check/?event_id=Sample&draw=${encodeURIComponent(draw)}#request_id=${MADE_UP}`);
        await page.locator('#address-notice').filter({ hasText: 'Ignored in the address (not a place this page fetches from): draw.' }).waitFor();
        // Fetched from this site instead: Sample has no draw.
        await page.locator('#status').filter({ hasText: 'This waiting room has no draw' }).waitFor();
      }
      await page.goto(`${node.url}/draw-check/?event_id=Sample&api=${encodeURIComponent('javascript:alert(1)')}`);
      await page.locator('#address-notice').filter({ hasText: 'Ignored in the address (not a place this page fetches from): api.' }).waitFor();

      await page.goto(`${node.url}/draw-check/?event_id=Sample&api=${encodeURIComponent(`http://${there}`)}#request_id=${MADE_UP}`);
      await page.locator('#result-place').filter({ hasText: 'Your place is 1 (position 1).' }).waitFor({ timeout: 30_000 });
      assert.equal(await page.locator('#status').textContent(), `The draw checks out, as published by ${there}, not by this site: check that it is the waiting room's.`);
      assert.equal(await page.locator('#status').getAttribute('class'), 'notice warn');
      assert.equal(await page.locator('#result-source').textContent(), there);
      assert.notEqual(there, here);

      // Markup in the address stays text: nothing runs, nothing is fetched for a room ID that is not one.
      const hostile = '"><img src=x onerror=alert(1)>';
      await page.goto(`${node.url}/draw-check/?event_id=${encodeURIComponent(hostile)}#request_id=${encodeURIComponent('<svg onload=alert(2)>')}`);
      assert.equal(await page.inputValue('#event-id'), hostile);
      assert.equal(await page.inputValue('#request-id'), '');
      assert.equal(await page.locator('img').count(), 0);
      assert.deepEqual(errors, []);
      await context.close();
    });
  });

  describe('on the gate', () => {
    let origin: Origin;
    let node: GateNode;
    const START = Date.UTC(2026, 10, 25, 10, 0, 0);
    before(async () => {
      origin = await startOrigin();
      node = await startGateNode(
        [gatedRoom('Gated', origin.url, { prequeue_start_time: iso(START - 3_600_000), event_start_time: iso(START), shuffle_at_event_start: true })],
        {},
        { clock: new TestClock(START - 600_000) },
      );
    });
    after(async () => {
      await node?.stop();
      await origin?.close();
    });

    it('/_anteroom/draw brings the visitor to the check page with their own request ID, and the page finds their place', async () => {
      const others: string[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await node.post('/assign_queue_num', { event_id: 'Gated' });
        others.push(((await res.json()) as { api_request_id: string }).api_request_id);
      }
      const { page, context, errors } = await newPage(browser);
      await page.goto(`${node.gateUrl}/shop`);
      await page.locator('#queue').waitFor({ state: 'visible' });
      await node.room.draws.runDraws(); // the draw job before the start: the commitment is published now
      node.clock.ms = START;
      while (!(await node.room.draws.drawDone('Gated'))) await node.room.draws.runDraws();

      const published = (await (await fetch(`${node.gateUrl}/_anteroom/draw-data?event_id=Gated`)).json()) as Published;
      assert.equal(published.entries?.length, 6);
      const mine = published.entries!.findIndex((e) => !others.map(drawEntry).includes(e));
      const place = placesOf(await drawOrder(published.seed!, 6, null))[mine]!;

      // Without the visitor's cookie: the page, and no request ID.
      const anonymous = await fetch(`${node.gateUrl}/_anteroom/draw?event_id=Gated`, { redirect: 'manual' });
      assert.equal(anonymous.status, 303);
      assert.equal(anonymous.headers.get('location'), '/_anteroom/draw-check/?event_id=Gated&draw=%2F_anteroom%2Fdraw-data');

      await page.goto(`${node.gateUrl}/_anteroom/draw`);
      await page.locator('#result-place').filter({ hasText: `Your place is ${place} (position ${place}).` }).waitFor({ timeout: 60_000 });
      assert.equal(new URL(page.url()).hash, '');
      assert.match((await page.locator('#result-text').textContent()) ?? '', /committed to at .*2026.*, before the draw at/);

      // The gate's waiting page hands the visitor their own request ID (their cookie is HttpOnly) beside the link.
      await page.goto(`${node.gateUrl}/shop`);
      const shown = (await page.locator('#draw-request-id').textContent()) ?? '';
      assert.equal(drawEntry(shown), published.entries![mine], 'the ID shown is the visitor\'s own entry');
      assert.equal(await page.locator('#detail-request').textContent(), shown);
      const link = page.getByRole('link', { name: 'Check the draw' });
      assert.equal(await link.getAttribute('href'), `/_anteroom/draw?event_id=Gated#request_id=${shown}`);
      for (const width of [390, 1000]) {
        await page.setViewportSize({ width, height: 844 });
        assert.deepEqual(await axeViolations(page), [], `the gate's page with the request ID, ${width} px`);
        assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1), true, `nothing wider than ${width} px`);
      }
      // The cookie gone (let in, another browser later): the link still carries the ID, and the place is found.
      await context.clearCookies();
      await link.click();
      await page.locator('#result-place').filter({ hasText: `Your place is ${place} (position ${place}).` }).waitFor({ timeout: 60_000 });
      assert.equal(await page.inputValue('#request-id'), shown);
      assert.deepEqual(errors, []);
      await context.close();
    });
  });
});
