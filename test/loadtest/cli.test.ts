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

  it('--abandon, --come-back and --seed reach the run: the summary and the JSON carry what the leavers cost', async () => {
    const { code, stdout, stderr } = await anteroom(
      [
        'loadtest', '--target', node.publicUrl, '--visitors', '40', '--arrival-rate', '200/s', '--admit-rate', '200/s',
        '--poll-interval', '100ms', '--reset', '--json', '--abandon', '30%', '--come-back', '0.5', '--come-back-after', '1s', '--seed', '9',
      ],
      { ANTEROOM_ADMIN_TOKEN: TEST_CREDENTIALS.adminToken },
    );
    assert.equal(code, 0, stderr + stdout);
    assert.match(stdout, /abandon +\d+ closed the tab .* seed 9/);
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as {
      plan: { abandon: { share: number; come_back: number; seed: number; presence_beat_ms: number } };
      no_shows: { abandoned: number; stayers: number; capacity_used: number | null };
    };
    assert.deepEqual(
      { share: result.plan.abandon.share, come_back: result.plan.abandon.come_back, seed: result.plan.abandon.seed, beat: result.plan.abandon.presence_beat_ms },
      { share: 0.3, come_back: 0.5, seed: 9, beat: 10_000 },
    );
    assert.equal(result.no_shows.abandoned + result.no_shows.stayers, 40);
    assert.equal(result.no_shows.capacity_used, null, 'an admission driver has no capacity to use');
  });

  it('a share that is not one exits 2, naming the flag', async () => {
    const { code, stderr } = await anteroom(['loadtest', '--target', node.publicUrl, '--admin-token', 'x'.repeat(20), '--abandon', '150%']);
    assert.equal(code, 2);
    assert.match(stderr, /--abandon must be a share from 0 to 1/);
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
