import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { serveCommand, configFromOptions } from '../../src/cli/serve-command.ts';
import { openStore } from '../../src/compose/open-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { startChildNode } from '../support/child-node.ts';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/anteroom.js', import.meta.url));

async function serveFails(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, [BIN, 'serve', '--port', '0', ...args], { env: { ...process.env, ...env }, timeout: 20_000 });
  } catch (error) {
    const e = error as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
  throw new Error('serve started although its configuration is invalid');
}

describe('anteroom serve: configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-cli-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--help documents every option of the core issue with its environment variable', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'serve', '--help']);
    const options = [
      'host', 'port', 'data-dir', 'store', 'event-id', 'config', 'admin-token', 'access-key-id', 'secret-access-key',
      'validity-period', 'enable-queue-position-expiry', 'queue-position-expiry-period', 'incr-serving-on-expiry',
      'enable-events-generation', 'expiry-job-interval', 'public-api-key', 'issuer', 'signing-algorithm',
    ];
    for (const option of options) {
      assert.match(stdout, new RegExp(`--${option}\\b`), `--${option} missing from --help`);
      assert.match(stdout, new RegExp(`ANTEROOM_${option.toUpperCase().replaceAll('-', '_')}\\b`));
    }
  });

  it('an invalid flag value stops the start with a message naming the option', async () => {
    const { code, stderr } = await serveFails(['--data-dir', dir, '--validity-period', 'abc']);
    assert.notEqual(code, 0);
    assert.match(stderr, /--validity-period/);
  });

  it('--signing-algorithm takes RS256, ES256 or EdDSA only (issue 15)', async () => {
    const { code, stderr } = await serveFails(['--data-dir', dir, '--signing-algorithm', 'HS256']);
    assert.notEqual(code, 0);
    assert.match(stderr, /--signing-algorithm "HS256" must be "RS256", "ES256" or "EdDSA"/);
  });

  it('an invalid environment value stops the start with a message naming the variable', async () => {
    const { code, stderr } = await serveFails(['--data-dir', dir], { ANTEROOM_EXPIRY_JOB_INTERVAL: '0' });
    assert.notEqual(code, 0);
    assert.match(stderr, /ANTEROOM_EXPIRY_JOB_INTERVAL/);
  });

  it('an invalid events file stops the start with the path of the offending field', async () => {
    const file = join(dir, 'events.json');
    writeFileSync(file, JSON.stringify({ events: [{ event_id: 'A', validity_period: 'long' }] }));
    const { code, stderr } = await serveFails(['--data-dir', dir, '--config', file]);
    assert.equal(code, 2);
    assert.match(stderr, /\/events\/0\/validity_period/);
  });

  it('an unknown key in the events file stops the start with the key named (issue 12)', async () => {
    const file = join(dir, 'misspelt.json');
    writeFileSync(file, JSON.stringify({ events: [{ event_id: 'A', webhooks: [{ url: 'https://h.example', secret: '0123456789abcdef', retries: 3 }] }] }));
    const { code, stderr } = await serveFails(['--data-dir', dir, '--config', file]);
    assert.equal(code, 2);
    assert.match(stderr, /event "A": webhooks\[0\]\.retries: unknown setting \(at \/events\/0\/webhooks\/0\/retries\)/);
  });

  it('an unknown store location stops the start', async () => {
    const { stderr } = await serveFails(['--data-dir', dir, '--store', 'postgres://x']);
    assert.match(stderr, /--store must be/);
  });
});

describe('anteroom serve: --sqlite-synchronous', () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-sync-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The store `anteroom serve <args>` would open, and the durability SQLite reports on its connection. */
  async function synchronousOfServe(args: string[], env: Record<string, string> = {}): Promise<string> {
    let options: Record<string, unknown> | undefined;
    const command = serveCommand()
      .exitOverride()
      .action((parsed: Record<string, unknown>) => {
        options = parsed;
      });
    const saved = process.env.ANTEROOM_SQLITE_SYNCHRONOUS;
    delete process.env.ANTEROOM_SQLITE_SYNCHRONOUS;
    Object.assign(process.env, env);
    try {
      await command.parseAsync(['--data-dir', dir, ...args], { from: 'user' });
    } finally {
      if (saved === undefined) delete process.env.ANTEROOM_SQLITE_SYNCHRONOUS;
      else process.env.ANTEROOM_SQLITE_SYNCHRONOUS = saved;
    }
    const store = await openStore(configFromOptions(options as Record<string, unknown>));
    try {
      assert.ok(store instanceof SqliteStore);
      return store.synchronous;
    } finally {
      await store.close();
    }
  }

  it('is full by default: every acknowledged write is fsynced (the README promise)', async () => {
    assert.equal(await synchronousOfServe([]), 'full');
  });

  it('normal, by flag or environment variable, reaches the SQLite connection', async () => {
    assert.equal(await synchronousOfServe(['--sqlite-synchronous', 'normal']), 'normal');
    assert.equal(await synchronousOfServe([], { ANTEROOM_SQLITE_SYNCHRONOUS: 'normal' }), 'normal');
    assert.equal(await synchronousOfServe(['--sqlite-synchronous', 'full'], { ANTEROOM_SQLITE_SYNCHRONOUS: 'normal' }), 'full');
  });
});

describe('anteroom serve: generated credentials', () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-creds-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('are generated on first start into a 0600 file, printed once, and reused on restart', async () => {
    const dataDir = join(dir, 'first-start'); // its own: a first start needs a data directory nobody used
    const first = await startChildNode(['--data-dir', dataDir]);
    let creds: { adminToken: string; secretAccessKey: string };
    try {
      const file = join(dataDir, 'credentials.json');
      creds = JSON.parse(readFileSync(file, 'utf8')) as { adminToken: string; secretAccessKey: string };
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(join(dataDir, 'anteroom.db')).mode & 0o777, 0o600, 'the database holds private keys');
      assert.equal(statSync(dataDir).mode & 0o777, 0o700);
      assert.ok(first.output().includes(creds.adminToken), 'first start prints the generated token');
    } finally {
      first.process.kill('SIGTERM');
    }
    assert.equal(await first.exited, 0);

    const second = await startChildNode(['--data-dir', dataDir]);
    try {
      assert.ok(!second.output().includes(creds.adminToken), 'a restart must not print the token again');
      assert.ok(!second.output().includes(creds.secretAccessKey));
      const ok = await fetch(`${second.url}/private/num_active_tokens?event_id=Sample`, {
        headers: { authorization: `Bearer ${creds.adminToken}` },
      });
      assert.equal(ok.status, 200);
    } finally {
      second.process.kill('SIGTERM');
      await second.exited;
    }
  });

  it('a token given by environment variable wins over the file and is never printed', async () => {
    const token = 'env-given-admin-token-0123456789';
    const node = await startChildNode(['--data-dir', join(dir, 'env-token')], { ANTEROOM_ADMIN_TOKEN: token });
    try {
      assert.ok(!node.output().includes(token));
      const ok = await fetch(`${node.url}/private/num_active_tokens?event_id=Sample`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200);
      const healthz = await fetch(`${node.url}/healthz`);
      assert.equal(healthz.status, 200);
    } finally {
      node.process.kill('SIGTERM');
      await node.exited;
    }
  });
});
