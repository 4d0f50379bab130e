// Forward auth trusts only what the proxy sets. The shipped recipes run verbatim (only their addresses
// changed) — nginx (deploy/nginx/anteroom-forward-auth.conf) and Caddy (deploy/caddy/Caddyfile), both from
// Debian — in front of a real origin, and a visitor tries every way past them: their own URI and host headers,
// hosts no route names, dot segments, encoded and upper-cased spellings of another room's paths, encoded
// slashes, bypass look-alikes. The origin must see none of those requests.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { caddyMissing, startCaddy } from '../support/caddy.ts';
import { freePort, startNginx } from '../support/nginx.ts';
import { rawRequest, type RawAnswer } from '../support/raw-http.ts';
import { gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

const NGINX_RECIPE = new URL('../../deploy/nginx/anteroom-forward-auth.conf', import.meta.url);
const CADDY_RECIPE = new URL('../../deploy/caddy/Caddyfile', import.meta.url);
const HOST = 'shop.test';

interface Proxy {
  port: number;
  stop(): Promise<void>;
}

/** The cookie header of the Set-Cookie lines of an answer (name=value only). */
function cookiesOf(answer: RawAnswer): string {
  return (answer.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]).join('; ');
}

/** The path and query of a Location (nginx makes it absolute). */
function locationPath(answer: RawAnswer): string {
  const location = new URL(String(answer.headers.location), 'http://x.test');
  return `${location.pathname}${location.search}`;
}

async function startRooms(origin: Origin, overrides: Parameters<typeof startGateNode>[1] = {}): Promise<GateNode> {
  return startGateNode(
    [
      gatedRoom('Home', origin.url, { gate: { origin: origin.url, routes: [{ host: HOST, path: '/' }], queueing_status_code: 200, bypass: { paths: ['/health'] } } }),
      gatedRoom('Shop', origin.url, { gate: { origin: origin.url, routes: [{ host: HOST, path: '/shop' }], queueing_status_code: 200 } }),
      gatedRoom('Members', origin.url, { gate: { origin: origin.url, routes: [{ host: 'docs.test', path: '/members' }], queueing_status_code: 200 } }),
    ],
    overrides,
  );
}

/** A token cookie of `eventId`, taken on the gate's waiting page for `to` (as a visitor gets it through the proxy). */
async function admittedCookie(node: GateNode, eventId: string, to: string): Promise<string> {
  const gatePort = Number(new URL(node.gateUrl).port);
  const wait = `/_anteroom/wait?to=${encodeURIComponent(to)}`;
  const queued = await rawRequest(gatePort, 'GET', wait, { host: HOST, accept: 'application/json' });
  const state = JSON.parse(queued.body) as { queue_number: number; serving_counter: number };
  await node.admin('POST', '/increment_serving_counter', { event_id: eventId, increment_by: state.queue_number - state.serving_counter });
  const admitted = await rawRequest(gatePort, 'GET', wait, { host: HOST, cookie: cookiesOf(queued) });
  assert.equal(admitted.status, 303);
  const token = cookiesOf(admitted).split('; ').find((pair) => pair.startsWith(`${TOKEN_COOKIE}=`));
  assert.ok(token);
  return token;
}

function spoofSuite(name: string, startProxy: (node: GateNode, origin: Origin) => Promise<Proxy>, skip: string | false = false): void {
  describe(`${name}: a visitor cannot get past forward auth`, { skip }, () => {
    let origin: Origin;
    let node: GateNode;
    let proxy: Proxy;
    let home: string;

    before(async () => {
      origin = await startOrigin();
      node = await startRooms(origin);
      proxy = await startProxy(node, origin);
      home = await admittedCookie(node, 'Home', '/');
    });
    after(async () => {
      await proxy?.stop();
      await node?.stop();
      await origin?.close();
    });

    const via = (target: string, headers: Record<string, string> = {}) => rawRequest(proxy.port, 'GET', target, { host: HOST, ...headers });

    /** Each target, sent with the headers given, is sent to the waiting page (or refused) and reaches nothing. */
    async function kept(targets: string[], headers: Record<string, string> = {}, statuses = [302]): Promise<RawAnswer[]> {
      const from = origin.seen.length;
      const answers: RawAnswer[] = [];
      for (const target of targets) {
        const answer = await via(target, headers);
        assert.ok(statuses.includes(answer.status), `${target} ${JSON.stringify(headers)}: ${answer.status} ${answer.body.slice(0, 200)}`);
        answers.push(answer);
      }
      assert.deepEqual(origin.seen.slice(from).map((seen) => seen.url), [], 'nothing reached the site');
      return answers;
    }

    it('the recipe works: the waiting page for a visitor without a place, the site for an admitted one', async () => {
      const [first] = await kept(['/product/9?q=1']);
      assert.equal(locationPath(first!), '/_anteroom/wait?to=%2Fproduct%2F9%3Fq%3D1');
      const page = await via('/product/9?q=1', { cookie: home });
      assert.equal(page.status, 200);
      assert.match(page.body, /Origin page \/product\/9\?q=1/);
    });

    it('a URI header the visitor sends never decides (X-Forwarded-Uri, X-Original-URI: a bypass path)', async () => {
      for (const header of ['X-Forwarded-Uri', 'X-Original-URI', 'X-Original-Url', 'X-Rewrite-Url']) {
        const [answer] = await kept(['/secret'], { [header]: '/health' });
        assert.equal(locationPath(answer!), '/_anteroom/wait?to=%2Fsecret', header);
      }
      await kept(['/secret'], { 'X-Forwarded-Uri': '/health', 'X-Original-URI': '/health' });
    });

    it('a host no route names is refused (403), whatever the visitor says; X-Forwarded-Host is the proxy\'s', async () => {
      await kept(['/secret'], { host: 'evil.test' }, [403]);
      // An absolute-form target names its own host: refused whichever way the proxy reads it.
      await kept(['http://evil.test/secret', 'http://shop.test/health/../secret'], {}, [302, 400, 403]);
      await kept(['/secret', '/health/../secret'], { host: 'evil.test', 'x-forwarded-host': HOST, 'x-original-uri': '/health' }, [403]);
      const [answer] = await kept(['/secret'], { 'x-forwarded-host': 'docs.test', 'x-forwarded-uri': '/about' });
      assert.equal(locationPath(answer!), '/_anteroom/wait?to=%2Fsecret', 'the proxy overwrote the visitor\'s X-Forwarded-Host');
      // A host some route names, on a path no room covers: the site's own, let through.
      const from = origin.seen.length;
      assert.equal((await via('/about', { host: 'docs.test' })).status, 200);
      assert.deepEqual(origin.seen.slice(from).map((seen) => seen.url), ['/about']);
      await kept(['/members/x', '/%6Dembers/x', '/MEMBERS/x'], { host: 'docs.test' });
    });

    it('dot segments are resolved before matching: /health/../secret is not a bypass', async () => {
      await kept(['/health/../secret', '/health/%2e%2e/secret', '/health/.%2E/secret', '/health/./../secret']);
    });

    it('bypass paths match whole segments', async () => {
      await kept(['/healthz', '/health-admin/delete', '/HEALTH']);
      const from = origin.seen.length;
      assert.equal((await via('/health')).status, 200);
      assert.equal((await via('/health/live')).status, 200);
      assert.equal(origin.seen.length, from + 2);
    });

    it('a cookie of / does not open /shop by any spelling', async () => {
      const answers = await kept(['/shop/secret', '/./shop/secret', '/%2e/shop/secret', '/SHOP/secret', '/%73hop/secret', '//shop/secret', '/x/../shop/secret', '/shop;jsessionid=1/secret'], { cookie: home });
      for (const answer of answers) assert.match(locationPath(answer), /^\/_anteroom\/wait\?to=%2F(shop|SHOP|shop%3Bjsessionid%3D1)%2Fsecret$/);
    });

    it('encoded slashes and backslashes are refused (403), with a cookie or without', async () => {
      await kept(['/shop%2Fsecret', '/%2Fshop/secret', '/shop%5Csecret', '/..;/shop/secret', '/%252e%252e/shop/secret'], { cookie: home }, [403]);
      await kept(['/health%2F..%2Fsecret'], {}, [403]);
    });

    it('a path first asked for as //evil.example/ comes back as a local path', async () => {
      const [answer] = await kept(['//evil.example/']);
      assert.equal(locationPath(answer!), '/_anteroom/wait?to=%2Fevil.example%2F');
      const back = await via('/_anteroom/wait?to=%2F%2Fevil.example%2F', { cookie: home });
      assert.equal(back.status, 303);
      assert.equal(back.headers.location, '/evil.example/');
    });
  });
}

spoofSuite('nginx (deploy/nginx/anteroom-forward-auth.conf)', async (node, origin) => {
  const port = await freePort();
  const recipe = readFileSync(NGINX_RECIPE, 'utf8')
    .replace('server 127.0.0.1:8081;', `server ${new URL(node.gateUrl).host};`)
    .replace('server 127.0.0.1:3000;', `server ${new URL(origin.url).host};`)
    .replace('listen 8000;', `listen 127.0.0.1:${port};`);
  const nginx = await startNginx(recipe, port);
  return { port, stop: () => nginx.stop() };
});

spoofSuite(
  'Caddy (deploy/caddy/Caddyfile)',
  async (node, origin) => {
    const port = await freePort();
    const recipe = readFileSync(CADDY_RECIPE, 'utf8')
      .replaceAll('127.0.0.1:8081', new URL(node.gateUrl).host)
      .replaceAll('127.0.0.1:3000', new URL(origin.url).host)
      .replace(':8000 {', `:${port} {`);
    const caddy = await startCaddy(recipe, port);
    return { port, stop: () => caddy.stop() };
  },
  caddyMissing,
);

describe('GET /_anteroom/check reads the original URI from one configured header', () => {
  let origin: Origin;

  before(async () => {
    origin = await startOrigin();
  });
  after(async () => {
    await origin?.close();
  });

  const check = (node: GateNode, headers: Record<string, string | string[]>, method = 'GET', path = '/_anteroom/check') =>
    new Promise<RawAnswer>((resolve, reject) => {
      // Repeated headers need node:http's array form.
      const req = request({ host: '127.0.0.1', port: Number(new URL(node.gateUrl).port), method, path, headers, agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it('lets through with 200 (Envoy takes no other 2xx); by default reads X-Original-URI; the header missing, repeated or without X-Forwarded-Host is a 403 in the JSON error shape', async () => {
    const node = await startRooms(origin);
    try {
      const host = { 'x-forwarded-host': HOST };
      assert.equal((await check(node, { ...host, 'x-original-uri': '/health' })).status, 200);
      assert.equal((await check(node, { ...host, 'x-original-uri': '/secret' })).status, 401);
      const refusedHeaders: Record<string, string | string[]>[] = [
        { ...host, 'x-forwarded-uri': '/health' },
        { ...host, 'x-original-uri': ['/health', '/secret'] },
        { ...host, 'x-original-uri': '/health, /secret' },
        { 'x-original-uri': '/health', host: HOST },
        { 'x-forwarded-host': [HOST, 'evil.test'], 'x-original-uri': '/health' },
        { 'x-forwarded-host': `${HOST}, evil.test`, 'x-original-uri': '/health' },
        { ...host, 'x-original-uri': 'http://evil.test/health' },
        { ...host, 'x-original-uri': '/health%2F..%2Fsecret' },
      ];
      for (const headers of refusedHeaders) {
        const answer = await check(node, headers);
        assert.equal(answer.status, 403, JSON.stringify(headers));
        assert.deepEqual(Object.keys(JSON.parse(answer.body) as object), ['error']);
        assert.equal(answer.headers['cache-control'], 'no-store');
      }
      // Envoy's ext_authz sends the original method, and with path_prefix the original path below /check.
      assert.equal((await check(node, { ...host, 'x-original-uri': '/health' }, 'POST', '/_anteroom/check/secret')).status, 200);
      assert.equal((await check(node, { ...host, 'x-original-uri': '/secret' }, 'DELETE', '/_anteroom/check/health')).status, 401);
    } finally {
      await node.stop();
    }
  });

  it('--forward-auth-uri-header X-Forwarded-Uri (Traefik): that header decides, X-Original-URI is ignored', async () => {
    const node = await startRooms(origin, { forwardAuthUriHeader: 'X-Forwarded-Uri' });
    try {
      const host = { 'x-forwarded-host': HOST };
      assert.equal((await check(node, { ...host, 'x-forwarded-uri': '/health' })).status, 200);
      assert.equal((await check(node, { ...host, 'x-forwarded-uri': '/secret', 'x-original-uri': '/health' })).status, 401);
      assert.equal((await check(node, { ...host, 'x-original-uri': '/health' })).status, 403);
    } finally {
      await node.stop();
    }
  });
});
