// Every process a test starts dies with the test's process: `killWithTest(child)` SIGKILLs it when this process
// exits without having stopped it (a failed assertion, an uncaught error, the per-file time limit of
// test/support/test-guard.ts). A SIGTERM, SIGINT or SIGHUP to this process (the test runner ending a file,
// Ctrl-C) becomes an exit, so those hooks run then too; only a SIGKILL of the test process itself skips them.

import type { ChildProcess } from 'node:child_process';

const running = new Set<ChildProcess>();
const exitHooks = new Set<() => void>();
let hooked = false;

function killAll(): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  running.clear();
  for (const hook of exitHooks) hook();
  exitHooks.clear();
}

/** Turns SIGTERM/SIGINT/SIGHUP into process.exit (128 + signal number), so that 'exit' hooks run. */
export function exitOnSignals(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', killAll);
  const numbers = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
  for (const [signal, number] of Object.entries(numbers)) process.once(signal, () => process.exit(128 + number));
}

/** Kills `child` (SIGKILL) if it still runs when this process exits; returns it. */
export function killWithTest<T extends ChildProcess>(child: T): T {
  exitOnSignals();
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** Runs `hook` (synchronous) when this process exits, unless removed by the returned function first. */
export function onTestExit(hook: () => void): () => void {
  exitOnSignals();
  exitHooks.add(hook);
  return () => exitHooks.delete(hook);
}
