// The README's configuration table names every option of `anteroom serve`, with its environment variable,
// and nothing that is not one: read from the command's own definition (what `anteroom serve --help` prints).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { serveCommand } from '../../src/cli/serve-command.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** `--flag` → `ANTEROOM_…` of each row of the README's table under "## Configuration". */
function readmeTable(): Map<string, string> {
  const section = README.slice(README.indexOf('\n## Configuration'), README.indexOf('\n### ', README.indexOf('\n## Configuration')));
  const rows = [...section.matchAll(/^\| `(--[a-z0-9-]+)` \| `(ANTEROOM_[A-Z0-9_]+)` \|/gm)];
  return new Map(rows.map((m) => [m[1]!, m[2]!]));
}

describe('README: the configuration table', () => {
  it('lists every flag of `anteroom serve` with its environment variable, and no other', () => {
    const options = new Map(serveCommand().options.map((option) => [option.long!, option.envVar!]));
    assert.ok(options.size > 30, 'the options were read');
    assert.deepEqual(
      [...readmeTable()].sort(([a], [b]) => a.localeCompare(b)),
      [...options].sort(([a], [b]) => a.localeCompare(b)),
    );
  });
});
