// The two npm packages as a user gets them: `npm pack` each (the authorizer workspace and the server at the
// root), install each tarball into an empty project outside the repository and use it there: the
// authorizer guarding an Express app (and nothing but jose and Express installed), the server started with
// its `startNode`. Both projects are also type-checked against the packages' declarations. Dependencies come
// from npm's local cache when present (--prefer-offline), else from the registry.

import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { startKeyServer, type KeyServer } from '../authorizer/key-server.ts';
import { accessClaims, generateEventKey, sign, type EventKey } from '../authorizer/tokens.ts';
import { killWithTest } from '../support/children.ts';
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
  before(async () => {
    const checkout = copyCheckout(root);
    authorizerTarball = await pack(checkout, root, 'anteroom-authorizer');
    serverTarball = await pack(checkout, root);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

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
  });
});
