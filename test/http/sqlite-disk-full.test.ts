// A full disk under the embedded SQLite store (issue 14): joins answer 503 with Retry-After in the one JSON
// error shape (not 500), /readyz answers 503 until a write succeeds again, nothing acknowledged is lost, and
// the node recovers without a restart once there is room again.
//
// The full disk is SQLite's own: the test lowers the connection's `max_page_count` (no root, no loop device
// or tmpfs needed), so SQLite fails writes with a real SQLITE_FULL exactly as when the file system is full;
// raising it again stands for freeing disk space.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

describe('SQLite store on a full disk', () => {
  let dir: string;
  let store: SqliteStore;
  let node: TestNode;
  let db: DatabaseSync;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'anteroom-full-'));
    store = new SqliteStore({ path: join(dir, 'anteroom.db') });
    // The store's own connection: max_page_count is per connection.
    db = (store as unknown as { db: DatabaseSync }).db;
    node = await startTestNode({}, { store });
  });
  after(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const joinOnce = async () => {
    const response = await node.post('/assign_queue_num', { event_id: 'Sample' });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Record<string, unknown> };
  };

  it('joins answer 503 + Retry-After, /readyz 503; once there is room again both recover; nothing acknowledged lost', async () => {
    const acknowledged: string[] = [];
    for (let i = 0; i < 5; i++) {
      const reply = await joinOnce();
      assert.equal(reply.status, 200);
      acknowledged.push(reply.body.api_request_id as string);
    }
    const { page_count: pages } = db.prepare('PRAGMA page_count').get() as { page_count: number };
    db.exec(`PRAGMA max_page_count = ${pages}`);

    // Fill the last free pages (if any); then every join must fail with 503.
    let refused: Awaited<ReturnType<typeof joinOnce>> | undefined;
    for (let i = 0; i < 5000 && !refused; i++) {
      const reply = await joinOnce();
      if (reply.status === 200) acknowledged.push(reply.body.api_request_id as string);
      else refused = reply;
    }
    assert.ok(refused, 'the database never filled up');
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.ok(Number(refused.retryAfter) >= 1, 'Retry-After');
    assert.deepEqual(Object.keys(refused.body), ['error']);
    assert.doesNotMatch(JSON.stringify(refused.body), /sqlite|full|database/i, 'no internals in the answer');
    assert.equal((await node.get('/readyz')).status, 503, '/readyz while no write succeeds');
    assert.equal((await node.get('/healthz')).status, 200);

    db.exec('PRAGMA max_page_count = 1073741823'); // disk space freed
    assert.equal((await node.get('/readyz')).status, 200, '/readyz once a write succeeds again');
    const after = await joinOnce();
    assert.equal(after.status, 200, 'joins work again without a restart');

    for (const [i, id] of acknowledged.entries()) {
      const response = await node.get(`/queue_num?event_id=Sample&request_id=${id}`);
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { queue_number: number }).queue_number, i + 1, 'acknowledged positions kept, gap-free');
    }
  });
});
