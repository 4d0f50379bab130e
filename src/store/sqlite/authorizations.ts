// OpenID Connect authorization requests bound to queue positions (AuthorizationStore): the
// `oidc_authorizations` table. Emptied by a reset with the positions (reset.ts).

import { prepareAll, type Prepared, type SqliteConnection } from './connection.ts';
import type { SqlitePositions } from './positions.ts';

const SQL = {
  saveAuthorization: 'INSERT OR REPLACE INTO oidc_authorizations (event_id, request_id, authorization_request) VALUES (?, ?, ?)',
  getAuthorization: 'SELECT authorization_request FROM oidc_authorizations WHERE event_id = ? AND request_id = ?',
};

export class SqliteAuthorizations {
  private readonly connection: SqliteConnection;
  private readonly positions: SqlitePositions;
  private readonly sql: Prepared<typeof SQL>;

  constructor(connection: SqliteConnection, positions: SqlitePositions) {
    this.connection = connection;
    this.positions = positions;
    this.sql = prepareAll(connection.db, SQL);
  }

  async saveAuthorization(eventId: string, requestId: string, authorization: string): Promise<boolean> {
    return this.connection.transaction(eventId, () => {
      if (this.positions.find(eventId, requestId) === undefined) return false;
      return Number(this.sql.saveAuthorization.run(eventId, requestId, authorization).changes) === 1;
    });
  }

  async getAuthorization(eventId: string, requestId: string): Promise<string | null> {
    if (this.connection.purges.has(eventId)) await this.connection.purges.get(eventId);
    const row = this.sql.getAuthorization.get(eventId, requestId) as { authorization_request: string } | undefined;
    return row?.authorization_request ?? null;
  }
}
