// The SQLite store finds positions by request ID through an in-memory index (src/store/sqlite/request-index.ts)
// instead of an on-disk index of the random IDs (issue 15): a join writes only the end of the positions table.
// What must hold: few pages written per batch at a long queue, every position found again after a reopen (the
// index is rebuilt from the table), a database with the old on-disk index loses it, and a refused batch leaves
// nothing behind in the index either.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, it } from 'node:test';
import { RequestIndex } from '../../src/store/sqlite/request-index.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const scratch = mkdtempSync(join(tmpdir(), 'anteroom-request-index-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(scratch, `store-${++files}.db`);
const joins = (n: number) => Array.from({ length: n }, () => ({ requestId: randomUUID(), entryTime: 1_700_000_000 }));

/** Pages in the WAL file now (a WAL frame is a 24-byte header and one 4 KiB page, after a 32-byte file header). */
function walPages(path: string): number {
  const size = statSync(`${path}-wal`).size;
  return size === 0 ? 0 : (size - 32) / (4096 + 24);
}

describe('sqlite store: request IDs indexed in memory', () => {
  it('a batch of 500 joins at a queue of 20,000 writes a few pages, not one per join', async () => {
    const path = freshFile();
    const store = new SqliteStore({ path });
    const checkpointer = new DatabaseSync(path);
    try {
      for (let i = 0; i < 20; i++) await store.assignPositions('E', joins(1000));
      checkpointer.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      assert.equal(walPages(path), 0);
      await store.assignPositions('E', joins(500));
      // 500 rows of ~60 bytes fill about 8 pages at the end of the table, plus the events row and the tree's
      // path. An index of the random IDs took each of the 500 to its own page of ~250 (before issue 15: ~200).
      const pages = walPages(path);
      assert.ok(pages > 0 && pages <= 30, `${pages} pages written for 500 joins`);
    } finally {
      checkpointer.close();
      await store.close();
    }
  });

  it('finds every position again after a reopen, in each event, and none of an event that was reset', async () => {
    const path = freshFile();
    const first = new SqliteStore({ path });
    const a = joins(3000);
    const b = joins(10);
    const c = joins(5);
    await first.assignPositions('A', a);
    await first.assignPositions('B', b);
    await first.assignPositions('C', c);
    await first.resetEvent('C');
    await first.close();

    const store = new SqliteStore({ path });
    try {
      for (const [i, join] of a.entries()) assert.deepEqual(await store.getPosition('A', join.requestId), { position: i + 1, entryTime: join.entryTime });
      for (const [i, join] of b.entries()) assert.equal((await store.getPosition('B', join.requestId))?.position, i + 1);
      assert.equal(await store.getPosition('B', a[0]!.requestId), null, 'an ID of another event');
      for (const join of c) assert.equal(await store.getPosition('C', join.requestId), null);
      assert.equal(await store.getPosition('A', randomUUID()), null);
      // New joins continue the numbering and are found.
      const more = joins(2);
      assert.deepEqual(await store.assignPositions('A', more), [3001, 3002]);
      assert.equal((await store.getPosition('A', more[1]!.requestId))?.position, 3002);
    } finally {
      await store.close();
    }
  });

  it('a batch refused for a duplicate request ID leaves no trace: neither rows nor index entries', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    try {
      const [held] = joins(1);
      await store.assignPositions('E', [held!]);
      const fresh = joins(2);
      await assert.rejects(store.assignPositions('E', [fresh[0]!, held!]));
      await assert.rejects(store.assignPositions('E', [fresh[1]!, fresh[1]!]));
      for (const join of fresh) assert.equal(await store.getPosition('E', join.requestId), null);
      assert.equal((await store.getCounters('E')).queue, 1);
      assert.deepEqual(await store.assignPositions('E', fresh), [2, 3]);
    } finally {
      await store.close();
    }
  });

  it('a database with the on-disk index of an earlier version loses it and keeps its positions', async () => {
    const path = freshFile();
    const old = new DatabaseSync(path);
    old.exec(`CREATE TABLE positions (event_id TEXT NOT NULL, position INTEGER NOT NULL, request_id TEXT NOT NULL,
      entry_time INTEGER NOT NULL, PRIMARY KEY (event_id, position)) WITHOUT ROWID`);
    old.exec('CREATE UNIQUE INDEX positions_by_request ON positions (event_id, request_id)');
    const id = randomUUID();
    old.prepare("INSERT INTO positions VALUES ('E', 1, ?, 100)").run(id);
    old.close();

    const store = new SqliteStore({ path });
    try {
      assert.deepEqual(await store.getPosition('E', id), { position: 1, entryTime: 100 });
    } finally {
      await store.close();
    }
    const check = new DatabaseSync(path);
    try {
      const indexes = check.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'positions'").all();
      assert.deepEqual(indexes, []);
    } finally {
      check.close();
    }
  });
});

describe('RequestIndex', () => {
  it('returns the position of every ID added, through growth, and nothing for IDs never added', () => {
    const index = new RequestIndex();
    const ids = Array.from({ length: 50_000 }, () => randomUUID());
    ids.forEach((id, i) => index.add(id, i + 1));
    assert.equal(index.size, ids.length);
    ids.forEach((id, i) => assert.ok(index.candidates(id).includes(i + 1), id));
    let strays = 0;
    for (let i = 0; i < 10_000; i++) strays += index.candidates(randomUUID()).length;
    // A 32-bit tag: an unknown ID matches one of 50,000 by chance about once in 86,000 looks.
    assert.ok(strays <= 3, `${strays} candidates for unknown IDs`);
  });

  it('an ID whose tag another shares is still found: every match is a candidate, the caller compares', () => {
    const index = new RequestIndex((id) => id.length); // every ID of one length shares a tag
    index.add('aaaa', 1);
    index.add('bbbb', 2);
    index.add('cc', 3);
    assert.deepEqual(index.candidates('bbbb').sort(), [1, 2]);
    assert.deepEqual(index.candidates('cc'), [3]);
    assert.deepEqual(index.candidates('d'), []);
  });
});
