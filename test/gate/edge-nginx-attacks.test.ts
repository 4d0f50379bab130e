// Verify at the edge, attacked: a hostile visitor against the real nginx running the recipe of docs/edge.md
// (test/gate/edge-nginx-harness.ts), trying to reach the site without a valid admission for the room and path
// the site serves, or through another cookie's cached verdict.

import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { edgeNginxMaps, type EdgeConfig } from '../../src/gate/edge-config.ts';
import { EDGE_COOKIE } from '../../src/gate/edge-renewal.ts';
import { normaliseTarget } from '../../src/gate/normalise-path.ts';
import { rawRequest } from '../support/raw-http.ts';
import { TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { nowSec, setCookies, startEdgeHarness, type EdgeHarness } from './edge-nginx-harness.ts';

/** Whether a normalised path is Admin's (shop.test /admin, by whole segments, case-insensitive). */
const adminPath = (path: string): boolean => /^\/admin(?:\/|$)/i.test(path);

describe('the edge attacked (nginx + njs, the fast path and its verdict cache)', () => {
  let h: EdgeHarness;
  before(async () => {
    h = await startEdgeHarness();
  });
  after(async () => {
    await h?.stop();
  });

  it('each path is refused where the gate refuses it and reaches the site as the gate would send it (a Shop cookie never reaches Admin)', async () => {
    const cookie = `${EDGE_COOKIE}=${h.edgeCookie(await h.currentKey())}`;
    // "#": a URL parser (WHATWG URL, Express) reads /admin#x as /admin; the gate refuses it. Characters a URL
    // parser escapes, escapes that are not UTF-8 (%C0%AF: an overlong "/"), a dot segment with encoded parameters.
    const targets = [
      '/admin#x', '/%61dmin#x', '/shop#/../admin', '/admin#', '/a"b', '/a<b>', '/a`b', '/a{b}', '/a^b', '/a|b', '/a[b]',
      '/x%C0%AF', '/x%C0%AF..%C0%AFadmin', '/x/..%3B/admin', '/x/.%3bfoo/admin', '/a%e9', '/%61"x', '/p?q=#x',
    ];
    for (const target of targets) {
      const gate = normaliseTarget(target);
      const seen = h.origin.seen.length;
      const answer = await h.get(target, { cookie });
      if (!gate.ok) {
        assert.equal(answer.status, 400, `${target}: the gate refuses it (${gate.reason})`);
        assert.equal(h.origin.seen.length, seen, `${target}: the site never sees it`);
      } else if (adminPath(gate.path)) {
        assert.equal(answer.status, 302, `${target}: Admin's path`);
      } else {
        assert.equal(answer.status, 200, target);
        assert.equal(h.origin.seen.at(-1)?.url, gate.target, `${target}: the site gets the gate's normalised target`);
      }
    }
  });

  it('maps exported apart from the njs config (older routes) never let the fast path admit by their rooms: njs decides', async () => {
    // The maps of before Admin's route was added (the operator exported only the njs config since): the fast path
    // would find Shop for /admin/x and its verdict would admit a Shop cookie there.
    const config = await (await h.node.admin('GET', '/edge_config')).text();
    const current = JSON.parse(config.slice(config.indexOf('{'), config.lastIndexOf('}') + 1)) as EdgeConfig;
    const stale = edgeNginxMaps({ ...current, routes: current.routes.filter((route) => route.event_id !== 'Admin') });
    const edge = await h.startNginx({ config, maps: stale });
    try {
      const cookie = `${EDGE_COOKIE}=${h.edgeCookie(await h.currentKey())}`;
      const seen = h.origin.seen.length;
      const answer = await rawRequest(edge.port, 'GET', '/admin/x', { host: 'shop.test', cookie });
      assert.equal(answer.status, 302, 'Admin keeps a Shop visitor waiting');
      assert.equal(h.origin.seen.length, seen);
      // Shop's own paths still pass (through njs while the files disagree).
      assert.equal((await rawRequest(edge.port, 'GET', '/product/1', { host: 'shop.test', cookie })).status, 200);
    } finally {
      await edge.stop();
    }
  });

  it('a refused request gets the project\'s JSON error, and no page names nginx\'s version', async () => {
    // njs refuses the path (a malformed escape), nginx's parser refuses it (.. above the root), no room (404).
    for (const [target, status] of [['/a%zz', 400], ['/x#y', 400], ['/../admin', 400], ['/x', 404]] as const) {
      const answer = await h.get(target, target === '/x' ? { host: 'nowhere.test' } : {});
      assert.equal(answer.status, status, target);
      assert.match(answer.headers['content-type'] ?? '', /^application\/json/, target);
      assert.equal(typeof (JSON.parse(answer.body) as { error: unknown }).error, 'string', target);
      assert.doesNotMatch(`${answer.headers.server ?? ''} ${answer.body}`, /nginx\/\d/, target);
    }
  });

  it('what held: headers a client sends to steer the check, cookie spellings, hosts, methods and another room\'s cached verdict', async () => {
    const key = await h.currentKey();
    const shop = h.edgeCookie(key, { sub: 'held-visitor' });
    const other = h.edgeCookie(key, { aud: 'Other', sub: 'held-visitor' });
    const seen = h.origin.seen.length;
    // The verdict server's own headers, the cache's, and the usual rewrites from the client: none reaches the check.
    const steering = {
      'x-anteroom-room': 'Other', 'x-anteroom-edge': other, 'x-anteroom-digest': 'x', 'x-accel-expires': '@9999999999',
      'x-original-uri': '/', 'x-forwarded-uri': '/', 'x-forwarded-host': 'other.test', 'x-rewrite-url': '/',
    };
    assert.equal((await h.get('/admin/x', { ...steering, cookie: `${EDGE_COOKIE}=${shop}` })).status, 302);
    assert.equal((await h.get('/product/1', steering)).status, 302, 'no cookie: the waiting page, whatever the headers say');
    // Other's cookie on Shop's host, after Other's verdict was cached (other.test): another room, another key.
    assert.equal((await h.get('/p', { host: 'other.test', cookie: `${EDGE_COOKIE}=${other}` })).status, 200);
    assert.equal((await h.get('/p', { cookie: `${EDGE_COOKIE}=${other}` })).status, 302);
    // The cache key's separator (a space) inside the cookie, before or after a valid value of Shop's.
    for (const value of [`Shop ${shop}`, `${shop} Shop`, `${shop}%20x`, encodeURIComponent(`${shop} `), `"${shop}"`]) {
      assert.equal((await h.get('/admin/x', { cookie: `${EDGE_COOKIE}=${value}` })).status, 302, value);
    }
    // Two cookie headers, the first a forgery: refused (nginx reads the first), never the other's verdict.
    const two = await new Promise<number>((resolve, reject) => {
      const socket = connect(h.port, '127.0.0.1', () =>
        socket.write(`GET /admin/x HTTP/1.1\r\nHost: shop.test\r\nCookie: ${EDGE_COOKIE}=${shop}x\r\nCookie: ${EDGE_COOKIE}=${shop}\r\nConnection: close\r\n\r\n`),
      );
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('end', () => resolve(Number(text.split(' ')[1])));
      socket.on('error', reject);
    });
    assert.equal(two, 302);
    // Host spellings of shop.test (port, trailing dot, case) and the absolute form: still Shop's /admin → Admin's.
    for (const host of ['shop.test:80', 'shop.test.', 'SHOP.TEST']) {
      assert.equal((await h.get('/admin/x', { host, cookie: `${EDGE_COOKIE}=${shop}` })).status, 302, host);
    }
    assert.equal((await h.get('http://shop.test:1/admin/x', { host: 'other.test', cookie: `${EDGE_COOKIE}=${shop}` })).status, 302);
    // HEAD takes the same check.
    assert.equal((await rawRequest(h.port, 'HEAD', '/admin/x', { host: 'shop.test', cookie: `${EDGE_COOKIE}=${shop}` })).status, 302);
    assert.equal(h.origin.seen.length, seen + 1, 'the site saw only Other\'s own request');
  });

  it('a renewal answer nginx cached is not handed out at its cookie\'s renewal time (the bound of revoke and update_session)', async () => {
    const visitor = await h.admittedVisitor('quick.test');
    const at = (path: string, cookie: string) => h.get(path, { host: 'quick.test', cookie });
    const first = await at('/q/1', `${TOKEN_COOKIE}=${visitor.token}`);
    assert.equal(first.status, 200);
    const edge = setCookies(first).get(EDGE_COOKIE) ?? '';
    const exp = (JSON.parse(Buffer.from(edge.split('.')[1] ?? '', 'base64url').toString()) as { exp: number }).exp;
    // What is tested is the passing of time itself: the cookie's renewal time.
    while (nowSec() < exp) await new Promise((resolve) => setTimeout(resolve, 50));
    const renewed = await at('/q/2', `${TOKEN_COOKIE}=${visitor.token}; ${EDGE_COOKIE}=${edge}`);
    const now = nowSec();
    assert.equal(renewed.status, 200);
    const fresh = setCookies(renewed).get(EDGE_COOKIE) ?? '';
    const freshExp = (JSON.parse(Buffer.from(fresh.split('.')[1] ?? '', 'base64url').toString()) as { exp: number }).exp;
    assert.ok(freshExp > now, `the renewal handed out a cookie due at ${freshExp}, at ${now}: Anteroom was not asked again`);
  });

  it('the caches, whose keys hold visitors\' cookies, are readable by nginx\'s workers only', async () => {
    const visitor = await h.admittedVisitor();
    assert.equal((await h.get('/perm/1', { cookie: `${EDGE_COOKIE}=${h.edgeCookie(await h.currentKey(), { sub: 'perm-visitor' })}` })).status, 200);
    assert.equal((await h.get('/perm/2', { cookie: `${TOKEN_COOKIE}=${visitor.token}` })).status, 200);
    let files = 0;
    for (const cache of ['verdicts', 'renewals']) {
      for (const entry of readdirSync(join(h.dir, 'cache', cache), { recursive: true, withFileTypes: true })) {
        const mode = statSync(join(entry.parentPath, entry.name)).mode & 0o777;
        assert.equal(mode, entry.isDirectory() ? 0o700 : 0o600, join(entry.parentPath, entry.name));
        if (!entry.isDirectory()) files++;
      }
    }
    assert.ok(files >= 2, 'a verdict and a renewal were cached');
  });
});
