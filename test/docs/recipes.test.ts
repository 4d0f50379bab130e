// The recipes a newcomer copies from the docs, read from the .md files and run as written (only the addresses
// and the placeholders in <…> changed): the gate (docs/gate.md recipe 1 started with its own command line), the
// hand-off with the authorizer's middleware (docs/gate.md §3, Express and Fastify), the standalone inlets
// (docs/inlets.md and the README) and the README's verify-draw against a room drawn at its start.
// `anteroom` and `npx anteroom` run in a project where the command is installed (node_modules/.bin/anteroom,
// as `npm install` of the tarball makes it), here linked to this checkout's bin/anteroom.js.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as pause } from 'node:timers/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { docBlock, docBlocks } from '../support/doc-blocks.ts';
import { shell, type Shell } from '../support/shell.ts';
import { freePort } from '../support/ports.ts';
import { eventSettings, startTestNode, TEST_CREDENTIALS, TestClock, wallClock, type TestNode } from '../support/node.ts';
import { CookieJar, startOrigin, type Origin } from '../gate/support.ts';
import { ensurePagesBuilt } from '../web/support.ts';
import { parseRoomSettings, type RoomSettings } from '../../src/domain/room-settings.ts';
import { defaultEventDefaults, readEventsFile } from '../../src/config/config.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(REPO, 'bin/anteroom.js');

/** A project directory where `anteroom` is installed (node_modules/.bin) and this checkout's packages resolve. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-recipe-'));
  mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
  symlinkSync(BIN, join(dir, 'node_modules/.bin/anteroom'));
  // The site's own dependencies (express, fastify) and anteroom-authorizer, as its `npm install` gives them.
  for (const name of ['anteroom-authorizer', 'express', 'fastify']) symlinkSync(join(REPO, 'node_modules', name), join(dir, 'node_modules', name));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'newcomer', private: true, type: 'module' }));
  return dir;
}

/**
 * `bash -c script` in `cwd` (test/support/shell.ts): `node`, then `anteroom` (node_modules/.bin, as npm puts it on
 * an installed project's PATH for `npx`) first on PATH, no ANTEROOM_* variable of the developer's shell, and npx
 * never fetching from the registry.
 */
function run(script: string, cwd: string, env: Record<string, string> = {}): Shell {
  const path = [join(cwd, 'node_modules/.bin'), dirname(process.execPath), process.env.PATH ?? ''].join(':');
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('ANTEROOM_')));
  return shell(script, cwd, { ...clean, PATH: path, npm_config_yes: 'false', ...env });
}

/** The commands of a ```sh block: its lines joined at trailing backslashes, comments and blank lines left out. */
function commands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** GET `url` with the Host header `host` (fetch cannot set it) and the jar's cookies, as a fetch Response. */
function getWithHost(url: string, host: string, jar: CookieJar, accept: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const headers = { host, accept, ...(jar.cookies.size ? { cookie: jar.header() } : {}) };
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const one of Array.isArray(value) ? value : [value ?? '']) answer.append(name, one);
        }
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers: answer }));
      });
    }).on('error', reject).end();
  });
}

describe('docs/gate.md, 1. The gate: the room file and its command line', () => {
  let origin: Origin;
  let dir: string;
  let serve: Shell | undefined;
  before(async () => {
    ensurePagesBuilt();
    origin = await startOrigin();
    dir = project();
  });
  after(async () => {
    if (serve) await serve.stop();
    await origin.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('`npx anteroom serve --config rooms.json --gate-port 8081` queues a visitor of shop.example.com and admits them by itself', async () => {
    writeFileSync(join(dir, 'rooms.json'), docBlock('docs/gate.md', '1. The gate', 'json').replace('http://127.0.0.1:3000', origin.url));
    const [command] = commands(docBlock('docs/gate.md', '1. The gate', 'sh'));
    assert.match(command!, /^npx anteroom serve --config rooms\.json --gate-port 8081\b/);
    const gatePort = await freePort();
    // The API's port is not in the command (8080 by default): any free one here.
    serve = run(command!.replace('--gate-port 8081', `--gate-port ${gatePort}`), dir, { ANTEROOM_PORT: '0', ANTEROOM_LOG_LEVEL: 'warn' });
    await serve.waitFor(/^ {2}gate {2,}\S+/m);
    const gate = `http://127.0.0.1:${gatePort}`;
    const jar = new CookieJar();
    const visit = async () => (await jar.take(await getWithHost(`${gate}/cart`, 'shop.example.com', jar, 'application/json')).json()) as { status: string };
    assert.equal((await visit()).status, 'queued', 'a visitor without a cookie queues first');
    assert.equal(origin.seen.length, 0);
    // Automatic admission lets them in at its next tick (every second): the JSON poll says so.
    let answer = await visit();
    for (let polls = 0; answer.status === 'queued' && polls < 50; polls++) {
      await pause(200); // a poll, as the waiting page's (every 2 s), only quicker
      answer = await visit();
    }
    assert.equal(answer.status, 'admitted', serve.output());
    const page = jar.take(await getWithHost(`${gate}/cart`, 'shop.example.com', jar, 'text/html'));
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Origin page \/cart/);
  });
});

describe('docs/gate.md, 3. The hand-off: the authorizer middleware as written, in a site of its own', () => {
  let node: TestNode;
  let dir: string;
  before(async () => {
    // The site verifies tokens on the real clock: the node issues them on it.
    node = await startTestNode({ events: [eventSettings('Shop')] }, { clock: wallClock() });
    dir = project();
  });
  after(async () => {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const block = () => docBlock('docs/gate.md', '3. The hand-off', 'ts').replaceAll('https://waitingroom.example.com', node.url);
  const SITES = {
    Express: {
      before: "import express from 'express';\nconst app = express();\n",
      after: `app.get('/checkout', (req, res) => res.json({ visitor: req.waitingRoom?.sub }));
const server = app.listen(0, '127.0.0.1', () => console.log('site listening on ' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));\n`,
    },
    Fastify: {
      before: "import Fastify from 'fastify';\nconst app = Fastify();\n",
      after: `app.get('/checkout', async (request) => ({ visitor: request.waitingRoom?.sub }));
await app.listen({ port: 0, host: '127.0.0.1' });
console.log('site listening on ' + app.server.address().port);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));\n`,
    },
  } as const;

  for (const [framework, site] of Object.entries(SITES)) {
    it(`${framework}: a served visitor comes back with a code, gets the cookie, and the guard lets them in`, async () => {
      const [express = '', fastify = ''] = block().split('// Fastify');
      const snippet = framework === 'Express' ? express : `// Fastify${fastify}`;
      assert.match(snippet, new RegExp(`^// ${framework}\\n`));
      writeFileSync(join(dir, `${framework}.mjs`), site.before + snippet + site.after);
      const server = run(`node ${framework}.mjs`, dir);
      try {
        const origin = `http://127.0.0.1:${(await server.waitFor(/site listening on (\d+)/))[1]}`;
        // Step 1 of the recipe: the room lists the site's origin.
        assert.equal((await node.admin('PATCH', '/rooms/Shop', { allowed_return_origins: [origin] })).status, 200);
        const { api_request_id: id } = (await (await node.post('/assign_queue_num', { event_id: 'Shop' })).json()) as { api_request_id: string };
        const { queue_number: position } = (await (await node.get(`/queue_num?event_id=Shop&request_id=${id}`)).json()) as { queue_number: number };
        assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Shop', increment_by: position })).status, 200);
        const handoff = await node.post('/handoff_code', { event_id: 'Shop', request_id: id, return_to: `${origin}/checkout?x=1` });
        assert.equal(handoff.status, 200);
        const { location } = (await handoff.json()) as { location: string };

        const jar = new CookieJar();
        assert.equal((await jar.fetch(`${origin}/checkout?x=1`)).status, 401, 'no token, no entry');
        const arrival = await jar.fetch(location);
        assert.equal(arrival.status, 303);
        assert.equal(arrival.headers.get('location'), '/checkout?x=1');
        assert.ok(jar.cookies.has('anteroom_token'), 'the exchange set the cookie');
        const page = await jar.fetch(`${origin}/checkout?x=1`);
        assert.equal(page.status, 200, server.output());
        assert.deepEqual(await page.json(), { visitor: id });
      } finally {
        await server.stop();
      }
    });
  }
});

describe('the standalone inlets, as docs/inlets.md and the README write them', () => {
  let node: TestNode;
  let dir: string;
  let health: Server;
  let healthUrl: string;
  before(async () => {
    // SigV4 is checked against the node's clock: the real one.
    node = await startTestNode({ events: [eventSettings('Sample')] }, { clock: wallClock() });
    dir = project();
    health = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"cpu":{"load":0.1}}'));
    health.listen(0, '127.0.0.1');
    await once(health, 'listening');
    healthUrl = `http://127.0.0.1:${(health.address() as AddressInfo).port}/health`;
  });
  after(async () => {
    await node.stop();
    health.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const credentials = { KEY_ID: TEST_CREDENTIALS.accessKeyId, SECRET: TEST_CREDENTIALS.secretAccessKey, TOKEN: TEST_CREDENTIALS.adminToken };
  const serving = async () => ((await (await node.get('/serving_num?event_id=Sample')).json()) as { serving_counter: number }).serving_counter;
  const withNode = (command: string) => command.replaceAll('http://127.0.0.1:8080', node.url);

  async function periodic(command: string, env: Record<string, string>): Promise<void> {
    assert.equal((await node.admin('POST', '/reset_initial_state', { event_id: 'Sample' })).status, 200);
    const inlet = run(command, dir, env);
    // The first tick runs at once and prints its line; SIGTERM ends it (as Ctrl-C would).
    const [line] = await inlet.waitFor(/^.*\n/);
    await inlet.stop();
    assert.doesNotMatch(line, /error|passed|paused/i, inlet.output());
  }

  it('docs/inlets.md: periodic lets 50 in at its first tick; max-size applies one report', async () => {
    const [periodicCommand, maxSizeCommand, ...rest] = commands(docBlock('docs/inlets.md', 'As a separate process', 'sh'));
    assert.deepEqual(rest, []);
    assert.match(periodicCommand!, /^npx anteroom inlet periodic /);
    await periodic(withNode(periodicCommand!).replace('https://shop.example/health', healthUrl), credentials);
    assert.equal(await serving(), 50);

    assert.match(maxSizeCommand!, /^npx anteroom inlet max-size /);
    const maxSize = run(withNode(maxSizeCommand!), dir, credentials);
    assert.equal(await maxSize.exited, 0, maxSize.output());
    assert.equal(await serving(), 51, 'one visitor exited: one more let in');
  });

  it('docs/integration.md: the events file with an in-server inlet is read; the standalone one lets 200 in (SigV4)', async () => {
    const heading = '5. Choosing an inlet strategy';
    const file = join(dir, 'events.json');
    writeFileSync(file, docBlock('docs/integration.md', heading, 'json'));
    const [room] = readEventsFile(file, defaultEventDefaults());
    assert.deepEqual(room?.inlet, { strategy: 'periodic', interval: 60, increment_by: 200, pause_check: { url: 'https://shop.example.com/health', timeout: 5 }, start_time: 0, end_time: 0 });
    const [command, ...rest] = commands(docBlock('docs/integration.md', heading, 'sh'));
    assert.deepEqual(rest, []);
    const local = command!.replace('https://queue.example.com', node.url).replace('https://shop.example.com/health', healthUrl).replace('--event-id Shop', '--event-id Sample');
    await periodic(local, { AK: TEST_CREDENTIALS.accessKeyId, SK: TEST_CREDENTIALS.secretAccessKey });
    assert.equal(await serving(), 200);
  });

  it('README: periodic lets 10 in at its first tick (bearer token); max-size lets 3 in for 3 exited (SigV4)', async () => {
    const [periodicCommand, maxSizeCommand, ...rest] = commands(docBlock('README.md', 'Who lets people in', 'sh'));
    assert.deepEqual(rest, []);
    const env = { TOKEN: TEST_CREDENTIALS.adminToken, AK: TEST_CREDENTIALS.accessKeyId, SK: TEST_CREDENTIALS.secretAccessKey };
    await periodic(withNode(periodicCommand!), env);
    assert.equal(await serving(), 10);
    const maxSize = run(withNode(maxSizeCommand!), dir, env);
    assert.equal(await maxSize.exited, 0, maxSize.output());
    assert.equal(await serving(), 13);
  });
});

describe("README: a sale that starts at a time, checked with verify-draw from a checkout", () => {
  let node: TestNode;
  before(async () => {
    // The README's room, ten minutes before its start.
    const room = JSON.parse(docBlock('README.md', 'A sale that starts at a time', 'json')) as Partial<RoomSettings> & { event_start_time: string };
    assert.equal(room.event_id, 'drop');
    node = await startTestNode({ events: [eventSettings('drop', room)] }, { clock: new TestClock(Date.parse(room.event_start_time) - 600_000) });
  });
  after(() => node.stop());

  it('`node bin/anteroom.js verify-draw …` finds the visitor\'s place and the commitment seen before the start', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(((await (await node.post('/assign_queue_num', { event_id: 'drop' })).json()) as { api_request_id: string }).api_request_id);
    const { commitment } = (await (await node.get('/draw?event_id=drop')).json()) as { commitment: string };
    node.clock.advance(600);
    await node.room.draws.runDraws();
    const { queue_number: place } = (await (await node.get(`/queue_num?event_id=drop&request_id=${ids[2]}`)).json()) as { queue_number: number };

    const [command, ...rest] = commands(docBlock('README.md', 'A sale that starts at a time', 'sh'));
    assert.deepEqual(rest, []);
    const filled = command!
      .replace('https://queue.example.com', node.url)
      .replace('<your request ID>', ids[2]!)
      .replace('<the commitment seen before the start>', commitment);
    assert.doesNotMatch(filled, /[<>]/, 'every placeholder filled');
    const check = run(filled, REPO);
    assert.equal(await check.exited, 0, check.output());
    assert.match(check.output(), new RegExp(`Your entry is number 3 in join order; the draw gave it place ${place}`));
    assert.match(check.output(), /It is the commitment you saw before the start\./);
  });
});

describe("README: the rooms it shows are rooms Anteroom takes", () => {
  it('each JSON block is a room the settings accept, or an events file `--config` reads', () => {
    const blocks = docBlocks('README.md').filter((block) => block.language === 'json');
    assert.ok(blocks.length >= 4);
    const dir = mkdtempSync(join(tmpdir(), 'anteroom-readme-json-'));
    try {
      for (const [index, { heading, text }] of blocks.entries()) {
        const value = JSON.parse(text) as { events?: unknown[] };
        if (value.events) {
          const file = join(dir, `events-${index}.json`);
          writeFileSync(file, text);
          assert.ok(readEventsFile(file, defaultEventDefaults()).length === value.events.length, heading);
        } else {
          const parsed = parseRoomSettings(value);
          assert.ok(parsed.ok, `${heading}: ${JSON.stringify(parsed)}`);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
