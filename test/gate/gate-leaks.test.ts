// What the gate must not leak (issue 30): the place cookie is opaque (the request ID is a capability) and
// never reaches the origin — proxied requests, bypass requests and WebSocket upgrades alike — while the
// visitor's other cookies and the admission token do; a cookie of the old readable format keeps its place
// and is replaced by an encrypted one.

import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { createHmac } from 'node:crypto';
import { PLACE_COOKIE, PlaceCookies, TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

const JSON_ACCEPT = { accept: 'application/json' };
const MONITOR_SECRET = 'monitor-secret-1234';

describe('what the gate does not leak', () => {
  let origin: Origin;
  let node: GateNode;
  const upgrades: IncomingHttpHeaders[] = [];

  before(async () => {
    origin = await startOrigin();
    origin.server.on('upgrade', (request: { headers: IncomingHttpHeaders }) => upgrades.push(request.headers));
    const gate = (path: string, bypass?: object) => ({ origin: origin.url, routes: [{ path }], queueing_status_code: 200, ...(bypass ? { bypass } : {}) });
    node = await startGateNode([
      gatedRoom('Free', origin.url, { state: 'off', gate: gate('/', { paths: ['/echo/static/'], headers: { 'x-monitor': MONITOR_SECRET } }) }),
      gatedRoom('Shop', origin.url, { gate: gate('/shop') }),
      gatedRoom('Kept', origin.url, { state: 'off', gate: { ...gate('/echo/kept'), forward_token_cookie: true } }),
    ]);
  });
  after(async () => {
    await node.stop();
    await origin.close();
  });

  /** The Cookie header the origin received for the request to `path` with `cookie`. */
  async function cookieAtOrigin(path: string, cookie: string, headers: Record<string, string> = {}): Promise<string | undefined> {
    const res = await fetch(`${node.gateUrl}${path}`, { headers: { ...JSON_ACCEPT, ...headers, cookie }, redirect: 'manual' });
    const body = (await res.json()) as { url?: string; headers?: IncomingHttpHeaders };
    assert.equal(body.url, path, 'proxied to the origin');
    return body.headers?.cookie as string | undefined;
  }

  it('bypass requests reach the origin without the place cookie, with the other cookies in order', async () => {
    const place = `${PLACE_COOKIE}=opaque-value`;
    assert.equal(await cookieAtOrigin('/echo/static/x', `a=1; ${place}; b=2`), 'a=1; b=2');
    assert.equal(await cookieAtOrigin('/echo/static/x', `${place};a=1`), 'a=1');
    assert.equal(await cookieAtOrigin('/echo/static/x', place), undefined, 'no Cookie header at all when nothing is left');
    assert.equal(await cookieAtOrigin('/echo', `${place}; a=1`, { 'x-monitor': MONITOR_SECRET }), 'a=1', 'a bypass header too');
    assert.equal(await cookieAtOrigin('/echo/static/x', `anteroom_token=t; a=1; anteroom_edge=e`), 'a=1', 'nor the token or the edge cookie');
    assert.equal(await cookieAtOrigin('/echo/static/x', `anteroom_join=AAAAAAAAAAAAAAAAAAAAAA; a=1`), 'a=1', 'nor the join cookie (its key names a place)');
    // Look-alikes are the site's own cookies: kept as they came.
    assert.equal(await cookieAtOrigin('/echo/static/x', 'my_anteroom_place=1; anteroom_places=2'), 'my_anteroom_place=1; anteroom_places=2');
  });

  it('an admitted request reaches the origin without Anteroom\'s cookies: neither the place nor the token', async () => {
    const jar = new CookieJar();
    assert.equal((await jar.fetch(`${node.gateUrl}/echo`)).status, 303, 'a room that is off admits at once');
    const token = jar.cookies.get(TOKEN_COOKIE);
    assert.ok(token);
    assert.equal(await cookieAtOrigin('/echo', `session=s1; ${PLACE_COOKIE}=old; ${TOKEN_COOKIE}=${token}`), 'session=s1');
    assert.equal(await cookieAtOrigin('/echo', `${TOKEN_COOKIE}=${token}`), undefined, 'no Cookie header at all when nothing is left');
  });

  it('a room with gate.forward_token_cookie passes the token on (for a site that checks it), never the place', async () => {
    const jar = new CookieJar();
    assert.equal((await jar.fetch(`${node.gateUrl}/echo/kept`)).status, 303);
    const token = jar.cookies.get(TOKEN_COOKIE);
    assert.ok(token);
    assert.equal(
      await cookieAtOrigin('/echo/kept', `session=s1; ${PLACE_COOKIE}=old; ${TOKEN_COOKIE}=${token}`),
      `session=s1; ${TOKEN_COOKIE}=${token}`,
    );
  });

  it('a WebSocket upgrade reaches the origin without Anteroom\'s cookies', async () => {
    const jar = new CookieJar();
    await jar.fetch(`${node.gateUrl}/`);
    const token = jar.cookies.get(TOKEN_COOKIE);
    assert.ok(token);
    upgrades.length = 0;
    const hello = await new Promise<string>((resolve, reject) => {
      const socket = new WebSocket(`${node.gateUrl.replace('http', 'ws')}/ws`, {
        headers: { cookie: `${PLACE_COOKIE}=old; ${TOKEN_COOKIE}=${token}; ws=1` },
      });
      socket.on('message', (data) => {
        socket.close();
        resolve(String(data));
      });
      socket.on('error', reject);
    });
    assert.equal(hello, 'hello 127.0.0.1');
    assert.equal(upgrades.length, 1);
    assert.equal(upgrades[0]?.cookie, 'ws=1');
  });

  it('the place cookie never shows the request ID; one of the old readable format keeps its place and is replaced', async () => {
    const jar = new CookieJar();
    const joined = (await (await jar.fetch(`${node.gateUrl}/shop/item`, { headers: JSON_ACCEPT })).json()) as { status: string; queue_number: number };
    assert.equal(joined.status, 'queued');
    const value = jar.cookies.get(PLACE_COOKIE) ?? '';
    const secret = Buffer.from(await node.store.claimSecret('gate-place-cookie-key', 'unused'), 'base64url');
    const place = new PlaceCookies(secret).decode(value);
    assert.ok(place, 'the cookie is the place, for whoever holds the store secret');
    assert.ok(!value.includes('.'));
    assert.ok(!Buffer.from(value, 'base64url').toString('latin1').includes(place.requestId));

    // A cookie written before the upgrade: readable base64url JSON + HMAC-SHA256 under the secret itself.
    const body = Buffer.from(JSON.stringify([place.eventId, place.requestId, place.position ?? null, place.returnTo])).toString('base64url');
    const legacy = new CookieJar();
    legacy.cookies.set(PLACE_COOKIE, `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`);
    const again = (await (await legacy.fetch(`${node.gateUrl}/shop/other`, { headers: JSON_ACCEPT })).json()) as { status: string; queue_number: number };
    assert.deepEqual([again.status, again.queue_number], ['queued', joined.queue_number], 'the same place');
    const replaced = legacy.cookies.get(PLACE_COOKIE) ?? '';
    assert.ok(!replaced.includes('.'), 'sent again in the encrypted format');
    assert.deepEqual(new PlaceCookies(secret).decode(replaced), place);
  });
});
