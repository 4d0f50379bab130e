// Verify at the edge: Debian's nginx with njs runs the recipe of docs/edge.md (deploy/nginx/anteroom-edge.conf,
// only its addresses and directories changed) in front of a real origin, with Anteroom's gate behind a proxy
// that counts every request nginx makes to it.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { EdgeKeys, signEdgeCookie, type EdgeKey } from '../../src/gate/edge-keys.ts';
import { EDGE_COOKIE } from '../../src/gate/edge-renewal.ts';
import { rawRequest, type RawAnswer } from '../support/raw-http.ts';
import { freePort, startNginx, type Nginx } from '../support/nginx.ts';
import { HOSTILE_PATHS } from './hostile-paths.ts';
import { wallClock } from '../support/node.ts';
import { gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

/** Paths of the table that nginx itself refuses (400) before the njs module sees them. */
const NGINX_REFUSES = new Set(['/../admin', '/%2e%2e/admin']);
const DEPLOY = new URL('../../deploy/nginx/', import.meta.url);
const JS_MODULE = '/usr/lib/nginx/modules/ngx_http_js_module.so';

interface Counter {
  url: string;
  seen: string[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy that records each request's method and target: in front of Anteroom's gate port (`target` a URL),
 * or, listening on unix socket `listenPath`, in front of nginx's verdict server (`target` its socket path).
 */
async function countingProxy(target: string, listenPath?: string): Promise<Counter> {
  const upstream = listenPath ? { socketPath: target } : { host: new URL(target).hostname, port: new URL(target).port };
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const out = httpRequest({ ...upstream, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  if (listenPath) server.listen(listenPath);
  else server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  // nginx's workers (another user when the tests run as root) connect to it.
  if (listenPath) chmodSync(listenPath, 0o666);
  return {
    url: listenPath ? listenPath : `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function setCookies(answer: RawAnswer): Map<string, string> {
  const found = new Map<string, string>();
  const lines = answer.headers['set-cookie'] ?? [];
  for (const line of lines) {
    const pair = line.split(';')[0] ?? '';
    const eq = pair.indexOf('=');
    found.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return found;
}

describe('nginx verifies admission at the edge (njs)', () => {
  let origin: Origin;
  let node: GateNode;
  let counter: Counter;
  /** Between nginx's fast path and its verdict server (njs): each cache miss. */
  let verdicts: Counter;
  let nginx: Nginx & { pid: number | undefined };
  let port: number;
  let jsDir: string;
  /** A Shop visitor's admission cookie (anteroom_token), claimed through the waiting page. */
  let token: string;
  let requestId: string;

  const anteroomCalls = (prefix: string): number => counter.seen.filter((line) => line.startsWith(`GET ${prefix}`)).length;
  const get = (target: string, headers: Record<string, string> = {}): Promise<RawAnswer> =>
    rawRequest(port, 'GET', target, { host: 'shop.test', ...headers });
  const nowSec = (): number => Math.floor(Date.now() / 1000);
  const edgeCookie = (key: EdgeKey, claims: Partial<{ aud: string; sub: string; iat: number; exp: number }> = {}): string =>
    signEdgeCookie(key, { aud: 'Shop', sub: requestId, iat: nowSec(), exp: nowSec() + 60, ...claims });

  /** The key Anteroom signs with now (read from the store each time: a rotation test changes it). */
  const currentKey = (): Promise<EdgeKey> => new EdgeKeys(node.store, Date.now).current();

  async function exportConfig(): Promise<void> {
    const answer = await node.admin('GET', '/edge_config');
    assert.equal(answer.status, 200);
    writeFileSync(join(jsDir, 'anteroom-edge-config.js'), await answer.text());
    const maps = await node.admin('GET', '/edge_config?format=nginx');
    assert.equal(maps.status, 200);
    writeFileSync(join(jsDir, 'anteroom-edge-maps.conf'), await maps.text());
  }

  before(async () => {
    origin = await startOrigin();
    const gate = (routes: { host?: string; path: string }[], extra: object = {}) => ({ origin: origin.url, routes, queueing_status_code: 200, ...extra });
    node = await startGateNode(
      [
      // Admits every arrival at once (state off); its edge cookies admit for 30 s.
      gatedRoom('Shop', origin.url, { state: 'off', gate: gate([{ host: 'shop.test', path: '/' }], { bypass: { paths: ['/health'] }, edge_renewal_interval: 30 }) }),
      // A room that keeps everyone waiting, on a path of the same host.
      gatedRoom('Admin', origin.url, { gate: gate([{ host: 'shop.test', path: '/admin' }]) }),
      gatedRoom('Other', origin.url, { state: 'off', gate: gate([{ host: 'other.test', path: '/' }]) }),
      ],
      {},
      // nginx reads the wall clock: so does Anteroom here.
      { clock: wallClock() },
    );
    counter = await countingProxy(node.gateUrl);
    jsDir = mkdtempSync(join(tmpdir(), 'anteroom-edge-js-'));
    // nginx's workers (another user when the tests run as root) write the renewal cache under it.
    chmodSync(jsDir, 0o755);
    for (const file of ['anteroom-edge.js', 'anteroom-edge-core.js']) copyFileSync(new URL(file, DEPLOY), join(jsDir, file));
    await exportConfig();
    port = await freePort();
    // The verdict server listens on its own socket; the fast path's socket is a counting proxy in front of it.
    const recipe = recipeAt(jsDir, port).replace(`listen unix:${join(jsDir, 'cache', 'verdict.sock')};`, `listen unix:${join(jsDir, 'cache', 'verdict-njs.sock')};`);
    nginx = await startNginx(recipe, port, { main: `load_module ${JS_MODULE};\npcre_jit on;` });
    verdicts = await countingProxy(join(jsDir, 'cache', 'verdict-njs.sock'), join(jsDir, 'cache', 'verdict.sock'));

    ({ token, requestId } = await admittedVisitor());
  });

  /**
   * The recipe's anteroom-edge.conf with only its addresses and directories changed: `dir` holds the modules and
   * the exported files, `dir`/cache is the directory nginx writes.
   */
  function recipeAt(dir: string, listen: number): string {
    mkdirSync(join(dir, 'cache'), { mode: 0o755 });
    return readFileSync(new URL('anteroom-edge.conf', DEPLOY), 'utf8')
      .replace('server 127.0.0.1:8081;', `server ${new URL(counter.url).host};`)
      .replace('server 127.0.0.1:3000;', `server ${new URL(origin.url).host};`)
      .replace('listen 8000;', `listen 127.0.0.1:${listen};`)
      .replaceAll('/etc/nginx/anteroom', dir)
      .replaceAll('/var/cache/nginx/anteroom', join(dir, 'cache'));
  }

  /** A visitor of Shop: sent to the waiting page, admitted there at once, back with the admission cookie. */
  async function admittedVisitor(): Promise<{ token: string; requestId: string }> {
    const first = await get('/product/9?q=1');
    assert.equal(first.status, 302);
    const location = new URL(first.headers.location ?? '', 'http://x');
    assert.equal(`${location.pathname}${location.search}`, '/_anteroom/wait?to=%2Fproduct%2F9%3Fq%3D1');
    const waiting = await get('/_anteroom/wait?to=%2Fproduct%2F9%3Fq%3D1');
    assert.equal(waiting.status, 303);
    const admission = setCookies(waiting).get(TOKEN_COOKIE) ?? '';
    assert.ok(admission);
    return { token: admission, requestId: (JSON.parse(Buffer.from(admission.split('.')[1] ?? '', 'base64url').toString()) as { sub: string }).sub };
  }
  after(async () => {
    await nginx?.stop();
    await counter?.close();
    await verdicts?.close();
    await node?.stop();
    await origin?.close();
    if (jsDir) rmSync(jsDir, { recursive: true, force: true });
  });

  it('an admitted visitor renews once, then reaches the site with no call to Anteroom', async () => {
    const renewalsBefore = anteroomCalls('/_anteroom/renew');
    const first = await get('/product/9?q=1', { cookie: `${TOKEN_COOKIE}=${token}` });
    assert.equal(first.status, 200);
    assert.match(first.body, /Origin page \/product\/9\?q=1/);
    const edge = setCookies(first).get(EDGE_COOKIE);
    assert.ok(edge, 'the renewal set an edge cookie');
    assert.equal(anteroomCalls('/_anteroom/renew'), renewalsBefore + 1);
    const claims = JSON.parse(Buffer.from(edge.split('.')[1] ?? '', 'base64url').toString()) as { aud: string; sub: string; exp: number; iat: number };
    assert.equal(claims.aud, 'Shop');
    assert.equal(claims.sub, requestId);
    assert.equal(claims.exp - claims.iat, 30);
    assert.equal(edge.split('.')[2], '', 'nginx holds HMAC keys: it asked for a cookie without an ES256 signature (mac_only)');

    const calls = counter.seen.length;
    const seenByOrigin = origin.seen.length;
    for (let i = 0; i < 20; i++) {
      const page = await get(`/product/${i}`, { cookie: `${TOKEN_COOKIE}=${token}; ${EDGE_COOKIE}=${edge}` });
      assert.equal(page.status, 200);
      assert.equal(page.headers['set-cookie'], undefined);
    }
    assert.equal(counter.seen.length, calls, 'Anteroom saw none of the 20 requests');
    assert.equal(origin.seen.length, seenByOrigin + 20);
  });

  it('the fast path: plain paths of the room with one cookie cost one verdict of njs, then none; another cookie has its own', async () => {
    const key = await currentKey();
    const mine = edgeCookie(key, { sub: 'fast-path-visitor-a' });
    const calls = counter.seen.length;
    const asked = verdicts.seen.length;
    for (let i = 0; i < 10; i++) {
      const page = await get(`/fast/${i}?q=${i}`, { cookie: `${EDGE_COOKIE}=${mine}` });
      assert.equal(page.status, 200);
      assert.equal(origin.seen.at(-1)?.url, `/fast/${i}?q=${i}`, 'the site gets the path that was checked');
    }
    assert.equal(verdicts.seen.length, asked + 1, 'njs was asked once, then nginx answered from its cache');
    // Another visitor's cookie (the cache is keyed by the cookie's value): its own verdict, then cached too.
    const theirs = edgeCookie(key, { sub: 'fast-path-visitor-b' });
    assert.equal((await get('/fast/b', { cookie: `${EDGE_COOKIE}=${theirs}` })).status, 200);
    assert.equal((await get('/fast/b2', { cookie: `${EDGE_COOKIE}=${theirs}` })).status, 200);
    assert.equal(verdicts.seen.length, asked + 2);
    // The absolute form: the host is the target's, the origin gets the origin form of the path that was checked.
    assert.equal((await get('http://shop.test/fast/absolute?q=1', { cookie: `${EDGE_COOKIE}=${mine}`, host: 'other.test' })).status, 200);
    assert.equal(origin.seen.at(-1)?.url, '/fast/absolute?q=1');
    // A bypass path and a path for njs to normalise take no verdict.
    assert.equal((await get('/health/x')).status, 200);
    assert.equal((await get('/fast/%61', { cookie: `${EDGE_COOKIE}=${mine}` })).status, 200);
    assert.equal(origin.seen.at(-1)?.url, '/fast/a');
    assert.equal(verdicts.seen.length, asked + 2);
    assert.equal(counter.seen.length, calls, 'and no call to Anteroom');
  });

  it('a refused cookie is never cached nor answered from another cookie\'s or room\'s verdict', async () => {
    const key = await currentKey();
    const valid = edgeCookie(key, { sub: 'cached-visitor' });
    assert.equal((await get('/cached/1', { cookie: `${EDGE_COOKIE}=${valid}` })).status, 200);
    const [header, payload, signature, mac = ''] = valid.split('.');
    const later = Buffer.from(JSON.stringify({ aud: 'Shop', sub: 'cached-visitor', iat: nowSec(), exp: nowSec() + 3600 })).toString('base64url');
    const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    const forged: [string, string, string][] = [
      ['its MAC changed', '/cached/1', `${header}.${payload}.${signature}.${flipped}`],
      ['its MAC on other claims', '/cached/1', `${header}.${later}.${signature}.${mac}`],
      ['a character added', '/cached/1', `${valid}x`],
      ['in another room (Admin, same host)', '/admin/1', valid],
    ];
    const seenByOrigin = origin.seen.length;
    for (const [name, path, cookie] of forged) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const asked = verdicts.seen.length;
        const answer = await get(path, { cookie: `${EDGE_COOKIE}=${cookie}` });
        assert.equal(answer.status, 302, name);
        assert.equal(verdicts.seen.length, asked + 1, `${name}: njs asked again, the "no" was not cached`);
      }
    }
    assert.equal(origin.seen.length, seenByOrigin, 'the site saw none of them');
    const asked = verdicts.seen.length;
    assert.equal((await get('/cached/2', { cookie: `${EDGE_COOKIE}=${valid}` })).status, 200);
    assert.equal(verdicts.seen.length, asked, 'the valid cookie is still answered from the cache');
  });

  it('a cached verdict ends with its cookie\'s renewal time', async () => {
    // Three seconds: the first two requests come well before it, even on a loaded machine.
    const exp = nowSec() + 3;
    const short = edgeCookie(await currentKey(), { sub: 'short-visitor', exp });
    const asked = verdicts.seen.length;
    assert.equal((await get('/short/1', { cookie: `${EDGE_COOKIE}=${short}` })).status, 200);
    assert.equal((await get('/short/2', { cookie: `${EDGE_COOKIE}=${short}` })).status, 200);
    assert.equal(verdicts.seen.length, asked + 1);
    // What is tested is the passing of time itself: the cookie's renewal time.
    while (nowSec() < exp) await new Promise((resolve) => setTimeout(resolve, 50));
    const after = await get('/short/3', { cookie: `${EDGE_COOKIE}=${short}` });
    assert.equal(after.status, 302, 'not admitted from the cache at its renewal time');
    assert.equal(verdicts.seen.length, asked + 2);
  });

  it('forged, expired, other-room and unknown-key edge cookies without an admission cookie go to the waiting page', async () => {
    const key = await currentKey();
    const valid = edgeCookie(key);
    const [header, payload, signature, mac] = valid.split('.');
    const swapped = Buffer.from(JSON.stringify({ aud: 'Shop', sub: requestId, iat: nowSec(), exp: nowSec() + 3600 })).toString('base64url');
    const cases: [string, string][] = [
      ['garbage', 'not-a-jws'],
      ['bad HMAC, good signature', `${header}.${payload}.${signature}.${Buffer.alloc(32, 1).toString('base64url')}`],
      ['no HMAC', `${header}.${payload}.${signature}`],
      ['claims swapped', `${header}.${swapped}.${signature}.${mac}`],
      ['expired', edgeCookie(key, { exp: nowSec() - 1 })],
      ['other room', edgeCookie(key, { aud: 'Other' })],
      ['unknown key', edgeCookie({ ...key, kid: 'edge-unknown' })],
    ];
    const calls = counter.seen.length;
    for (const [name, cookie] of cases) {
      const answer = await get('/product/1', { cookie: `${EDGE_COOKIE}=${cookie}` });
      assert.equal(answer.status, 302, name);
      assert.match(answer.headers.location ?? '', /\/_anteroom\/wait\?to=%2Fproduct%2F1$/, name);
    }
    assert.equal(counter.seen.length, calls, 'refused without asking Anteroom');
    // The control: the same valid cookie is let through.
    assert.equal((await get('/product/1', { cookie: `${EDGE_COOKIE}=${valid}` })).status, 200);
  });

  it('past its renewal time, a burst of requests makes one call to Anteroom, and all get through', async () => {
    // A visitor of their own: renewal answers are kept per admission cookie.
    const visitor = await admittedVisitor();
    const stale = edgeCookie(await currentKey(), { sub: visitor.requestId, exp: nowSec() - 1 });
    const before = anteroomCalls('/_anteroom/renew');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => get(`/burst/${i}`, { cookie: `${TOKEN_COOKIE}=${visitor.token}; ${EDGE_COOKIE}=${stale}` })),
    );
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.ok(setCookies(answer).get(EDGE_COOKIE), 'each answer carries the fresh cookie');
    }
    assert.equal(anteroomCalls('/_anteroom/renew'), before + 1);
  });

  it('a visitor without a place is sent to the waiting page and waits there', async () => {
    const seenByOrigin = origin.seen.length;
    const first = await get('/admin/panel', { cookie: `${TOKEN_COOKIE}=${token}` });
    assert.equal(first.status, 302, 'a Shop admission does not admit to Admin');
    const location = new URL(first.headers.location ?? '', 'http://x');
    assert.equal(`${location.pathname}${location.search}`, '/_anteroom/wait?to=%2Fadmin%2Fpanel');
    assert.equal(first.headers['cache-control'], 'no-store');
    const page = await get(`${location.pathname}${location.search}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /anteroom-gate/);
    assert.equal(origin.seen.length, seenByOrigin);
  });

  it('a bypass path goes through; a host no room protects is refused, not passed on', async () => {
    const calls = counter.seen.length;
    const health = await get('/health');
    assert.equal(health.status, 200);
    assert.match(health.body, /Origin page \/health/);
    const elsewhere = await get('/product/1', { host: 'evil.test' });
    assert.equal(elsewhere.status, 404);
    assert.deepEqual(JSON.parse(elsewhere.body), { error: 'No waiting room protects this URL' });
    assert.equal(counter.seen.length, calls);
  });

  it('spoofs change nothing: X-Forwarded-*, Host, dot segments, encoded slashes, case', async () => {
    const edge = edgeCookie(await currentKey());
    const cookie = `${EDGE_COOKIE}=${edge}`;
    // X-Forwarded-* and X-Original-URI from the client are not read, and not passed on.
    const echoed = await get('/echo', { cookie, 'x-forwarded-host': 'other.test', 'x-forwarded-for': '6.6.6.6', 'x-original-uri': '/admin', 'x-forwarded-uri': '/admin' });
    assert.equal(echoed.status, 200);
    const seen = (JSON.parse(echoed.body) as { headers: Record<string, string> }).headers;
    assert.equal(seen['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen['x-forwarded-host'], 'shop.test');
    assert.equal(seen.host, 'shop.test');
    const refusedToAdmin = await get('/admin/x', { cookie, 'x-forwarded-host': 'other.test', 'x-original-uri': '/product' });
    assert.equal(refusedToAdmin.status, 302);
    // Host names the room: a Shop cookie does not admit to other.test.
    assert.equal((await get('/product/1', { cookie, host: 'other.test' })).status, 302);
    // Ways to reach /admin with a Shop cookie: each checked as /admin (waiting page) or refused (400).
    const seenByOrigin = origin.seen.length;
    for (const target of ['/public/../admin/x', '/%2e%2e/admin', '/public/%2E%2E/admin', '//admin', '/ADMIN/x', '/%61dmin', '/Admin;x/../admin']) {
      const answer = await get(target, { cookie });
      assert.ok(answer.status === 302 || answer.status === 400, `${target}: ${answer.status}`);
      if (answer.status === 302) assert.match(answer.headers.location ?? '', /to=%2Fadmin/i, target);
    }
    for (const target of ['/admin%2Fx', '/x/..%2Fadmin', '/x%5C..%5Cadmin', '/a%00b']) {
      assert.equal((await get(target, { cookie })).status, 400, target);
    }
    assert.equal(origin.seen.length, seenByOrigin, 'the origin saw none of them');
  });

  it('inside nginx, the hostile paths table gives the normalised path (checked, and forwarded to the site) or 400', async () => {
    const edge = edgeCookie(await currentKey());
    for (const [raw, table] of HOSTILE_PATHS) {
      // nginx's own request parser refuses a ".." above the root before the module runs: stricter, still 400.
      const normalised = NGINX_REFUSES.has(raw) ? null : table;
      const answer = await get(raw, { cookie: `${EDGE_COOKIE}=${edge}` });
      if (raw.startsWith('http://')) {
        // The absolute form: nginx takes the host from it (RFC 9112 §3.2.2) and the module sees only the path, so
        // this is other.test's /admin, checked as such (a Shop cookie does not admit to Other).
        assert.equal(answer.status, 302, raw);
        continue;
      }
      if (normalised === null) {
        assert.equal(answer.status, 400, `${raw} is refused`);
        continue;
      }
      if (normalised.startsWith('/admin')) {
        // Admin's path: a Shop cookie is sent to the waiting page, which names the normalised path.
        assert.equal(answer.status, 302, raw);
        assert.match(answer.headers.location ?? '', new RegExp(`to=${encodeURIComponent(normalised)}$`), raw);
        continue;
      }
      assert.equal(answer.status, 200, raw);
      assert.equal(origin.seen.at(-1)?.url, normalised, raw);
    }
  });

  it('a WebSocket upgrade of an admitted visitor reaches the site; without a cookie it is refused', async () => {
    const edge = edgeCookie(await currentKey());
    const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: 'shop.test', cookie: `${EDGE_COOKIE}=${edge}` } });
    const [greeting] = (await once(socket, 'message')) as [Buffer];
    assert.equal(String(greeting), 'hello 127.0.0.1');
    socket.send('ping');
    const [echo] = (await once(socket, 'message')) as [Buffer];
    assert.equal(String(echo), 'echo ping');
    socket.close();
    const refused = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: 'shop.test' } });
    // Ending a refused handshake makes ws report an error of its own: expected here.
    refused.on('error', () => {});
    const [, response] = (await once(refused, 'unexpected-response')) as [unknown, { statusCode: number }];
    assert.equal(response.statusCode, 302);
    refused.terminate();
  });

  it('the origin\'s Anteroom-Command: revoke clears both cookies in that response and closes the session; update_session ends the visit at the next renewal', async () => {
    const revoked = await admittedVisitor();
    const edge = edgeCookie(await currentKey(), { sub: revoked.requestId });
    const revoking = await get('/revoke', { cookie: `${TOKEN_COOKIE}=${revoked.token}; ${EDGE_COOKIE}=${edge}` });
    assert.equal(revoking.status, 200);
    assert.equal(revoking.headers['anteroom-command'], undefined);
    const cleared = revoking.headers['set-cookie'] ?? [];
    assert.ok(cleared.some((line) => line.startsWith(`${TOKEN_COOKIE}=;`) && /Max-Age=0/.test(line)));
    assert.ok(cleared.some((line) => line.startsWith(`${EDGE_COOKIE}=;`) && /Max-Age=0/.test(line)));
    // nginx tells Anteroom after the response (post_action): the session closes; renewing it is refused.
    const renewAtGate = () =>
      rawRequest(Number(new URL(node.gateUrl).port), 'GET', '/_anteroom/renew?event_id=Shop', { host: 'shop.test', cookie: `${TOKEN_COOKIE}=${revoked.token}` });
    for (let attempt = 0; (await renewAtGate()).status !== 401; attempt++) {
      assert.ok(attempt < 200, 'the revoked session was not closed');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.equal(counter.seen.filter((line) => line === 'POST /_anteroom/revoke').length, 1, 'one close, for the one revoking response');

    // update_session takes effect at the visitor's next renewal: until then their edge cookie admits (the bound).
    const visitor = await admittedVisitor();
    const fresh = edgeCookie(await currentKey(), { sub: visitor.requestId });
    assert.equal((await node.admin('POST', '/update_session', { event_id: 'Shop', request_id: visitor.requestId, status: 1 })).status, 200);
    assert.equal((await get('/product/2', { cookie: `${TOKEN_COOKIE}=${visitor.token}; ${EDGE_COOKIE}=${fresh}` })).status, 200);
    const stale = edgeCookie(await currentKey(), { sub: visitor.requestId, exp: nowSec() - 1 });
    assert.equal((await get('/product/3', { cookie: `${TOKEN_COOKIE}=${visitor.token}; ${EDGE_COOKIE}=${stale}` })).status, 302);
  });

  it('key rotation: the previous key admits until the next rotation, the new one once nginx reloaded the file', async () => {
    const old = await currentKey();
    const rotated = await node.admin('POST', '/edge_config/rotate_key');
    assert.equal(rotated.status, 200);
    const [previous, next] = ((await rotated.json()) as { keys: { kid: string }[] }).keys;
    assert.equal(previous?.kid, old.kid);
    const fresh = (await new EdgeKeys(node.store, Date.now).all()).find((k) => k.kid === next?.kid) as EdgeKey;
    assert.ok(fresh);
    await reload();
    const calls = counter.seen.length;
    // Both keys admit, without Anteroom.
    assert.equal((await get('/product/1', { cookie: `${EDGE_COOKIE}=${edgeCookie(old)}` })).status, 200);
    assert.equal((await get('/product/1', { cookie: `${EDGE_COOKIE}=${edgeCookie(fresh)}` })).status, 200);
    assert.equal(counter.seen.length, calls);
    // The next rotation drops the first key: its cookies no longer admit.
    assert.equal((await node.admin('POST', '/edge_config/rotate_key')).status, 200);
    await reload();
    assert.equal((await get('/product/1', { cookie: `${EDGE_COOKIE}=${edgeCookie(old)}` })).status, 302);
    assert.equal((await get('/product/1', { cookie: `${EDGE_COOKIE}=${edgeCookie(fresh)}` })).status, 200);
  });

  it('POST bodies reach the site on both paths (fast check, and the full check with a renewal)', async () => {
    const visitor = await admittedVisitor();
    const fresh = edgeCookie(await currentKey(), { sub: visitor.requestId });
    // Within nginx's client_body_buffer_size: the test's nginx cannot write temp files as its worker user.
    const body = 'x'.repeat(8_000);
    const fastPath = await rawRequest(port, 'POST', '/echo', { host: 'shop.test', cookie: `${EDGE_COOKIE}=${fresh}`, 'content-type': 'text/plain' }, body);
    assert.equal((JSON.parse(fastPath.body) as { bodyBytes: number }).bodyBytes, body.length);
    const renewed = await rawRequest(port, 'POST', '/echo', { host: 'shop.test', cookie: `${TOKEN_COOKIE}=${visitor.token}`, 'content-type': 'text/plain' }, body);
    assert.equal(renewed.status, 200);
    assert.equal((JSON.parse(renewed.body) as { bodyBytes: number }).bodyBytes, body.length);
    assert.ok(setCookies(renewed).get(EDGE_COOKIE));
  });

  it('GET /_anteroom/renew: 404 for a room without a gate, 401 without admission; with `to`, a 303 back or to the waiting page', async () => {
    const renew = (query: string, cookie?: string) =>
      rawRequest(Number(new URL(node.gateUrl).port), 'GET', `/_anteroom/renew?${query}`, { host: 'shop.test', ...(cookie ? { cookie } : {}) });
    const unknown = await renew('event_id=Nope');
    assert.equal(unknown.status, 404);
    assert.deepEqual(JSON.parse(unknown.body), { error: 'No waiting room protects this URL' });
    const refused = await renew('event_id=Shop', `${TOKEN_COOKIE}=forged.token.here`);
    assert.equal(refused.status, 401);
    assert.deepEqual(JSON.parse(refused.body), { error: 'No valid admission to this room' });
    assert.equal(refused.headers['x-accel-expires'], '0');
    const visitor = await admittedVisitor();
    const back = await renew('event_id=Shop&to=%2Fproduct%2F1%3Fq%3D1', `${TOKEN_COOKIE}=${visitor.token}`);
    assert.equal(back.status, 303);
    assert.equal(back.headers.location, '/product/1?q=1');
    assert.ok(setCookies(back).get(EDGE_COOKIE));
    const offsite = await renew('event_id=Shop&to=%2F%2Fevil.test%2F', `${TOKEN_COOKIE}=${visitor.token}`);
    // The one normalised path (src/gate/normalise-path.ts): "//evil.test/" is the local path "/evil.test/".
    assert.equal(offsite.headers.location, '/evil.test/', 'never another host');
    const waiting = await renew('event_id=Shop&to=%2Fproduct%2F1');
    assert.equal(waiting.status, 303);
    assert.equal(waiting.headers.location, '/_anteroom/wait?to=%2Fproduct%2F1');
  });

  it('with public keys only (?keys=public), nginx checks the ES256 signature, still without Anteroom', async () => {
    const exported = await node.admin('GET', '/edge_config?keys=public');
    const text = await exported.text();
    assert.doesNotMatch(text, /"hmac"/);
    const dir = mkdtempSync(join(tmpdir(), 'anteroom-edge-public-'));
    chmodSync(dir, 0o755);
    for (const file of ['anteroom-edge.js', 'anteroom-edge-core.js']) copyFileSync(new URL(file, DEPLOY), join(dir, file));
    writeFileSync(join(dir, 'anteroom-edge-config.js'), text);
    copyFileSync(join(jsDir, 'anteroom-edge-maps.conf'), join(dir, 'anteroom-edge-maps.conf'));
    const publicPort = await freePort();
    const recipe = recipeAt(dir, publicPort);
    const publicNginx = await startNginx(recipe, publicPort, { main: `load_module ${JS_MODULE};\npcre_jit on;` });
    try {
      const valid = edgeCookie(await currentKey());
      const [header, payload, signature, mac] = valid.split('.');
      const otherSignature = edgeCookie(await currentKey(), { iat: nowSec() - 5 }).split('.')[2];
      const calls = counter.seen.length;
      const at = (cookie: string) => rawRequest(publicPort, 'GET', '/product/1', { host: 'shop.test', cookie: `${EDGE_COOKIE}=${cookie}` });
      assert.equal((await at(valid)).status, 200);
      assert.equal((await at(`${header}.${payload}.${otherSignature}.${mac}`)).status, 302, 'another payload\'s signature');
      assert.equal((await at(`${header}.${payload}.${Buffer.alloc(64, 1).toString('base64url')}.${mac}`)).status, 302);
      assert.equal((await at(`${header}.${payload}.${signature}.x`)).status, 200, 'the HMAC is not what it checks');
      assert.equal(counter.seen.length, calls);
    } finally {
      await publicNginx.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** Exports the config again and reloads nginx: done once every worker running before has exited. */
  async function reload(): Promise<void> {
    await exportConfig();
    const master = nginx.pid as number;
    const workers = (): string[] => execFileSync('ps', ['-o', 'pid=', '--ppid', String(master)], { encoding: 'utf8' }).split('\n').map((l) => l.trim()).filter(Boolean);
    const before = new Set(workers());
    process.kill(master, 'SIGHUP');
    for (let attempt = 0; ; attempt++) {
      const now = workers();
      if (now.length > 0 && now.every((pid) => !before.has(pid))) return;
      if (attempt > 400) throw new Error('nginx did not reload');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
});
