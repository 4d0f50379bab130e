// `anteroom serve --workers N`: N worker processes share one port (node:cluster) on a Redis store. The
// primary prints the banner once every worker listens (with the real port, also for --port 0), replaces a
// worker that dies, and on SIGTERM stops them all gracefully. Stores that one process owns are refused.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { ChildNode } from '../support/child-node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { ADMIN_TOKEN, call, freshPrefix, join, metricInText, positionsOf, startNodes, stopNode, waitFor } from './fleet.ts';

const BIN = fileURLToPath(new URL('../../bin/anteroom.js', import.meta.url));
const run = promisify(execFile);

/** Child processes of `pid` (the workers of a primary). */
async function childrenOf(pid: number): Promise<number[]> {
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(pid)]).catch(() => ({ stdout: '' }));
  return stdout.split('\n').map((line) => Number(line.trim())).filter((n) => n > 0);
}

/**
 * The /metrics requests counted by whichever worker answers, asked on a connection of its own (the primary
 * hands each new connection to the next worker; a kept-alive one would always reach the same worker).
 */
function scrapesCountedByNextWorker(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    httpGet(`${url}/metrics`, { agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve(metricInText(text, 'anteroom_http_requests_total', { route: '/metrics' })));
      response.on('error', reject);
    }).on('error', reject);
  });
}

describe('--workers on one machine', () => {
  let redis: RedisServer;
  let primary: ChildNode;
  const prefix = freshPrefix();

  // Log level info: the primary says when a replacement worker listens.
  const startPrimary = async () =>
    (await startNodes(1, redis.url, ['--redis-key-prefix', prefix, '--admin-token', ADMIN_TOKEN, '--workers', '2', '--log-level', 'info']))[0]!;

  before(async () => {
    redis = await startRedisServer();
    primary = await startPrimary();
  });
  after(async () => {
    if (primary) await stopNode(primary, 'SIGKILL');
    await redis?.destroy();
  });

  it('two workers share the port: one banner with the real URL, both answer, one queue', async () => {
    assert.equal(primary.output().match(/Anteroom waiting room is running/g)?.length, 1, primary.output());
    assert.match(primary.output(), /workers\s+2 processes/);
    assert.doesNotMatch(primary.url, /:0$/);
    assert.equal((await childrenOf(primary.process.pid!)).length, 2);

    // Each worker counts the /metrics requests it answered: a single process would show 0, 1, 2, …
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      seen.push(await scrapesCountedByNextWorker(primary.url));
    }
    assert.ok(new Set(seen).size < seen.length, `one process answered every scrape: ${seen}`);

    const inspector = new Redis(redis.url);
    const before = Number((await inspector.hget(`${prefix}{Sample}:c`, 'q')) ?? 0);
    const ids = (await Promise.all(Array.from({ length: 200 }, () => join(primary.url)))) as string[];
    assert.ok(ids.every(Boolean));
    const positions = await positionsOf([primary.url], ids);
    assert.deepEqual([...positions].sort((a, b) => a - b), Array.from({ length: 200 }, (_, i) => before + i + 1));
    try {
      // Polled: a worker killed by an earlier test leaves a connection Redis closes when it notices.
      const connections = async () =>
        ((await inspector.client('LIST')) as string).split('\n').filter((line) => line.includes('name=anteroom')).length;
      await waitFor('one connection per worker', async () => (await connections()) === 2, 10_000).catch(async (error: unknown) => {
        assert.fail(`${String(error)} (${await connections()} connections)`);
      });
    } finally {
      inspector.disconnect();
    }
  });

  it('a worker that dies is replaced, and the port keeps answering meanwhile', async () => {
    const [victim] = await childrenOf(primary.process.pid!);
    process.kill(victim!, 'SIGKILL');
    // A kept-alive connection to the victim fails once; new connections go to the live worker, which answers
    // before the replacement (started a second after the death) listens: "meanwhile" is that order, not a time.
    const listeningBefore = primary.output().match(/replacement worker listening/g)?.length ?? 0;
    await waitFor('the other worker to answer', () => join(primary.url), 15_000, 10);
    assert.equal(primary.output().match(/replacement worker listening/g)?.length ?? 0, listeningBefore,
      'the port answered only once the replacement listened');
    await waitFor('a replacement worker', async () => {
      const workers = await childrenOf(primary.process.pid!);
      return workers.length === 2 && !workers.includes(victim!);
    }, 15_000, 100);
    assert.match(primary.output(), /worker exited: starting another/);
    await waitFor('the replacement to listen',
      () => (primary.output().match(/replacement worker listening/g)?.length ?? 0) > listeningBefore, 15_000, 50);
    assert.ok(await join(primary.url));
  });

  it('SIGTERM to the primary stops every worker gracefully and exits 0', async () => {
    // A primary of its own to stop: the shared one stays up for the other tests, whatever their order.
    const stopped = await startPrimary();
    try {
      const workers = await childrenOf(stopped.process.pid!);
      assert.equal(workers.length, 2);
      assert.equal(await stopNode(stopped), 0);
      for (const pid of workers) {
        assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `worker ${pid} still runs`);
      }
      assert.equal((await call(`${stopped.url}/healthz`)), null, 'nothing listens any more');
    } finally {
      await stopNode(stopped, 'SIGKILL');
    }
  });
});

describe('--workers with a store one process owns', () => {
  const dir = mkdtempSync(joinPath(tmpdir(), 'anteroom-workers-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const store of [undefined, 'memory']) {
    it(`is refused with a clear message (${store ?? 'embedded SQLite'})`, async () => {
      const args = [BIN, 'serve', '--port', '0', '--data-dir', dir, '--workers', '3', ...(store ? ['--store', store] : [])];
      const failure = await run(process.execPath, args, { timeout: 15_000 }).then(
        () => assert.fail('anteroom serve --workers 3 started'),
        (error: { code: number; stderr: string }) => error,
      );
      assert.equal(failure.code, 2);
      assert.match(failure.stderr, /--workers 3 needs a store shared by every process, such as --store redis:\/\//);
    });
  }
});
