// The gate (spec rooms.md §5) with a real origin: queueing, the place kept across reloads, admission to the URL
// first asked for, proxying (streamed bodies, X-Forwarded-*), revocation, refused cookies, origin down.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { PLACE_COOKIE, TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

const JSON_ACCEPT = { accept: 'application/json' };

describe('the gate in front of an origin', () => {
  let origin: Origin;
  let node: GateNode;

  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([
      gatedRoom('Shop', origin.url, { gate: { origin: origin.url, routes: [{ path: '/' }], queueing_status_code: 200, bypass: { paths: ['/static/'], headers: { 'x-monitor': 'monitor-secret-1234' }, ips: ['10.0.0.0/8'] } } }),
    ]);
  });
  after(async () => {
    await node.stop();
    await origin.close();
  });

  /** Moves the serving counter up to the jar's place (the place the gate gave it). */
  async function serve(jar: CookieJar, path = '/'): Promise<void> {
    const state = (await (await jar.fetch(`${node.gateUrl}${path}`, { headers: JSON_ACCEPT })).json()) as { queue_number: number; serving_counter: number };
    const by = state.queue_number - state.serving_counter;
    if (by > 0) assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Shop', increment_by: by })).status, 200);
  }

  async function admittedJar(path = '/'): Promise<CookieJar> {
    const jar = new CookieJar();
    await serve(jar, path);
    const admitted = await jar.fetch(`${node.gateUrl}${path}`);
    assert.equal(admitted.status, 303);
    assert.ok(jar.cookies.has(TOKEN_COOKIE));
    return jar;
  }

  it('a visitor without cookies gets the waiting page, not the origin, and keeps the place across reloads', async () => {
    const before = origin.seen.length;
    const jar = new CookieJar();
    const page = await jar.fetch(`${node.gateUrl}/product/42?color=red`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    const html = await page.text();
    assert.match(html, /<meta name="anteroom-gate" content="queued"/);
    assert.match(html, /\/_anteroom\/assets\//, 'the page loads its assets from the gate');
    assert.ok(jar.cookies.has(PLACE_COOKIE));
    assert.match(jar.attributes.get(PLACE_COOKIE) ?? '', /HttpOnly/i);
    assert.match(jar.attributes.get(PLACE_COOKIE) ?? '', /SameSite=Lax/i);

    const first = (await (await jar.fetch(`${node.gateUrl}/product/42?color=red`, { headers: JSON_ACCEPT })).json()) as { status: string; queue_number: number };
    const again = (await (await jar.fetch(`${node.gateUrl}/other`, { headers: JSON_ACCEPT })).json()) as { status: string; queue_number: number };
    assert.equal(first.status, 'queued');
    assert.equal(again.queue_number, first.queue_number, 'a reload or another tab keeps the place');
    assert.equal(origin.seen.length, before, 'nothing reached the origin');
  });

  it('when served, the visitor gets the token cookie and is sent to the URL first asked for', async () => {
    const jar = new CookieJar();
    await (await jar.fetch(`${node.gateUrl}/product/42?color=red`)).text();
    await serve(jar, '/somewhere-else');
    const admitted = await jar.fetch(`${node.gateUrl}/somewhere-else`);
    assert.equal(admitted.status, 303);
    assert.equal(admitted.headers.get('location'), '/product/42?color=red');
    assert.ok(jar.cookies.has(TOKEN_COOKIE));
    assert.ok(!jar.cookies.has(PLACE_COOKIE), 'the place cookie is done with');
    assert.match(jar.attributes.get(TOKEN_COOKIE) ?? '', /HttpOnly/i);
    assert.doesNotMatch(jar.attributes.get(TOKEN_COOKIE) ?? '', /Secure/i, 'plain http: no Secure');
    const page = await jar.fetch(`${node.gateUrl}/product/42?color=red`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Origin page \/product\/42\?color=red/);
  });

  it('proxies method, streamed body and X-Forwarded-* unchanged', async () => {
    const jar = await admittedJar();
    const size = 3 * 1024 * 1024;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let sent = 0; sent < size; sent += 64 * 1024) controller.enqueue(new Uint8Array(64 * 1024));
        controller.close();
      },
    });
    const res = await jar.fetch(`${node.gateUrl}/echo/upload?x=1`, {
      method: 'PUT',
      body,
      duplex: 'half',
      headers: { 'content-type': 'application/octet-stream', 'x-custom': 'kept' },
    } as RequestInit & { headers: Record<string, string> });
    assert.equal(res.status, 200);
    const echoed = (await res.json()) as { method: string; url: string; bodyBytes: number; headers: Record<string, string> };
    assert.equal(echoed.method, 'PUT');
    assert.equal(echoed.url, '/echo/upload?x=1');
    assert.equal(echoed.bodyBytes, size);
    assert.equal(echoed.headers['x-custom'], 'kept');
    assert.equal(echoed.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(echoed.headers['x-forwarded-proto'], 'http');
    assert.equal(echoed.headers['x-forwarded-host'], new URL(node.gateUrl).host);
  });

  it('a client X-Forwarded-For is not believed without --trust-proxy', async () => {
    const jar = await admittedJar();
    const res = await jar.fetch(`${node.gateUrl}/echo`, { headers: { 'x-forwarded-for': '10.1.2.3' } });
    const echoed = (await res.json()) as { headers: Record<string, string> };
    assert.equal(echoed.headers['x-forwarded-for'], '127.0.0.1');
  });

  it('Anteroom-Command: revoke from the origin ends the session; the header never reaches the visitor', async () => {
    const jar = await admittedJar();
    const token = jar.cookies.get(TOKEN_COOKIE) ?? '';
    const revoked = await jar.fetch(`${node.gateUrl}/revoke`);
    assert.equal(revoked.status, 200);
    assert.equal(revoked.headers.get('anteroom-command'), null);
    assert.equal(await revoked.text(), 'thanks, you are done');
    assert.ok(!jar.cookies.has(TOKEN_COOKIE), 'the token cookie is cleared');
    // The same token presented again (a copy kept elsewhere) is refused: back in the queue.
    const before = origin.seen.length;
    const again = await fetch(`${node.gateUrl}/echo`, { headers: { cookie: `${TOKEN_COOKIE}=${token}`, ...JSON_ACCEPT }, redirect: 'manual' });
    assert.equal(((await again.json()) as { status: string }).status, 'queued');
    assert.equal(origin.seen.length, before);
  });

  it('forged, garbled and other rooms\' cookies count as no cookie', async () => {
    const jar = await admittedJar();
    const token = jar.cookies.get(TOKEN_COOKIE) ?? '';
    const [header, payload, signature = ''] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as Record<string, unknown>;
    const otherRoom = Buffer.from(JSON.stringify({ ...claims, aud: 'Elsewhere' })).toString('base64url');
    const flipped = signature.slice(0, -2) + (signature.endsWith('AA') ? 'BB' : 'AA');
    const before = origin.seen.length;
    for (const forged of ['garbage', `${header}.${otherRoom}.${signature}`, `${header}.${payload}.${flipped}`, `${header}.${payload}.`]) {
      const res = await fetch(`${node.gateUrl}/echo`, { headers: { cookie: `${TOKEN_COOKIE}=${forged}`, ...JSON_ACCEPT }, redirect: 'manual' });
      assert.equal(((await res.json()) as { status: string }).status, 'queued', forged);
    }
    const forgedPlace = await fetch(`${node.gateUrl}/echo`, { headers: { cookie: `${PLACE_COOKIE}=eyJ4Ijo.1AAAA`, ...JSON_ACCEPT }, redirect: 'manual' });
    assert.equal(((await forgedPlace.json()) as { status: string }).status, 'queued');
    assert.equal(origin.seen.length, before, 'no forged cookie reached the origin');
  });

  it('a token past its validity is refused', async () => {
    const jar = await admittedJar();
    node.clock.advance(3601);
    const res = await jar.fetch(`${node.gateUrl}/echo`, { headers: JSON_ACCEPT });
    assert.equal(((await res.json()) as { status: string }).status, 'queued');
  });

  it('bypass rules: paths, headers and client IPs go straight to the origin and are not counted', async () => {
    const waitingBefore = ((await (await node.get('/waiting_num?event_id=Shop')).json()) as { waiting_num: number }).waiting_num;
    const path = await fetch(`${node.gateUrl}/static/app.css`);
    assert.match(await path.text(), /Origin page \/static\/app.css/);
    const header = await fetch(`${node.gateUrl}/echo`, { headers: { 'x-monitor': 'monitor-secret-1234' } });
    assert.equal(header.status, 200);
    assert.equal(((await header.json()) as { method: string }).method, 'GET');
    const wrongHeader = await fetch(`${node.gateUrl}/echo`, { headers: { 'x-monitor': 'monitor-secret-1235', ...JSON_ACCEPT } });
    assert.equal(((await wrongHeader.json()) as { status: string }).status, 'queued');
    const waitingAfter = ((await (await node.get('/waiting_num?event_id=Shop')).json()) as { waiting_num: number }).waiting_num;
    assert.equal(waitingAfter, waitingBefore + 1, 'only the refused header joined');
  });

  it('update_session through the private API ends the session at the gate within the renewal interval', async () => {
    const jar = await admittedJar();
    const token = jar.cookies.get(TOKEN_COOKIE) ?? '';
    const sub = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { sub: string }).sub;
    assert.equal((await jar.fetch(`${node.gateUrl}/echo`)).status, 200);
    assert.equal((await node.admin('POST', '/update_session', { event_id: 'Shop', request_id: sub, status: 1 })).status, 200);
    node.clock.advance(5);
    const res = await jar.fetch(`${node.gateUrl}/echo`, { headers: JSON_ACCEPT });
    assert.equal(((await res.json()) as { status: string }).status, 'queued');
  });
});

describe('the gate when the origin is down', () => {
  it('answers a 502 page and keeps the place and the session', async () => {
    const origin = await startOrigin();
    const node = await startGateNode([gatedRoom('Shop', origin.url)]);
    try {
      const jar = new CookieJar();
      await (await jar.fetch(`${node.gateUrl}/`)).text();
      await node.admin('POST', '/increment_serving_counter', { event_id: 'Shop', increment_by: 1 });
      assert.equal((await jar.fetch(`${node.gateUrl}/`)).status, 303);
      await origin.close();
      const down = await jar.fetch(`${node.gateUrl}/cart`);
      assert.equal(down.status, 502);
      assert.match(await down.text(), /content="origin-down"/);
      assert.ok(jar.cookies.has(TOKEN_COOKIE), 'the session survives');
      const back = await startOrigin(origin.port);
      try {
        const res = await jar.fetch(`${node.gateUrl}/cart`);
        assert.equal(res.status, 200);
        assert.match(await res.text(), /Origin page \/cart/);
      } finally {
        await back.close();
      }
    } finally {
      await node.stop();
    }
  });
});

describe('the gate behind a load balancer (--trust-proxy) and with WebSockets', () => {
  let origin: Origin;
  let node: GateNode;

  before(async () => {
    origin = await startOrigin();
    node = await startGateNode(
      [gatedRoom('Shop', origin.url, { gate: { origin: origin.url, routes: [{ path: '/' }], queueing_status_code: 503, bypass: { ips: ['10.0.0.0/8'] } } })],
      { trustProxy: ['127.0.0.1'] },
    );
  });
  after(async () => {
    await node.stop();
    await origin.close();
  });

  it('reads the client IP from the trusted proxy: a bypassed CIDR goes through, the chain is kept', async () => {
    const res = await fetch(`${node.gateUrl}/echo`, { headers: { 'x-forwarded-for': '10.1.2.3', 'x-forwarded-proto': 'https' } });
    assert.equal(res.status, 200);
    const echoed = (await res.json()) as { headers: Record<string, string> };
    assert.equal(echoed.headers['x-forwarded-for'], '10.1.2.3, 127.0.0.1');
    assert.equal(echoed.headers['x-forwarded-proto'], 'https');
    const outside = await fetch(`${node.gateUrl}/echo`, { headers: { 'x-forwarded-for': '192.0.2.7' } });
    assert.equal(outside.status, 503, 'queueing_status_code');
    assert.equal(outside.headers.get('anteroom-gate'), 'queued');
    await outside.text();
  });

  it('sets the cookies Secure when the visitor came over https', async () => {
    const jar = new CookieJar();
    await (await jar.fetch(`${node.gateUrl}/`, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '192.0.2.8' } })).text();
    assert.match(jar.attributes.get(PLACE_COOKIE) ?? '', /Secure/);
  });

  it('WebSocket upgrades are proxied with an admission cookie and refused without one', async () => {
    const jar = new CookieJar();
    const state = (await (await jar.fetch(`${node.gateUrl}/`, { headers: JSON_ACCEPT })).json()) as { queue_number: number; serving_counter: number };
    await node.admin('POST', '/increment_serving_counter', { event_id: 'Shop', increment_by: state.queue_number - state.serving_counter });
    assert.equal((await jar.fetch(`${node.gateUrl}/`)).status, 303);
    const wsUrl = `${node.gateUrl.replace('http', 'ws')}/ws`;
    const messages = await new Promise<string[]>((resolve, reject) => {
      const socket = new WebSocket(wsUrl, { headers: { cookie: jar.header() } });
      const got: string[] = [];
      socket.on('message', (data) => {
        got.push(String(data));
        if (got.length === 1) socket.send('ping');
        else {
          socket.close();
          resolve(got);
        }
      });
      socket.on('error', reject);
    });
    assert.equal(messages[0], 'hello 127.0.0.1');
    assert.equal(messages[1], 'echo ping');
    const refused = await new Promise<number>((resolve) => {
      const socket = new WebSocket(wsUrl, { headers: { 'x-forwarded-for': '192.0.2.9' } });
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('open', () => resolve(101));
      socket.on('error', () => resolve(-1));
    });
    assert.equal(refused, 503);
  });
});

describe('rooms that are off or closed behind the gate', () => {
  it('off: the visitor is admitted at once, to the URL asked for', async () => {
    const origin = await startOrigin();
    const node = await startGateNode([gatedRoom('Shop', origin.url, { state: 'off' })]);
    try {
      const jar = new CookieJar();
      const first = await jar.fetch(`${node.gateUrl}/product/1`);
      assert.equal(first.status, 303);
      assert.equal(first.headers.get('location'), '/product/1');
      assert.ok(jar.cookies.has(TOKEN_COOKIE));
      assert.match(await (await jar.fetch(`${node.gateUrl}/product/1`)).text(), /Origin page \/product\/1/);
    } finally {
      await node.stop();
      await origin.close();
    }
  });

  it('closed: 403 and the page says so; nobody joins', async () => {
    const origin = await startOrigin();
    const node = await startGateNode([gatedRoom('Shop', origin.url, { state: 'closed' })]);
    try {
      const page = await fetch(`${node.gateUrl}/`);
      assert.equal(page.status, 403);
      assert.match(await page.text(), /content="closed"/);
      const json = await fetch(`${node.gateUrl}/`, { headers: JSON_ACCEPT });
      assert.deepEqual(await json.json(), { status: 'closed', event_id: 'Shop', error: 'Waiting room is closed', messages: {} });
      assert.equal(((await (await node.get('/waiting_num?event_id=Shop')).json()) as { waiting_num: number }).waiting_num, 0);
    } finally {
      await node.stop();
      await origin.close();
    }
  });
});
