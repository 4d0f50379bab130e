// A private redis-sentinel for tests (its own process on a free port, its config in a fresh temporary
// directory: Sentinel rewrites its config file), and a TCP proxy that a test can freeze to cut a
// replication link without either end noticing (no FIN, no RST: bytes simply stop flowing).

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { onTestExit } from './children.ts';
import { freePort } from './ports.ts';

export interface Sentinel {
  readonly port: number;
  /** The address the Sentinel gives for the primary right now ("host:port"), or null. */
  primary(): Promise<string | null>;
  destroy(): Promise<void>;
  output(): string;
}

export interface SentinelOptions {
  primaryPort: number;
  name: string;
  /** How long the primary must not answer before this Sentinel thinks it down. Default 1000 ms (one Sentinel
   * in a test on an idle machine); several Sentinels on a loaded machine need more (a reply 1 s late is then
   * a failover of a live primary). */
  downAfterMs?: number;
  /** How many Sentinels must agree the primary is down. Default 1; 2 for three Sentinels, as deployed. */
  quorum?: number;
}

export async function startSentinel(options: SentinelOptions): Promise<Sentinel> {
  const binary = process.env.ANTEROOM_REDIS_SENTINEL ?? '/usr/bin/redis-sentinel';
  if (!existsSync(binary)) throw new Error(`redis-sentinel not found at ${binary}: apt-get install redis-sentinel, or set ANTEROOM_REDIS_SENTINEL`);
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-sentinel-'));
  const port = await freePort();
  const config = join(dir, 'sentinel.conf');
  writeFileSync(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${options.name} 127.0.0.1 ${options.primaryPort} ${options.quorum ?? 1}`,
      `sentinel down-after-milliseconds ${options.name} ${options.downAfterMs ?? 1000}`,
      `sentinel failover-timeout ${options.name} 5000`,
      `sentinel parallel-syncs ${options.name} 1`,
      '',
    ].join('\n'),
  );
  let output = '';
  const child: ChildProcess = spawn(binary, [config], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-16_384)));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-16_384)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const cleanUp = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  const forget = onTestExit(cleanUp);
  const primary = async (): Promise<string | null> => {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      const reply = (await client.call('SENTINEL', 'get-master-addr-by-name', options.name)) as [string, string] | null;
      return reply ? `${reply[0]}:${reply[1]}` : null;
    } catch {
      return null;
    } finally {
      client.disconnect();
    }
  };
  const deadline = Date.now() + 10_000;
  while ((await primary()) === null) {
    if (Date.now() > deadline) {
      cleanUp();
      throw new Error(`redis-sentinel did not start:\n${output}`);
    }
    await sleep(20);
  }
  return {
    port,
    primary,
    destroy: async () => {
      child.kill('SIGTERM');
      await exited;
      forget();
      rmSync(dir, { recursive: true, force: true });
    },
    output: () => output,
  };
}

export interface FreezableProxy {
  readonly port: number;
  /** Stop forwarding in both directions; the connections stay open (a cut link, not a closed one). */
  freeze(): void;
  close(): Promise<void>;
}

/** A TCP proxy from a free port to 127.0.0.1:`targetPort`. */
export async function startProxy(targetPort: number): Promise<FreezableProxy> {
  const sockets = new Set<Socket>();
  let frozen = false;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk) => {
      if (!frozen) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!frozen) client.write(chunk);
    });
    client.on('close', () => {
      if (!frozen) upstream.destroy();
    });
    upstream.on('close', () => {
      if (!frozen) client.destroy();
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    freeze: () => {
      frozen = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
