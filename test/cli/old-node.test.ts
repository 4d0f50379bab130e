// `node bin/anteroom.js` with a Node that cannot strip types (the README allows an older system Node): from a
// checkout with node_modules it runs itself again with the project's Node 24; without, it says in one line
// what to do. Needs such a Node: the system's /usr/bin/node when it is older (skipped otherwise).

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/anteroom.js', import.meta.url));
const SYSTEM_NODE = '/usr/bin/node';
const oldNode = existsSync(SYSTEM_NODE) && execFileSync(SYSTEM_NODE, ['-p', 'Boolean(process.features.typescript)']).toString().trim() === 'false';

describe('bin/anteroom.js on a Node without type stripping', { skip: oldNode ? false : `${SYSTEM_NODE} is missing or strips types` }, () => {
  it('runs the command with the project\'s Node from node_modules', async () => {
    const { stdout } = await run(SYSTEM_NODE, [BIN, 'serve', '--help'], { timeout: 60_000 });
    assert.match(stdout, /Usage: anteroom serve \[options\]/);
  });

  it('without node_modules, exits 1 with one line naming what to install', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anteroom-old-node-'));
    try {
      mkdirSync(join(dir, 'bin'));
      copyFileSync(BIN, join(dir, 'bin', 'anteroom.js'));
      const failure = await run(SYSTEM_NODE, [join(dir, 'bin', 'anteroom.js'), 'serve'], { timeout: 60_000 }).then(
        () => assert.fail('it started'),
        (error: { code: number; stderr: string }) => error,
      );
      assert.equal(failure.code, 1);
      assert.match(failure.stderr, /^anteroom: Node v\d+\.\d+\.\d+ cannot run this checkout's TypeScript: run `npm ci` here .* or use Node 24\n$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
