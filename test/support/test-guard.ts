// Loaded into every test file's process by `npm test` (`--import ./test/support/test-guard.ts`): a file that
// does not end within its time limit is ended, naming itself, with its servers killed (test/support/children.ts).
// node's --test-timeout bounds each test and hook; this bounds the file (a module that hangs while loading, a
// handle that keeps the process alive after its last test). Default 10 minutes, ANTEROOM_TEST_FILE_TIMEOUT_MS
// overrides it; a file that needs longer calls fileTimeout(ms).

import module from 'node:module';
import { relative } from 'node:path';
import { exitOnSignals } from './children.ts';

const DEFAULT_MS = Number(process.env.ANTEROOM_TEST_FILE_TIMEOUT_MS ?? 600_000);
let timer: NodeJS.Timeout | undefined;

/** Ends this test file's process, failing it, if it still runs `ms` after now. */
export function fileTimeout(ms: number): void {
  if (timer === undefined) return; // not run by the test runner with the guard: nothing to bound
  clearTimeout(timer);
  arm(ms);
}

function arm(ms: number): void {
  timer = setTimeout(() => {
    const file = relative(process.cwd(), process.argv[1] ?? '?');
    process.stderr.write(`\n${file}: the file did not finish within ${ms / 1000} s (its time limit); ending it\n`);
    process.exit(1);
  }, ms);
  timer.unref();
}

// Modules compiled once (the TypeScript sources stripped and compiled) are cached across runs.
module.enableCompileCache();

// Only in a file's own process (the runner sets NODE_TEST_CONTEXT there), not in the runner itself.
if (process.env.NODE_TEST_CONTEXT !== undefined) {
  exitOnSignals();
  arm(DEFAULT_MS);
}
