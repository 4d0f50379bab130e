// Active token sets on the SQLite store are counted in memory (src/store/sqlite/active-tokens.ts, issue 15)
// instead of a count(*) over the tokens table at every num_active_tokens call and /metrics scrape. The count
// must stay exact: against a plain model under random operations and clocks moving both ways, and in the
// store across issue, close, expiry, reopen and reset. Token issues arriving together share one commit.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { newTokenRecord } from '../../src/domain/claims.ts';
import { ActiveTokens } from '../../src/store/sqlite/active-tokens.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function generator(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

describe('ActiveTokens', () => {
  it('agrees with a plain list under random opens, closes and counts, the clock going either way', () => {
    for (const seed of [1, 2, 3, 42]) {
      const random = generator(seed);
      const counter = new ActiveTokens();
      const open: number[] = []; // exp of every open session
      let now = 1000;
      for (let step = 0; step < 5000; step++) {
        const r = random();
        if (r < 0.45) {
          // Mostly later exps (now + validity), sometimes earlier ones (a shorter validity, a past exp).
          const exp = now + Math.floor(random() * 200) - (random() < 0.2 ? 150 : 0);
          counter.opened(exp);
          open.push(exp);
        } else if (r < 0.6 && open.length > 0) {
          const exp = open.splice(Math.floor(random() * open.length), 1)[0]!;
          counter.closed(exp);
        } else {
          now += random() < 0.8 ? Math.floor(random() * 20) : -Math.floor(random() * 100);
          assert.equal(counter.count(now), open.filter((exp) => exp >= now).length, `seed ${seed}, step ${step}`);
        }
      }
    }
  });

  it('a close of an exp it never counted changes nothing', () => {
    const counter = new ActiveTokens();
    counter.opened(100);
    counter.closed(99);
    counter.closed(101);
    assert.equal(counter.count(0), 1);
  });
});

describe('sqlite store: active token sets', () => {
  it('exact across issue, close, expiry, reopen and reset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anteroom-active-'));
    const path = join(dir, 'anteroom.db');
    try {
      let store = new SqliteStore({ path });
      const ids = Array.from({ length: 30 }, () => randomUUID());
      await store.assignPositions('E', ids.map((requestId) => ({ requestId, entryTime: 100 })));
      await store.assignPositions('F', [{ requestId: ids[0]!, entryTime: 100 }]);
      // Token i issued at 1000 + i with a validity of 100: exp 1100 + i.
      for (const [i, requestId] of ids.entries()) {
        const record = newTokenRecord({ requestId, position: i + 1, now: 1000 + i, validityPeriod: 100, issuer: 'i', kid: 'k' });
        await store.issueTokenIfAbsent('E', record);
        await store.issueTokenIfAbsent('E', record); // already issued: counted once
      }
      await store.issueTokenIfAbsent('F', newTokenRecord({ requestId: ids[0]!, position: 1, now: 1000, validityPeriod: 10_000, issuer: 'i', kid: 'k' }));
      await store.closeSession('E', ids[0]!, 1);
      await store.closeSession('E', ids[0]!, -1); // closed already: nothing changes
      await store.closeSession('E', ids[10]!, -1);
      const expected = (now: number) => ids.filter((_, i) => i !== 0 && i !== 10 && 1100 + i >= now).length;
      for (const now of [0, 1100, 1105, 1129, 1130, 1110, 900]) assert.equal(await store.countActiveTokens('E', now), expected(now), `now ${now}`);
      assert.equal(await store.countActiveTokens('F', 5000), 1);
      assert.equal((await store.getAdmissionSnapshot('E', 1105, 1045)).activeSessions, expected(1105));

      await store.close();
      store = new SqliteStore({ path });
      for (const now of [1100, 1120, 1131]) assert.equal(await store.countActiveTokens('E', now), expected(now), `after reopen, now ${now}`);
      await store.resetEvent('E');
      assert.equal(await store.countActiveTokens('E', 0), 0);
      assert.equal(await store.countActiveTokens('F', 5000), 1, 'another event keeps its count');
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sqlite store: token issues are group-committed', () => {
  it('200 issues asked for at once are written in one transaction, each decided on its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anteroom-issue-batch-'));
    const path = join(dir, 'anteroom.db');
    const store = new SqliteStore({ path });
    const checkpointer = new DatabaseSync(path);
    try {
      const ids = Array.from({ length: 200 }, () => randomUUID());
      await store.assignPositions('E', ids.map((requestId) => ({ requestId, entryTime: 100 })));
      checkpointer.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      const record = (requestId: string, i: number) =>
        newTokenRecord({ requestId, position: i + 1, now: 1000, validityPeriod: 60, issuer: 'i', kid: 'k' });
      const results = await Promise.all([
        ...ids.map((id, i) => store.issueTokenIfAbsent('E', record(id, i))),
        store.issueTokenIfAbsent('E', record(ids[0]!, 0)), // the same request ID again, in the same batch
        store.issueTokenIfAbsent('E', record(randomUUID(), 0)), // no position
      ]);
      assert.deepEqual(
        results.map((r) => r.outcome),
        [...ids.map(() => 'issued'), 'existing', 'no-position'],
      );
      assert.equal((await store.getCounters('E')).tokens, 200);
      // One commit: the pages of 200 token rows and their indexes, once. A commit per issue wrote ≥ 400 pages.
      const size = statSync(`${path}-wal`).size;
      const pages = (size - 32) / (4096 + 24);
      assert.ok(pages < 60, `${pages} pages written for 200 issues`);
    } finally {
      checkpointer.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
