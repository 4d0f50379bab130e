// compose.yaml run without a container engine (none is on the test machine): each Anteroom service's command
// and environment, as Compose would give them (the variables of deploy/compose/example.env copied to .env, as
// docs/deployment.md says), run with this checkout's bin/anteroom.js instead of the image's installed copy;
// `redis` is Debian's redis-server with the service's flags, `site` is Debian's nginx serving
// deploy/compose/site/. Only the names Compose's network resolves (redis, site) and the published ports are
// changed. The image itself is not built here (docs/deployment.md says so).

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { startChildNode, type ChildNode } from '../support/child-node.ts';
import { freePort, startNginx, type Nginx } from '../support/nginx.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { CookieJar } from '../gate/support.ts';
import { ensurePagesBuilt } from '../web/support.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
}

/** KEY=value lines of an env file (comments and blank lines left out), as Compose reads .env. */
function dotenv(text: string): Map<string, string> {
  return new Map(
    text
      .split('\n')
      .filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/** Compose's interpolation of `${NAME}`, `${NAME:-default}` and `${NAME:?error}` (an unset NAME with :? fails). */
function interpolate(value: string, env: Map<string, string>): string {
  return value.replace(/\$\{([A-Z_][A-Z0-9_]*)(?::([-?])([^}]*))?\}/g, (_all, name: string, kind?: string, word?: string) => {
    const set = env.get(name);
    if (set !== undefined && set !== '') return set;
    if (kind === '?') throw new Error(`compose: ${word}`);
    return kind === '-' ? (word ?? '') : '';
  });
}

/** The ENV lines of the Dockerfile's runtime stage (what every service's process gets before its own environment). */
function imageEnv(): Record<string, string> {
  const runtime = read('Dockerfile').slice(read('Dockerfile').lastIndexOf('FROM '));
  const block = /^ENV ((?:.*\\\n)*.*)$/m.exec(runtime)?.[1] ?? '';
  return Object.fromEntries([...block.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

describe('compose.yaml, its services run as Compose would start them (no container engine)', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-compose-'));
  const nodes = new Map<string, ChildNode>();
  let redis: RedisServer;
  let site: Nginx;
  let gateUrl = '';

  before(async () => {
    ensurePagesBuilt();
    // redis: the service's own command line, on a free port.
    const [binary, ...redisArgs] = compose.services.redis!.command!;
    assert.equal(binary, 'redis-server');
    assert.deepEqual(redisArgs, ['--appendonly', 'yes', '--appendfsync', 'everysec']);
    redis = await startRedisServer({ appendonly: true, appendfsync: 'everysec' });
    // site: nginx serving the directory mounted at nginx's html root.
    const [mount] = compose.services.site!.volumes!;
    assert.match(mount!, /^\.\/deploy\/compose\/site:\/usr\/share\/nginx\/html:ro$/);
    const sitePort = await freePort();
    site = await startNginx(`server { listen 127.0.0.1:${sitePort}; root ${join(REPO, 'deploy/compose/site')}; }`, sitePort);

    // `cp deploy/compose/example.env .env`, then Compose reads it for ${…}.
    const env = dotenv(read('deploy/compose/example.env'));
    // The events file mounted at /etc/anteroom/events.json, with the site's name resolved as Compose's network would.
    const eventsFile = join(dir, 'events.json');
    writeFileSync(eventsFile, read('deploy/compose/events.json').replaceAll('http://site:80', site.url));

    const anteroom = Object.entries(compose.services).filter(([, service]) => service.image === 'anteroom:local');
    // Each published port "H:C" becomes a free port F on 127.0.0.1; addresses the files give as localhost:H follow it.
    const published = new Map<string, number>();
    for (const [, service] of anteroom) for (const mapping of service.ports ?? []) published.set(mapping.split(':')[0]!, await freePort());
    const resolve = (value: string) => value.replace(/localhost:(\d+)/g, (all, port: string) => (published.has(port) ? `127.0.0.1:${published.get(port)}` : all));

    for (const [name, service] of anteroom) {
      assert.ok(service.volumes?.includes('./deploy/compose/events.json:/etc/anteroom/events.json:ro'), name);
      const environment: Record<string, string> = { ...imageEnv(), ANTEROOM_HOST: '127.0.0.1', ANTEROOM_DATA_DIR: join(dir, name) };
      for (const [key, value] of Object.entries(service.environment ?? {})) environment[key] = resolve(interpolate(value, env));
      assert.equal(environment.ANTEROOM_STORE, 'redis://redis:6379', name);
      assert.equal(environment.ANTEROOM_CONFIG, '/etc/anteroom/events.json', name);
      environment.ANTEROOM_STORE = redis.url;
      environment.ANTEROOM_CONFIG = eventsFile;
      // The image's CMD is ["serve"]. The container's ports: the API's (ANTEROOM_PORT) and the gate's.
      const [command = '', ...args] = service.command ?? ['serve'];
      assert.equal(command, 'serve', name);
      const gatePort = args.indexOf('--gate-port');
      for (const mapping of service.ports ?? []) {
        const [host = '', container = ''] = mapping.split(':');
        const port = String(published.get(host));
        if (container === environment.ANTEROOM_PORT) args.push('--port', port);
        else {
          assert.equal(container, args[gatePort + 1], `${name}: ${mapping} publishes the API's or the gate's port`);
          args[gatePort + 1] = port;
          gateUrl = `http://127.0.0.1:${port}`;
        }
      }
      nodes.set(name, await startChildNode(args, environment));
    }
  });

  after(async () => {
    for (const node of nodes.values()) {
      node.process.kill('SIGTERM');
      await node.exited;
    }
    await site?.stop();
    await redis?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every Anteroom service starts with its environment; the two nodes and the gate share one Redis', async () => {
    assert.deepEqual([...nodes.keys()].sort(), ['anteroom-1', 'anteroom-2', 'gate']);
    const one = nodes.get('anteroom-1')!.url;
    const two = nodes.get('anteroom-2')!.url;
    const joined = (await (await fetch(`${one}/assign_queue_num`, { method: 'POST', body: '{"event_id":"Shop"}' })).json()) as { api_request_id: string };
    const seen = await fetch(`${two}/queue_num?event_id=Shop&request_id=${joined.api_request_id}`);
    assert.equal(seen.status, 200, 'a join on one node is seen by the other');
    // The private API takes the .env's admin token on every node.
    const token = dotenv(read('deploy/compose/example.env')).get('ANTEROOM_ADMIN_TOKEN')!;
    for (const url of [one, two]) {
      const rooms = await fetch(`${url}/private/rooms/Shop`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(rooms.status, 200);
    }
  });

  it('http://localhost:8000: a visitor of the site is queued, then admitted by itself and shown the site', async () => {
    assert.ok(gateUrl, 'the gate service has --gate-port');
    const jar = new CookieJar();
    const poll = async () => ((await (await jar.fetch(`${gateUrl}/`, { headers: { accept: 'application/json' } })).json()) as { status: string }).status;
    let status = await poll();
    assert.equal(status, 'queued');
    // Automatic admission: let in at its next tick (every second), without anyone moving the counter.
    for (let polls = 0; status === 'queued' && polls < 50; polls++) {
      await pause(200);
      status = await poll();
    }
    assert.equal(status, 'admitted', nodes.get('gate')!.output());
    const page = await jar.fetch(`${gateUrl}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<h1>Sample shop<\/h1>/);
    const css = await fetch(`${gateUrl}/static/site.css`);
    assert.equal(css.status, 200, 'the bypassed /static/ needs no admission');
  });
});
