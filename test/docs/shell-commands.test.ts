// The docs' shell blocks never tell a reader to run a bare `anteroom …`: the command is not on PATH, neither in
// a checkout nor where the packed tarball is installed. Copyable lines say `npx anteroom …` (a checkout after
// `npm ci`, or a project that installed the tarball) or `node bin/anteroom.js …` (a checkout), as the README
// and docs/gate.md do (test/docs/recipes.test.ts runs some of them as written).

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { docBlocks } from '../support/doc-blocks.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = ['README.md', ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const SHELL = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);

/** What may stand before a command on its line: a prompt, variable assignments, and wrappers that run it. */
const PREFIX = /^(?:\$\s+|[A-Za-z_][A-Za-z0-9_]*=\S*\s+|sudo\s+|time\s+|exec\s+|taskset\s+-c\s+\S+\s+|nice\s+(?:-n\s+)?-?\d+\s+)*/;

/** The commands of a shell block that run a bare `anteroom` (continuations joined, comments dropped). */
function bareAnteroomCommands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/\s#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .flatMap((line) => line.split(/&&|\|\||;|\||\$\(/).map((part) => part.trim()))
    .filter((command) => /^anteroom(\s|$)/.test(command.replace(PREFIX, '')));
}

describe('docs: no bare `anteroom` command in a shell block', () => {
  it('the check finds a bare command however it is started, and lets npx and node bin/anteroom.js pass', () => {
    assert.deepEqual(
      bareAnteroomCommands('anteroom serve\ntaskset -c 1 anteroom serve --port 1 \\\n  --store memory\nnpm ci && anteroom loadtest\n$ anteroom inlet periodic\nX=1 anteroom serve'),
      ['anteroom serve', 'taskset -c 1 anteroom serve --port 1 --store memory', 'anteroom loadtest', '$ anteroom inlet periodic', 'X=1 anteroom serve'],
    );
    assert.deepEqual(bareAnteroomCommands('npx anteroom serve\nnode bin/anteroom.js verify-draw\n# anteroom serve in a comment\nls /tmp/anteroom-lt'), []);
  });

  for (const page of PAGES) {
    it(page, () => {
      const bare = docBlocks(page)
        .filter((block) => SHELL.has(block.language))
        .flatMap((block) => bareAnteroomCommands(block.text).map((command) => `under "${block.heading}": ${command}`));
      assert.deepEqual(bare, [], `${page}: write \`npx anteroom …\` or \`node bin/anteroom.js …\``);
    });
  }
});
