// The audit log of the private API (AuditStore): the `audit_log` table, its AUDIT_LOG_KEEP most recent entries.

import { AUDIT_LOG_KEEP, type AuditEntry } from '../../domain/ports/store.ts';
import { prepareAll, type Prepared, type SqliteConnection } from './connection.ts';

const SQL = {
  add: 'INSERT INTO audit_log (entry) VALUES (?)',
  dropOld: 'DELETE FROM audit_log WHERE seq <= (SELECT MAX(seq) FROM audit_log) - ?',
  list: 'SELECT seq, entry FROM audit_log WHERE seq < ? ORDER BY seq DESC LIMIT ?',
};

export class SqliteAudit {
  private readonly connection: SqliteConnection;
  private readonly sql: Prepared<typeof SQL>;

  constructor(connection: SqliteConnection) {
    this.connection = connection;
    this.sql = prepareAll(connection.db, SQL);
  }

  async appendAudit(entry: AuditEntry): Promise<void> {
    await this.connection.transaction(null, () => {
      this.sql.add.run(JSON.stringify(entry));
      this.sql.dropOld.run(AUDIT_LOG_KEEP);
    });
  }

  async listAudit(limit: number, beforeSeq?: number): Promise<(AuditEntry & { seq: number })[]> {
    const rows = this.sql.list.all(beforeSeq ?? Number.MAX_SAFE_INTEGER, limit) as { seq: number; entry: string }[];
    return rows.map((row) => ({ ...(JSON.parse(row.entry) as AuditEntry), seq: Number(row.seq) }));
  }
}
