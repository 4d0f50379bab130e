// The hand-off in headless Chromium: the waiting-room page with return_to sends the served visitor back to the
// site with a one-time code, which the site's Fastify middleware exchanges and turns into the cookie; a
// return_to on an origin the room does not list leaves the visitor on the page with an error.

import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { fastifyAuthorizer, fastifyHandoff } from '../../packages/authorizer/src/index.ts';
import { TEST_CREDENTIALS, eventSettings } from '../support/node.ts';
import { ensurePagesBuilt, launchChromium, newPage, startWebNode, type WebNode } from '../web/support.ts';

describe('the hand-off from the waiting-room page, in Chromium', () => {
  let node: WebNode;
  let site: FastifyInstance;
  let siteUrl: string;
  let browser: Browser;

  before(async () => {
    ensurePagesBuilt();
    site = Fastify();
    // The site's origin is known once it listens; the room lists it.
    await site.listen({ port: 0, host: '127.0.0.1' });
    siteUrl = `http://127.0.0.1:${(site.server.address() as AddressInfo).port}`;
    node = await startWebNode({ events: [eventSettings('Shop', { allowed_return_origins: [siteUrl] })] });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await site?.close();
    await node?.stop();
  });

  async function admitEveryone(): Promise<void> {
    const res = await fetch(`${node.privateUrl}/increment_serving_counter`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` },
      body: JSON.stringify({ event_id: 'Shop', increment_by: 100 }),
    });
    assert.equal(res.status, 200);
  }

  it('served, the visitor lands on the site with the cookie set by the middleware', async () => {
    // The site's port is fixed by now (the room lists its origin): the app with its routes takes it over.
    const app = Fastify();
    app.addHook('onRequest', fastifyHandoff({ publicApiUrl: node.url, eventId: 'Shop' }));
    app.addHook('onRequest', fastifyAuthorizer({ eventId: 'Shop', issuer: node.url, publicKeyUrl: `${node.url}/public_key`, cookieName: 'anteroom_token' }));
    app.get('/welcome', async (request, reply) => reply.type('text/html').send(`<h1 id="welcome">Welcome, place ${request.waitingRoom?.queue_position}</h1>`));
    await site.close();
    await app.listen({ port: Number(new URL(siteUrl).port), host: '127.0.0.1' });
    site = app;

    const { context, page, errors } = await newPage(browser);
    await page.goto(`${node.url}/waiting-room-site/?eventId=Shop&return_to=${encodeURIComponent(`${siteUrl}/welcome`)}`);
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.locator('#my-position').filter({ hasText: /\d/ }).waitFor();
    await admitEveryone();
    await page.waitForURL(`${siteUrl}/welcome`, { timeout: 20_000 });
    await page.locator('#welcome').waitFor();
    const cookies = await context.cookies(siteUrl);
    const token = cookies.find((c) => c.name === 'anteroom_token');
    assert.ok(token?.httpOnly);
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('a return_to on another origin is refused: the visitor stays on the page (no open redirect)', async () => {
    const { context, page } = await newPage(browser);
    await page.goto(`${node.url}/waiting-room-site/?eventId=Shop&return_to=${encodeURIComponent('https://evil.example/steal')}`);
    // The counter is past everyone already (the test before): served at once.
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.locator('#error').filter({ hasText: 'not an allowed origin' }).waitFor({ timeout: 20_000 });
    assert.ok(page.url().startsWith(node.url), page.url());
    await context.close();
  });
});
