import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DatabaseSync } from 'node:sqlite';
import { newTokenRecord } from '../../src/domain/claims.ts';
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
