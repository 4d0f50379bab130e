// A shell command a test runs as a user would type it (`bash -c`), for the docs' recipes: in its own process
// group, so that bash, npx and the command npx starts are signalled together and all die with the test.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as pause } from 'node:timers/promises';
import { onTestExit } from './children.ts';

export interface Shell {
  child: ChildProcess;
  /** Standard output and error so far, interleaved. */
  output(): string;
  /** Resolves once the output matches `pattern` (rejects if bash exits first, or after 60 s). */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** bash's exit code, or the signal that ended it. */
  exited: Promise<number | string>;
  /** SIGTERM to the whole group; resolves once every process of it has ended (SIGKILL after 30 s). */
  stop(): Promise<void>;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-child.pid!, signal);
    return true;
  } catch {
    return false; // the group has ended
  }
}

/** Runs `bash -euo pipefail -c script` in `cwd` with `env` (added to this process's environment). */
export function shell(script: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Shell {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const forget = onTestExit(() => signalGroup(child, 'SIGKILL'));
  let output = '';
  const waiters = new Set<() => void>();
  const take = (chunk: Buffer) => {
    output += chunk.toString();
    for (const waiter of waiters) waiter();
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  return {
    child,
    output: () => output,
    exited,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`\`${script}\` printed no ${pattern} within 60 s:\n${output}`)), 60_000);
        const check = () => {
          const match = pattern.exec(output);
          if (!match) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(match);
        };
        waiters.add(check);
        check();
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`\`${script}\` exited (${code}) before printing ${pattern}:\n${output}`));
        });
      }),
    stop: async () => {
      signalGroup(child, 'SIGTERM');
      await exited;
      // bash may be gone while the command it started still drains: wait for the whole group (a hang guard).
      for (let waited = 0; signalGroup(child, 0); waited += 50) {
        if (waited >= 30_000) signalGroup(child, 'SIGKILL');
        await pause(50);
      }
      forget();
    },
  };
}
