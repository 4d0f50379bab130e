// A private redis-server for tests and benchmarks: its own process, on a free port, with its data in a fresh
// temporary directory. Tests never touch a Redis they did not start (nor the machine's one on 6379).
// restart() starts the server again on the same port and directory, so an append-only file survives it;
// destroy() stops it and deletes the directory. A process that exits without destroy() (or is ended by
// SIGINT/SIGTERM/SIGHUP) still kills its servers and deletes their directories (test/support/children.ts).

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onTestExit } from './children.ts';
import { freeRedisPort } from './ports.ts';

export { freePort } from './ports.ts';

export interface RedisServerOptions {
  /** Default: $ANTEROOM_REDIS_SERVER, else /usr/bin/redis-server. */
  binary?: string;
  /** Default true: tests of durability need the append-only file. */
  appendonly?: boolean;
  /** Default 'always' (every acknowledged write is on disk). */
  appendfsync?: 'always' | 'everysec' | 'no';
  /** Extra redis-server arguments, e.g. ['--maxmemory', '100mb']. */
  args?: readonly string[];
  /** How long to wait for the first PONG. Default 10 s. */
  startTimeoutMs?: number;
}

export interface RedisServer {
  readonly port: number;
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  /** The data directory (append-only files live in <dir>/appendonlydir). */
  readonly dir: string;
  /** Whether the server process is running. */
  readonly running: boolean;
  /** Graceful shutdown (SIGTERM); the directory is kept for restart(). */
  stop(): Promise<void>;
  /** Sends a signal (default SIGKILL, a crash) and waits until the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the server again on the same port and directory (stopping it first if it runs). */
  restart(): Promise<void>;
  /** Stops the server and deletes its directory. */
  destroy(): Promise<void>;
  /** The server's recent output, for failure messages. */
  output(): string;
}

const DEFAULT_BINARY = '/usr/bin/redis-server';
const OUTPUT_LIMIT = 16_384;

/** One raw PING; true on +PONG (a server still loading its AOF answers -LOADING). */
function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const binary = options.binary ?? process.env.ANTEROOM_REDIS_SERVER ?? DEFAULT_BINARY;
  if (!existsSync(binary)) {
    throw new Error(`redis-server not found at ${binary}: install it (apt-get install redis-server) or set ANTEROOM_REDIS_SERVER`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-redis-'));
  let port = 0;
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let output = '';

  const args = () => [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', dir,
    '--save', '',
    '--appendonly', options.appendonly === false ? 'no' : 'yes',
    '--appendfsync', options.appendfsync ?? 'always',
    '--daemonize', 'no',
    '--loglevel', 'warning',
    ...(options.args ?? []),
  ];

  const launch = async (): Promise<void> => {
    const proc = spawn(binary, args(), { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let hasExited = false;
    exited = new Promise((resolve) => {
      proc.once('exit', () => {
        hasExited = true;
        if (child === proc) child = null;
        resolve();
      });
    });
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    const deadline = Date.now() + (options.startTimeoutMs ?? 10_000);
    while (Date.now() < deadline) {
      if (hasExited) throw new Error(`redis-server exited at start (port ${port}):\n${output}`);
      if (await pingOnce(port)) return;
      await sleep(20);
    }
    proc.kill('SIGKILL');
    await exited;
    throw new Error(`redis-server did not answer PING within the start timeout (port ${port}):\n${output}`);
  };

  const signal = async (sig: NodeJS.Signals): Promise<void> => {
    const proc = child;
    if (!proc) return;
    proc.kill(sig);
    // SIGSTOP freezes the server (a hung Redis: connections stay open, nothing answers) until SIGCONT.
    if (sig !== 'SIGSTOP' && sig !== 'SIGCONT') await exited;
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    if (!proc) return;
    proc.kill('SIGCONT');
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  // Killed, and its directory deleted, when the test's process exits without destroy().
  const forget = onTestExit(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  // Another process may take the free port before redis-server binds it: try a few ports.
  for (let attempt = 1; ; attempt++) {
    port = await freeRedisPort();
    try {
      await launch();
      break;
    } catch (error) {
      if (attempt >= 3) {
        forget();
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }

  return {
    get port() {
      return port;
    },
    get url() {
      return `redis://127.0.0.1:${port}`;
    },
    dir,
    get running() {
      return child !== null;
    },
    stop,
    kill: (sig: NodeJS.Signals = 'SIGKILL') => signal(sig),
    restart: async () => {
      await stop();
      await launch();
    },
    destroy: async () => {
      await stop();
      forget();
      rmSync(dir, { recursive: true, force: true });
    },
    output: () => output,
  };
}

export interface RedisClusterOptions {
  /** Number of primaries. Default 3, the smallest cluster redis-cli accepts. */
  primaries?: number;
  /** Replicas of each primary. Default 0. */
  replicas?: number;
  /** Default: redis-cli next to the redis-server binary. */
  cli?: string;
}

export interface RedisTestCluster {
  readonly nodes: readonly RedisServer[];
  readonly startupNodes: { host: string; port: number }[];
  /** redis-cluster://127.0.0.1:p1,127.0.0.1:p2,… */
  readonly url: string;
  destroy(): Promise<void>;
}

/**
 * A private Redis Cluster of fresh servers (no persistence), its slots spread over all primaries: proves that
 * every script touches one slot. Needs redis-cli, which comes with redis-server.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisTestCluster> {
  const binary = process.env.ANTEROOM_REDIS_SERVER ?? DEFAULT_BINARY;
  const cli = options.cli ?? join(dirname(binary), 'redis-cli');
  const nodes: RedisServer[] = [];
  const destroy = async () => {
    await Promise.all(nodes.map((node) => node.destroy()));
  };
  try {
    const replicas = options.replicas ?? 0;
    for (let i = 0; i < (options.primaries ?? 3) * (1 + replicas); i++) {
      nodes.push(
        await startRedisServer({
          appendonly: false,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'],
        }),
      );
    }
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    await run(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes']);
    // redis-cli returns once the nodes agree on the slots; each node serves them once its state is ok.
    const deadline = Date.now() + 10_000;
    for (const node of nodes) {
      while (!(await run(cli, ['-p', String(node.port), 'cluster', 'info'])).includes('cluster_state:ok')) {
        if (Date.now() > deadline) throw new Error(`cluster node ${node.port} never reached cluster_state:ok`);
        await sleep(50);
      }
    }
    return {
      nodes,
      startupNodes: nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
      url: `redis-cluster://${addresses.join(',')}`,
      destroy,
    };
  } catch (error) {
    await destroy();
    throw error;
  }
}

function run(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 15_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}
