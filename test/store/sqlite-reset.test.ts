// A reset on the SQLite store deletes the old rows in chunks, the event loop free in between (issue 15: one
// transaction over 1M positions held the loop for seconds). What must hold: the counters read zero from the
// first moment, the event's other operations wait until every old row is gone and then see a fresh event, the
// loop runs between chunks, and a reset cut short by a crash is finished at the next open.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, it } from 'node:test';
import { newTokenRecord } from '../../src/domain/claims.ts';
import { Checkpointer } from '../../src/store/sqlite/checkpointer.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const scratch = mkdtempSync(join(tmpdir(), 'anteroom-reset-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(scratch, `store-${++files}.db`);

async function fill(store: SqliteStore, eventId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < count; done += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - done) }, () => randomUUID());
    await store.assignPositions(eventId, batch.map((requestId) => ({ requestId, entryTime: 100 })));
    ids.push(...batch);
  }
  await store.incrementServing(eventId, count, 100);
  for (const [i, requestId] of ids.slice(0, 600).entries()) {
    await store.issueTokenIfAbsent(eventId, newTokenRecord({ requestId, position: i + 1, now: 100, validityPeriod: 60, issuer: 'i', kid: 'k' }));
  }
  return ids;
}

function rowsOf(path: string, eventId: string): number {
  const db = new DatabaseSync(path);
  try {
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE event_id = ?`).get(eventId) as { n: number }).n;
    return count('positions') + count('tokens') + count('serving_history') + count('pending_resets');
  } finally {
    db.close();
  }
}

describe('sqlite store: chunked reset', () => {
  it('runs in chunks with the event loop free between them; the event waits for it and is then fresh', async () => {
    const path = freshFile();
    const store = new SqliteStore({ path, synchronous: 'normal' });
    let counting = true;
    try {
      const ids = await fill(store, 'E', 20_000);
      await fill(store, 'Other', 10);
      let turns = 0;
      const tick = () => {
        turns += 1;
        if (counting) setImmediate(tick);
      };
      setImmediate(tick);
      const reset = store.resetEvent('E');
      // Polls read the counters at once: zero from the first moment.
      assert.deepEqual([(await store.getCounters('E')).queue, (await store.getCounters('E')).tokens], [0, 0]);
      // Operations on the event wait for the old rows to be gone, and then see a fresh event.
      const joined = store.assignPositions('E', [{ requestId: randomUUID(), entryTime: 200 }]);
      const oldPosition = store.getPosition('E', ids[0]!);
      await reset;
      counting = false;
      assert.ok(turns >= 4, `the event loop ran ${turns} times during the reset`);
      assert.deepEqual(await joined, [1]);
      assert.equal(await oldPosition, null);
      assert.equal(await store.countActiveTokens('E', 0), 0);
      assert.equal((await store.getCounters('E')).queue, 1);
      assert.equal((await store.getCounters('Other')).queue, 10, 'another event keeps its data');
    } finally {
      counting = false;
      await store.close();
    }
    assert.equal(rowsOf(path, 'E'), 1, 'only the new position is left');
  });

  it('a reset cut short by a crash is finished at the next open', async () => {
    const path = freshFile();
    const store = new SqliteStore({ path, synchronous: 'normal' });
    const ids = await fill(store, 'E', 12_000);
    await store.close();
    // What a crash after the first transaction leaves: the reset recorded as pending, old rows still there.
    const db = new DatabaseSync(path);
    db.exec("INSERT INTO pending_resets (event_id) VALUES ('E'); UPDATE events SET queue = 0, serving = 0, tokens = 0 WHERE event_id = 'E'");
    db.close();
    const reopened = new SqliteStore({ path, synchronous: 'normal' });
    try {
      assert.equal(await reopened.getPosition('E', ids[5]!), null);
      assert.deepEqual(await reopened.assignPositions('E', [{ requestId: randomUUID(), entryTime: 1 }]), [1]);
    } finally {
      await reopened.close();
    }
    assert.equal(rowsOf(path, 'E'), 1);
  });

  it('the checkpoint thread a purge uses moves the WAL into the database file, and ends when closed', async () => {
    const path = freshFile();
    const db = new DatabaseSync(path);
    const checkpointer = new Checkpointer(path);
    try {
      db.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (v BLOB)');
      const insert = db.prepare('INSERT INTO t (v) VALUES (randomblob(1000))');
      db.exec('BEGIN');
      for (let i = 0; i < 1000; i++) insert.run();
      db.exec('COMMIT');
      const inWal = statSync(path).size;
      assert.ok(inWal < 100_000, `before the checkpoint the rows are in the WAL only (database file ${inWal} bytes)`);
      await checkpointer.checkpoint();
      assert.ok(statSync(path).size > 1_000_000, `after it, in the database file (${statSync(path).size} bytes)`);
    } finally {
      await checkpointer.close();
      db.close();
    }
  });

  it('a purge on a FULL store leaves the connection at synchronous FULL, and the event usable', async () => {
    const path = freshFile();
    const store = new SqliteStore({ path });
    try {
      await fill(store, 'E', 5_000);
      await store.resetEvent('E');
      assert.equal(store.synchronous, 'full', 'the chunks lowered synchronous only for themselves');
      assert.deepEqual(await store.assignPositions('E', [{ requestId: randomUUID(), entryTime: 1 }]), [1]);
    } finally {
      await store.close();
    }
    assert.equal(rowsOf(path, 'E'), 1);
  });

  it("the store's own writes to other rooms succeed while the purge thread holds chunks' write locks", async () => {
    const path = freshFile();
    const store = new SqliteStore({ path });
    try {
      await fill(store, 'E', 20_000);
      const reset = store.resetEvent('E');
      let finished = false;
      void reset.then(() => (finished = true));
      let joins = 0;
      // Joins of another room, one transaction each, for as long as the purge runs: each waits for a chunk's
      // lock (on the event loop) and none fails with "database is locked".
      while (!finished) {
        await store.assignPositions('Other', [{ requestId: randomUUID(), entryTime: 1 }]);
        joins++;
        // A turn of the event loop, as between two requests: the purge thread's answers are delivered there.
        await new Promise((resolve) => setImmediate(resolve));
      }
      await reset;
      assert.ok(joins > 0);
      assert.equal((await store.getCounters('Other')).queue, joins);
    } finally {
      await store.close();
    }
    assert.equal(rowsOf(path, 'E'), 0);
    assert.ok(rowsOf(path, 'Other') > 0);
  });
});
