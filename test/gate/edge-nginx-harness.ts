// The edge recipe of docs/edge.md running for real, for tests that attack it: Debian's nginx with njs runs
// deploy/nginx/anteroom-edge.conf (only its addresses and directories changed) in front of a real origin, with
// Anteroom's gate behind a proxy that counts every request nginx makes to it, and a second counting proxy
// between nginx's fast path and its verdict server (each verdict-cache miss). Rooms: Shop (shop.test /, admits
// at once, 30 s renewal interval, bypass /health), Admin (shop.test /admin, keeps everyone waiting), Other
// (other.test /, admits at once), Quick (quick.test /, admits at once, 5 s renewal interval).

import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { EdgeKeys, signEdgeCookie, type EdgeKey } from '../../src/gate/edge-keys.ts';
import { rawRequest, type RawAnswer } from '../support/raw-http.ts';
import { freePort, startNginx, type Nginx } from '../support/nginx.ts';
import { wallClock } from '../support/node.ts';
import { gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

export const DEPLOY = new URL('../../deploy/nginx/', import.meta.url);
export const JS_MODULE = '/usr/lib/nginx/modules/ngx_http_js_module.so';

export interface Counter {
  url: string;
  seen: string[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy that records each request's method and target: in front of Anteroom's gate port (`target` a URL),
 * or, listening on unix socket `listenPath`, in front of nginx's verdict server (`target` its socket path).
 */
export async function countingProxy(target: string, listenPath?: string): Promise<Counter> {
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

export function setCookies(answer: RawAnswer): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of answer.headers['set-cookie'] ?? []) {
    const pair = line.split(';')[0] ?? '';
    const eq = pair.indexOf('=');
    found.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return found;
}

export interface EdgeHarness {
  origin: Origin;
  node: GateNode;
  /** Every request nginx made to Anteroom. */
  counter: Counter;
  /** Every request of the fast path to njs's verdict server (a verdict-cache miss). */
  verdicts: Counter;
  nginx: Nginx & { pid: number | undefined };
  port: number;
  /** The directory of the modules and exported files; `dir`/cache is the one nginx writes. */
  dir: string;
  get(target: string, headers?: Record<string, string>): Promise<RawAnswer>;
  /** An edge cookie of `key` (Shop, 60 s, unless `claims` say otherwise). */
  edgeCookie(key: EdgeKey, claims?: Partial<{ aud: string; sub: string; iat: number; exp: number }>): string;
  currentKey(): Promise<EdgeKey>;
  /** A visitor of Shop (or of the room of `host`), admitted through the waiting page: their admission cookie. */
  admittedVisitor(host?: string): Promise<{ token: string; requestId: string }>;
  /** Another nginx running the recipe with these exported files (its own directory, port and caches). */
  startNginx(files: EdgeFiles): Promise<EdgeNginx>;
  stop(): Promise<void>;
}

/** The two files exported from GET /private/edge_config (the njs module's config, and ?format=nginx: the maps). */
export interface EdgeFiles {
  config: string;
  maps: string;
}

export interface EdgeNginx {
  nginx: Nginx & { pid: number | undefined };
  port: number;
  /** The modules and exported files; `dir`/cache is the directory nginx writes. */
  dir: string;
  /** Every request of the fast path to njs's verdict server (a verdict-cache miss). */
  verdicts: Counter;
  /** Stops nginx and the counting proxy, and removes the directory. */
  stop(): Promise<void>;
}

/** The recipe with only its addresses and directories changed, run by Debian's nginx with `files`. */
export async function startEdgeNginx(origin: Origin, anteroom: Counter, files: EdgeFiles): Promise<EdgeNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-edge-attack-'));
  // nginx's workers (another user when the tests run as root) write the caches under it.
  chmodSync(dir, 0o755);
  for (const file of ['anteroom-edge.js', 'anteroom-edge-core.js']) copyFileSync(new URL(file, DEPLOY), join(dir, file));
  writeFileSync(join(dir, 'anteroom-edge-config.js'), files.config);
  writeFileSync(join(dir, 'anteroom-edge-maps.conf'), files.maps);
  const port = await freePort();
  mkdirSync(join(dir, 'cache'), { mode: 0o755 });
  const recipe = readFileSync(new URL('anteroom-edge.conf', DEPLOY), 'utf8')
    .replace('server 127.0.0.1:8081;', `server ${new URL(anteroom.url).host};`)
    .replace('server 127.0.0.1:3000;', `server ${new URL(origin.url).host};`)
    .replace('listen 8000;', `listen 127.0.0.1:${port};`)
    .replaceAll('/etc/nginx/anteroom', dir)
    .replaceAll('/var/cache/nginx/anteroom', join(dir, 'cache'))
    // The verdict server on a socket of its own; the fast path's socket is a counting proxy in front of it.
    .replace(`listen unix:${join(dir, 'cache', 'verdict.sock')};`, `listen unix:${join(dir, 'cache', 'verdict-njs.sock')};`);
  const nginx = await startNginx(recipe, port, { main: `load_module ${JS_MODULE};\npcre_jit on;` });
  const verdicts = await countingProxy(join(dir, 'cache', 'verdict-njs.sock'), join(dir, 'cache', 'verdict.sock'));
  const stop = async (): Promise<void> => {
    await nginx.stop();
    await verdicts.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { nginx, port, dir, verdicts, stop };
}

export const nowSec = (): number => Math.floor(Date.now() / 1000);

export async function startEdgeHarness(): Promise<EdgeHarness> {
  const origin = await startOrigin();
  const gate = (routes: { host?: string; path: string }[], extra: object = {}) => ({ origin: origin.url, routes, queueing_status_code: 200, ...extra });
  const node = await startGateNode(
    [
      gatedRoom('Shop', origin.url, { state: 'off', gate: gate([{ host: 'shop.test', path: '/' }], { bypass: { paths: ['/health'] }, edge_renewal_interval: 30 }) }),
      gatedRoom('Admin', origin.url, { gate: gate([{ host: 'shop.test', path: '/admin' }]) }),
      gatedRoom('Other', origin.url, { state: 'off', gate: gate([{ host: 'other.test', path: '/' }]) }),
      // Admits at once; its edge cookies admit for 5 s (the shortest renewal interval).
      gatedRoom('Quick', origin.url, { state: 'off', gate: gate([{ host: 'quick.test', path: '/' }], { edge_renewal_interval: 5 }) }),
    ],
    {},
    // nginx reads the wall clock: so does Anteroom here.
    { clock: wallClock() },
  );
  const counter = await countingProxy(node.gateUrl);
  const exported = async (query: string): Promise<string> => {
    const answer = await node.admin('GET', `/edge_config${query}`);
    assert.equal(answer.status, 200);
    return answer.text();
  };
  const files = { config: await exported(''), maps: await exported('?format=nginx') };
  const edge = await startEdgeNginx(origin, counter, files);
  const { nginx, port, dir, verdicts } = edge;
  const get = (target: string, headers: Record<string, string> = {}): Promise<RawAnswer> => rawRequest(port, 'GET', target, { host: 'shop.test', ...headers });
  const admittedVisitor = async (host = 'shop.test'): Promise<{ token: string; requestId: string }> => {
    const waiting = await get('/_anteroom/wait?to=%2F', { host });
    assert.equal(waiting.status, 303);
    const token = setCookies(waiting).get(TOKEN_COOKIE) ?? '';
    assert.ok(token);
    return { token, requestId: (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { sub: string }).sub };
  };
  return {
    origin,
    node,
    counter,
    verdicts,
    nginx,
    port,
    dir,
    get,
    edgeCookie: (key, claims = {}) => signEdgeCookie(key, { aud: 'Shop', sub: 'edge-attack-visitor', iat: nowSec(), exp: nowSec() + 60, ...claims }),
    currentKey: () => new EdgeKeys(node.store, Date.now).current(),
    admittedVisitor,
    startNginx: (given) => startEdgeNginx(origin, counter, given),
    stop: async () => {
      await edge.stop();
      await counter.close();
      await node.stop();
      await origin.close();
    },
  };
}
