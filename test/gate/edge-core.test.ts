// The edge's shared rules (deploy/nginx/anteroom-edge-core.js) under Node: the hostile paths table, route
// matching as the gate's, cookies and claims. The same file runs inside nginx (edge-nginx.test.ts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HOSTILE_PATHS } from './hostile-paths.ts';

interface Route {
  host?: string;
  path: string;
  event_id: string;
  bypass_paths: string[];
}
interface Core {
  normalisePath(raw: string): string | null;
  matchRoute(routes: Route[], host: string | undefined, path: string): Route | null;
  bypassed(route: Route, path: string): boolean;
  cookieValue(header: string | undefined, name: string): string | undefined;
  parseEdgeCookie(value: string | undefined, decode: (segment: string) => string): { alg: string; kid: string; claims: Record<string, unknown>; signingInput: string; signature: string; mac: string } | null;
  sameString(a: string, b: string): boolean;
  claimsVerdict(claims: Record<string, unknown>, eventId: string, nowSec: number): 'admit' | 'renew' | 'refuse';
  waitingLocation(path: string, query: string): string;
}

const CORE_URL = new URL('../../deploy/nginx/anteroom-edge-core.js', import.meta.url).href;
const core = ((await import(CORE_URL)) as { default: Core }).default;

describe('the edge rules shared by nginx and CloudFront', () => {
  it('normalises every path of the hostile table as the table says', () => {
    for (const [raw, normalised] of HOSTILE_PATHS) assert.equal(core.normalisePath(raw), normalised, raw);
  });

  it('matches the longest route, host-specific first, by whole segments and case-insensitively', () => {
    const routes: Route[] = [
      { host: 'shop.test', path: '/admin', event_id: 'Admin', bypass_paths: [] },
      { path: '/admin', event_id: 'Any', bypass_paths: [] },
      { host: 'shop.test', path: '/', event_id: 'Shop', bypass_paths: ['/health'] },
    ];
    assert.equal(core.matchRoute(routes, 'shop.test', '/admin/x')?.event_id, 'Admin');
    assert.equal(core.matchRoute(routes, 'SHOP.test:8443', '/ADMIN')?.event_id, 'Admin');
    assert.equal(core.matchRoute(routes, 'shop.test', '/administrator')?.event_id, 'Shop');
    assert.equal(core.matchRoute(routes, 'other.test', '/admin')?.event_id, 'Any');
    assert.equal(core.matchRoute(routes, 'other.test', '/x'), null);
    assert.equal(core.matchRoute(routes, undefined, '/x'), null);
    const shop = core.matchRoute(routes, 'shop.test', '/health/live') as Route;
    assert.equal(core.bypassed(shop, '/Health/live'), true);
    assert.equal(core.bypassed(shop, '/healthy'), false);
  });

  it('reads cookies, edge cookie claims and the waiting page address', () => {
    assert.equal(core.cookieValue('a=1; anteroom_edge=x.y.z; anteroom_edge=other', 'anteroom_edge'), 'x.y.z');
    assert.equal(core.cookieValue('xanteroom_edge=1', 'anteroom_edge'), undefined);
    assert.equal(core.cookieValue(undefined, 'anteroom_edge'), undefined);
    const decode = (s: string) => Buffer.from(s, 'base64url').toString();
    const encode = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const parsed = core.parseEdgeCookie(`${encode({ alg: 'ES256', kid: 'k1' })}.${encode({ aud: 'Shop', sub: 'r', exp: 100 })}.sig.mac`, decode);
    assert.equal(parsed?.kid, 'k1');
    assert.equal(parsed?.signature, 'sig');
    assert.equal(parsed?.mac, 'mac');
    assert.equal(core.parseEdgeCookie(`${encode({ alg: 'ES256', kid: 'k1' })}.${encode({ aud: 'Shop', sub: 'r', exp: 100 })}.sig`, decode), null);
    assert.equal(core.parseEdgeCookie('a.b.c.d', decode), null);
    assert.equal(core.parseEdgeCookie(`${encode({ alg: 'ES256' })}.${encode({})}.sig.mac`, decode), null);
    assert.equal(core.parseEdgeCookie(`x.${'a'.repeat(3000)}.y.z`, decode), null);
    assert.equal(core.sameString('abc', 'abc'), true);
    assert.equal(core.sameString('abc', 'abd'), false);
    assert.equal(core.sameString('abc', 'ab'), false);
    assert.equal(core.claimsVerdict({ aud: 'Shop', sub: 'r', exp: 100 }, 'Shop', 99), 'admit');
    assert.equal(core.claimsVerdict({ aud: 'Shop', sub: 'r', exp: 100 }, 'Shop', 100), 'renew');
    assert.equal(core.claimsVerdict({ aud: 'Other', sub: 'r', exp: 100 }, 'Shop', 1), 'refuse');
    assert.equal(core.claimsVerdict({ aud: 'Shop', exp: 100 }, 'Shop', 1), 'refuse');
    assert.equal(core.waitingLocation('/a b', 'x=1&y=2'), '/_anteroom/wait?to=%2Fa%20b%3Fx%3D1%26y%3D2');
  });
});
