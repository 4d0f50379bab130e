// The one normalised path the gate decides on and sends on (src/gate/normalise-path.ts), and the route and
// bypass matching that reads it: case-insensitive routes, whole-segment bypass in the case written.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BypassRules } from '../../src/gate/bypass.ts';
import { normaliseTarget, safeLocalPath } from '../../src/gate/normalise-path.ts';
import { RouteTable } from '../../src/gate/route-match.ts';
import { HOSTILE_PATHS } from './hostile-paths.ts';
import { eventSettings } from '../support/node.ts';

const target = (value: string): string | undefined => {
  const normal = normaliseTarget(value);
  return normal.ok ? normal.target : undefined;
};

describe('normaliseTarget', () => {
  it('gives the path of the shared table of hostile paths (the edge\'s normaliser reads the same table)', () => {
    for (const [raw, normalised] of HOSTILE_PATHS) {
      const normal = normaliseTarget(raw);
      assert.equal(normal.ok ? normal.path : null, normalised, raw);
    }
  });

  it('removes dot segments after decoding escaped unreserved characters, merges empty segments, keeps the query', () => {
    const cases: [string, string][] = [
      ['/', '/'],
      ['/shop/cart', '/shop/cart'],
      ['/./shop/secret', '/shop/secret'],
      ['/%2e/shop/secret', '/shop/secret'],
      ['/%2E%2E/shop/secret', '/shop/secret'],
      ['/.%2e/shop/secret', '/shop/secret'],
      ['/a/b/../../shop/secret', '/shop/secret'],
      ['/../../shop', '/shop'],
      ['/%73hop/secret', '/shop/secret'],
      ['/%7Euser/%5F%2D', '/~user/_-'],
      ['//ws', '/ws'],
      ['//evil.example/', '/evil.example/'],
      ['/a//b///c', '/a/b/c'],
      ['/shop/', '/shop/'],
      ['/shop/.', '/shop/'],
      ['/shop/..', '/'],
      ['/shop/x/..?q=1', '/shop/?q=1'],
      ['/a%3bb/%c3%a9', '/a%3Bb/%C3%A9'],
      ['/a%25/%2541', '/a%25/%2541'],
      ['/a b"<>`{}', '/a%20b%22%3C%3E%60%7B%7D'],
      // Node hands raw bytes over as latin1 characters: UTF-8 "é" arrives as two.
      ['/caf\u00c3\u00a9', '/caf%C3%A9'],
      ['/x?a=%zz&b=../..&c=//d', '/x?a=%zz&b=../..&c=//d'],
      ['/SHOP/Secret', '/SHOP/Secret'],
      ['/..a/.b/...', '/..a/.b/...'],
    ];
    for (const [given, expected] of cases) assert.equal(target(given), expected, given);
  });

  it('refuses what servers read differently: encoded / and \\, \\, control characters, #, bad escapes, not a path', () => {
    for (const bad of [
      '/shop%2Fsecret',
      '/shop%2fsecret',
      '/shop%5Csecret',
      '/shop\\secret',
      '/\\evil.example/',
      '/a%00b',
      '/a%0Ab',
      '/a%7Fb',
      '/a\u0001b',
      '/a#b',
      '/x?y#z',
      '/%zz',
      '/%4',
      '/%C3',
      '/%FF',
      '/caf\u00e9',
      '/\u0100',
      '/%252e%252e/shop',
      '/a/%252F/b',
      '/a%255Cb',
      '/..;/shop/secret',
      '/public/.;/x',
      '/public/..%3B/shop',
      'http://evil.example/x',
      '*',
      '',
      'shop',
      `/${'a'.repeat(9000)}`,
    ]) {
      const normal = normaliseTarget(bad);
      assert.equal(normal.ok, false, JSON.stringify(bad));
      if (!normal.ok) assert.ok(normal.reason.length > 0);
    }
  });

  it('is what the origin receives: a fixed point of WHATWG URL parsing (reply-from\'s) and of itself', () => {
    const samples = ['/./a/%2e%2e/b', '/%41%7e/x%20y', '//ws', '/a b/<c>', '/%c3%a9/.%2E/z/', '/a/%252e%252e/b', '/x;y/z'];
    // Every printable ASCII character and escape of one byte, alone and around dots.
    for (let code = 0x20; code < 0x7f; code++) {
      const char = String.fromCharCode(code);
      const hex = code.toString(16).padStart(2, '0');
      samples.push(`/a${char}b/${char}`, `/a%${hex}b/.%${hex}`, `/%${hex}%${hex}/..`);
    }
    for (const sample of samples) {
      const normal = normaliseTarget(sample);
      if (!normal.ok) continue;
      assert.equal(new URL(normal.path, 'http://origin.test').pathname, normal.path, sample);
      assert.equal(target(normal.target), normal.target, `idempotent: ${sample}`);
      assert.ok(!normal.path.startsWith('//') && !normal.path.includes('\\'), sample);
    }
  });
});

describe('safeLocalPath', () => {
  it('is always a path on this host: normalised, never //host, /\\host or a scheme', () => {
    assert.equal(safeLocalPath('/cart?x=1'), '/cart?x=1');
    assert.equal(safeLocalPath('//evil.example/'), '/evil.example/');
    assert.equal(safeLocalPath('/./%2F%2Fevil.example'), undefined);
    for (const bad of ['/\\evil.example', '/%5Cevil.example', 'https://evil.example/', '\\\\evil.example', 'cart', '/a\nb', 42, undefined]) {
      assert.equal(safeLocalPath(bad), undefined, String(bad));
    }
  });
});

describe('routes and bypass on the normalised path', () => {
  const room = (id: string, routes: { host?: string; path: string }[]) =>
    eventSettings(id, { gate: { origin: 'http://127.0.0.1:3000', routes, queueing_status_code: 200 } });
  const table = new RouteTable([room('Home', [{ host: 'shop.test', path: '/' }]), room('Shop', [{ host: 'shop.test', path: '/Shop/./' }]), room('Any', [{ path: '/tickets' }])]);
  const id = (host: string, path: string) => table.match(host, path)?.room.event_id;

  it('routes match ignoring case, by whole segment; routes are read through the same rules', () => {
    assert.equal(id('shop.test', '/shop/secret'), 'Shop');
    assert.equal(id('shop.test', '/SHOP/secret'), 'Shop', 'an upper-cased path does not escape into the / room');
    assert.equal(id('shop.test', '/sHoP/'), 'Shop');
    assert.equal(id('shop.test', '/shopping'), 'Home');
    assert.equal(id('shop.test', '/shop;jsessionid=1/secret'), 'Shop', 'segment parameters are not part of the choice');
    assert.equal(id('shop.test', '/;x/shop/secret'), 'Shop');
    assert.equal(id('shop.test', '/SHOP;x/y'), 'Shop');
    assert.equal(id('other.test', '/TICKETS/1'), 'Any');
  });

  it('a host is covered when a route names it or a route names no host', () => {
    assert.equal(table.coversHost('shop.test'), true);
    assert.equal(table.coversHost('SHOP.test:8000'), true);
    assert.equal(table.coversHost('evil.test'), true, 'the /tickets route names no host');
    const named = new RouteTable([room('Home', [{ host: 'shop.test', path: '/' }])]);
    assert.equal(named.coversHost('evil.test'), false);
    assert.equal(named.coversHost(undefined), false);
  });

  it('bypass paths match whole segments, in the case written', () => {
    const rules = new BypassRules({ paths: ['/health', '/static/', '/./assets//'] });
    const bypassed = (path: string) => rules.matches({ path, ip: '', headers: {} });
    assert.equal(bypassed('/health'), true);
    assert.equal(bypassed('/health/live'), true);
    assert.equal(bypassed('/healthz'), false);
    assert.equal(bypassed('/health-admin/delete'), false);
    assert.equal(bypassed('/health.json'), false);
    assert.equal(bypassed('/HEALTH'), false, 'bypass is exact about case: the doubtful spelling queues');
    assert.equal(bypassed('/health;x'), false, 'nor does it drop segment parameters');
    assert.equal(bypassed('/static/app.js'), true);
    assert.equal(bypassed('/static'), false);
    assert.equal(bypassed('/assets/x.css'), true, 'a configured path is read normalised');
  });
});
