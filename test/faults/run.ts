// `npm run faults` (issue 35, item 4): the fault campaign on loopback, for each store. Not part of `npm test`.
// Starts its own redis-server / redis-sentinel processes and Anteroom nodes on free ports in temporary
// directories, and stops every one of them (test/support/children.ts kills them even when this is interrupted).
//   SQLite      one node; joins under load; the node killed with SIGKILL and started again on the same file.
//   Redis       a primary and a replica behind a TCP proxy; --redis-min-replicas 1; the replication link frozen,
//               the primary killed (SIGKILL), the replica promoted by hand, nodes started on it.
//   Sentinel    a primary, a replica behind a frozen proxy, a replica in sync, three Sentinels; the primary
//               killed; nodes on redis-sentinel:// follow by themselves (stuck nodes counted); then
//               FAULT_ROUNDS (default 20) repeated SIGKILL failovers with varying load and timing.
//   Cluster     three primaries with a replica each; the primary of the room's slot killed; the cluster
//               promotes its replica; nodes on redis-cluster:// follow by themselves (stuck nodes counted).
// Every join carries an Idempotency-Key; refused ones are retried with their key after the fault (keyed-joins.ts).
// Prints one line per store: acknowledged / lost / duplicated / refused-then-applied (with its key) / applied
// without a key / stuck nodes / longest answer. Bounded: every wait has a deadline; FAULT_ONLY=sqlite,redis,…
// runs some stores only.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { exitOnSignals } from '../support/children.ts';
import type { ChildNode } from '../support/child-node.ts';
import { startRedisCluster, startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { startProxy, startSentinel, type FreezableProxy, type Sentinel } from '../support/redis-sentinel.ts';
import { ADMIN_TOKEN, call, freshPrefix, startNodes, stopNode, stopNodes, waitFor } from '../distributed/fleet.ts';
import { keyedStorm, settle, type KeyedOutcome } from './keyed-joins.ts';
import { CAMPAIGN_SENTINEL, READY_WITHIN_MS, sentinelFailovers } from './sentinel-failovers.ts';

exitOnSignals();
const started = Date.now();
const progress = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const only = process.env.FAULT_ONLY?.split(',');
const rounds = Number(process.env.FAULT_ROUNDS ?? 20);
const REPLICAS = ['--redis-min-replicas', '1', '--redis-replica-timeout-ms', '200'];

interface Row extends KeyedOutcome {
  store: string;
  stuck: number | 'n/a';
}
const rows: Row[] = [];

async function inSync(replica: RedisServer): Promise<void> {
  const client = new Redis(replica.url);
  try {
    await waitFor('the replica to be in sync', async () => /master_link_status:up/.test(await client.info('replication')), 20_000);
  } finally {
    client.disconnect();
  }
}

/** Nodes not ready within READY_WITHIN_MS (each waited for in parallel). */
async function stuckNodes(nodes: readonly ChildNode[]): Promise<number> {
  const late = await Promise.all(
    nodes.map((node) =>
      waitFor('ready', async () => (await call(`${node.url}/readyz`))?.status === 200, READY_WITHIN_MS, 50).then(
        () => 0,
        () => 1,
      ),
    ),
  );
  return late.reduce((a: number, b) => a + b, 0);
}

/** Runs a storm until 300 joins are acknowledged (or 30 s), then `fault`, then stops it. */
async function underLoad(urls: () => readonly string[], fault: (storm: ReturnType<typeof keyedStorm>) => Promise<void>) {
  const storm = keyedStorm(urls, 12);
  try {
    await waitFor('joins before the fault', () => storm.acknowledged.size >= 300, 30_000, 20).catch(() => {});
    await fault(storm);
  } finally {
    await storm.stop();
  }
  return storm;
}

async function sqlite(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-faults-'));
  const store = `sqlite:${join(dir, 'anteroom.db')}`;
  let [node] = await startNodes(1, store, ['--admin-token', ADMIN_TOKEN]);
  try {
    const storm = await underLoad(
      () => [node!.url],
      async () => {
        await stopNode(node!, 'SIGKILL');
        progress('sqlite: node killed (SIGKILL) under load; starting it again on the same file');
        [node] = await startNodes(1, store, ['--admin-token', ADMIN_TOKEN]);
      },
    );
    rows.push({ store: 'SQLite', stuck: 'n/a', ...(await settle(node!.url, storm)) });
  } finally {
    await stopNodes(node ? [node] : []);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function standaloneRedis(): Promise<void> {
  const primary = await startRedisServer();
  let proxy: FreezableProxy | undefined;
  let replica: RedisServer | undefined;
  const nodes: ChildNode[] = [];
  try {
    proxy = await startProxy(primary.port);
    replica = await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(proxy.port)] });
    await inSync(replica);
    const args = ['--redis-key-prefix', freshPrefix(), '--admin-token', ADMIN_TOKEN];
    nodes.push(...(await startNodes(2, primary.url, [...args, ...REPLICAS])));
    const storm = await underLoad(
      () => nodes.map((node) => node.url),
      async (running) => {
        proxy!.freeze();
        progress('redis: replication link frozen');
        const refusedAt = running.refused.length;
        await waitFor('joins refused after the cut', () => running.refused.length >= refusedAt + 50, 20_000, 10).catch(() => {});
        await primary.kill('SIGKILL');
        progress('redis: primary killed (SIGKILL); promoting the replica');
      },
    );
    await stopNodes(nodes.splice(0));
    const promote = new Redis(replica.url);
    await promote.call('REPLICAOF', 'NO', 'ONE');
    promote.disconnect();
    nodes.push(...(await startNodes(2, replica.url, args)));
    rows.push({ store: 'Redis (min-replicas 1)', stuck: 'n/a', ...(await settle(nodes[0]!.url, storm)) });
  } finally {
    await stopNodes(nodes);
    await proxy?.close();
    await primary.destroy();
    await replica?.destroy();
  }
}

async function sentinel(): Promise<void> {
  const name = 'anteroom-faults';
  const primary = await startRedisServer();
  const servers: RedisServer[] = [primary];
  const sentinels: Sentinel[] = [];
  const nodes: ChildNode[] = [];
  let proxy: FreezableProxy | undefined;
  try {
    proxy = await startProxy(primary.port);
    servers.push(await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(proxy.port)] }));
    servers.push(await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(primary.port)] }));
    for (const server of servers.slice(1)) await inSync(server);
    for (let i = 0; i < 3; i++) sentinels.push(await startSentinel({ primaryPort: primary.port, name, ...CAMPAIGN_SENTINEL }));
    const store = `redis-sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${name}`;
    nodes.push(...(await startNodes(2, store, ['--redis-key-prefix', freshPrefix(), '--admin-token', ADMIN_TOKEN, ...REPLICAS])));
    let stuck = 0;
    const storm = await underLoad(
      () => nodes.map((node) => node.url),
      async () => {
        proxy!.freeze();
        progress('sentinel: one replica\'s link frozen; killing the primary (SIGKILL)');
        await primary.kill('SIGKILL');
        await waitFor('the Sentinels to promote a replica', async () => (await sentinels[0]!.primary()) !== `127.0.0.1:${primary.port}`, 60_000, 50);
        progress(`sentinel: ${await sentinels[0]!.primary()} promoted`);
        stuck = await stuckNodes(nodes);
      },
    );
    rows.push({ store: 'Sentinel (min-replicas 1)', stuck, ...(await settle(nodes[0]!.url, storm)) });
  } finally {
    await stopNodes(nodes);
    await proxy?.close();
    for (const s of sentinels) await s.destroy();
    for (const server of servers) await server.destroy();
  }
  if (rounds > 0) {
    progress(`sentinel: ${rounds} repeated SIGKILL failovers`);
    const repeated = await sentinelFailovers({ rounds, nodes: 2, minReplicas: 1, progress });
    progress(`sentinel: ${repeated.unanswered} places unanswered, ${repeated.unplannedFailovers} failovers of a live primary`);
    if (repeated.unanswered > 0) failed = true;
    rows.push({
      store: `Sentinel, ${rounds} failovers`,
      stuck: repeated.stuck,
      acknowledged: repeated.acknowledged,
      refused: NaN,
      lost: repeated.lost,
      duplicated: repeated.duplicated,
      refusedThenApplied: NaN,
      appliedWithoutKey: NaN,
      longestAnswerMs: repeated.longestAnswerMs,
    });
  }
}

async function cluster(): Promise<void> {
  const cluster = await startRedisCluster({ primaries: 3, replicas: 1 });
  const nodes: ChildNode[] = [];
  try {
    // Nodes start once every replica is in sync: a node's first writes wait for a replica (--redis-min-replicas 1).
    for (const server of cluster.nodes) {
      const client = new Redis(server.url);
      const role = await client.info('replication').finally(() => client.disconnect());
      if (/role:slave/.test(role)) await inSync(server);
    }
    nodes.push(...(await startNodes(2, cluster.url, ['--redis-key-prefix', freshPrefix(), '--admin-token', ADMIN_TOKEN, ...REPLICAS])));
    let stuck = 0;
    const storm = await underLoad(
      () => nodes.map((node) => node.url),
      async () => {
        // The primary of the room's slot (every key of a room carries the hash tag {Sample}).
        const probe = new Redis(cluster.nodes[0]!.url);
        const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', '{Sample}'));
        const shards = (await probe.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
        probe.disconnect();
        const owner = shards.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
        const victim = cluster.nodes.find((node) => node.port === owner);
        if (!victim) throw new Error('no primary owns the room\'s slot');
        await victim.kill('SIGKILL');
        progress(`cluster: primary ${victim.port} of slot ${slot} killed (SIGKILL)`);
        const survivor = new Redis(cluster.nodes.find((node) => node !== victim)!.url);
        await waitFor('the cluster to promote the replica', async () => {
          const now = (await survivor.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
          return now.find(([from, to]) => slot >= from && slot <= to)?.[2][1] !== owner;
        }, 60_000, 100).finally(() => survivor.disconnect());
        progress('cluster: replica promoted; the killed primary started again (it rejoins as a replica)');
        stuck = await stuckNodes(nodes);
        // With --redis-min-replicas 1 the promoted primary answers once it has a replica again.
        await victim.restart();
      },
    );
    rows.push({ store: 'Cluster (min-replicas 1)', stuck, ...(await settle(nodes[0]!.url, storm)) });
  } finally {
    await stopNodes(nodes);
    await cluster.destroy();
  }
}

const stores: [string, () => Promise<void>][] = [['sqlite', sqlite], ['redis', standaloneRedis], ['sentinel', sentinel], ['cluster', cluster]];
let failed = false;
for (const [name, run] of stores) {
  if (only && !only.includes(name)) continue;
  progress(`${name}: starting`);
  try {
    await run();
  } catch (error) {
    failed = true;
    console.error(`${name}: the campaign failed: ${error instanceof Error ? error.stack : String(error)}`);
  }
}
const show = (n: number | string) => (typeof n === 'number' && Number.isNaN(n) ? '—' : String(n));
console.log('\nstore | acknowledged | lost | duplicated | refused | refused-then-applied (with key) | applied without key | stuck nodes | longest answer');
console.log('--- | --- | --- | --- | --- | --- | --- | --- | ---');
for (const r of rows) {
  console.log(
    [r.store, r.acknowledged, r.lost, r.duplicated, r.refused, r.refusedThenApplied, r.appliedWithoutKey, r.stuck, `${r.longestAnswerMs} ms`].map(show).join(' | '),
  );
}
const bad = rows.some((r) => r.lost > 0 || r.duplicated > 0 || (typeof r.stuck === 'number' && r.stuck > 0) || r.appliedWithoutKey > 0);
console.log(`\n${bad || failed ? 'TARGET MISSED' : 'target met'} (0 lost, 0 duplicated, 0 stuck, 0 applied without a key); ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exitCode = bad || failed ? 1 : 0;
