// The login page in a real browser (Debian's Chromium): /authorize → the page joins and shows the position
// → the operator serves it → the page takes the visitor back to the relying party with code and state. Its
// Content-Security-Policy must allow everything it does (a violation is a console error).

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { eventSettings, type TestNode } from '../support/node.ts';
import { launchChromium, newPage } from '../web/support.ts';
import { authorizeParams, continueLogin, issuerOf, serveUpTo, startOidcNode } from './support.ts';

describe('OIDC login page in a browser', () => {
  let browser: Browser;
  let relyingParty: Server;
  let callback: string;
  let node: TestNode;

  before(async () => {
    relyingParty = createServer((_request, response) => response.end('signed in'));
    await new Promise<void>((resolve) => relyingParty.listen(0, '127.0.0.1', resolve));
    callback = `http://127.0.0.1:${(relyingParty.address() as AddressInfo).port}/callback`;
    node = await startOidcNode([eventSettings('Shop', { oidc: { redirect_uris: [callback] } })]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
    relyingParty?.close();
  });

  it('queues the visitor and sends them back with code and state once served', async () => {
    const { page, context, errors } = await newPage(browser);
    try {
      const authorizeUrl = `${issuerOf(node)}/authorize?${new URLSearchParams(authorizeParams({ redirect_uri: callback, state: 'st &=é' }))}`;
      await page.goto(authorizeUrl);
      assert.equal(new URL(page.url()).pathname, '/oidc/login');
      await page.waitForFunction(() => document.getElementById('position')?.textContent === '1');
      assert.equal(await page.textContent('#serving'), '0');

      const requestId = await page.evaluate(() => {
        const key = Object.keys(sessionStorage).find((k) => k.startsWith('anteroom-oidc:'));
        return key ? (JSON.parse(sessionStorage.getItem(key) ?? '{}') as { request_id: string }).request_id : '';
      });
      assert.equal((await continueLogin(node, 'Shop', requestId)).status, 202);

      // A reload keeps the place instead of joining again.
      await page.reload();
      await page.waitForFunction(() => document.getElementById('position')?.textContent === '1');

      await serveUpTo(node, 'Shop', 1);
      await page.waitForURL((url) => url.href.startsWith(callback), { timeout: 15_000 });
      const back = new URL(page.url());
      assert.equal(back.searchParams.get('code'), requestId);
      assert.equal(back.searchParams.get('state'), 'st &=é');
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
});
