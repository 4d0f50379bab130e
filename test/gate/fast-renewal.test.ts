// The renewal fast path (src/gate/fast-renewal.ts) against the ordinary route: the edge's own form
// (`?event_id=E&mac_only=1`) is answered before Fastify; the same query in another order (`?mac_only=1&event_id=E`)
// is not taken by the fast path and reaches the route. Both must answer the same for every kind of renewal — a
// fast path that skipped a check would admit where the route refuses.

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

const JSON_ACCEPT = { accept: 'application/json' };
const FAST = '/_anteroom/renew?event_id=Home&mac_only=1';
const ROUTED = '/_anteroom/renew?mac_only=1&event_id=Home';

interface Answer {
  status: number;
  /** Header names and values in the order written, the Date left out. */
  headers: string[];
  body: string;
}

function get(port: number, target: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: target, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const raw = res.rawHeaders;
        const pairs: string[] = [];
        for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() !== 'date') pairs.push(`${raw[i]?.toLowerCase()}: ${raw[i + 1]}`);
        resolve({ status: res.statusCode ?? 0, headers: pairs.sort(), body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

for (const trustProxy of [undefined, ['127.0.0.1']]) describe(`the renewal fast path answers as the route does (trust proxy: ${trustProxy ?? 'none'})`, () => {
  let origin: Origin;
  let node: GateNode;
  let port: number;

  /** A visitor admitted to the room: their admission cookie. */
  async function admitted(): Promise<string> {
    const visitor = new CookieJar();
    const state = (await (await visitor.fetch(`${node.gateUrl}/`, { headers: JSON_ACCEPT })).json()) as { queue_number: number; serving_counter: number };
    const by = state.queue_number - state.serving_counter;
    if (by > 0) assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Home', increment_by: by })).status, 200);
    assert.equal((await visitor.fetch(`${node.gateUrl}/`)).status, 303);
    const token = visitor.cookies.get(TOKEN_COOKIE);
    assert.ok(token);
    return token;
  }

  /** The same renewal through both paths: equal answers (status, headers but Date, body), returned. */
  async function both(headers: Record<string, string>, fast = FAST, routed = ROUTED): Promise<Answer> {
    const viaFast = await get(port, fast, headers);
    const viaRoute = await get(port, routed, headers);
    assert.deepEqual(viaFast, viaRoute);
    return viaFast;
  }

  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Home', origin.url, { session_duration: 60, session_renewal: false })], trustProxy ? { trustProxy } : {});
    port = Number(new URL(node.gateUrl).port);
  });
  after(async () => {
    await node?.stop();
    await origin?.close();
  });

  it('a valid renewal: the same 200, edge cookie and cache headers (plain and behind X-Forwarded-Proto)', async () => {
    const token = await admitted();
    const ok = await both({ cookie: `${TOKEN_COOKIE}=${token}` });
    assert.equal(ok.status, 200);
    assert.ok(ok.headers.some((h) => h.startsWith('set-cookie: anteroom_edge=')));
    assert.ok(ok.headers.includes('cache-control: no-store'));
    // X-Forwarded-Proto makes the cookie Secure only from a trusted proxy (Fastify's request.protocol).
    const behindTls = await both({ cookie: `other=1; ${TOKEN_COOKIE}=${token}`, 'x-forwarded-proto': 'https' });
    assert.equal(behindTls.status, 200);
    assert.equal(behindTls.headers.some((h) => h.startsWith('set-cookie: anteroom_edge=') && /; Secure/.test(h)), trustProxy !== undefined);
    assert.equal((await both({ cookie: `${TOKEN_COOKIE}=${token}`, 'x-forwarded-proto': 'https, http' })).status, 200);
    // Without mac_only the cookie carries the ES256 signature (random: compared by shape, not bytes).
    const signed = await get(port, '/_anteroom/renew?event_id=Home', { cookie: `${TOKEN_COOKIE}=${token}` });
    assert.equal(signed.status, 200);
    assert.match(signed.headers.find((h) => h.startsWith('set-cookie:')) ?? '', /anteroom_edge=[\w-]+\.[\w-]+\.[\w-]{86}\.[\w-]{43};/);
  });

  it('forged, malformed and missing admission cookies: the same 401 in the one JSON shape', async () => {
    const token = await admitted();
    const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const cookie of [`${TOKEN_COOKIE}=${forged}`, `${TOKEN_COOKIE}=x.y.z`, `${TOKEN_COOKIE}=`, 'other=1', `${TOKEN_COOKIE}=%E0%A4%A`]) {
      const refused = await both({ cookie });
      assert.equal(refused.status, 401, cookie);
      assert.deepEqual(JSON.parse(refused.body), { error: 'No valid admission to this room' });
    }
    const none = await both({});
    assert.equal(none.status, 401);
  });

  it('another room, a room without a gate, a malformed query: the same refusal', async () => {
    const token = await admitted();
    const cookie = { cookie: `${TOKEN_COOKIE}=${token}` };
    assert.equal((await both(cookie, '/_anteroom/renew?event_id=Nope&mac_only=1', '/_anteroom/renew?mac_only=1&event_id=Nope')).status, 404);
    assert.equal((await both(cookie, '/_anteroom/renew?event_id=Home&mac_only=1&event_id=Home', '/_anteroom/renew?event_id=Home&event_id=Home&mac_only=1')).status, 404);
  });

  it('a revoked session: the same 401', async () => {
    const token = await admitted();
    const cookie = `${TOKEN_COOKIE}=${token}`;
    assert.equal((await both({ cookie })).status, 200);
    const revoked = await fetch(`${node.gateUrl}/_anteroom/revoke`, { method: 'POST', headers: { cookie } });
    assert.equal(revoked.status, 204);
    assert.equal((await both({ cookie })).status, 401);
  });

  it('an ended session (session_renewal false, past session_duration): the same 401', async () => {
    const token = await admitted();
    const cookie = `${TOKEN_COOKIE}=${token}`;
    assert.equal((await both({ cookie })).status, 200);
    node.clock.advance(61);
    assert.equal((await both({ cookie })).status, 401);
  });
});
