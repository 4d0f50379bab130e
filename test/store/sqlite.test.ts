// The SQLite store: the store contract on memory and on a WAL file, plus what only this adapter promises —
// the durability setting the README documents (synchronous=FULL unless told otherwise) and a transaction
// that holds the write lock from its first statement (BEGIN IMMEDIATE), and a wait of up to 5 s for another
// connection's write lock, on the event loop (not SQLite's busy_timeout, which sleeps on it), instead of
// failing at once.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { newTokenRecord, type TokenRecord } from '../../src/domain/claims.ts';
import { AUDIT_LOG_KEEP } from '../../src/domain/ports/store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { runStoreContract } from './contract.ts';

runStoreContract('sqlite (memory)', {
  create: async () => new SqliteStore({ path: ':memory:' }),
});

const dir = mkdtempSync(join(tmpdir(), 'anteroom-store-'));
runStoreContract('sqlite (file, WAL)', {
  create: async () => new SqliteStore({ path: join(dir, 'anteroom.db') }),
  teardown: async () => rmSync(dir, { recursive: true, force: true }),
});

/**
 * Another connection to `path`, on another thread (SQLite calls block their thread), that runs `setup` (SQL,
 * ending inside a transaction that holds the write lock) and then commits 100 ms after `release()`. The 100 ms
 * are the other writer's, not a wait of the test: whatever the store does meanwhile must succeed however long
 * that thread takes, up to the store's 5 s.
 */
async function holdWriteLock(path: string, setup: string[]): Promise<{ release: () => void; exited: Promise<unknown>; stop: () => Promise<number> }> {
  const gate = new Int32Array(new SharedArrayBuffer(4));
  const holder = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     const { DatabaseSync } = require('node:sqlite');
     const db = new DatabaseSync(workerData.path);
     for (const sql of workerData.setup) db.exec(sql);
     parentPort.postMessage('locked');
     Atomics.wait(workerData.gate, 0, 0);
     Atomics.wait(workerData.gate, 0, 1, 100);
     db.exec('COMMIT');
     db.close();`,
    { eval: true, workerData: { path, setup, gate } },
  );
  const exited = new Promise((resolve) => holder.once('exit', resolve));
  try {
    await new Promise((resolve, reject) => {
      holder.once('message', resolve);
      holder.once('error', reject);
    });
  } catch (error) {
    await holder.terminate();
    throw error;
  }
  return {
    release: () => {
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
    },
    exited,
    stop: () => holder.terminate(),
  };
}

describe('sqlite store: durability and locking', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'anteroom-sqlite-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));
  let files = 0;
  const freshFile = () => join(scratch, `store-${++files}.db`);
  /** A store on a new file and another connection to it, on this thread, that never waits for a lock; both closed after `body`. */
  const withOther = async (body: (store: SqliteStore, other: DatabaseSync) => Promise<void>) => {
    const path = freshFile();
    const store = new SqliteStore({ path });
    const other = new DatabaseSync(path);
    other.exec('PRAGMA busy_timeout = 0');
    try {
      await body(store, other);
    } finally {
      other.close();
      await store.close();
    }
  };

  it("a job's leader lock never waits for another connection's write lock: not taken this time, taken once it is free", async () => {
    await withOther(async (store, other) => {
      other.exec('BEGIN IMMEDIATE');
      other.exec("INSERT INTO secrets (name, value) VALUES ('holder', 'x')");
      // Not taken, at once: before a timer of 1 ms (a lock that waited would try again after its own 1 ms
      // timer, set before this one, and still be waiting when this one fires).
      const first = await Promise.race([
        store.tryAcquireLock('job:expiry', 'node-a', 1000, 10_000),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 1)),
      ]);
      assert.equal(first, false);
      other.exec('COMMIT');
      assert.equal(await store.tryAcquireLock('job:expiry', 'node-a', 1000, 10_001), true);
      assert.equal(await store.tryAcquireLock('job:expiry', 'node-b', 1000, 10_002), false, 'held by node-a');
    });
  });

  it('a tokens table keyed by request ID (a database from before) is rebuilt keyed by position, its sets kept', async () => {
    const path = freshFile();
    let store = new SqliteStore({ path });
    const [a, b] = [randomUUID(), randomUUID()];
    await store.assignPositions('E', [{ requestId: a, entryTime: 1 }, { requestId: b, entryTime: 1 }]);
    await store.incrementServing('E', 2, 2);
    await store.close();
    // The tokens table as releases before issue 15's change created it (signatures, last_seen_ms added later), with a set.
    const writer = new DatabaseSync(path);
    writer.exec(`DROP TABLE tokens; CREATE TABLE tokens (event_id TEXT NOT NULL, request_id TEXT NOT NULL,
      position INTEGER NOT NULL, iat INTEGER NOT NULL, nbf INTEGER NOT NULL, exp INTEGER NOT NULL, iss TEXT NOT NULL,
      kid TEXT NOT NULL, status INTEGER NOT NULL DEFAULT 0, nonce TEXT, PRIMARY KEY (event_id, request_id)) WITHOUT ROWID`);
    writer.prepare("INSERT INTO tokens VALUES ('E', ?, 2, 10, 10, 70, 'i', 'k', 0, NULL)").run(b);
    writer.close();
    store = new SqliteStore({ path });
    try {
      const check = new DatabaseSync(path);
      const { sql } = check.prepare("SELECT sql FROM sqlite_master WHERE name = 'tokens'").get() as { sql: string };
      const indexes = (check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tokens'").all() as { name: string }[]).map((r) => r.name);
      check.close();
      assert.match(sql, /PRIMARY KEY \(event_id, position\)/);
      assert.deepEqual(indexes.sort(), ['tokens_by_exp']);
      assert.equal((await store.getClaimContext('E', b))?.token?.exp, 70, 'the old set is found by its request ID');
      assert.equal((await store.getClaimContext('E', a))?.token, null);
      const issued = await store.issueTokenIfAbsent('E', newTokenRecord({ requestId: a, position: 1, now: 20, validityPeriod: 60, issuer: 'i', kid: 'k' }));
      assert.equal(issued.outcome, 'issued');
      assert.equal(await store.closeSession('E', b, 1), true);
      assert.equal((await store.getClaimContext('E', b))?.token?.status, 1);
    } finally {
      await store.close();
    }
  });

  it('fsyncs every commit (synchronous=FULL) unless told normal: the durability the README promises', async () => {
    const byDefault = new SqliteStore({ path: freshFile() });
    const full = new SqliteStore({ path: freshFile(), synchronous: 'full' });
    const normal = new SqliteStore({ path: freshFile(), synchronous: 'normal' });
    try {
      assert.equal(byDefault.synchronous, 'full');
      assert.equal(full.synchronous, 'full');
      assert.equal(normal.synchronous, 'normal');
    } finally {
      await Promise.all([byDefault.close(), full.close(), normal.close()]);
    }
  });

  it("commits every write at the configured durability; only a job's lease skips its fsync, and the setting comes back after it", async () => {
    // What `synchronous` is at each COMMIT, read on the store's own connection (the setting is per connection, so
    // no other connection can see it): a look inside, because a lost fsync shows only on a power cut.
    const commitsOf = async (synchronous: 'full' | 'normal') => {
      const store = new SqliteStore({ path: freshFile(), synchronous });
      const db = (store as unknown as { db: DatabaseSync }).db;
      const exec = db.exec.bind(db);
      const seen: number[] = [];
      db.exec = (sql: string) => {
        if (sql === 'COMMIT') seen.push((db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous);
        exec(sql);
      };
      try {
        await store.assignPositions('E', [{ requestId: randomUUID(), entryTime: 1 }]);
        assert.equal(await store.tryAcquireLock('job:expiry', 'node-a', 1000, 10_000), true);
        await store.incrementServing('E', 1, 2);
        return { seen, after: store.synchronous };
      } finally {
        await store.close();
      }
    };
    // 2 is FULL (an fsync of the WAL at each commit), 1 NORMAL (none: a lease a power cut takes back only ends early).
    assert.deepEqual(await commitsOf('full'), { seen: [2, 1, 2], after: 'full' });
    assert.deepEqual(await commitsOf('normal'), { seen: [1, 1, 1], after: 'normal' });
  });

  it('holds the write lock for the whole transaction: another connection cannot write between its reads and its write', async () => {
    const path = freshFile();
    const store = new SqliteStore({ path });
    // Another writer on the same file (an operator's sqlite3 shell, a second process started by mistake),
    // with no busy wait: it either writes at once or is refused.
    const other = new DatabaseSync(path, { timeout: 0 });
    try {
      const [position] = await store.assignPositions('E', [{ requestId: 'r1', entryTime: 1 }]);
      await store.incrementServing('E', 1, 1);
      let intrusion = 'not attempted';
      const record: TokenRecord = newTokenRecord({
        requestId: 'r1', position: position as number, now: 2, validityPeriod: 60, issuer: 'https://i', kid: 'k',
      });
      // issueTokenIfAbsent reads (existing token, position, counters) and then writes the token, reading
      // `iat` for that write: this getter runs at exactly the moment between the transaction's reads and
      // its first write, the moment another connection's commit would make the reads stale.
      const iat = record.iat;
      Object.defineProperty(record, 'iat', {
        enumerable: true,
        get() {
          if (intrusion === 'not attempted') {
            try {
              other.exec(`INSERT INTO secrets (name, value) VALUES ('intruder', 'x')`);
              intrusion = 'written';
            } catch (error) {
              intrusion = (error as Error).message;
            }
          }
          return iat;
        },
      });
      const result = await store.issueTokenIfAbsent('E', record);
      assert.equal(intrusion, 'database is locked', 'the other connection must wait for the transaction');
      assert.equal(result.outcome, 'issued');
      assert.equal((await store.getCounters('E')).tokens, 1);
    } finally {
      other.close();
      await store.close();
    }
  });
  it("a write meeting another connection's write lock waits for it without holding the event loop", async () => {
    await withOther(async (store, other) => {
      other.exec('BEGIN IMMEDIATE');
      other.exec("INSERT INTO secrets (name, value) VALUES ('holder', 'x')");
      let settled = false;
      const write = store.incrementServing('E', 5, 1).finally(() => (settled = true));
      // The other connection is on this thread: had the store waited in SQLite (busy_timeout), it would have
      // held the thread for 5 s and failed, and nothing below would run before.
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setTimeout(resolve, 1));
      assert.equal(settled, false, 'the write waits for the lock');
      assert.equal((await store.getCounters('E')).serving, 0, 'reads are answered meanwhile');
      other.exec('COMMIT');
      assert.equal(await write, 5);
      assert.equal((await store.getCounters('E')).serving, 5);
    });
  });

  it("the audit log, the history and an OpenID binding wait for another connection's lock like every write", async () => {
    await withOther(async (store, other) => {
    const visitor = randomUUID();
      await store.assignPositions('E', [{ requestId: visitor, entryTime: 1 }]);
      other.exec('BEGIN IMMEDIATE');
      const entry = { at: 1, caller: 'admin token', address: '127.0.0.1', action: 'POST /private/reset_initial_state', event_id: 'E', request: {}, before: null, after: null };
      const writes = Promise.all([
        store.appendAudit(entry),
        store.recordHistory('E', { minute: 60 } as Parameters<SqliteStore['recordHistory']>[1], 3600),
        store.saveAuthorization('E', visitor, 'openid-request'),
      ]);
      await new Promise((resolve) => setImmediate(resolve));
      other.exec('COMMIT');
      const [, , bound] = await writes;
      assert.equal(bound, true);
      assert.equal((await store.listAudit(10)).length, 1);
      assert.equal((await store.readHistory('E', 0, 120)).length, 1);
      assert.equal(await store.getAuthorization('E', visitor), 'openid-request');
    });
  });

  it('close() lets the writes waiting for the lock end first', async () => {
    const path = freshFile();
    const store = new SqliteStore({ path });
    const other = new DatabaseSync(path);
    try {
      other.exec('PRAGMA busy_timeout = 0');
      other.exec('BEGIN IMMEDIATE');
      const write = store.incrementServing('E', 5, 1);
      await new Promise((resolve) => setImmediate(resolve));
      const closed = store.close();
      await new Promise((resolve) => setImmediate(resolve));
      other.exec('COMMIT');
      assert.equal(await write, 5, 'committed, not "database is not open"');
      await closed;
    } finally {
      other.close();
    }
    const reopened = new SqliteStore({ path });
    assert.equal((await reopened.getCounters('E')).serving, 5);
    await reopened.close();
  });

  it("a join waiting for the lock while the room's reset commits waits for the purge: numbered in the new generation, kept", async () => {
    await withOther(async (store, other) => {
    const [before, after] = [randomUUID(), randomUUID()];
      await store.assignPositions('E', [{ requestId: before, entryTime: 1 }]);
      other.exec('BEGIN IMMEDIATE');
      const join = store.assignPositions('E', [{ requestId: after, entryTime: 2 }]);
      await new Promise((resolve) => setImmediate(resolve));
      // In one synchronous stretch: the lock is freed and the reset commits first (the join is still waiting
      // for its next try). The purge then deletes every row of the room: a join committed during it would be
      // acknowledged and deleted.
      other.exec('COMMIT');
      const reset = store.resetEvent('E');
      assert.deepEqual(await join, [1], 'numbered after the reset: the first place of the new generation');
      await reset;
      const ctx = await store.getClaimContext('E', after);
      assert.equal(ctx?.position, 1, 'the acknowledged place is still there after the purge');
      assert.equal(await store.getClaimContext('E', before), null, 'the place from before the reset is gone');
      assert.equal((await store.getCounters('E')).queue, 1);
    });
  });

  it('the audit log keeps its newest 100,000 entries (AUDIT_LOG_KEEP): the oldest goes when one more is written', async () => {
    await withOther(async (store, other) => {
      other.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${AUDIT_LOG_KEEP})
        INSERT INTO audit_log (entry) SELECT json_object('at', i) FROM n`);
      await store.appendAudit({
        at: AUDIT_LOG_KEEP + 1, caller: 'admin token', address: '192.0.2.1', action: 'POST /private/reset_initial_state',
        event_id: 'E', request: { event_id: 'E' }, before: null, after: null,
      });
      const kept = other.prepare('SELECT count(*) AS n, min(seq) AS oldest FROM audit_log').get() as { n: number; oldest: number };
      assert.deepEqual({ ...kept }, { n: AUDIT_LOG_KEEP, oldest: 2 });
      assert.equal((await store.listAudit(1))[0]?.at, AUDIT_LOG_KEEP + 1);
    });
  });

  it('tries again for the lock 1, 2, 4, 8 and 16 ms later, then every 20 ms: on soon after the lock is free, without spinning', async () => {
    await withOther(async (store, other) => {
      other.exec('BEGIN IMMEDIATE');
      // The pauses the write asks its timers for; the other connection lets go when the seventh is asked for.
      const pauses: (number | undefined)[] = [];
      const realSetTimeout = globalThis.setTimeout;
      globalThis.setTimeout = ((callback: () => void, ms?: number) => {
        pauses.push(ms);
        if (pauses.length === 7) other.exec('COMMIT');
        return realSetTimeout(callback, ms);
      }) as typeof setTimeout;
      try {
        assert.equal(await store.incrementServing('E', 1, 1), 1);
      } finally {
        globalThis.setTimeout = realSetTimeout;
      }
      assert.deepEqual(pauses, [1, 2, 4, 8, 16, 20, 20]);
    });
  });

  it("a write that waited for a reset's purge then waits for another connection's lock as long as any write", async () => {
    await withOther(async (store, other) => {
      await store.assignPositions('E', [{ requestId: randomUUID(), entryTime: 1 }]);
      const reset = store.resetEvent('E');
      // A look inside: the purge's promise, so that the other connection takes the lock the moment the purge
      // ends — before the waiting write goes on (reactions run in the order they were added) — and lets it go
      // 10 ms later.
      const purge = (store as unknown as { purges: Map<string, Promise<void>> }).purges.get('E');
      assert.ok(purge, 'the purge is under way');
      void purge.then(() => {
        other.exec('BEGIN IMMEDIATE');
        setTimeout(() => other.exec('COMMIT'), 10);
      });
      // Without a fresh deadline once the purge is over, the write would fail at once: "database is locked".
      assert.equal(await store.incrementServing('E', 1, 1), 1);
      await reset;
    });
  });

  it('a write whose lock stays taken for 5 s fails with "database is locked" and changes nothing', async () => {
    await withOther(async (store, other) => {
      other.exec('BEGIN IMMEDIATE');
      const started = performance.now();
      await assert.rejects(store.incrementServing('E', 5, 1), /database is locked/);
      assert.ok(performance.now() - started >= 5000, 'it waited the 5 s first');
      other.exec('ROLLBACK');
      assert.equal((await store.getCounters('E')).serving, 0);
      assert.equal(await store.incrementServing('E', 2, 2), 2, 'the next write, with the lock free, succeeds');
    });
  });

  it('waits up to 5 s for another connection\'s write lock instead of failing at once', async () => {
    const path = freshFile();
    const store = new SqliteStore({ path });
    // Another connection holds the write lock and commits 100 ms after the store is about to write.
    const holder = await holdWriteLock(path, ['BEGIN IMMEDIATE', "INSERT INTO secrets (name, value) VALUES ('holder', 'x')"]);
    try {
      holder.release();
      // Without the busy wait: "database is locked" at once.
      assert.equal(await store.claimSecret('mine', 'y'), 'y');
      await holder.exited;
      assert.equal(await store.claimSecret('holder', 'other'), 'x', 'the other connection committed too');
    } finally {
      await holder.stop();
      await store.close();
    }
  });
});

describe('sqlite store: request IDs that share a tag', () => {
  it('each finds its own position, claim, token set and session, and an ID never added finds none', async () => {
    // Every ID gets the same tag, so every lookup has every position as a candidate: only the stored request ID
    // tells them apart (a keyed 32-bit tag shared by two IDs of a queue is rare, but it happens).
    const store = new SqliteStore({ path: ':memory:', requestTag: () => 7 });
    const [a, b, c, d, e] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const never = randomUUID();
    try {
      assert.deepEqual(await store.assignPositions('E', [a, b, c].map((requestId) => ({ requestId, entryTime: 1 }))), [1, 2, 3]);
      await assert.rejects(store.assignPositions('E', [{ requestId: b, entryTime: 2 }]), /already holds a position/);
      assert.deepEqual(await store.assignPositions('E', [{ requestId: d, entryTime: 2 }]), [4], 'a new ID is not taken for one that holds a position');
      assert.deepEqual(await store.assignPositionsIfAbsent('E', [b, e].map((requestId) => ({ requestId, entryTime: 3 }))), [2, 5]);
      for (const [id, position] of [[a, 1], [b, 2], [c, 3], [d, 4], [e, 5]] as const) {
        assert.equal((await store.getPosition('E', id))?.position, position);
      }
      assert.equal(await store.getPosition('E', never), null);
      await store.incrementServing('E', 5, 10);
      assert.equal((await store.getClaimContext('E', c))?.position, 3);
      assert.equal(await store.getClaimContext('E', never), null);
      const record = newTokenRecord({ requestId: c, position: 3, now: 20, validityPeriod: 60, issuer: 'i', kid: 'k' });
      assert.equal((await store.issueTokenIfAbsent('E', record)).outcome, 'issued');
      const elsewhere = newTokenRecord({ requestId: never, position: 1, now: 20, validityPeriod: 60, issuer: 'i', kid: 'k' });
      assert.notEqual((await store.issueTokenIfAbsent('E', elsewhere)).outcome, 'issued', 'no set for an ID without a position');
      assert.equal((await store.getClaimContext('E', c))?.token?.position, 3);
      assert.equal((await store.getClaimContext('E', b))?.token, null, "another ID's set is not b's");
      assert.equal(await store.closeSession('E', never, 1), false);
      assert.equal(await store.closeSession('E', b, 1), false, 'b has no session');
      assert.equal(await store.closeSession('E', c, 1), true);
      assert.equal((await store.leaveQueue('E', never)).outcome, 'no-position');
    } finally {
      await store.close();
    }
  });
});

describe('sqlite store: the database file', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'anteroom-sqlite-file-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('creates its directory owner-only and keeps the file (which holds private keys) owner-only, in WAL mode', async () => {
    const path = join(scratch, 'nested', 'dir', 'anteroom.db');
    const store = new SqliteStore({ path });
    try {
      assert.equal(store.description, `sqlite:${path}`);
      assert.equal(statSync(join(scratch, 'nested', 'dir')).mode & 0o777, 0o700);
      assert.equal(statSync(path).mode & 0o777, 0o600);
      await store.assignPositions('E', [{ requestId: 'r', entryTime: 1 }]);
      assert.equal(statSync(`${path}-wal`).mode & 0o777, 0o600, 'the WAL journal takes the file\'s mode');
      await store.ping();
    } finally {
      await store.close();
      await store.close(); // closing twice is harmless (shutdown paths may both close)
    }
    const reopened = new SqliteStore({ path });
    assert.deepEqual(await reopened.getPosition('E', 'r'), { position: 1, entryTime: 1 }, 'committed to the file');
    await reopened.close();
  });

  it('reads the file through a memory map (docs/operations.md: a read error then ends the process)', async () => {
    const store = new SqliteStore({ path: join(scratch, 'mapped.db') });
    try {
      // The setting is the connection's own: read on the store's connection. SQLite caps it just under 2 GiB.
      const db = (store as unknown as { db: DatabaseSync }).db;
      const { mmap_size } = db.prepare('PRAGMA mmap_size').get() as { mmap_size: number };
      assert.ok(mmap_size >= 2 ** 30, `mmap_size ${mmap_size}`);
    } finally {
      await store.close();
    }
  });

  it("opening a database another connection is writing waits for that connection's lock instead of failing", async () => {
    const path = join(scratch, 'opened-while-locked.db');
    // A new file whose write lock another connection holds, creating a table, until 100 ms after the store began
    // to open: the store's schema waits for the lock.
    const holder = await holdWriteLock(path, ['PRAGMA journal_mode = WAL', 'BEGIN IMMEDIATE', 'CREATE TABLE holder (x)']);
    let store: SqliteStore | undefined;
    try {
      holder.release();
      // Without the wait: "database is locked" from the constructor.
      store = new SqliteStore({ path });
      await holder.exited;
      assert.equal(await store.claimSecret('s', 'v'), 'v', 'open, and writes');
    } finally {
      await holder.stop();
      await store?.close();
    }
  });

  it('joins acknowledged after a reset are kept across a reopen: a finished reset is not purged again', async () => {
    const path = join(scratch, 'reset-then-join.db');
    const first = new SqliteStore({ path });
    await first.assignPositions('E', [{ requestId: 'before', entryTime: 1 }]);
    await first.resetEvent('E');
    await first.assignPositions('E', [{ requestId: 'after', entryTime: 2 }]);
    await first.close();
    const reopened = new SqliteStore({ path });
    try {
      assert.deepEqual(await reopened.getPosition('E', 'after'), { position: 1, entryTime: 2 });
      assert.equal(await reopened.getPosition('E', 'before'), null);
      assert.equal((await reopened.getCounters('E')).queue, 1);
    } finally {
      await reopened.close();
    }
  });

  it('close() commits a token set asked for just before it, and answers it', async () => {
    const path = join(scratch, 'issue-then-close.db');
    const store = new SqliteStore({ path });
    const requestId = randomUUID();
    await store.assignPositions('E', [{ requestId, entryTime: 1 }]);
    await store.incrementServing('E', 1, 2);
    // Asked for, not yet committed (the group commit waits for the end of this turn of the event loop).
    const issued = store.issueTokenIfAbsent('E', newTokenRecord({ requestId, position: 1, now: 20, validityPeriod: 60, issuer: 'i', kid: 'k' }));
    await store.close();
    assert.equal((await issued).outcome, 'issued');
    const reopened = new SqliteStore({ path });
    try {
      assert.equal((await reopened.getClaimContext('E', requestId))?.token?.position, 1, 'committed to the file');
    } finally {
      await reopened.close();
    }
  });

  it('in memory: described as memory, nothing on disk', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    assert.equal(store.description, 'memory');
    await store.close();
  });
});

describe('sqlite store: transactions and the in-memory counters', () => {
  it('rolls a failed transaction back whole, and stays usable', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    // The second join fails while the batch is being written, after the first one's row was inserted.
    const failing = { entryTime: 1, get requestId(): string { throw new Error('broken join'); } };
    await assert.rejects(store.assignPositions('E', [{ requestId: 'a', entryTime: 1 }, failing]), /broken join/);
    assert.equal(await store.getPosition('E', 'a'), null, 'the first insert was rolled back');
    assert.equal((await store.getCounters('E')).queue, 0);
    assert.deepEqual(await store.assignPositions('E', [{ requestId: 'b', entryTime: 1 }]), [1], 'no transaction left open');
    await store.close();
  });

  it('answers peekCounters from the counters it last read or wrote, and only those', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    assert.equal(store.peekCounters('E'), undefined, 'never read: nothing in memory');
    await store.incrementServing('E', 3, 1);
    assert.equal(store.peekCounters('E'), undefined, 'a write drops the copy');
    await store.getServingCounter('E');
    assert.equal(store.peekCounters('E')?.serving, 3);
    assert.equal(store.peekCounters('F'), undefined);
    await store.close();
  });

  it('the counters read after a token set was issued count it: a copy read before is not answered', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    try {
      const requestId = randomUUID();
      await store.assignPositions('E', [{ requestId, entryTime: 1 }]);
      await store.incrementServing('E', 1, 2);
      assert.equal((await store.getCounters('E')).tokens, 0, 'read, and kept in memory');
      const record = newTokenRecord({ requestId, position: 1, now: 20, validityPeriod: 60, issuer: 'i', kid: 'k' });
      assert.equal((await store.issueTokenIfAbsent('E', record)).outcome, 'issued');
      assert.equal((await store.getCounters('E')).tokens, 1);
    } finally {
      await store.close();
    }
  });

  it('a write to a closed store fails at once, without waiting as for a lock', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    await store.close();
    // Before a timer of 1 ms: a write that took the failure for another connection's lock would try again
    // after its own 1 ms timer, and go on for 5 s.
    const answer = await Promise.race([
      store.incrementServing('E', 1, 1).then(() => 'written', (error: Error) => error.message),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 1)),
    ]);
    assert.match(String(answer), /not open/);
  });

  it('after close, the database is closed: ping fails', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    await store.ping();
    await store.close();
    await assert.rejects(store.ping());
  });
});

describe('sqlite store: a database created by an earlier version', () => {
  it('gains the columns added since, keeping its data', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'anteroom-old-')), 'anteroom.db');
    // The events table as released before leave_queue (no left_count), with a room that has a queue.
    const old = new DatabaseSync(path);
    old.exec(`CREATE TABLE events (
      event_id TEXT PRIMARY KEY, queue INTEGER NOT NULL DEFAULT 0, serving INTEGER NOT NULL DEFAULT 0,
      max_serving INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0, expired INTEGER NOT NULL DEFAULT 0,
      completed INTEGER NOT NULL DEFAULT 0, abandoned INTEGER NOT NULL DEFAULT 0, max_expired INTEGER NOT NULL DEFAULT 0,
      expiry_enabled_since INTEGER) WITHOUT ROWID`);
    old.exec(`CREATE TABLE positions (event_id TEXT NOT NULL, position INTEGER NOT NULL, request_id TEXT NOT NULL,
      entry_time INTEGER NOT NULL, PRIMARY KEY (event_id, position)) WITHOUT ROWID`);
    const id = randomUUID();
    old.prepare("INSERT INTO events (event_id, queue, serving) VALUES ('E', 1, 1)").run();
    old.prepare("INSERT INTO positions VALUES ('E', 1, ?, 100)").run(id);
    old.close();

    const store = new SqliteStore({ path });
    try {
      const before = await store.getCounters('E');
      assert.deepEqual([before.queue, before.serving, before.left], [1, 1, 0]);
      assert.deepEqual(await store.leaveQueue('E', id), { outcome: 'left', position: 1 });
      assert.equal((await store.getCounters('E')).left, 1);
    } finally {
      await store.close();
      rmSync(join(path, '..'), { recursive: true, force: true });
    }
  });
});


describe('sqlite store: rooms at runtime', () => {
  it('deleting a room leaves no row of it in any table with an event_id column', async () => {
    const dbDir = mkdtempSync(join(tmpdir(), 'anteroom-rooms-'));
    const path = join(dbDir, 'anteroom.db');
    const store = new SqliteStore({ path });
    try {
      const event = 'Doomed';
      const a = randomUUID();
      await store.putRoom(event, JSON.stringify({ event_id: event }));
      await store.syncExpirySwitch(event, true, 1);
      await store.assignPositions(event, [{ requestId: a, entryTime: 1 }]);
      await store.incrementServing(event, 1, 1);
      await store.issueTokenIfAbsent(event, newTokenRecord({ requestId: a, position: 1, now: 1, validityPeriod: 60, issuer: 'i', kid: 'k' }));
      await store.saveAuthorization(event, a, 'x');
      await store.addSigningKeyIfNone(event, { kid: 'k', privateJwk: '{}', publicJwk: '{}', createdAt: 1 });
      assert.equal(await store.deleteRoomSettings(event), true);
      await store.deleteRoomData(event);
      await store.close();

      const db = new DatabaseSync(path);
      const tables = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
      const perRoom = tables.filter((table) =>
        (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).some((c) => c.name === 'event_id'),
      );
      assert.ok(perRoom.length >= 7, perRoom.join(', '));
      for (const table of perRoom) {
        const { n } = db.prepare(`SELECT count(*) AS n FROM "${table}" WHERE event_id = ?`).get(event) as { n: number };
        assert.equal(n, 0, `${table} still holds rows of the deleted room`);
      }
      db.close();
    } finally {
      await store.close();
      rmSync(dbDir, { recursive: true, force: true });
    }
  });
});
