// The rooms' signing keys (SigningKeyStore): the `signing_keys` table. The private keys are why the database
// file is owner-only (connection.ts).

import type { StoredSigningKey } from '../../domain/ports/store.ts';
import { prepareAll, type Prepared, type SqliteConnection } from './connection.ts';

const SQL = {
  getKeys: 'SELECT kid, private_jwk, public_jwk, created_at FROM signing_keys WHERE event_id = ? ORDER BY created_at, kid',
  insertKey: 'INSERT INTO signing_keys (event_id, kid, private_jwk, public_jwk, created_at) VALUES (?, ?, ?, ?, ?)',
};

export class SqliteSigningKeys {
  private readonly connection: SqliteConnection;
  private readonly sql: Prepared<typeof SQL>;

  constructor(connection: SqliteConnection) {
    this.connection = connection;
    this.sql = prepareAll(connection.db, SQL);
  }

  async getSigningKeys(eventId: string): Promise<StoredSigningKey[]> {
    return (this.sql.getKeys.all(eventId) as Record<string, string | number>[]).map((r) => ({
      kid: String(r.kid),
      privateJwk: String(r.private_jwk),
      publicJwk: String(r.public_jwk),
      createdAt: Number(r.created_at),
    }));
  }

  async addSigningKeyIfNone(eventId: string, key: StoredSigningKey): Promise<StoredSigningKey> {
    await this.connection.transaction(null, () => {
      const existing = this.sql.getKeys.all(eventId);
      if (existing.length === 0) {
        this.sql.insertKey.run(eventId, key.kid, key.privateJwk, key.publicJwk, key.createdAt);
      }
    });
    const keys = await this.getSigningKeys(eventId);
    return keys[0] as StoredSigningKey;
  }
}
