// The two npm packages as a user gets them: `npm pack` each (the authorizer workspace and the server at the
// root), install each tarball into an empty project outside the repository and use it there: the
// authorizer guarding an Express app (and nothing but jose and Express installed), the server started with
// its `startNode`. Both projects are also type-checked against the packages' declarations. Dependencies come
// from npm's local cache when present (--prefer-offline), else from the registry.

import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { startKeyServer, type KeyServer } from '../authorizer/key-server.ts';
import { accessClaims, generateEventKey, sign, type EventKey } from '../authorizer/tokens.ts';
import { killWithTest } from '../support/children.ts';
import { shell, type Shell } from '../support/shell.ts';
import { docBlock } from '../support/doc-blocks.ts';
import { fileTimeout } from '../support/test-guard.ts';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');
const NPM_QUIET = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

async function npm(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('npm', args, { cwd, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

// Packed from a copy of the checkout: `npm pack` runs the build scripts (dist/, web/dist/ rebuilt by vite,
// the authorizer's package.json rewritten to point at dist/ until postpack), and other test files running
// meanwhile read those files in the checkout. The copy shares the checkout's node_modules (read only).
const NOT_COPIED = new Set(['node_modules', '.git', 'dist', '.stryker-tmp', 'reports', 'data', '.tmp']);

function copyCheckout(into: string): string {
  const copy = join(into, 'checkout');
  cpSync(REPO, copy, {
    recursive: true,
    filter: (source) => {
      const name = relative(REPO, source);
      return name === '' || !NOT_COPIED.has(basename(name)) && !name.endsWith('.tgz') && name !== join('web', 'dist');
    },
  });
  symlinkSync(join(REPO, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}

/** `npm pack` (workspace or root) of the copy `checkout` into `into`; the tarball's path. */
async function pack(checkout: string, into: string, workspace?: string): Promise<string> {
  const args = ['pack', '--pack-destination', into, ...(workspace ? ['-w', workspace] : [])];
  // The build scripts print to standard output too; npm prints the tarball's name last.
  const filename = (await npm(checkout, args)).trim().split('\n').at(-1)!;
  return join(into, filename);
}

function emptyProject(root: string, prefix: string): string {
  return mkdtempSync(join(root, prefix));
}

function writeProject(dir: string, files: Record<string, string>): void {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
}

const TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: 'ES2023', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true,
    skipLibCheck: true, types: ['node'], lib: ['ES2023', 'DOM'],
  },
  files: ['check.ts'],
});

async function typecheck(dir: string): Promise<void> {
  writeFileSync(join(dir, 'tsconfig.json'), TSCONFIG);
  await run(process.execPath, [TSC, '-p', dir], { cwd: dir, timeout: 120_000 }).catch((error: { stdout: string }) => {
    throw new Error(`the consumer project does not type-check:\n${error.stdout}`);
  });
}

/** Starts `node <script>` in the project; resolves with the child and the first line it prints (JSON). */
async function startChild(dir: string, script: string, env: Record<string, string>): Promise<{ child: ChildProcess; ready: Record<string, string> }> {
  const child = killWithTest(spawn(process.execPath, [script], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] }));
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${script} exited (${String(code)}) before it was ready`);
  });
  const [line] = (await Promise.race([once(lines, 'line'), exited])) as [string];
  return { child, ready: JSON.parse(line) as Record<string, string> };
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

fileTimeout(1_000_000); // the describe's 900 s and the copy

describe('npm packages: each tarball installed into an empty project and used there', { timeout: 900_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'anteroom-packages-'));
  let authorizerTarball = '';
  let serverTarball = '';
  let checkout = '';
  before(async () => {
    checkout = copyCheckout(root);
    authorizerTarball = await pack(checkout, root, 'anteroom-authorizer');
    serverTarball = await pack(checkout, root);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('the tarballs are the ones the README and docs/deployment.md tell a user to install', () => {
    const named = [docBlock('README.md', 'Quick start', 'sh', 1), docBlock('docs/deployment.md', 'systemd', 'sh')].join('\n');
    for (const tarball of [authorizerTarball, serverTarball]) assert.ok(named.includes(`./${basename(tarball)}`), basename(tarball));
  });

  describe('anteroom-authorizer with Express', () => {
    let dir = '';
    let keyServer: KeyServer | undefined;
    let key: EventKey;
    let site: ChildProcess | undefined;
    let siteUrl: string | undefined;
    after(async () => {
      await stop(site);
      await keyServer?.close();
    });

    it('installs with jose as its only dependency', async () => {
      dir = emptyProject(root, 'authorizer-consumer-');
      writeProject(dir, {});
      await npm(dir, ['install', ...NPM_QUIET, authorizerTarball]);
      const manifest = JSON.parse(readFileSync(join(dir, 'node_modules/anteroom-authorizer/package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      assert.deepEqual(Object.keys(manifest.dependencies), ['jose']);
      // Nothing else came with it (fastify is an optional peer: its types only).
      assert.deepEqual(readdirSync(join(dir, 'node_modules')).filter((n) => !n.startsWith('.')).sort(), ['anteroom-authorizer', 'jose']);
    });

    it('guards an Express route: no token 401, a valid access token 200 with its claims', async () => {
      await npm(dir, ['install', ...NPM_QUIET, 'express', '@types/express', '@types/node']);
      key = await generateEventKey();
      keyServer = await startKeyServer('Sample', [key.publicJwk]);
      writeProject(dir, {
        'site.mjs': `
import express from 'express';
import { expressAuthorizer } from 'anteroom-authorizer';
const app = express();
app.get('/api/buy', expressAuthorizer({ publicKeyUrl: process.env.KEY_URL, eventId: 'Sample', issuer: process.env.ISSUER }),
  (req, res) => res.json({ bought_by: req.waitingRoom.sub }));
const server = app.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: 'http://127.0.0.1:' + server.address().port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`,
        'check.ts': `
import express from 'express';
import { expressAuthorizer, createVerifier, type WaitingRoomRequest, type VerifiedClaims } from 'anteroom-authorizer';
const app = express();
app.use(expressAuthorizer({ publicKeyUrl: 'https://q.example.com/public_key', eventId: 'E', issuer: 'https://q.example.com' }));
export function who(req: WaitingRoomRequest): string | undefined { return req.waitingRoom?.sub; }
export async function claims(token: string): Promise<VerifiedClaims> {
  return createVerifier({ jwksUrl: 'https://q.example.com/jwks.json', eventId: 'E', issuer: 'https://q.example.com' }).verify(token);
}
`,
      });
      const issuer = 'https://waitingroom.example.com';
      ({ child: site, ready: { url: siteUrl } } = await startChild(dir, 'site.mjs', { KEY_URL: keyServer.publicKeyUrl, ISSUER: issuer }));
      const refused = await fetch(`${siteUrl}/api/buy`);
      assert.equal(refused.status, 401);
      const claims = accessClaims({}, Math.floor(Date.now() / 1000));
      const admitted = await fetch(`${siteUrl}/api/buy`, { headers: { authorization: `Bearer ${await sign(key, claims)}` } });
      assert.equal(admitted.status, 200);
      assert.deepEqual(await admitted.json(), { bought_by: claims.sub });
    });

    it('its declarations type-check in a strict TypeScript project', async () => {
      await typecheck(dir);
    });
  });

  describe('anteroom-server', () => {
    let dir = '';
    let server: ChildProcess | undefined;
    after(() => stop(server));

    it('installs (with its authorizer) and startNode serves a room', async () => {
      dir = emptyProject(root, 'server-consumer-');
      writeProject(dir, {
        'serve.mjs': `
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultSettings, generateCredentials, startNode } from 'anteroom-server';
const node = await startNode({
  host: '127.0.0.1', port: 0, dataDir: mkdtempSync(join(tmpdir(), 'anteroom-consumer-')), store: { kind: 'memory' },
  sqliteSynchronous: 'full', events: [defaultSettings('Sample')], privateBasePath: '/private', pollTtl: 1,
  expiryJobIntervalSec: 60, metricsJobIntervalSec: 60, joinBatchWindowMs: 0, logLevel: 'silent', logRequests: false,
}, { credentials: generateCredentials() });
console.log(JSON.stringify({ url: node.publicUrl }));
process.on('SIGTERM', () => node.close().then(() => process.exit(0)));
`,
        'check.ts': `
import { defaultSettings, startNode, type AnteroomNode, type ServerConfig, type RoomSettings } from 'anteroom-server';
export const settings: RoomSettings = defaultSettings('E');
export function start(config: ServerConfig): Promise<AnteroomNode> {
  return startNode(config, { credentials: { adminToken: 't', accessKeyId: 'a', secretAccessKey: 's' } });
}
`,
      });
      // The server depends on anteroom-authorizer, which is not on the registry yet: both tarballs go in together.
      await npm(dir, ['install', ...NPM_QUIET, authorizerTarball, serverTarball, '@types/node']);
      let url: string | undefined;
      ({ child: server, ready: { url } } = await startChild(dir, 'serve.mjs', {}));
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
      const key = await fetch(`${url}/public_key?event_id=Sample`);
      assert.equal(key.status, 200);
      assert.equal(((await key.json()) as { alg: string }).alg, 'RS256');
    });

    it('its declarations type-check in a strict TypeScript project', async () => {
      await typecheck(dir);
    });

    it('`npx anteroom serve` there (README, Quick start) serves the room Sample from ./data', async () => {
      const line = docBlock('README.md', 'Quick start', 'sh', 1).split('\n').find((l) => l.includes('./anteroom-server-'))!;
      assert.match(line, /# in the other project; then: npx anteroom serve$/);
      const child = shell('npx anteroom serve', dir, { ...process.env, ANTEROOM_PORT: '0', npm_config_yes: 'false' });
      try {
        const url = (await child.waitFor(/public API\s+(http:\S+)/))[1]!;
        assert.equal((await fetch(`${url}/serving_num?event_id=Sample`)).status, 200);
        assert.equal(statSync(join(dir, 'data/credentials.json')).mode & 0o777, 0o600);
      } finally {
        await child.stop();
      }
    });
  });

  describe('the systemd recipe of docs/deployment.md, under a temporary root', () => {
    // Its commands with `sudo` left out and /etc, /opt and /var under `system`; `systemctl` is not run (no systemd
    // here): the installed unit's ExecStart is, with its Environment= and EnvironmentFile= as systemd passes them.
    let system = '';
    let service: Shell | undefined;
    after(() => service?.stop());
    const reroot = (text: string) => text.replace(/(?<![\w.])\/(etc|opt|var)\//g, `${system}/$1/`);

    it('installs the tarballs and the unit, creates /etc/anteroom and its 0600 environment file', async () => {
      system = mkdtempSync(join(root, 'system-'));
      mkdirSync(join(system, 'etc/systemd/system'), { recursive: true }); // the machine's own
      for (const tarball of [authorizerTarball, serverTarball]) copyFileSync(tarball, join(checkout, basename(tarball)));
      const lines = docBlock('docs/deployment.md', 'systemd', 'sh').replace(/\\\n\s*/g, '').split('\n').filter((l) => l.trim() !== '');
      assert.match(lines[0]!, /^npm ci && npm pack && npm pack -w anteroom-authorizer\b/, 'packed above');
      assert.match(lines.at(-2)!, /^sudo systemctl daemon-reload && sudo systemctl enable --now anteroom$/);
      assert.match(lines.at(-1)!, /^journalctl /);
      for (const line of lines.slice(1, -2)) {
        assert.match(line, /^sudo /, line);
        await run('bash', ['-euo', 'pipefail', '-c', reroot(line.replace(/^sudo /, ''))], {
          cwd: checkout, timeout: 300_000, env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' },
        });
      }
      assert.equal(statSync(join(system, 'etc/anteroom')).mode & 0o777, 0o700);
      assert.equal(statSync(join(system, 'etc/anteroom/anteroom.env')).mode & 0o777, 0o600);
      assert.ok(statSync(join(system, 'opt/anteroom/node_modules/anteroom-server/bin/anteroom.js')).isFile());
    });

    it("the unit's ExecStart serves, its state in the StateDirectory; the generated admin token works", async () => {
      const unit = readFileSync(join(system, 'etc/systemd/system/anteroom.service'), 'utf8');
      const setting = (name: string) => [...unit.matchAll(new RegExp(`^${name}=(.*)$`, 'gm'))].map((m) => m[1]!);
      const [execStart] = setting('ExecStart');
      assert.match(execStart!, /^\/usr\/bin\/node \/opt\/anteroom\//);
      const env: Record<string, string> = {};
      for (const assignment of setting('Environment')) env[assignment.slice(0, assignment.indexOf('='))] = assignment.slice(assignment.indexOf('=') + 1);
      for (const file of setting('EnvironmentFile')) {
        for (const line of readFileSync(reroot(file.replace(/^-/, '')), 'utf8').split('\n')) {
          if (/^[A-Z_]+=/.test(line)) env[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
        }
      }
      // StateDirectory=anteroom: systemd creates /var/lib/anteroom (the WorkingDirectory) before the start.
      assert.deepEqual(setting('StateDirectory'), ['anteroom']);
      const state = join(system, 'var/lib/anteroom');
      mkdirSync(state, { recursive: true, mode: 0o700 });
      assert.equal(reroot(setting('WorkingDirectory')[0]!), state);
      env.ANTEROOM_DATA_DIR = reroot(env.ANTEROOM_DATA_DIR!);
      assert.equal(env.ANTEROOM_PORT, '8080');
      env.ANTEROOM_PORT = '0'; // 8080 may be taken on the test machine

      // /usr/bin/node: the machine's. Older than 22.13 (as here, where it is 20), the command says in one line what to install.
      const systemNode = existsSync('/usr/bin/node') ? execFileSync('/usr/bin/node', ['-p', 'process.versions.node']).toString().trim() : '';
      const [major = 0, minor = 0] = systemNode.split('.').map(Number);
      const nodeOk = major > 22 || (major === 22 && minor >= 13);
      if (!nodeOk && systemNode !== '') {
        const failure = await run('bash', ['-c', reroot(execStart!)], { cwd: state, env: { ...process.env, ...env }, timeout: 60_000 }).then(
          () => assert.fail('it started on Node ' + systemNode),
          (error: { code: number; stderr: string }) => error,
        );
        assert.equal(failure.code, 1);
        assert.match(failure.stderr, /^anteroom: Node v\d+\.\d+\.\d+ is too old: install Node 22\.13 or newer \(24 LTS recommended\)\n$/);
      }
      // The unit with a Node it supports (this test's own, 24) in /usr/bin/node's place.
      const command = nodeOk ? reroot(execStart!) : reroot(execStart!).replace(/^\/usr\/bin\/node /, `${process.execPath} `);
      service = shell(command, state, { ...process.env, ...env });
      const url = (await service.waitFor(/public API\s+(https?:\S+)/))[1]!;
      assert.equal(url, 'https://queue.example.com', 'ANTEROOM_PUBLIC_URL of the environment file');
      const port = (await service.waitFor(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/))[1]!;
      const local = `http://127.0.0.1:${port}`;
      assert.equal((await fetch(`${local}/readyz`)).status, 200);
      const credentials = JSON.parse(readFileSync(join(state, 'credentials.json'), 'utf8')) as { adminToken: string };
      assert.equal(statSync(join(state, 'credentials.json')).mode & 0o777, 0o600);
      const rooms = await fetch(`${local}/private/rooms/Sample`, { headers: { authorization: `Bearer ${credentials.adminToken}` } });
      assert.equal(rooms.status, 200, 'credentials.json holds the token in use');
    });
  });
});
