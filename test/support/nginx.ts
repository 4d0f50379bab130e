// Debian's nginx (/usr/sbin/nginx), started by a test on a free port in a temporary directory, in the
// foreground, with everything it writes kept in that directory.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinnedCommand } from './child-node.ts';
import { killWithTest } from './children.ts';

export { freePort } from './ports.ts';

export const NGINX = '/usr/sbin/nginx';

export interface Nginx {
  url: string;
  port: number;
  dir: string;
  stop(): Promise<void>;
}

/**
 * Runs nginx with `httpBlock` (what goes inside http {}); `port` is where the server in it listens; `main` goes
 * at the top of nginx.conf (load_module).
 */
export async function startNginx(
  httpBlock: string,
  port: number,
  options: { workers?: number; cpu?: number; main?: string } = {},
): Promise<Nginx & { pid: number | undefined }> {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-nginx-'));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `${options.main ?? ''}
daemon off;
worker_processes ${Math.max(1, options.workers ?? 1)};
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${httpBlock}
}
`,
  );
  // With workers: 0 nginx serves from its one process (master_process off): the benchmark reads its CPU time.
  const argv = [NGINX, '-p', dir, '-c', conf, '-e', `${dir}/error.log`, ...(options.workers === 0 ? ['-g', 'master_process off;'] : [])];
  const [command, args] = pinnedCommand(options.cpu, argv);
  const child: ChildProcess = killWithTest(spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] }));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  // Ready when it answers a connection on its port.
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}${safeRead(join(dir, 'error.log'))}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' }).then((r) => r.arrayBuffer());
      break;
    } catch {
      if (attempt > 200) throw new Error(`nginx did not answer on ${port}: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dir,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
