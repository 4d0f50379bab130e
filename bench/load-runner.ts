// Runs one autocannon load (bench/load.ts) in its own process, pinned to its own core when taskset exists,
// and returns its summary. Shared by every benchmark script.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { pinnedCommand } from '../test/support/child-node.ts';

export interface LoadResult {
  rps: number;
  total: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  p50: number;
  p99: number;
  max: number;
}

export async function runLoad(spec: Record<string, unknown>, cpu: number | undefined): Promise<LoadResult> {
  const script = fileURLToPath(new URL('./load.ts', import.meta.url));
  const [command, argv] = pinnedCommand(cpu, [process.execPath, script, JSON.stringify(spec)]);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await once(child, 'exit');
  return JSON.parse(out.trim().split('\n').pop() as string) as LoadResult;
}
