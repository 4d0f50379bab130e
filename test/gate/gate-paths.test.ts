// The gate proxy decides on the normalised path and sends the origin that same path: rooms on / and /shop of
// one origin, where a visitor admitted to / must not reach /shop/… by any spelling (plain requests and
// WebSocket upgrades); ambiguous spellings are a 400; bypass is by whole segment; `//ws` is proxied; and no
// Location the gate sends leaves the site.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { rawRequest, type RawAnswer } from '../support/raw-http.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

const JSON_ACCEPT = { accept: 'application/json' };

describe('the gate decides on the path the origin receives', () => {
  let origin: Origin;
  let node: GateNode;
  let port: number;
  /** Request targets of the WebSocket upgrades that reached the origin. */
  const upgrades: string[] = [];
  /** A visitor admitted to the room on / (not to /shop). */
  let home: CookieJar;

  before(async () => {
    origin = await startOrigin();
    origin.server.on('upgrade', (request: { url?: string }) => upgrades.push(request.url ?? ''));
    node = await startGateNode([
      gatedRoom('Home', origin.url, { gate: { origin: origin.url, routes: [{ path: '/' }], queueing_status_code: 200, bypass: { paths: ['/health'] } } }),
      gatedRoom('Shop', origin.url, { gate: { origin: origin.url, routes: [{ path: '/shop' }], queueing_status_code: 200 } }),
    ]);
    port = Number(new URL(node.gateUrl).port);
    home = await admitted('Home', '/');
  });
  after(async () => {
    await node?.stop();
    await origin?.close();
  });

  /** A jar queued at `path`, served, and admitted (the 303 it got is returned with it). */
  async function admittedWith(eventId: string, path: string, jar = new CookieJar()): Promise<{ jar: CookieJar; admission: Response }> {
    const state = (await (await jar.fetch(`${node.gateUrl}${path}`, { headers: JSON_ACCEPT })).json()) as { status: string; queue_number: number; serving_counter: number };
    assert.equal(state.status, 'queued');
    const by = state.queue_number - state.serving_counter;
    if (by > 0) assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: eventId, increment_by: by })).status, 200);
    const admission = await jar.fetch(`${node.gateUrl}${path}`);
    assert.equal(admission.status, 303);
    assert.ok(jar.cookies.has(TOKEN_COOKIE));
    return { jar, admission };
  }
  const admitted = async (eventId: string, path: string) => (await admittedWith(eventId, path)).jar;

  const raw = (target: string, headers: Record<string, string> = {}): Promise<RawAnswer> =>
    rawRequest(port, 'GET', target, { ...JSON_ACCEPT, cookie: home.header(), ...headers });
  const originSaw = (from: number) => origin.seen.slice(from).map((seen) => seen.url);

  it('a cookie of / opens / (the origin gets the normalised path and the query as sent)', async () => {
    const from = origin.seen.length;
    const answer = await raw('/a/./b/%2e%2e/c//d?q=%zz&x=../y&z');
    assert.equal(answer.status, 200);
    assert.deepEqual(originSaw(from), ['/a/c/d?q=%zz&x=../y&z']);
  });

  it('no spelling of /shop/secret is let through with a cookie of /: each is /shop\'s queue, and the origin sees none', async () => {
    const from = origin.seen.length;
    for (const target of ['/shop/secret', '/./shop/secret', '/%2e/shop/secret', '/%2E%2E/shop/secret', '/x/../shop/secret', '/SHOP/secret', '/%73hop/secret', '/%53hop/secret', '//shop/secret', '/.//shop/./secret', '/shop;x/secret', '/;/shop/secret']) {
      const answer = await raw(target);
      assert.equal(answer.status, 200, target);
      const body = JSON.parse(answer.body) as { status: string; event_id: string };
      assert.deepEqual([body.status, body.event_id], ['queued', 'Shop'], target);
    }
    assert.deepEqual(originSaw(from), []);
  });

  it('nor through a WebSocket upgrade; //ws is proxied, as /ws', async () => {
    const before = upgrades.length;
    for (const target of ['/./shop/ws', '/%2e/shop/ws', '/SHOP/ws', '/%73hop/ws']) {
      const socket = new WebSocket(`ws://127.0.0.1:${port}${target}`, { headers: { cookie: home.header() } });
      const status = await new Promise<number>((resolve, reject) => {
        socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        socket.on('open', () => reject(new Error(`${target} opened`)));
        socket.on('error', reject);
      });
      socket.terminate();
      assert.equal(status, 200, `${target}: the queue's answer, not an upgrade`);
    }
    assert.deepEqual(upgrades.slice(before), [], 'no upgrade reached the origin');

    for (const target of ['//ws', '/%77s', '/./ws']) {
      const socket = new WebSocket(`ws://127.0.0.1:${port}${target}`, { headers: { cookie: home.header() } });
      const hello = await new Promise<string>((resolve, reject) => {
        socket.once('message', (data) => resolve(String(data)));
        socket.on('unexpected-response', (_request, response) => reject(new Error(`${target}: ${response.statusCode}`)));
        socket.on('error', reject);
      });
      socket.close();
      assert.match(hello, /^hello /, target);
    }
    assert.deepEqual(upgrades.slice(before), ['/ws', '/ws', '/ws']);
  });

  it('//x is proxied to the origin as /x (not a 400)', async () => {
    const from = origin.seen.length;
    const answer = await raw('//echo?a=1');
    assert.equal(answer.status, 200);
    assert.equal((JSON.parse(answer.body) as { url: string }).url, '/echo?a=1');
    assert.deepEqual(originSaw(from), ['/echo?a=1']);
  });

  it('ambiguous spellings are a 400 in the JSON error shape, and reach nothing', async () => {
    const from = origin.seen.length;
    for (const target of ['/shop%2Fsecret', '/%2Fshop/secret', '/shop%5csecret', '/shop\\secret', '/a%00', '/..;/shop/secret', '/x/.%3B/shop', '/%252e%252e/shop/secret', '/%C3', '/%zz', 'http://evil.example/shop/secret']) {
      const answer = await raw(target);
      assert.equal(answer.status, 400, target);
      assert.equal(answer.headers['content-type']?.startsWith('application/json'), true, target);
      const body = JSON.parse(answer.body) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body), ['error'], target);
      assert.equal(typeof body.error, 'string');
    }
    // Without a cookie too: nothing is queued for them.
    assert.equal((await rawRequest(port, 'GET', '/shop%2Fsecret', JSON_ACCEPT)).status, 400);
    assert.deepEqual(originSaw(from), []);
  });

  it('bypass paths match whole segments of the normalised path', async () => {
    const from = origin.seen.length;
    const anonymous = (target: string) => rawRequest(port, 'GET', target, JSON_ACCEPT);
    for (const target of ['/health', '/health/live', '/./health', '/%68ealth']) assert.equal((await anonymous(target)).status, 200, target);
    assert.deepEqual(originSaw(from), ['/health', '/health/live', '/health', '/health']);
    for (const target of ['/healthz', '/health-admin/delete', '/health.json', '/HEALTH', '/health/../admin']) {
      const answer = await anonymous(target);
      assert.equal((JSON.parse(answer.body) as { status: string }).status, 'queued', target);
    }
    assert.equal(origin.seen.length, from + 4, 'nothing else reached the origin');
  });

  it('no redirect leaves the site: first asking for //evil.example/ sends the admitted visitor to /evil.example/', async () => {
    const { admission } = await admittedWith('Home', '//evil.example/');
    assert.equal(admission.headers.get('location'), '/evil.example/');
    const json = new CookieJar();
    const state = (await (await json.fetch(`${node.gateUrl}//evil.example/x?y=1`, { headers: JSON_ACCEPT })).json()) as { queue_number: number; serving_counter: number };
    await node.admin('POST', '/increment_serving_counter', { event_id: 'Home', increment_by: state.queue_number - state.serving_counter });
    const answer = await rawRequest(port, 'GET', '/', { ...JSON_ACCEPT, cookie: json.header() });
    assert.deepEqual(JSON.parse(answer.body), { status: 'admitted', event_id: 'Home', location: '/evil.example/x?y=1' });
    for (const first of ['/\\evil.example/', 'http://evil.example/']) {
      const refused = await rawRequest(port, 'GET', first, {});
      assert.equal(refused.status, 400, `${first} is never stored as the URL first asked for`);
    }
  });

  it('/_anteroom/wait?to= sends an admitted visitor only to a normalised local path', async () => {
    const cases: [string, string][] = [
      ['//evil.example/', '/evil.example/'],
      ['/\\evil.example/', '/'],
      ['https://evil.example/', '/'],
      ['/%2e/shop/../cart?x=1', '/cart?x=1'],
    ];
    for (const [to, location] of cases) {
      const answer = await rawRequest(port, 'GET', `/_anteroom/wait?to=${encodeURIComponent(to)}`, { cookie: home.header() });
      assert.equal(answer.status, 303, to);
      assert.equal(answer.headers.location, location, to);
    }
  });
});
