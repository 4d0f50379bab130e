// "Nothing acknowledged is lost": a 200 from assign_queue_num means the position is durable. The server is
// killed with SIGKILL in the middle of a join storm and restarted on the same data directory.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, it } from 'node:test';
import { Agent } from 'undici';
import { startChildNode } from '../support/child-node.ts';

const dispatcher = new Agent({ connections: 64 });

async function joinOnce(url: string): Promise<string | null> {
  try {
    const response = await fetch(`${url}/assign_queue_num`, {
      method: 'POST',
      body: '{"event_id":"Sample"}',
      // @ts-expect-error undici dispatcher option of Node's fetch
      dispatcher,
    });
    if (response.status !== 200) return null;
    return ((await response.json()) as { api_request_id: string }).api_request_id;
  } catch {
    return null; // connection reset by the kill: not acknowledged
  }
}

/** Joins from `workers` concurrent loops until `stop()`; returns the acknowledged request IDs. */
function joinStorm(url: string, workers: number) {
  const acknowledged: string[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      const id = await joinOnce(url);
      if (id) acknowledged.push(id);
      else if (running) await new Promise((r) => setImmediate(r));
    }
  });
  return {
    acknowledged,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function positionOf(url: string, id: string): Promise<number> {
  const response = await fetch(`${url}/queue_num?event_id=Sample&request_id=${id}`);
  assert.equal(response.status, 200, `acknowledged request ${id} lost its position`);
  return ((await response.json()) as { queue_number: number }).queue_number;
}

/**
 * Polls until the storm has `count` acknowledged joins (the condition has no event of its own); the 60 s
 * deadline only turns a stalled server into a failure instead of a hang.
 */
async function acknowledgedAtLeast(storm: { acknowledged: readonly string[] }, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (storm.acknowledged.length < count) {
    assert.ok(Date.now() < deadline, `only ${storm.acknowledged.length} of ${count} joins acknowledged after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('durability of acknowledged joins', () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-durability-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('every join answered 200 before a SIGKILL keeps its position after restart; numbering stays gap-free and continues', async () => {
    const first = await startChildNode(['--data-dir', dir]);
    const storm = joinStorm(first.url, 48);
    // Kill once a good number of joins has been acknowledged, while joins are still in flight.
    await acknowledgedAtLeast(storm, 1500);
    first.process.kill('SIGKILL');
    assert.equal(await first.exited, 'SIGKILL');
    await storm.stop();
    const acknowledged = [...storm.acknowledged];

    // The database on disk: positions 1..queue, each exactly once.
    const db = new DatabaseSync(join(dir, 'anteroom.db'));
    const row = db.prepare(
      "SELECT count(*) AS n, min(position) AS lo, max(position) AS hi, count(DISTINCT request_id) AS ids FROM positions WHERE event_id = 'Sample'",
    ).get() as { n: number; lo: number; hi: number; ids: number };
    const queue = (db.prepare("SELECT queue FROM events WHERE event_id = 'Sample'").get() as { queue: number }).queue;
    db.close();
    assert.equal(row.lo, 1);
    assert.equal(row.hi, queue);
    assert.equal(row.n, queue);
    assert.equal(row.ids, queue);
    assert.ok(queue >= acknowledged.length);

    const second = await startChildNode(['--data-dir', dir]);
    try {
      const positions = new Set<number>();
      for (const id of acknowledged) positions.add(await positionOf(second.url, id));
      assert.equal(positions.size, acknowledged.length, 'two acknowledged requests share a position');
      const next = await joinOnce(second.url);
      assert.ok(next);
      assert.equal(await positionOf(second.url, next), queue + 1);
    } finally {
      second.process.kill('SIGTERM');
      await second.exited;
    }
  });

  it('SIGTERM during a join storm answers the joins in flight, exits 0, and keeps every acknowledged join', async () => {
    const dir2 = mkdtempSync(join(tmpdir(), 'anteroom-sigterm-'));
    try {
      const node = await startChildNode(['--data-dir', dir2]);
      const storm = joinStorm(node.url, 32);
      await acknowledgedAtLeast(storm, 500);
      node.process.kill('SIGTERM');
      assert.equal(await node.exited, 0);
      await storm.stop();
      const restarted = await startChildNode(['--data-dir', dir2]);
      try {
        for (const id of storm.acknowledged) await positionOf(restarted.url, id);
      } finally {
        restarted.process.kill('SIGTERM');
        await restarted.exited;
      }
    } finally {
      rmSync(dir2, { recursive: true, force: true });
    }
  });
});
