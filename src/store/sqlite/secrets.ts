// Values generated once and shared by every node (SecretStore): the `secrets` table.

import { prepareAll, type Prepared, type SqliteConnection } from './connection.ts';

const SQL = {
  insertSecret: 'INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)',
  getSecret: 'SELECT value FROM secrets WHERE name = ?',
  replaceSecret: 'UPDATE secrets SET value = ? WHERE name = ? AND value = ?',
};

export class SqliteSecrets {
  private readonly connection: SqliteConnection;
  private readonly sql: Prepared<typeof SQL>;

  constructor(connection: SqliteConnection) {
    this.connection = connection;
    this.sql = prepareAll(connection.db, SQL);
  }

  async claimSecret(name: string, candidate: string): Promise<string> {
    return this.connection.transaction(null, () => {
      this.sql.insertSecret.run(name, candidate);
      return (this.sql.getSecret.get(name) as { value: string }).value;
    });
  }

  async replaceSecret(name: string, expected: string, next: string): Promise<string | null> {
    return this.connection.transaction(null, () => {
      this.sql.replaceSecret.run(next, name, expected);
      return (this.sql.getSecret.get(name) as { value: string } | undefined)?.value ?? null;
    });
  }
}
