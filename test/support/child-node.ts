// Runs `anteroom serve` as a child process (for tests that kill or restart the server), and reads the
// public URL it prints once listening.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { killWithTest } from './children.ts';

const BIN = fileURLToPath(new URL('../../bin/anteroom.js', import.meta.url));

export interface ChildNode {
  process: ChildProcess;
  url: string;
  output: () => string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
}

/** `taskset -c <cpu>` prefix when the machine has taskset (benchmarks pin server and load to separate cores). */
export function pinnedCommand(cpu: number | undefined, argv: string[]): [string, string[]] {
  if (cpu === undefined || !existsSync('/usr/bin/taskset')) return [argv[0] as string, argv.slice(1)];
  return ['/usr/bin/taskset', ['-c', String(cpu), ...argv]];
}

export async function startChildNode(
  args: string[],
  env: Record<string, string> = {},
  /** bin: another checkout's bin/anteroom.js (bench/gate.ts compares two versions of the gate). */
  options: { cpu?: number; bin?: string } = {},
): Promise<ChildNode> {
  const [command, argv] = pinnedCommand(options.cpu, [process.execPath, options.bin ?? BIN, 'serve', '--port', '0', '--log-level', 'warn', ...args]);
  const child = killWithTest(
    spawn(command, argv, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const match = /public API\s+(http:\/\/\S+)/.exec(output);
      if (match) {
        child.stdout.off('data', onData);
        resolve(match[1] as string);
      }
    };
    child.stdout.on('data', onData);
    exited.then((code) => reject(new Error(`anteroom exited (${code}) before listening:\n${output}`)));
  });
  return { process: child, url, output: () => output, exited };
}
