import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startNode, type AnteroomNode } from '../../src/app.ts';
import { TEST_CREDENTIALS, testConfig } from '../support/node.ts';
import { killWithTest } from '../support/children.ts';

const BIN = fileURLToPath(new URL('../../bin/anteroom.js', import.meta.url));

/** Runs the CLI asynchronously (the server under test lives in this process and must keep answering). */
function anteroom(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = killWithTest(spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } }));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('anteroom loadtest (command line)', () => {
  let node: AnteroomNode;
  let dir: string;
  before(async () => {
    const config = testConfig();
    dir = config.dataDir;
    node = await startNode(config, { credentials: TEST_CREDENTIALS, jobs: false });
  });
  after(async () => {
    await node.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a journey, prints a summary, the JSON result on the last line, writes the report, exits 0', async () => {
    const report = join(mkdtempSync(join(tmpdir(), 'anteroom-lt-')), 'report.html');
    const { code, stdout, stderr } = await anteroom(
      [
        'loadtest', '--target', node.publicUrl, '--visitors', '100', '--arrival-rate', '200/s', '--admit-rate', '200/s',
        '--poll-interval', '100ms', '--reset', '--json', '--report', report,
      ],
      { ANTEROOM_ADMIN_TOKEN: TEST_CREDENTIALS.adminToken },
    );
    assert.equal(code, 0, stderr + stdout);
    assert.match(stdout, /Anteroom load test — PASS/);
    const lines = stdout.trim().split('\n');
    const result = JSON.parse(lines[lines.length - 1]!) as { ok: boolean; visitors: { served: number } };
    assert.equal(result.ok, true);
    assert.equal(result.visitors.served, 100);
    const html = readFileSync(report, 'utf8');
    assert.match(html, /<svg /);
    assert.ok(!html.includes(TEST_CREDENTIALS.adminToken));
    rmSync(join(report, '..'), { recursive: true, force: true });
  });

  it('credentials given as flags win over ANTEROOM_* credentials of another kind in the environment', async () => {
    const { code, stdout, stderr } = await anteroom(
      [
        'loadtest', '--target', node.publicUrl, '--visitors', '20', '--arrival-rate', '200/s', '--admit-rate', '200/s',
        '--poll-interval', '100ms', '--reset', '--access-key-id', TEST_CREDENTIALS.accessKeyId,
        '--secret-access-key', TEST_CREDENTIALS.secretAccessKey,
      ],
      { ANTEROOM_ADMIN_TOKEN: 'a-stale-token-from-the-environment' },
    );
    assert.equal(code, 0, stderr + stdout);
    assert.match(stdout, /PASS/);
  });

  it('refuses a target that is not loopback, exit status 2', async () => {
    const { code, stderr } = await anteroom(['loadtest', '--target', 'https://waitingroom.example.com', '--admin-token', 'x'.repeat(20)]);
    assert.equal(code, 2);
    assert.match(stderr, /not a loopback address.*--allow-remote/);
  });

  it('a usage error exits 2 as well (1 is reserved for a failed verdict)', async () => {
    const { code, stderr } = await anteroom(['loadtest', '--no-such-flag']);
    assert.equal(code, 2);
    assert.match(stderr, /unknown option/);
  });
});
