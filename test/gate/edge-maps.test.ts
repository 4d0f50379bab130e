// Verify at the edge: the nginx maps Anteroom generates (GET /private/edge_config?format=nginx, edgeNginxMaps)
// decide, with no JavaScript, which requests take the fast path and for which room. They must agree with the
// rules the njs module runs (deploy/nginx/anteroom-edge-core.js): a path they call plain is its own normalised
// form, and the room they give is matchRoute's (or "*" for a bypass path). Run inside Debian's nginx, on the
// hostile paths table and a routes table with hosts, trailing slashes, bypass paths and routes that can never
// cover a plain path.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { edgeNginxMaps, isPlainPath, EDGE_MAP_BYPASS, type EdgeConfig, type EdgeRoute } from '../../src/gate/edge-config.ts';
import { rawRequest } from '../support/raw-http.ts';
import { freePort, startNginx, type Nginx } from '../support/nginx.ts';
import { HOSTILE_PATHS } from './hostile-paths.ts';

interface Core {
  normalisePath(raw: string): string | null;
  matchRoute(routes: EdgeRoute[], host: string | undefined, path: string): EdgeRoute | null;
  bypassed(route: EdgeRoute, path: string): boolean;
}
const CORE_URL = new URL('../../deploy/nginx/anteroom-edge-core.js', import.meta.url).href;
const core = ((await import(CORE_URL)) as { default: Core }).default;

// In the order Anteroom sorts them (edgeConfig): the maps keep that order, as matchRoute does.
const ROUTES: EdgeRoute[] = [
  { host: 'shop.test', path: '/caf%c3%a9/menu', event_id: 'Cafe', bypass_paths: [] },
  { host: 'shop.test', path: '/admin/', event_id: 'Admin', bypass_paths: ['/admin/public'] },
  { host: 'shop.test:8443', path: '/tls', event_id: 'Tls', bypass_paths: [] },
  { path: '/a.b+c$(d)', event_id: 'Odd', bypass_paths: [] },
  { path: '/api', event_id: 'Api', bypass_paths: ['/api/health', '/api/%7euser'] },
  { host: 'shop.test', path: '/', event_id: 'Shop', bypass_paths: ['/health', '/static/'] },
  { path: '/', event_id: 'Any', bypass_paths: ['/healthz'] },
];
const CONFIG: EdgeConfig = { version: 1, routes: ROUTES, keys: [] };

const PATHS = [
  ...HOSTILE_PATHS.map(([raw]) => raw).filter((raw) => raw.startsWith('/')),
  '/admin', '/admin/', '/admin/x', '/ADMIN/X', '/administrator', '/admin/public', '/admin/public/x', '/admin/publicity',
  '/tls', '/tls/x', '/a.b+c$(d)', '/a.b+c$(d)/x', '/aXb+c$(d)', '/api', '/API/v1', '/apis', '/api/health', '/api/healthz',
  '/health', '/healthz', '/health/x', '/static', '/static/', '/static/x', '/caf%C3%A9/menu', '/.well-known/x', '/a/.b',
  '/a/b.', '/a..b', '/x?y=/../admin', '/admin?x=1', '/%7Euser', '/api/~user', '/admin#x', '/a"b', '/a<b>', '/a|b', '/a[b]', '/a^b',
];
const HOSTS = ['shop.test', 'SHOP.TEST', 'shop.test:8443', 'other.test'];

describe('the generated nginx maps agree with the njs rules', () => {
  let nginx: Nginx;

  before(async () => {
    const port = await freePort();
    nginx = await startNginx(
      `${edgeNginxMaps(CONFIG)}
server {
    listen 127.0.0.1:${port};
    location / {
        return 200 "$anteroom_edge_room|$anteroom_plain_path";
    }
}`,
      port,
      { main: 'pcre_jit on;' },
    );
  });
  after(async () => {
    await nginx?.stop();
  });

  it('a plain path is its own normalised form (isPlainPath, the hostile paths table)', () => {
    for (const [raw, normalised] of HOSTILE_PATHS) {
      if (isPlainPath(raw)) assert.equal(normalised, raw, raw);
    }
    for (const path of PATHS) {
      const bare = path.split('?')[0] as string;
      if (isPlainPath(bare)) assert.equal(core.normalisePath(bare), bare, path);
    }
    // What the fast path is for: ordinary paths are plain.
    for (const path of ['/', '/product/9', '/a/b/', '/a.b/c-d_e~f', '/@x/!$&\'()*+,;=:']) assert.ok(isPlainPath(path), path);
    for (const path of ['/a%20b', '//a', '/./a', '/a/..', '/.well-known', '/a\\b', '/é', 'a', '']) assert.ok(!isPlainPath(path), path);
  });

  it('inside nginx: the plain path, and the room of host and path as matchRoute gives it (or "*" for a bypass path)', async () => {
    let compared = 0;
    const rooms = new Set<string>();
    for (const host of HOSTS) {
      // nginx's $host, which both read: lower case, without the port.
      const name = host.toLowerCase().replace(/:\d+$/, '');
      for (const target of PATHS) {
        const answer = await rawRequest(nginx.port, 'GET', target, { host });
        if (answer.status === 400) {
          // nginx's own parser refused it (a ".." above the root, a malformed or %00 escape): no map ran, and none
          // would have called it plain.
          assert.ok(!isPlainPath(target.split('?')[0] as string), target);
          continue;
        }
        assert.equal(answer.status, 200, `${host} ${target}`);
        const [room, plain] = answer.body.split('|');
        const path = target.split('?')[0] as string;
        const expectedPlain = isPlainPath(path) ? path : '';
        assert.equal(plain, expectedPlain, `plain path of ${target}`);
        const route = expectedPlain ? core.matchRoute(ROUTES, name, path) : null;
        const expectedRoom = !route ? '' : core.bypassed(route, path) ? EDGE_MAP_BYPASS : route.event_id;
        assert.equal(room, expectedRoom, `room of ${host} ${target}`);
        rooms.add(room as string);
        compared++;
      }
    }
    assert.ok(compared > 150, `${compared} requests compared`);
    // Not all defaults: every room a plain path can reach was reached, and bypass paths; a route with a %-escape
    // (no plain path under it) and one naming a port ($host has none) never are.
    assert.deepEqual([...rooms].sort(), ['', '*', 'Admin', 'Any', 'Api', 'Odd', 'Shop']);
    assert.doesNotMatch(edgeNginxMaps(CONFIG), /"Cafe"/, 'the route with a %-escape is left out of the maps');
  });
});
