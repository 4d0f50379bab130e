// Debian's Caddy (/usr/bin/caddy), started by a test on a free port in a temporary directory, in the
// foreground, with its admin endpoint off and everything it keeps in that directory.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CADDY = '/usr/bin/caddy';
/** Skip reason for tests needing Caddy, or false (`apt-get install caddy`: Debian has it). */
export const caddyMissing: string | false = existsSync(CADDY) ? false : `${CADDY} is not installed (apt-get install caddy)`;

export interface Caddy {
  url: string;
  stop(): Promise<void>;
}

/** Runs Caddy with `caddyfile` (site blocks; global options to keep it to itself are added); `port` is where it listens. */
export async function startCaddy(caddyfile: string, port: number): Promise<Caddy> {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-caddy-'));
  const file = join(dir, 'Caddyfile');
  writeFileSync(file, `{\n\tadmin off\n}\n\n${caddyfile}`);
  const child: ChildProcess = spawn(CADDY, ['run', '--config', file, '--adapter', 'caddyfile'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') },
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  // Ready when it answers a connection on its port.
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`caddy exited: ${stderr}`);
    try {
      await fetch(`http://127.0.0.1:${port}/_anteroom/ready`, { redirect: 'manual' }).then((r) => r.arrayBuffer());
      break;
    } catch {
      if (attempt > 400) throw new Error(`caddy did not answer on ${port}: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
