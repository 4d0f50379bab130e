// A visitor whose browser runs no script (issue 38; docs/gate.md "Without JavaScript"): plain HTTP with a cookie
// jar that does what such a browser does — reads the waiting page's <noscript> meta refresh and asks its URL
// again — from the first request to the page first asked for. Also: the interval follows the room, every phase of
// the page refreshes, and the refresh URL is this host's path, escaped.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PLACE_COOKIE, TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { rawRequest } from '../support/raw-http.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

/** What a browser without script reads of the page: the refresh (inside <noscript>), the numbers and the phase. */
interface NoScriptPage {
  seconds: number;
  url: string;
  position: string;
  ahead: string;
  phase: string;
  noscriptText: string;
}

const decode = (text: string) =>
  text.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&#x2F;', '/').replaceAll('&#x3D;', '=').replaceAll('&amp;', '&');

function readPage(html: string): NoScriptPage {
  const refreshes = [...html.matchAll(/<meta http-equiv="refresh" content="([^"]*)">/g)];
  assert.equal(refreshes.length, 1, 'one refresh');
  assert.match(html, /<noscript><meta http-equiv="refresh" content="[^"]*"><\/noscript>/, 'the refresh is for browsers without script only');
  const refresh = /^(\d+);url=(.*)$/.exec(decode(refreshes[0]![1]!));
  assert.ok(refresh, `a refresh of the form N;url=…: ${refreshes[0]![1]}`);
  const text = (id: string) => decode(new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)?.[1] ?? '');
  return {
    seconds: Number(refresh[1]),
    url: refresh[2]!,
    position: text('my-position'),
    ahead: text('ahead'),
    phase: /<body data-phase="(\w+)"/.exec(html)?.[1] ?? '',
    noscriptText: text('noscript-status'),
  };
}

describe('the gate without JavaScript', () => {
  let origin: Origin;
  let node: GateNode;
  const startsAt = Date.UTC(2026, 10, 22, 12, 0, 12); // 12 s after the test clock's start

  before(async () => {
    origin = await startOrigin();
    const routes = (path: string) => ({ routes: [{ path }], queueing_status_code: 200 });
    node = await startGateNode([
      gatedRoom('Shop', origin.url),
      gatedRoom('Auto', origin.url, { admission: 'automatic', new_users_per_minute: 60, total_active_users: 1_000, gate: { origin: origin.url, ...routes('/auto') } }),
      gatedRoom('Paused', origin.url, { state: 'paused', gate: { origin: origin.url, ...routes('/paused') } }),
      gatedRoom('Closed', origin.url, { state: 'closed', gate: { origin: origin.url, ...routes('/closed') } }),
      gatedRoom('Drawn', origin.url, {
        prequeue_start_time: '2026-11-22T11:00:00Z',
        event_start_time: new Date(startsAt).toISOString().replace('.000', ''),
        shuffle_at_event_start: true,
        gate: { origin: origin.url, ...routes('/drawn') },
      }),
      gatedRoom('Down', origin.url, { state: 'off', gate: { origin: 'http://127.0.0.1:9', ...routes('/down') } }),
      gatedRoom('Later', origin.url, { prequeue_start_time: '2026-11-22T13:00:00Z', event_start_time: '2026-11-22T14:00:00Z', gate: { origin: origin.url, ...routes('/later') } }),
    ]);
  });
  after(async () => {
    await node.stop();
    await origin.close();
  });

  const joined = async (eventId: string) => (await node.room.reports.counters(eventId)).queue;

  it('queued → refreshes → admitted → the page first asked for, with one place in the store', async () => {
    for (let i = 0; i < 2; i++) await (await fetch(`${node.gateUrl}/ahead`)).text();
    const jar = new CookieJar();
    const first = await jar.fetch(`${node.gateUrl}/product/7?size=m&color=red`);
    assert.equal(first.status, 200);
    let page = readPage(await first.text());
    assert.deepEqual({ position: page.position, ahead: page.ahead, phase: page.phase }, { position: '3', ahead: '2', phase: 'waiting' });
    assert.equal(page.url, '/product/7?size=m&color=red', 'back to the URL asked for');
    assert.equal(page.seconds, 30, 'manual admission, no pace measured yet: the ceiling');
    assert.match(page.noscriptText, /This page updates itself every 30 seconds\./);
    assert.equal(await joined('Shop'), 3);

    for (let i = 0; i < 4; i++) {
      const again = await jar.fetch(`${node.gateUrl}${page.url}`);
      assert.equal(again.status, 200);
      assert.deepEqual(again.headers.getSetCookie(), [], 'the place cookie is kept as it is');
      page = readPage(await again.text());
      assert.equal(page.position, '3');
    }
    assert.equal(await joined('Shop'), 3, 'refreshing never joins again');

    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Shop', increment_by: 3 })).status, 200);
    const admitted = await jar.fetch(`${node.gateUrl}${page.url}`);
    assert.equal(admitted.status, 303);
    assert.equal(admitted.headers.get('location'), '/product/7?size=m&color=red');
    assert.ok(jar.cookies.has(TOKEN_COOKIE));
    assert.ok(!jar.cookies.has(PLACE_COOKIE));
    const landed = await jar.fetch(`${node.gateUrl}${admitted.headers.get('location')}`);
    assert.equal(landed.status, 200);
    assert.match(await landed.text(), /Origin page \/product\/7\?size=m&amp;color=red|Origin page \/product\/7\?size=m&color=red/);
    assert.equal(await joined('Shop'), 3, 'one place for the whole journey');
  });

  it('the forward-auth waiting page refreshes to itself and then sends the visitor to `to`', async () => {
    const jar = new CookieJar();
    const first = await jar.fetch(`${node.gateUrl}/_anteroom/wait?to=${encodeURIComponent('/basket?step=2')}`);
    assert.equal(first.status, 200);
    const page = readPage(await first.text());
    assert.equal(page.url, '/_anteroom/wait?to=%2Fbasket%3Fstep%3D2');
    const position = Number(page.position);
    const serving = Number((await (await fetch(`${node.url}/serving_num?event_id=Shop`)).json() as { serving_counter: number }).serving_counter);
    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Shop', increment_by: position - serving })).status, 200);
    const admitted = await jar.fetch(`${node.gateUrl}${page.url}`);
    assert.equal(admitted.status, 303);
    assert.equal(admitted.headers.get('location'), '/basket?step=2');
  });

  it('the interval is a quarter of the expected wait, between 5 and 30 s: shorter near the front', async () => {
    // Automatic admission at 60 a minute (1 a second), nobody let in yet (no ticks in this test).
    const seconds = async () => {
      const page = readPage(await (await new CookieJar().fetch(`${node.gateUrl}/auto/item`)).text());
      return { position: page.position, seconds: page.seconds };
    };
    assert.deepEqual(await seconds(), { position: '1', seconds: 5 }, '1 ahead: the floor');
    for (let i = 0; i < 58; i++) await node.room.queue.assignQueueNum('Auto', {});
    assert.deepEqual(await seconds(), { position: '60', seconds: 15 }, '60 ahead at 1/s: 60 s / 4');
    for (let i = 0; i < 100; i++) await node.room.queue.assignQueueNum('Auto', {});
    assert.deepEqual(await seconds(), { position: '161', seconds: 30 }, 'far back: the ceiling');
  });

  it('every phase refreshes: paused, the pre-queue of a drawn room, closed, the site down', async () => {
    const paused = await new CookieJar().fetch(`${node.gateUrl}/paused/x`);
    assert.equal(paused.status, 200);
    const pausedPage = readPage(await paused.text());
    assert.deepEqual({ phase: pausedPage.phase, position: pausedPage.position, seconds: pausedPage.seconds, url: pausedPage.url }, { phase: 'paused', position: '1', seconds: 30, url: '/paused/x' });

    const drawn = readPage(await (await new CookieJar().fetch(`${node.gateUrl}/drawn/x`)).text());
    assert.equal(drawn.phase, 'prequeue');
    assert.equal(drawn.position, '…', 'numbered by the draw at the start');
    assert.match(drawn.noscriptText, /You are in\. The draw is at /);
    assert.equal(drawn.seconds, 12, 'never later than the start');

    const closed = await new CookieJar().fetch(`${node.gateUrl}/closed/x`);
    assert.equal(closed.status, 403);
    const closedPage = readPage(await closed.text());
    assert.deepEqual({ phase: closedPage.phase, seconds: closedPage.seconds, url: closedPage.url }, { phase: 'closed', seconds: 30, url: '/closed/x' });

    // An admitted visitor (state off: at once) whose site does not answer.
    const jar = new CookieJar();
    assert.equal((await jar.fetch(`${node.gateUrl}/down/x?y=1`)).status, 303);
    const down = await jar.fetch(`${node.gateUrl}/down/x?y=1`);
    assert.equal(down.status, 502);
    const downPage = readPage(await down.text());
    assert.deepEqual({ seconds: downPage.seconds, url: downPage.url }, { seconds: 5, url: '/down/x?y=1' });
    assert.match(downPage.noscriptText, /The site is not answering right now/);
  });

  it('before the pre-queue opens: a countdown page, no place taken, no 403; the JSON answer names the opening (issue 33)', async () => {
    const jar = new CookieJar();
    const page = await jar.fetch(`${node.gateUrl}/later/x`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('anteroom-gate'), 'before');
    const html = await page.text();
    const read = readPage(html);
    assert.deepEqual({ phase: read.phase, url: read.url }, { phase: 'before', url: '/later/x' });
    assert.match(html, /id="countdown"[^>]*>Opens in 1:00:00</);
    assert.match(html, /The line opens at /);
    assert.match(html, /<section class="card" id="ending"[^>]*hidden>/, 'no ending: the line is not closed');
    assert.equal(await joined('Later'), 0, 'no place taken before the opening');
    const json = await jar.fetch(`${node.gateUrl}/later/x`, { headers: { accept: 'application/json' } });
    assert.deepEqual(await json.json(), { status: 'before', event_id: 'Later', phase: 'before', opens_at: '2026-11-22T13:00:00Z', messages: {} });
  });

  it('?lang= chooses the language of the gate page, as on the site; the JSON answer carries the phase, people ahead and the queue ID', async () => {
    const jar = new CookieJar();
    const german = await jar.fetch(`${node.gateUrl}/paused/x?lang=de`, { headers: { 'accept-language': 'fr' } });
    const html = await german.text();
    assert.match(html, /<html lang="de" dir="ltr">/);
    assert.match(html, /Warteraum/);
    const arabic = await jar.fetch(`${node.gateUrl}/paused/x?lang=ar`);
    assert.match(await arabic.text(), /<html lang="ar" dir="rtl">/);
    const poll = (await (await jar.fetch(`${node.gateUrl}/paused/x`, { headers: { accept: 'application/json' } })).json()) as Record<string, unknown>;
    assert.equal(poll.phase, 'paused');
    assert.equal(typeof poll.people_ahead, 'number');
    assert.equal(poll.people_ahead, Math.max(0, (poll.queue_number as number) - (poll.serving_counter as number) - 1));
    assert.match(String(poll.queue_id), /^[0-9A-F]{4}-[0-9A-F]{4}$/);
  });

  it('the refresh goes to a path of this host, its URL percent-encoded and escaped', async () => {
    const hostile = await rawRequest(node.gate!.port, 'GET', `/q?a="><script>alert(1)</script>&b='x'&c=\``);
    assert.equal(hostile.status, 200);
    assert.doesNotMatch(hostile.body, /<script>alert/);
    assert.equal(readPage(hostile.body).url, '/q?a=%22%3E%3Cscript%3Ealert(1)%3C/script%3E&b=%27x%27&c=%60');

    // One normalised path (src/gate/normalise-path.ts): "//" is merged into "/", a backslash is refused.
    const merged = await rawRequest(node.gate!.port, 'GET', '//evil.example/x');
    assert.equal(readPage(merged.body).url, '/evil.example/x', '//evil.example/x: a path of this host, not another host');
    assert.equal((await rawRequest(node.gate!.port, 'GET', '/\\evil.example/x')).status, 400, '/\\evil.example/x: refused');
  });
});
