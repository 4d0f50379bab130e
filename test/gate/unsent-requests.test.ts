// A queued visitor's request is never silently lost (issue 30 item 7, docs/gate.md "A request that was not
// sent"): a POST/PUT/PATCH/DELETE without admission is not sent to the site and the answer says so — 503 with
// Retry-After and the queue state for API clients, the waiting page with a notice for browsers — the place
// is taken or kept as for a GET, and a visitor admitted at that very request has it sent on, body and all.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PLACE_COOKIE, TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { UNSENT_MESSAGE, UNSENT_RETRY_AFTER_SEC } from '../../src/gate/unsent-requests.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'accept-language': 'en' };

interface QueueState {
  error?: string;
  status: string;
  event_id: string;
  queue_number: number;
  serving_counter: number;
  waiting_num: number;
}

describe('a queued visitor\'s POST, PUT, PATCH or DELETE', () => {
  let origin: Origin;
  let node: GateNode;
  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Shop', origin.url)]);
  });
  after(async () => {
    await node.stop();
    await origin.close();
  });

  it('an API client gets 503, Retry-After and the queue state; nothing reaches the site', async () => {
    const seen = origin.seen.length;
    for (const [method, accept] of [['POST', 'application/json'], ['PUT', '*/*'], ['PATCH', undefined], ['DELETE', 'application/json']] as const) {
      const jar = new CookieJar();
      const answer = await jar.fetch(`${node.gateUrl}/api/cart`, {
        method,
        headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) },
        body: JSON.stringify({ item: 42 }),
      });
      assert.equal(answer.status, 503, method);
      assert.equal(answer.headers.get('retry-after'), String(UNSENT_RETRY_AFTER_SEC), method);
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      assert.equal(answer.headers.get('anteroom-gate'), 'queued');
      const body = (await answer.json()) as QueueState;
      assert.equal(body.error, UNSENT_MESSAGE, method);
      assert.equal(body.status, 'queued');
      assert.equal(body.event_id, 'Shop');
      assert.equal(typeof body.queue_number, 'number');
      assert.equal(typeof body.serving_counter, 'number');
      assert.equal(typeof body.waiting_num, 'number');
      assert.ok(jar.cookies.has(PLACE_COOKIE), `${method}: a place is taken, as for a GET`);
    }
    assert.equal(origin.seen.length, seen, 'nothing reached the origin');
  });

  it('a browser\'s form gets the waiting page saying it was not sent, and keeps its place', async () => {
    const jar = new CookieJar();
    const first = (await (await jar.fetch(`${node.gateUrl}/product/7`, { headers: { accept: 'application/json' } })).json()) as QueueState;
    const seen = origin.seen.length;
    const page = await jar.fetch(`${node.gateUrl}/cart/add`, { method: 'POST', headers: { ...FORM, ...BROWSER }, body: 'item=7&qty=1' });
    assert.equal(page.status, 503);
    assert.equal(page.headers.get('retry-after'), String(UNSENT_RETRY_AFTER_SEC));
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    const html = await page.text();
    assert.match(html, /<meta name="anteroom-gate" content="queued"/);
    assert.match(html, /<p class="notice warn" id="anteroom-unsent" role="alert">Your form was not sent: you are in the waiting room\./);
    const again = (await (await jar.fetch(`${node.gateUrl}/product/7`, { headers: { accept: 'application/json' } })).json()) as QueueState;
    assert.equal(again.queue_number, first.queue_number, 'the POST kept the place taken by the GET');
    assert.equal(origin.seen.length, seen);

    // A GET's page has no such notice (the pages are cached per notice).
    assert.doesNotMatch(await (await jar.fetch(`${node.gateUrl}/product/7`, { headers: BROWSER })).text(), /anteroom-unsent/);
  });

  it('the notice is in the visitor\'s language', async () => {
    const page = await fetch(`${node.gateUrl}/cart/add`, { method: 'POST', headers: { ...FORM, ...BROWSER, 'accept-language': 'fr' }, body: 'item=7' });
    assert.match(await page.text(), /id="anteroom-unsent" role="alert">Votre formulaire n'a pas été envoyé/);
  });

  it('a visitor whose turn comes at that request has it sent to the site, body and all', async () => {
    const jar = new CookieJar();
    const state = (await (await jar.fetch(`${node.gateUrl}/`, { headers: { accept: 'application/json' } })).json()) as QueueState;
    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Shop', increment_by: state.queue_number - state.serving_counter })).status, 200);
    const answer = await jar.fetch(`${node.gateUrl}/echo/cart`, { method: 'POST', headers: { ...FORM, ...BROWSER }, body: 'item=7&qty=2' });
    assert.equal(answer.status, 200, 'the origin\'s answer, not a redirect');
    assert.equal(answer.headers.get('anteroom-gate'), null, 'not the gate\'s own answer');
    const echoed = (await answer.json()) as { method: string; url: string; bodyBytes: number };
    assert.deepEqual([echoed.method, echoed.url, echoed.bodyBytes], ['POST', '/echo/cart', 'item=7&qty=2'.length]);
    assert.ok(jar.cookies.has(TOKEN_COOKIE), 'admitted: the token cookie is set');
    assert.ok(!jar.cookies.has(PLACE_COOKIE));
    assert.equal((await jar.fetch(`${node.gateUrl}/echo/next`)).status, 200, 'and kept for the next request');
  });

  it('GET, HEAD and OPTIONS are answered as before (the waiting page, with the room\'s status)', async () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS']) {
      const answer = await fetch(`${node.gateUrl}/product/1`, { method, headers: BROWSER });
      assert.equal(answer.status, 200, method);
      assert.equal(answer.headers.get('retry-after'), null, method);
      await answer.text();
    }
  });
});

describe('a POST to a room that is off', () => {
  it('is sent to the site at once, with its body, and the visitor admitted', async () => {
    const origin = await startOrigin();
    const node = await startGateNode([gatedRoom('Shop', origin.url, { state: 'off' })]);
    try {
      const jar = new CookieJar();
      const answer = await jar.fetch(`${node.gateUrl}/echo/login`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{"user":"a"}' });
      assert.equal(answer.status, 200);
      assert.deepEqual(((await answer.json()) as { bodyBytes: number }).bodyBytes, 12);
      assert.ok(jar.cookies.has(TOKEN_COOKIE));
    } finally {
      await node.stop();
      await origin.close();
    }
  });
});
