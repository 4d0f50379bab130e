// What an outside attack on the merged gate (issue 30) still found, each as the request that found it: a real
// gate in front of a real origin, on 127.0.0.1.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { rawRequest } from '../support/raw-http.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

const JSON_ACCEPT = { accept: 'application/json' };

describe('attack findings on the gate', () => {
  let origin: Origin;
  let node: GateNode;
  let port: number;
  /** A visitor admitted to the room. */
  let visitor: CookieJar;

  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Home', origin.url)]);
    port = Number(new URL(node.gateUrl).port);
    visitor = new CookieJar();
    const state = (await (await visitor.fetch(`${node.gateUrl}/`, { headers: JSON_ACCEPT })).json()) as { queue_number: number; serving_counter: number };
    const by = state.queue_number - state.serving_counter;
    if (by > 0) assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Home', increment_by: by })).status, 200);
    assert.equal((await visitor.fetch(`${node.gateUrl}/`)).status, 303);
    assert.ok(visitor.cookies.has(TOKEN_COOKIE));
  });
  after(async () => {
    await node?.stop();
    await origin?.close();
  });

  it('a `to` whose query decodes beyond Latin-1 is never a 500 (a header cannot carry it): the visitor goes to /', async () => {
    // Decoded from the query: ĉ (U+0109), a line separator, an emoji — Node refuses each in a Location header.
    for (const to of ['/x?\u0109', '/x?a=\u2028', '/x?\u{1F600}']) {
      for (const target of [`/_anteroom/wait?to=${encodeURIComponent(to)}`, `/_anteroom/renew?event_id=Home&to=${encodeURIComponent(to)}`]) {
        const answer = await rawRequest(port, 'GET', target, { cookie: visitor.header() });
        assert.equal(answer.status, 303, `${target}: ${answer.body}`);
        assert.equal(answer.headers.location, '/', target);
      }
    }
  });
  it("bodies and methods the gate's own paths do not take are answered in the one JSON error shape (not Fastify's)", async () => {
    const cases: [string, string, Record<string, string>, string | undefined, number][] = [
      ['POST', '/_anteroom/revoke', { 'content-type': 'application/json' }, '{"a":', 400],
      ['POST', '/_anteroom/check', { 'content-type': 'text/xml' }, '<a/>', 415],
      ['DELETE', '/_anteroom/wait', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1', 415],
      ['TRACE', '/x', {}, undefined, 404],
      ['PROPFIND', '/_anteroom/wait', {}, undefined, 404],
    ];
    for (const [method, target, headers, body, status] of cases) {
      const answer = await rawRequest(port, method, target, { cookie: visitor.header(), ...headers }, body);
      assert.equal(answer.status, status, `${method} ${target}: ${answer.body}`);
      assert.deepEqual(Object.keys(JSON.parse(answer.body) as object), ['error'], `${method} ${target}: ${answer.body}`);
    }
  });
  it('a request refused before its chunked body was read gets one answer, not a second 400 after it', async () => {
    // Node's client fails on the second answer ("Data after `Connection: close`"): the listener's parser error
    // handler answered on a connection whose answer had been sent.
    for (let i = 0; i < 5; i++) {
      const answer = await rawRequest(port, 'DELETE', '/_anteroom/wait', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1');
      assert.equal(answer.status, 415);
    }
  });
});

describe('attack findings: the Host a visitor sends', () => {
  let origin: Origin;
  let node: GateNode;
  let port: number;

  before(async () => {
    origin = await startOrigin();
    // A room open to all (state off: admitted at once) on any host, and a protected room for shop.example.
    node = await startGateNode([
      gatedRoom('Open', origin.url, { state: 'off' }),
      gatedRoom('Shop', origin.url, { gate: { origin: origin.url, routes: [{ host: 'shop.example', path: '/' }], queueing_status_code: 200 } }),
    ]);
    port = Number(new URL(node.gateUrl).port);
  });
  after(async () => {
    await node?.stop();
    await origin?.close();
  });

  it("no spelling of shop.example's host reaches the origin through the open room (the origin reads X-Forwarded-Host as the site)", async () => {
    // An origin that routes on X-Forwarded-Host reads `shop.example.` (Django drops the dot) and
    // `shop.example, x` (Express keeps the first of a list) as shop.example.
    const from = origin.seen.length;
    for (const host of ['shop.example.', 'SHOP.EXAMPLE.', 'shop.example.:80', 'shop.example:', 'shop.example, x', 'x@shop.example', 'shop.example/x']) {
      const first = await rawRequest(port, 'GET', '/echo', { host, ...JSON_ACCEPT });
      const cookie = ([] as string[])
        .concat(first.headers['set-cookie'] ?? [])
        .map((line) => line.split(';')[0])
        .join('; ');
      const second = await rawRequest(port, 'GET', '/echo', { host, ...JSON_ACCEPT, cookie });
      for (const answer of [first, second]) {
        const body = JSON.parse(answer.body) as { status?: string; event_id?: string; error?: string };
        assert.ok(answer.status === 400 ? typeof body.error === 'string' : body.status === 'queued' && body.event_id === 'Shop', `${host}: ${answer.status} ${answer.body}`);
      }
    }
    assert.deepEqual(origin.seen.slice(from).map((seen) => seen.headers['x-forwarded-host']), []);
  });
});
