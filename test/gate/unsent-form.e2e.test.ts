// A queued visitor's form in headless Chromium (Debian's): submitting it through the gate shows the waiting page
// saying the form was not sent (nothing reaches the site), the visitor waits in line on that page, is taken to
// the site when admitted, and the form sent again then reaches the site with its fields.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { ensurePagesBuilt, launchChromium } from '../web/support.ts';
import { gatedRoom, startGateNode, type GateNode } from './support.ts';

describe('a queued visitor submits a form in Chromium', () => {
  let site: Server;
  const posts: string[] = [];
  let node: GateNode;
  let browser: Browser;

  before(async () => {
    ensurePagesBuilt();
    // The site: a form page (bypassed by the room, so a visitor sees it without a place) posting to /cart/add.
    // Its favicon is bypassed too: Chromium's request for it would otherwise be the place's first URL.
    site = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        if (request.method === 'POST') posts.push(body);
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        if (request.url === '/form/') {
          response.end('<!doctype html><title>Form</title><form method="post" action="/cart/add"><input name="item" value="7"><button id="send">Add to cart</button></form>');
        } else {
          response.end(`<!doctype html><title>Cart</title><h1 id="cart">${request.method} ${request.url} ${body}</h1>`);
        }
      });
    });
    site.listen(0, '127.0.0.1');
    await once(site, 'listening');
    const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    node = await startGateNode([gatedRoom('Shop', url, { gate: { origin: url, routes: [{ path: '/' }], queueing_status_code: 200, bypass: { paths: ['/form/', '/favicon.ico'] } } })]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
    site?.closeAllConnections();
    site?.close();
  });

  it('sees "not sent", waits on that page, is taken to the site when admitted and sends the form again', async () => {
    // Two visitors ahead.
    for (let i = 0; i < 2; i++) await (await fetch(`${node.gateUrl}/`)).text();
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));

    await page.goto(`${node.gateUrl}/form/`);
    await page.click('#send');
    await page.locator('#anteroom-unsent').waitFor({ state: 'visible' });
    assert.match((await page.locator('#anteroom-unsent').textContent()) ?? '', /^Your form was not sent: you are in the waiting room\./);
    await page.locator('#my-position').filter({ hasText: '3' }).waitFor();
    assert.deepEqual(posts, [], 'nothing reached the site');

    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Shop', increment_by: 3 })).status, 200);
    await page.locator('#cart').filter({ hasText: 'GET /cart/add' }).waitFor();

    await page.goto(`${node.gateUrl}/form/`);
    await page.click('#send');
    await page.locator('#cart').filter({ hasText: 'POST /cart/add item=7' }).waitFor();
    assert.deepEqual(posts, ['item=7']);
    assert.deepEqual(errors, []);
    await context.close();
  });
});
