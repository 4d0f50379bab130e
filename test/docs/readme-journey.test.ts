// The README's "A visitor's journey with curl", run verbatim (bash, curl, node) against `anteroom serve` started
// as the README says (the room Sample, admitted by hand), from a directory whose ./data is the server's: every
// answer the README shows in a comment must appear in what the commands print.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { startChildNode, type ChildNode } from '../support/child-node.ts';
import { docBlock } from '../support/doc-blocks.ts';

const run = promisify(execFile);

describe("README: a visitor's journey with curl, verbatim", () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-readme-'));
  let node: ChildNode;
  before(async () => {
    node = await startChildNode(['--data-dir', join(dir, 'data')]);
  });
  after(async () => {
    node.process.kill('SIGTERM');
    await node.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('every command runs and prints what its comment shows', async () => {
    const block = docBlock('README.md', "A visitor's journey with curl", 'sh');
    assert.match(block, /^API=http:\/\/127\.0\.0\.1:8080$/m);
    // The one change: the address this test's server listens on.
    const script = block.replace(/^API=.*$/m, `API=${node.url}`);
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, timeout: 60_000 });
    const shown = [...block.matchAll(/#[^{\n]*(\{"[^\n]*\})\s*$/gm)].map((m) => m[1]!.split('…')[0]!);
    assert.ok(shown.length >= 5, `the comments show answers: ${shown.join(' ')}`);
    for (const answer of shown) assert.ok(stdout.includes(answer), `printed ${answer}:\n${stdout}`);
    assert.match(stdout, /"access_token":"ey/, 'step 5 claims the tokens');
    assert.match(stdout, /"keys":\[/, 'step 6 shows the JWKS');
  });
});
