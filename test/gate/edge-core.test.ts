// The edge's shared rules (deploy/nginx/anteroom-edge-core.js) under Node: the hostile paths table, route
// matching as the gate's, cookies and claims. The same file runs inside nginx (edge-nginx.test.ts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHmac } from 'node:crypto';
import { HOSTILE_PATHS } from './hostile-paths.ts';
import { EdgeKeys, signEdgeCookie } from '../../src/gate/edge-keys.ts';
import type { SecretStore } from '../../src/domain/ports/store.ts';

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
  macClaims(value: string | undefined, keys: { header: string; hmac?: string }[], mac: (key: string, input: string) => string, decode: (segment: string) => string): Record<string, unknown> | null;
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

  it('the fast check: a cookie Anteroom signed, found by its header, MAC checked before its claims are read', async () => {
    let stored: string | undefined;
    const secrets = {
      claimSecret: async (_name: string, value: string) => (stored ??= value),
      replaceSecret: async (_name: string, _old: string, value: string) => (stored = value),
    } as unknown as SecretStore;
    const edgeKeys = new EdgeKeys(secrets, Date.now);
    const key = await edgeKeys.current();
    const other = (await edgeKeys.rotate())[1]!;
    const keys: { header: string; hmac?: string }[] = [{ header: key.header, hmac: key.hmac }, { header: other.header, hmac: other.hmac }];
    const mac = (k: string, input: string) => createHmac('sha256', k).update(input).digest('base64url');
    const decode = (s: string) => Buffer.from(s, 'base64url').toString();
    const claims = { aud: 'Shop', sub: 'r1', iat: 1, exp: 2 };
    const full = signEdgeCookie(key, claims);
    const macOnly = signEdgeCookie(other, claims, true);
    assert.deepEqual(core.macClaims(full, keys, mac, decode), claims);
    assert.equal(macOnly.split('.')[2], '', 'no ES256 signature');
    assert.deepEqual(core.macClaims(macOnly, keys, mac, decode), claims);
    const [header, payload, signature, tag] = full.split('.') as [string, string, string, string];
    const swapped = Buffer.from(JSON.stringify({ ...claims, aud: 'Admin' })).toString('base64url');
    const refused: [string, string | undefined, typeof keys][] = [
      ['no cookie', undefined, keys],
      ['payload swapped', `${header}.${swapped}.${signature}.${tag}`, keys],
      ['header of the other key', `${other.header}.${payload}.${signature}.${tag}`, keys],
      ['MAC cut', `${header}.${payload}.${signature}.${tag.slice(1)}`, keys],
      ['five parts', `${full}.x`, keys],
      ['three parts', `${header}.${payload}.${tag}`, keys],
      ['key unknown', full, [keys[1]!]],
      ['key without HMAC (public only)', full, [{ header: key.header }]],
      ['too long', `${header}.${payload}.${'a'.repeat(2100)}.${tag}`, keys],
    ];
    for (const [name, value, known] of refused) assert.equal(core.macClaims(value, known, mac, decode), null, name);
    // A MAC that verifies over a payload that is not JSON: no claims, no exception.
    const junk = `${header}.${Buffer.from('not json').toString('base64url')}`;
    assert.equal(core.macClaims(`${junk}..${mac(key.hmac, junk)}`, keys, mac, decode), null);
  });
});
