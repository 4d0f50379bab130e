// The login page in a real browser (Debian's Chromium): /authorize → the page joins and shows the position
// → the operator serves it → the page takes the visitor back to the relying party with code and state. Its
// Content-Security-Policy must allow everything it does (a violation is a console error). In a room that asks
// a proof of work for every join, the page solves it with the waiting-room page's solver, unseen.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { loginPageHeaders, loginPageHtml } from '../../src/oidc/login-page.ts';
import type { BotDefenceSettings } from '../../src/domain/room-settings.ts';
import { eventSettings, TEST_CREDENTIALS, type TestNode } from '../support/node.ts';
import { ensurePagesBuilt, launchChromium, newPage, startWebNode, type WebNode } from '../web/support.ts';
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

  it('where joins are numbered later (AWS’s intake queue), asks /queue_num until the position exists', async () => {
    // A stand-in for the OpenID function and the core's public API: the join answers no position, /queue_num
    // answers 202 twice (the intake consumer has not run) and then the position.
    const calls = { join: 0, queueNum: 0 };
    let serving = 0;
    const server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const send = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (url.pathname === '/oidc/login') return response.writeHead(200, loginPageHeaders()).end(loginPageHtml('../'));
      if (url.pathname === '/oidc/join') return (calls.join++, send(200, { request_id: 'r-1', event_id: 'Shop' }));
      if (url.pathname === '/queue_num') {
        assert.deepEqual(Object.fromEntries(url.searchParams), { event_id: 'Shop', request_id: 'r-1' });
        return ++calls.queueNum <= 2 ? send(202, { error: 'Request ID not found' }) : send(200, { queue_number: 4, entry_time: 1, event_id: 'Shop', status: 1 });
      }
      if (url.pathname === '/serving_num') return send(200, { serving_counter: serving });
      if (url.pathname === '/waiting_num') return send(200, { waiting_num: 4 });
      if (url.pathname === '/oidc/continue') return serving >= 4 ? send(200, { redirect_to: `${callback}?code=r-1&state=s` }) : send(202, { error: 'not yet' });
      send(404, { error: 'Not found' });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { page, context, errors } = await newPage(browser);
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await page.goto(`${base}/oidc/login?${new URLSearchParams(authorizeParams({ redirect_uri: callback, state: 's' }))}`);
      await page.waitForFunction(() => document.getElementById('position')?.textContent === '4');
      assert.deepEqual(calls, { join: 1, queueNum: 3 });
      // A reload keeps the place (and its number): no second join, no new question.
      await page.reload();
      await page.waitForFunction(() => document.getElementById('waiting')?.textContent === '4');
      assert.equal(await page.textContent('#position'), '4');
      assert.deepEqual(calls, { join: 1, queueNum: 3 });
      serving = 4;
      await page.waitForURL((url) => url.href.startsWith(callback), { timeout: 15_000 });
      assert.equal(new URL(page.url()).searchParams.get('code'), 'r-1');
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
      server.close();
    }
  });
});

describe('OIDC login page in a room that asks a proof of work for every join', () => {
  let browser: Browser;
  let relyingParty: Server;
  let callback: string;
  let node: WebNode;
  const always: BotDefenceSettings = {
    challenge: 'always',
    difficulty: 5_000,
    max_difficulty: 5_000,
    room_threshold_per_minute: 600,
    client_threshold_per_minute: 1,
    challenge_ttl: 120,
    require_enqueue_key: false,
    infinite_queue: false,
  };

  before(async () => {
    ensurePagesBuilt();
    relyingParty = createServer((_request, response) => response.end('signed in'));
    await new Promise<void>((resolve) => relyingParty.listen(0, '127.0.0.1', resolve));
    callback = `http://127.0.0.1:${(relyingParty.address() as AddressInfo).port}/callback`;
    node = await startWebNode({ events: [eventSettings('Shop', { oidc: { redirect_uris: [callback] }, bot_defence: always })] });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
    relyingParty?.close();
  });

  const solved = async () => {
    const metrics = await (await fetch(`${node.url}/metrics`)).text();
    return Number(/anteroom_bot_defence_total\{outcome="challenge_solved",event_id="Shop"\} (\d+)/.exec(metrics)?.[1] ?? 0);
  };

  it('solves the challenge without asking anything, joins, and sends the visitor back once served', async () => {
    // Without a solution the join is refused: what the page has to overcome.
    const bare = await fetch(`${node.url}/oidc/join`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(authorizeParams({ redirect_uri: callback })),
    });
    assert.equal(bare.status, 403);
    assert.deepEqual(await bare.json(), { error: 'Proof of work required' });

    const { page, context, errors } = await newPage(browser);
    try {
      await page.goto(`${node.url}/oidc/authorize?${new URLSearchParams(authorizeParams({ redirect_uri: callback, state: 'pow' }))}`);
      await page.waitForFunction(() => document.getElementById('position')?.textContent === '1', undefined, { timeout: 30_000 });
      assert.equal(await solved(), 1);
      const response = await fetch(`${node.url}/private/increment_serving_counter`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` },
        body: JSON.stringify({ event_id: 'Shop', increment_by: 1 }),
      });
      assert.equal(response.status, 200);
      await page.waitForURL((url) => url.href.startsWith(callback), { timeout: 15_000 });
      assert.equal(new URL(page.url()).searchParams.get('state'), 'pow');
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
});
