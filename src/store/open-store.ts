// Opens the store a configuration names: the embedded SQLite file (default), an in-memory SQLite, or Redis.

import type { ServerConfig } from '../config/config.ts';
import { ConfigError } from '../config/config.ts';
import type { Store } from './port.ts';
import { SqliteStore } from './sqlite/sqlite-store.ts';

export async function openStore(config: Pick<ServerConfig, 'store' | 'sqliteSynchronous'>): Promise<Store> {
  const location = config.store;
  switch (location.kind) {
    case 'sqlite':
      return new SqliteStore({ path: location.path, synchronous: config.sqliteSynchronous });
    case 'memory':
      return new SqliteStore({ path: ':memory:' });
    case 'redis':
      throw new ConfigError('the Redis store is not available in this build yet');
  }
}
