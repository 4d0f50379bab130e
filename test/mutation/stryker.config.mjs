// StrykerJS configuration of `npm run mutate` (test/mutation/run.ts): one scope per run, chosen by
// MUTATION_SCOPE. Each scope mutates one folder of core rules and runs only that folder's own fast test
// files, with the command runner over `node --test` (node:test has no Stryker runner plugin). The command
// runner cannot tell which tests cover a mutant, so every mutant runs the scope's whole command: the
// commands are kept to the few test files that exercise the folder directly.
// See docs/testing.md ("Mutation testing") for what the score means and how to kill a survivor.

import { readFileSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

// The scopes (test/mutation/scopes.json): each names the files it mutates and the test files it runs.
// The store scope holds the stores' decision code that TypeScript holds: the hot-read cache and the SQLite
// adapter (against the store contract); the Redis adapter decides in Lua scripts, which Stryker cannot mutate.
// `env` (optional): variables set for the scope's test command, e.g. to leave out a slow backend.
/** @type {Record<string, { mutate: string[]; tests: string[]; env?: Record<string, string> }>} */
const SCOPES = JSON.parse(readFileSync(new URL('./scopes.json', import.meta.url), 'utf8'));

const scopeName = process.env.MUTATION_SCOPE ?? '';
const scope = SCOPES[scopeName];
if (!scope) {
  throw new Error(`MUTATION_SCOPE must be one of ${Object.keys(SCOPES).join(', ')} (got "${scopeName}")`);
}

export default {
  testRunner: 'command',
  commandRunner: {
    // `node` is the project's Node 24 (node_modules/.bin comes first on the runner's PATH). All the scope's
    // files run in one process (no isolation): a second less per mutant than a process per file.
    command: [
      ...Object.entries(scope.env ?? {}).map(([name, value]) => `${name}=${value}`),
      'node --test --test-isolation=none --test-reporter=dot',
      ...scope.tests.map((t) => `"${t}"`),
    ].join(' '),
  },
  mutate: scope.mutate,
  coverageAnalysis: 'off',
  // Two cores shared with other work: one test process at a time.
  concurrency: 1,
  // A mutant whose tests run 50 % longer than unmutated plus 10 s hangs (an endless loop): counted as a
  // timeout, i.e. detected. 10 s, not less: on the shared two-core machine under load (a load average of 18
  // was seen) a scope's one-second test command can take several seconds, and a mutant that merely ran slow
  // must not count as detected. Check the report's Timeout mutants after a run on a busy machine.
  timeoutFactor: 1.5,
  timeoutMS: 10_000,
  reporters: ['clear-text', 'progress-append-only', 'json', 'html'],
  jsonReporter: { fileName: `reports/mutation/${scopeName}.json` },
  htmlReporter: { fileName: `reports/mutation/${scopeName}.html` },
  clearTextReporter: { allowColor: false, allowEmojis: false, logTests: false },
  thresholds: { high: 90, low: 80, break: null },
  // One sandbox folder per scope, so that two scopes can run at once without removing each other's.
  tempDirName: `.stryker-tmp/${scopeName}`,
  cleanTempDir: 'always',
  // Only what the tests read is copied into the sandbox (test/domain/errors.test.ts reads docs/api.md).
  ignorePatterns: ['/docs', '!/docs/api.md', '/bench', '/deploy', '/web', '/reports', '/dist', '/data'],
};
