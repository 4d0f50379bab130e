// What the in-process store benches share: a database with the store's schema and one room, "Big", of `count`
// positions, each with a token set, written in two bulk statements (about a minute per million here).

import { DatabaseSync } from 'node:sqlite';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

/**
 * `signatures`: an SQL expression for the stored signatures of each set; `expSpread`: the sets' expiries spread
 * over that many seconds (1: all alike).
 */
export async function prefillTokenSets(path: string, count: number, { signatures = "'x.y.z'", expSpread = 1 } = {}): Promise<void> {
  await new SqliteStore({ path }).close();
  const db = new DatabaseSync(path);
  db.exec('PRAGMA synchronous = OFF');
  db.exec('BEGIN');
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO positions (event_id, position, request_id, entry_time) SELECT 'Big', i, lower(hex(randomblob(16))), 1 FROM n`,
  ).run(count);
  db.prepare(
    `INSERT INTO tokens (event_id, request_id, position, iat, nbf, exp, iss, kid, status, nonce, signatures)
     SELECT 'Big', request_id, position, 1, 1, 99999999999 + (position % ?), 'https://bench.example', 'k', 0, NULL, ${signatures}
     FROM positions WHERE event_id = 'Big' ORDER BY request_id`,
  ).run(expSpread);
  db.prepare("INSERT OR REPLACE INTO serving_history (event_id, value, reached_at) VALUES ('Big', ?, 1)").run(count);
  db.exec('COMMIT');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
}
