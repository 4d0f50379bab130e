// A private Redis primary with replicas in sync, for the tests of replica waits and failovers
// (test/distributed/): optionally the first replica follows the primary through a FreezableProxy, so a test can
// cut the replication link (proxy.freeze()) while both servers keep running. destroy() stops everything.

import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedisServer, type RedisServer } from './redis-server.ts';
import { startProxy, type FreezableProxy } from './redis-sentinel.ts';

export interface ReplicatedRedis {
  readonly primary: RedisServer;
  /** The replicas, all in sync with the primary (master_link_status:up) when startReplicatedRedis returns. */
  readonly replicas: readonly RedisServer[];
  /** The first replica. */
  readonly replica: RedisServer;
  /** The link between the primary and the first replica, when `linkProxy` was asked for. */
  readonly proxy: FreezableProxy | undefined;
  /** Stops the proxy and every server (one paused with SIGSTOP too) and deletes their directories. */
  destroy(): Promise<void>;
}

/** Waits until `replica` reports its link to the primary up (its initial sync done); fails naming it after `timeoutMs`. */
export async function replicaInSync(replica: RedisServer, timeoutMs = 15_000): Promise<void> {
  const client = new Redis(replica.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const deadline = Date.now() + timeoutMs;
  try {
    await client.connect();
    while (!/master_link_status:up/.test(await client.info('replication'))) {
      if (Date.now() > deadline) throw new Error(`the replica on port ${replica.port} was not in sync within ${timeoutMs} ms:\n${replica.output()}`);
      await sleep(25);
    }
  } finally {
    client.disconnect();
  }
}

export async function startReplicatedRedis(options: { replicas?: number; linkProxy?: boolean } = {}): Promise<ReplicatedRedis> {
  const servers: RedisServer[] = [];
  let proxy: FreezableProxy | undefined;
  const destroy = async () => {
    await proxy?.close();
    for (const server of servers) await server.destroy(); // stop() resumes a server paused with SIGSTOP first
  };
  try {
    const primary = await startRedisServer();
    servers.push(primary);
    if (options.linkProxy) proxy = await startProxy(primary.port);
    const replicas: RedisServer[] = [];
    for (let i = 0; i < (options.replicas ?? 1); i++) {
      const upstream = i === 0 && proxy ? proxy.port : primary.port;
      const replica = await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(upstream)] });
      servers.push(replica);
      replicas.push(replica);
    }
    for (const replica of replicas) await replicaInSync(replica);
    return { primary, replicas, replica: replicas[0] as RedisServer, proxy, destroy };
  } catch (error) {
    await destroy();
    throw error;
  }
}
