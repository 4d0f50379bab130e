import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
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
