// Forward auth end to end: Debian's nginx runs the recipe of docs/gate.md (deploy/nginx/anteroom-forward-auth.conf,
// only its three addresses changed) in front of a real origin, asking Anteroom's GET /_anteroom/check.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { freePort, startNginx, type Nginx } from '../support/nginx.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

const RECIPE = new URL('../../deploy/nginx/anteroom-forward-auth.conf', import.meta.url);

describe('nginx auth_request in front of a site, asking the gate', () => {
  let origin: Origin;
  let node: GateNode;
  let nginx: Nginx;

  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Shop', origin.url, { gate: { origin: origin.url, routes: [{ path: '/' }], queueing_status_code: 200, bypass: { paths: ['/health'] } } })]);
    const port = await freePort();
    const recipe = readFileSync(RECIPE, 'utf8')
      .replace('server 127.0.0.1:8081;', `server ${new URL(node.gateUrl).host};`)
      .replace('server 127.0.0.1:3000;', `server ${new URL(origin.url).host};`)
      .replace('listen 8000;', `listen 127.0.0.1:${port};`);
    nginx = await startNginx(recipe, port);
  });
  after(async () => {
    await nginx?.stop();
    await node?.stop();
    await origin?.close();
  });

  it('GET /_anteroom/check answers 200 or 401 with the waiting page as Location', async () => {
    const refused = await fetch(`${node.gateUrl}/_anteroom/check`, { headers: { 'x-forwarded-host': 'shop.test', 'x-original-uri': '/cart?x=1' } });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('location'), '/_anteroom/wait?to=%2Fcart%3Fx%3D1');
    // Traefik ForwardAuth and Envoy pass the 401 on to the browser: its body takes the visitor to the page.
    assert.match(await refused.text(), /<meta http-equiv="refresh" content="0;url=\/_anteroom\/wait\?to=%2Fcart%3Fx%3D1">/);
    const bypassed = await fetch(`${node.gateUrl}/_anteroom/check`, { headers: { 'x-forwarded-host': 'shop.test', 'x-original-uri': '/health' } });
    assert.equal(bypassed.status, 200);
  });

  it('a visitor is sent to the waiting page, queues there, and once served reaches the site through nginx', async () => {
    const jar = new CookieJar();
    const before = origin.seen.length;
    const first = await jar.fetch(`${nginx.url}/product/9?q=1`);
    assert.equal(first.status, 302);
    // nginx makes the Location absolute (absolute_redirect).
    const location = new URL(first.headers.get('location') ?? '', nginx.url);
    assert.equal(`${location.pathname}${location.search}`, '/_anteroom/wait?to=%2Fproduct%2F9%3Fq%3D1');
    assert.equal(first.headers.get('cache-control'), 'no-store');
    const waitPath = `${location.pathname}${location.search}`;
    const waiting = await jar.fetch(`${nginx.url}${waitPath}`);
    assert.equal(waiting.status, 200);
    assert.match(await waiting.text(), /anteroom-gate/);
    // The page's own assets come through nginx too.
    const assetPath = /src="(\/_anteroom\/assets\/[^"]+\.js)"/.exec(await (await jar.fetch(`${nginx.url}${waitPath}`)).text())?.[1];
    assert.ok(assetPath);
    assert.equal((await jar.fetch(`${nginx.url}${assetPath}`)).status, 200);

    const state = (await (await jar.fetch(`${nginx.url}${waitPath}`, { headers: { accept: 'application/json' } })).json()) as { queue_number: number; serving_counter: number };
    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Shop', increment_by: state.queue_number - state.serving_counter })).status, 200);
    const admitted = await jar.fetch(`${nginx.url}${waitPath}`);
    assert.equal(admitted.status, 303);
    assert.equal(admitted.headers.get('location'), '/product/9?q=1');
    assert.ok(jar.cookies.has(TOKEN_COOKIE));
    assert.equal(origin.seen.length, before, 'nothing reached the site before admission');

    const page = await jar.fetch(`${nginx.url}/product/9?q=1`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Origin page \/product\/9\?q=1/);
  });

  it('a forged cookie is sent to the waiting page; a bypassed path goes through', async () => {
    const forged = await fetch(`${nginx.url}/product/9`, { headers: { cookie: `${TOKEN_COOKIE}=eyJhbGciOiJSUzI1NiJ9.e30.c2ln` }, redirect: 'manual' });
    assert.equal(forged.status, 302);
    await forged.arrayBuffer();
    const health = await fetch(`${nginx.url}/health`);
    assert.equal(health.status, 200);
    assert.match(await health.text(), /Origin page \/health/);
  });
});
