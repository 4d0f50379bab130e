import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
