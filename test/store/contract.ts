// The store contract: the behaviour every Store backend must show. Written once; each backend's test file
// calls runStoreContract with a factory for a fresh, empty store. Tests use their own event IDs so a
// backend shared between tests never sees another test's data.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it, after } from 'node:test';
import { newTokenRecord, type TokenRecord } from '../../src/domain/claims.ts';
import type { Store } from '../../src/domain/ports/store.ts';
import { runPresenceContract } from './presence-contract.ts';

export interface StoreFactory {
  create(): Promise<Store>;
  /** Called once after the suite. */
  teardown?(): Promise<void>;
}

let eventCounter = 0;
const freshEvent = () => `contract-${process.pid}-${Date.now()}-${++eventCounter}`;

function tokenFor(requestId: string, position: number, now: number, validity = 3600): TokenRecord {
  return newTokenRecord({ requestId, position, now, validityPeriod: validity, issuer: 'https://issuer', kid: 'k1' });
}

async function join(store: Store, eventId: string, count: number, entryTime: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await store.assignPositions(eventId, ids.map((requestId) => ({ requestId, entryTime })));
  return ids;
}

export function runStoreContract(name: string, factory: StoreFactory): void {
  describe(`store contract: ${name}`, () => {
    const stores: Store[] = [];
    const open = async () => {
      const store = await factory.create();
      stores.push(store);
      return store;
    };
    after(async () => {
      for (const store of stores) await store.close();
      await factory.teardown?.();
    });

    it('the history keeps one sample per minute (the latest), reads a range oldest first, drops the expired', async () => {
      const store = await open();
      const event = freshEvent();
      const counters = (queue: number) => ({ queue, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0 });
      await store.recordHistory(event, { minute: 600, counters: counters(1), active: 0 }, 3600);
      await store.recordHistory(event, { minute: 660, counters: counters(2), active: 1 }, 3600);
      await store.recordHistory(event, { minute: 660, counters: counters(3), active: 1 }, 3600);
      assert.deepEqual(await store.readHistory(event, 0, 10_000), [
        { minute: 600, counters: counters(1), active: 0 },
        { minute: 660, counters: counters(3), active: 1 },
      ]);
      assert.deepEqual((await store.readHistory(event, 630, 660)).map((s) => s.minute), [660]);
      await store.recordHistory(event, { minute: 4260, counters: counters(4), active: 0 }, 3600);
      assert.deepEqual((await store.readHistory(event, 0, 10_000)).map((s) => s.minute), [660, 4260]);
      assert.deepEqual(await store.readHistory(freshEvent(), 0, 10_000), []);
    });

    it('the wait histograms add up per minute and field (several nodes), read a range oldest first, drop the expired', async () => {
      const store = await open();
      const event = freshEvent();
      await store.addWaits(event, { minute: 600, counts: { w3: 2, e1: 1 } }, 3600);
      await store.addWaits(event, { minute: 660, counts: { w5: 1 } }, 3600);
      await store.addWaits(event, { minute: 600, counts: { w3: 3, w4: 1 } }, 3600);
      assert.deepEqual(await store.readWaits(event, 0, 10_000), [
        { minute: 600, counts: { w3: 5, w4: 1, e1: 1 } },
        { minute: 660, counts: { w5: 1 } },
      ]);
      assert.deepEqual((await store.readWaits(event, 630, 660)).map((m) => m.minute), [660]);
      await store.addWaits(event, { minute: 4260, counts: { w0: 1 } }, 3600);
      assert.deepEqual((await store.readWaits(event, 0, 10_000)).map((m) => m.minute), [660, 4260]);
      assert.deepEqual(await store.readWaits(freshEvent(), 0, 10_000), []);
      // Deleting the room deletes its history and its histograms.
      await store.recordHistory(event, { minute: 4260, counters: { queue: 1, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0 }, active: 0 }, 3600);
      await store.deleteRoomData(event);
      assert.deepEqual(await store.readWaits(event, 0, 10_000), []);
      assert.deepEqual(await store.readHistory(event, 0, 10_000), []);
    });

    it('the audit log keeps entries newest first, pages by sequence number, and outlives the room they name', async () => {
      const store = await open();
      const event = freshEvent();
      const entry = (n: number) => ({
        at: 1_700_000_000_000 + n, caller: 'admin token', address: '192.0.2.1', action: 'POST /private/increment_serving_counter',
        event_id: event, request: { event_id: event, increment_by: n }, before: { serving_num: n - 1 }, after: { serving_num: n },
      });
      for (const n of [1, 2, 3]) await store.appendAudit(entry(n));
      const newest = await store.listAudit(2);
      assert.deepEqual(newest.map(({ seq: _seq, ...rest }) => rest), [entry(3), entry(2)]);
      assert.ok(newest[0]!.seq > newest[1]!.seq);
      const older = await store.listAudit(1, newest[1]!.seq);
      assert.deepEqual(older.map(({ seq: _seq, ...rest }) => rest), [entry(1)]);
      await store.putRoom(event, '{}');
      await store.deleteRoomData(event);
      assert.deepEqual((await store.listAudit(3)).map((e) => e.at), [entry(3).at, entry(2).at, entry(1).at]);
    });

    it('an unknown event has all counters at zero', async () => {
      const store = await open();
      assert.deepEqual(await store.getCounters(freshEvent()), {
        queue: 0, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0, generation: 0,
      });
      assert.equal(await store.getServingCounter(freshEvent()), 0);
    });

    it('assigns positions 1..N in request order, and continues the numbering in the next batch', async () => {
      const store = await open();
      const event = freshEvent();
      const first = await store.assignPositions(event, [
        { requestId: randomUUID(), entryTime: 100 },
        { requestId: randomUUID(), entryTime: 100 },
      ]);
      const idC = randomUUID();
      const second = await store.assignPositions(event, [{ requestId: idC, entryTime: 101 }]);
      assert.deepEqual(first, [1, 2]);
      assert.deepEqual(second, [3]);
      assert.deepEqual(await store.getPosition(event, idC), { position: 3, entryTime: 101 });
      assert.equal((await store.getCounters(event)).queue, 3);
    });

    it('concurrent batches never share or skip a position', async () => {
      const store = await open();
      const event = freshEvent();
      const batches = await Promise.all(
        Array.from({ length: 20 }, () =>
          store.assignPositions(event, Array.from({ length: 10 }, () => ({ requestId: randomUUID(), entryTime: 1 }))),
        ),
      );
      const all = batches.flat().sort((a, b) => a - b);
      assert.deepEqual(all, Array.from({ length: 200 }, (_, i) => i + 1));
    });

    describe('assignPositionsIfAbsent (intake that may deliver a join twice)', () => {
      it('a redelivered join keeps its position and entry time; new joins continue the numbering', async () => {
        const store = await open();
        const event = freshEvent();
        const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
        assert.deepEqual(
          await store.assignPositionsIfAbsent(event, [{ requestId: a, entryTime: 100 }, { requestId: b, entryTime: 100 }]),
          [1, 2],
        );
        // The batch is delivered again with one new message: only the new request ID is numbered.
        assert.deepEqual(
          await store.assignPositionsIfAbsent(event, [
            { requestId: b, entryTime: 105 },
            { requestId: c, entryTime: 105 },
            { requestId: a, entryTime: 105 },
          ]),
          [2, 3, 1],
        );
        assert.deepEqual(await store.getPosition(event, a), { position: 1, entryTime: 100 });
        assert.deepEqual(await store.getPosition(event, b), { position: 2, entryTime: 100 });
        assert.deepEqual(await store.getPosition(event, c), { position: 3, entryTime: 105 });
        assert.equal((await store.getCounters(event)).queue, 3);
      });

      it('a request ID repeated inside one batch gets one position', async () => {
        const store = await open();
        const event = freshEvent();
        const [a, b] = [randomUUID(), randomUUID()];
        assert.deepEqual(
          await store.assignPositionsIfAbsent(event, [
            { requestId: a, entryTime: 1 },
            { requestId: b, entryTime: 1 },
            { requestId: a, entryTime: 2 },
          ]),
          [1, 2, 1],
        );
        assert.equal((await store.getCounters(event)).queue, 2);
      });

      it('a batch of only known request IDs changes nothing', async () => {
        const store = await open();
        const event = freshEvent();
        const ids = await join(store, event, 2, 7);
        assert.deepEqual(await store.assignPositionsIfAbsent(event, ids.map((requestId) => ({ requestId, entryTime: 9 }))), [1, 2]);
        assert.equal((await store.getCounters(event)).queue, 2);
        assert.deepEqual(await store.getPosition(event, ids[1]!), { position: 2, entryTime: 7 });
      });

      it('concurrent redeliveries of the same batch number each request ID once, without gaps', async () => {
        const store = await open();
        const event = freshEvent();
        const batch = Array.from({ length: 10 }, () => ({ requestId: randomUUID(), entryTime: 1 }));
        const results = await Promise.all(Array.from({ length: 5 }, () => store.assignPositionsIfAbsent(event, batch)));
        for (const result of results) assert.deepEqual(result, results[0]);
        assert.deepEqual([...results[0]!].sort((x, y) => x - y), Array.from({ length: 10 }, (_, i) => i + 1));
        assert.equal((await store.getCounters(event)).queue, 10);
      });
    });

    it('an empty batch assigns nothing', async () => {
      const store = await open();
      const event = freshEvent();
      assert.deepEqual(await store.assignPositions(event, []), []);
      assert.deepEqual(await store.assignPositionsIfAbsent(event, []), []);
      assert.equal((await store.getCounters(event)).queue, 0);
    });

    it('an unknown request ID has no position', async () => {
      const store = await open();
      assert.equal(await store.getPosition(freshEvent(), randomUUID()), null);
      assert.equal(await store.getClaimContext(freshEvent(), randomUUID()), null);
    });

    it('events are independent', async () => {
      const store = await open();
      const a = freshEvent();
      const b = freshEvent();
      await join(store, a, 3, 1);
      await store.incrementServing(a, 2, 1);
      assert.equal((await store.getCounters(b)).queue, 0);
      assert.deepEqual(await store.assignPositions(b, [{ requestId: randomUUID(), entryTime: 1 }]), [1]);
      assert.equal(await store.getServingCounter(b), 0);
    });

    it('incrementServing adds, accepts negative steps and never goes below zero', async () => {
      const store = await open();
      const event = freshEvent();
      assert.equal(await store.incrementServing(event, 5, 10), 5);
      assert.equal(await store.incrementServing(event, -2, 11), 3);
      assert.equal(await store.incrementServing(event, -10, 12), 0);
      assert.equal(await store.getServingCounter(event), 0);
    });

    it('records the first time the counter reached each position (servedAt)', async () => {
      const store = await open();
      const event = freshEvent();
      const [a, b, c] = await join(store, event, 3, 100);
      await store.incrementServing(event, 1, 200);
      await store.incrementServing(event, 1, 300);
      await store.incrementServing(event, -1, 400);
      await store.incrementServing(event, 1, 500); // back to 2: not a new highest value
      await store.incrementServing(event, 1, 600);
      assert.equal((await store.getClaimContext(event, a!))?.servedAt, 200);
      assert.equal((await store.getClaimContext(event, b!))?.servedAt, 300);
      assert.equal((await store.getClaimContext(event, c!))?.servedAt, 600);
    });

    it('a position not yet reached has no servedAt', async () => {
      const store = await open();
      const event = freshEvent();
      const [a] = await join(store, event, 1, 100);
      const ctx = await store.getClaimContext(event, a!);
      assert.equal(ctx?.servedAt, null);
      assert.equal(ctx?.position, 1);
      assert.equal(ctx?.entryTime, 100);
      assert.equal(ctx?.token, null);
    });

    it('issueTokenIfAbsent stores once and counts once; a second call returns the first record', async () => {
      const store = await open();
      const event = freshEvent();
      const [a] = await join(store, event, 1, 100);
      await store.incrementServing(event, 1, 100);
      const first = await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 150));
      const second = await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 999));
      assert.equal(first.outcome, 'issued');
      assert.equal(second.outcome, 'existing');
      assert.ok(second.outcome === 'existing' && second.record.iat === 150);
      assert.equal((await store.getCounters(event)).tokens, 1);
      assert.equal((await store.getClaimContext(event, a!))?.token?.exp, 150 + 3600);
    });

    it('concurrent issueTokenIfAbsent calls store exactly one record', async () => {
      const store = await open();
      const event = freshEvent();
      const [a] = await join(store, event, 1, 100);
      const results = await Promise.all(
        Array.from({ length: 25 }, (_, i) => store.issueTokenIfAbsent(event, tokenFor(a!, 1, 200 + i))),
      );
      assert.equal(results.filter((r) => r.outcome === 'issued').length, 1);
      const iats = new Set(results.map((r) => (r.outcome === 'issued' || r.outcome === 'existing' ? r.record.iat : -1)));
      assert.equal(iats.size, 1);
      assert.equal((await store.getCounters(event)).tokens, 1);
    });

    it('first claims issued together, in two rooms and with a duplicate, count each room\'s sets once each', async () => {
      const store = await open();
      const [one, two] = [freshEvent(), freshEvent()];
      const inOne = await join(store, one, 3, 100);
      const inTwo = await join(store, two, 2, 100);
      const results = await Promise.all([
        ...inOne.map((id, i) => store.issueTokenIfAbsent(one, tokenFor(id, i + 1, 200))),
        store.issueTokenIfAbsent(one, tokenFor(inOne[0]!, 1, 201)),
        ...inTwo.map((id, i) => store.issueTokenIfAbsent(two, tokenFor(id, i + 1, 200))),
      ]);
      assert.deepEqual(
        results.map((r) => r.outcome),
        ['issued', 'issued', 'issued', 'existing', 'issued', 'issued'],
      );
      assert.equal((await store.getCounters(one)).tokens, 3);
      assert.equal((await store.getCounters(two)).tokens, 2);
    });

    it("issueTokenIfAbsent issues at the position the request holds, not at another visitor's the record names", async () => {
      // The record's position is what the claim read before signing; the store decides on what the request holds
      // when it writes (SQLite tries the record's position first, in one statement, and must not take b's place).
      const store = await open();
      const event = freshEvent();
      const [a, b] = await join(store, event, 2, 100);
      await store.incrementServing(event, 2, 100);
      const stale = await store.issueTokenIfAbsent(event, tokenFor(a!, 2, 150));
      assert.equal(stale.outcome, 'issued');
      assert.ok(stale.outcome === 'issued' && stale.record.position === 1, "a's set is at a's position");
      assert.equal((await store.getClaimContext(event, a!))?.token?.position, 1);
      assert.equal((await store.getClaimContext(event, b!))?.token, null, "b's position has no set");
      const own = await store.issueTokenIfAbsent(event, tokenFor(b!, 2, 160));
      assert.ok(own.outcome === 'issued' && own.record.position === 2 && own.record.iat === 160, 'b can still claim its own');
      assert.equal((await store.getCounters(event)).tokens, 2);
    });

    it('issueTokenIfAbsent refuses a request ID without a position', async () => {
      const store = await open();
      const event = freshEvent();
      const result = await store.issueTokenIfAbsent(event, tokenFor(randomUUID(), 1, 1));
      assert.equal(result.outcome, 'no-position');
      assert.equal((await store.getCounters(event)).tokens, 0);
    });

    it('token records keep the nonce', async () => {
      const store = await open();
      const event = freshEvent();
      const [a] = await join(store, event, 1, 100);
      const record = { ...tokenFor(a!, 1, 100), nonce: 'n-123' };
      await store.issueTokenIfAbsent(event, record);
      assert.equal((await store.getClaimContext(event, a!))?.token?.nonce, 'n-123');
    });

    it('token records keep the signatures of the set, with or without a nonce, and a second issue returns them', async () => {
      const store = await open();
      const event = freshEvent();
      const [a, b, c] = await join(store, event, 3, 100);
      const signatures = `${'A'.repeat(342)}.${'B'.repeat(342)}.${'C_-9'.repeat(85)}`;
      await store.issueTokenIfAbsent(event, { ...tokenFor(a!, 1, 100), signatures });
      await store.issueTokenIfAbsent(event, { ...tokenFor(b!, 2, 100), signatures, nonce: 'n-1' });
      await store.issueTokenIfAbsent(event, tokenFor(c!, 3, 100));
      const token = (await store.getClaimContext(event, a!))?.token;
      assert.equal(token?.signatures, signatures);
      assert.equal(token?.nonce, undefined);
      const withNonce = (await store.getClaimContext(event, b!))?.token;
      assert.deepEqual([withNonce?.signatures, withNonce?.nonce], [signatures, 'n-1']);
      assert.equal((await store.getClaimContext(event, c!))?.token?.signatures, undefined, 'a record issued without them');
      const again = await store.issueTokenIfAbsent(event, { ...tokenFor(a!, 1, 999), signatures: 'x.y.z' });
      assert.equal(again.outcome, 'existing');
      assert.equal(again.outcome === 'existing' ? again.record.signatures : undefined, signatures);
    });

    it('closeSession closes an open session once and counts it', async () => {
      const store = await open();
      const event = freshEvent();
      const [a, b, c] = await join(store, event, 3, 100);
      await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 100));
      await store.issueTokenIfAbsent(event, tokenFor(b!, 2, 100));
      await store.issueTokenIfAbsent(event, tokenFor(c!, 3, 100));
      assert.equal(await store.closeSession(event, a!, 1), true);
      assert.equal(await store.closeSession(event, a!, -1), false);
      assert.equal(await store.closeSession(event, b!, -1), true);
      assert.equal(await store.closeSession(event, c!, 1), true);
      assert.equal(await store.closeSession(event, randomUUID(), 1), false);
      const counters = await store.getCounters(event);
      assert.equal(counters.completed, 2);
      assert.equal(counters.abandoned, 1);
      assert.equal((await store.getClaimContext(event, a!))?.token?.status, 1);
      assert.equal((await store.getClaimContext(event, b!))?.token?.status, -1);
    });

    it('renewSession: the shared last seen, touched forward only, starting at the token set\'s iat', async () => {
      const store = await open();
      const event = freshEvent();
      const [a, b] = await join(store, event, 2, 100);
      assert.deepEqual(await store.renewSession(event, a!, 150_000, null, true), { outcome: 'no-session' });
      assert.deepEqual(await store.renewSession(event, randomUUID(), 150_000, null, true), { outcome: 'no-session' });
      await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 100)); // iat 100 s
      await store.issueTokenIfAbsent(event, tokenFor(b!, 2, 100));
      // Never touched: last seen is the issue time; a read does not write.
      assert.deepEqual(await store.renewSession(event, a!, 150_000, null, false), { outcome: 'open', lastSeen: 100_000 });
      assert.deepEqual(await store.renewSession(event, a!, 150_000, null, true), { outcome: 'open', lastSeen: 150_000 });
      // A touch from a node whose clock or request is behind never moves it back.
      assert.deepEqual(await store.renewSession(event, a!, 120_000, null, true), { outcome: 'open', lastSeen: 150_000 });
      // The idle check reads the shared value: seen at 150 s, so not idle before 150 s.
      assert.deepEqual(await store.renewSession(event, a!, 170_000, 150_000, false), { outcome: 'open', lastSeen: 150_000 });
      assert.deepEqual((await store.getCounters(event)).abandoned, 0);
      // b was never touched: idle since its iat.
      assert.deepEqual(await store.renewSession(event, b!, 170_000, 100_001, true), { outcome: 'ended' });
      assert.deepEqual(await store.renewSession(event, b!, 170_000, null, true), { outcome: 'closed' });
      assert.equal((await store.getClaimContext(event, b!))?.token?.status, -1);
      assert.equal(await store.closeSession(event, b!, 1), false);
      assert.equal((await store.getCounters(event)).abandoned, 1);
      assert.equal(await store.countActiveTokens(event, 100), 1);
      // A session closed by update_session is closed for renewSession too.
      assert.equal(await store.closeSession(event, a!, 1), true);
      assert.deepEqual(await store.renewSession(event, a!, 180_000, null, true), { outcome: 'closed' });
    });

    it('renewSession: of two nodes ending the same idle session at once, one ends it and it is counted once', async () => {
      const store = await open();
      const event = freshEvent();
      const [a] = await join(store, event, 1, 100);
      await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 100));
      const results = await Promise.all([
        store.renewSession(event, a!, 200_000, 150_000, false),
        store.renewSession(event, a!, 200_000, 150_000, true),
      ]);
      assert.deepEqual(results.map((r) => r.outcome).sort(), ['closed', 'ended']);
      assert.equal((await store.getCounters(event)).abandoned, 1);
    });

    it('renewSession: a reset forgets the last seen with the token sets', async () => {
      const store = await open();
      const event = freshEvent();
      const [a] = await join(store, event, 1, 100);
      await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 100));
      await store.renewSession(event, a!, 500_000, null, true);
      await store.resetEvent(event);
      assert.deepEqual(await store.renewSession(event, a!, 600_000, null, true), { outcome: 'no-session' });
      await store.assignPositions(event, [{ requestId: a!, entryTime: 200 }]);
      await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 200));
      assert.deepEqual(await store.renewSession(event, a!, 600_000, null, false), { outcome: 'open', lastSeen: 200_000 });
    });

    it('closeSession refuses a request ID that has a position but no token', async () => {
      const store = await open();
      const event = freshEvent();
      const [a] = await join(store, event, 1, 100);
      assert.equal(await store.closeSession(event, a!, 1), false);
      assert.equal((await store.getCounters(event)).completed, 0);
    });

    it('active tokens: exp ≥ now and session open; expired tokens: exp < now, any status, oldest first', async () => {
      const store = await open();
      const event = freshEvent();
      const ids = await join(store, event, 4, 100);
      await store.issueTokenIfAbsent(event, tokenFor(ids[0]!, 1, 100, 10)); // exp 110
      await store.issueTokenIfAbsent(event, tokenFor(ids[1]!, 2, 100, 5)); // exp 105
      await store.issueTokenIfAbsent(event, tokenFor(ids[2]!, 3, 100, 50)); // exp 150
      await store.issueTokenIfAbsent(event, tokenFor(ids[3]!, 4, 100, 50)); // exp 150, closed below
      await store.closeSession(event, ids[3]!, 1);
      assert.equal(await store.countActiveTokens(event, 110), 2); // ids[0] (exp == now) and ids[2]
      assert.equal(await store.countActiveTokens(event, 111), 1);
      assert.deepEqual(await store.listExpiredTokens(event, 111, 100), [ids[1], ids[0]]);
      assert.deepEqual(await store.listExpiredTokens(event, 200, 100), [ids[1], ids[0], ids[2], ids[3]]);
      assert.deepEqual(await store.listExpiredTokens(event, 200, 1), [ids[1]]);
    });

    describe('advanceExpiry', () => {
      it('does nothing while expiry is off', async () => {
        const store = await open();
        const event = freshEvent();
        await join(store, event, 3, 100);
        await store.incrementServing(event, 3, 100);
        const result = await store.advanceExpiry(event, 10_000, true, 10_000);
        assert.equal(result.maxExpired, 0);
        assert.equal(result.newlyExpiredUnclaimed, 0);
      });

      it('expires, in order, the served positions eligible before the cutoff, skipping claimed ones', async () => {
        const store = await open();
        const event = freshEvent();
        await store.syncExpirySwitch(event, true, 0);
        const ids = await join(store, event, 5, 100);
        await store.incrementServing(event, 3, 100); // 1..3 eligible at 100
        await store.issueTokenIfAbsent(event, tokenFor(ids[1]!, 2, 120));
        // Boundary: eligible at 100, cutoff 100 → 100 < 100 is false → nothing yet.
        assert.equal((await store.advanceExpiry(event, 100, false, 1000)).maxExpired, 0);
        const result = await store.advanceExpiry(event, 101, false, 1001);
        assert.deepEqual(result, {
          previousMaxExpired: 0, maxExpired: 3, newlyExpiredUnclaimed: 2, previousServing: 3, serving: 3,
        });
        const counters = await store.getCounters(event);
        assert.equal(counters.expired, 2);
        assert.equal(counters.maxExpired, 3);
        // Repeating the step changes nothing.
        assert.equal((await store.advanceExpiry(event, 101, false, 1002)).newlyExpiredUnclaimed, 0);
        assert.equal((await store.getCounters(event)).expired, 2);
      });

      it('with incrServing moves the counter by the unclaimed count and records when', async () => {
        const store = await open();
        const event = freshEvent();
        await store.syncExpirySwitch(event, true, 0);
        const ids = await join(store, event, 6, 100);
        await store.incrementServing(event, 2, 100);
        const result = await store.advanceExpiry(event, 200, true, 500);
        assert.equal(result.newlyExpiredUnclaimed, 2);
        assert.equal(result.previousServing, 2);
        assert.equal(result.serving, 4);
        assert.equal(await store.getServingCounter(event), 4);
        assert.equal((await store.getClaimContext(event, ids[3]!))?.servedAt, 500);
      });

      it('uses the time the counter first reached a position, not the current counter', async () => {
        const store = await open();
        const event = freshEvent();
        await store.syncExpirySwitch(event, true, 0);
        await join(store, event, 4, 100);
        await store.incrementServing(event, 2, 100);
        await store.incrementServing(event, 2, 300); // 3..4 eligible at 300
        await store.incrementServing(event, -4, 301); // counter back to 0: 1..4 stay eligible
        assert.equal((await store.advanceExpiry(event, 250, false, 400)).maxExpired, 2);
        assert.deepEqual(await store.advanceExpiry(event, 301, false, 401), {
          previousMaxExpired: 2, maxExpired: 4, newlyExpiredUnclaimed: 2, previousServing: 0, serving: 0,
        });
        assert.equal((await store.getCounters(event)).expired, 4);
      });

      it('stops at the first position that joined at or after the cutoff', async () => {
        const store = await open();
        const event = freshEvent();
        await store.syncExpirySwitch(event, true, 0);
        await join(store, event, 2, 100);
        await join(store, event, 2, 300);
        await store.incrementServing(event, 10, 50); // counter beyond the queue
        const result = await store.advanceExpiry(event, 200, false, 400);
        assert.equal(result.maxExpired, 2);
        assert.equal(result.newlyExpiredUnclaimed, 2);
      });

      it('never expires positions eligible before expiry was switched on until the switch time is past', async () => {
        const store = await open();
        const event = freshEvent();
        await join(store, event, 2, 100);
        await store.incrementServing(event, 2, 100);
        await store.syncExpirySwitch(event, true, 1000);
        assert.equal((await store.advanceExpiry(event, 1000, false, 1900)).maxExpired, 0);
        assert.equal((await store.advanceExpiry(event, 1001, false, 1901)).maxExpired, 2);
        assert.equal((await store.getClaimContext(event, (await join(store, event, 1, 1)).at(0)!))?.expiryEnabledSince, 1000);
      });

      it('switching expiry off clears the switch time; switching on again keeps the first time', async () => {
        const store = await open();
        const event = freshEvent();
        const [a] = await join(store, event, 1, 1);
        await store.syncExpirySwitch(event, true, 10);
        await store.syncExpirySwitch(event, true, 20);
        assert.equal((await store.getClaimContext(event, a!))?.expiryEnabledSince, 10);
        await store.syncExpirySwitch(event, false, 30);
        assert.equal((await store.getClaimContext(event, a!))?.expiryEnabledSince, null);
      });

      it('a position recorded as expired can no longer be issued a token', async () => {
        const store = await open();
        const event = freshEvent();
        await store.syncExpirySwitch(event, true, 0);
        const [a] = await join(store, event, 1, 100);
        await store.incrementServing(event, 1, 100);
        await store.advanceExpiry(event, 200, false, 200);
        assert.equal((await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 200))).outcome, 'expired');
        assert.equal((await store.getCounters(event)).tokens, 0);
      });

      it('tolerates a counter beyond the queue and an empty queue', async () => {
        const store = await open();
        const event = freshEvent();
        await store.syncExpirySwitch(event, true, 0);
        await store.incrementServing(event, 100, 10);
        assert.equal((await store.advanceExpiry(event, 1000, true, 1000)).maxExpired, 0);
        assert.equal(await store.getServingCounter(event), 100);
      });
    });

    it('resetEvent deletes positions, tokens and counters of that event only, and keeps keys', async () => {
      const store = await open();
      const event = freshEvent();
      const other = freshEvent();
      const [a] = await join(store, event, 2, 100);
      const [o] = await join(store, other, 1, 100);
      await store.incrementServing(event, 2, 100);
      await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 100));
      await store.addSigningKeyIfNone(event, { kid: 'k', privateJwk: '{}', publicJwk: '{}', createdAt: 1 });
      await store.resetEvent(event);
      // A reset starts a new generation of the room (the page compares it to notice the restart).
      assert.deepEqual(await store.getCounters(event), {
        queue: 0, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0, generation: 1,
      });
      await store.resetEvent(event);
      assert.equal((await store.getCounters(event)).generation, 2);
      assert.equal(await store.getPosition(event, a!), null);
      assert.deepEqual(await store.listExpiredTokens(event, 1e12, 10), []);
      assert.equal((await store.getSigningKeys(event)).length, 1);
      assert.deepEqual(await store.getPosition(other, o!), { position: 1, entryTime: 100 });
      // Numbering starts again at 1, and servedAt history is gone.
      const [b] = await join(store, event, 1, 200);
      assert.equal((await store.getPosition(event, b!))?.position, 1);
      assert.equal((await store.getClaimContext(event, b!))?.servedAt, null);
    });

    it('a token cannot be issued for a request ID whose position was reset', async () => {
      const store = await open();
      const event = freshEvent();
      const [a] = await join(store, event, 1, 100);
      await store.resetEvent(event);
      assert.equal((await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 100))).outcome, 'no-position');
    });

    it('addSigningKeyIfNone keeps the first key (the winner of a race)', async () => {
      const store = await open();
      const event = freshEvent();
      const results = await Promise.all(
        ['a', 'b', 'c'].map((kid) =>
          store.addSigningKeyIfNone(event, { kid, privateJwk: `{"k":"${kid}"}`, publicJwk: '{}', createdAt: 1 }),
        ),
      );
      assert.equal(new Set(results.map((k) => k.kid)).size, 1);
      const keys = await store.getSigningKeys(event);
      assert.equal(keys.length, 1);
      assert.equal(keys[0]?.privateJwk, `{"k":"${keys[0]?.kid}"}`);
    });

    it('a lock is held by one owner until it expires, and renewed by its owner', async () => {
      const store = await open();
      const lock = `lock-${freshEvent()}`;
      assert.equal(await store.tryAcquireLock(lock, 'node-a', 1000, 10_000), true);
      assert.equal(await store.tryAcquireLock(lock, 'node-b', 1000, 10_500), false);
      assert.equal(await store.tryAcquireLock(lock, 'node-a', 1000, 10_600), true);
      assert.equal(await store.tryAcquireLock(lock, 'node-b', 1000, 11_599), false);
      assert.equal(await store.tryAcquireLock(lock, 'node-b', 1000, 11_600), true);
    });

    describe('bot defence: rate counters and single-use marks', () => {
      it('countInWindow adds to the current window, reads with 0, and carries the count over as the previous window', async () => {
        const store = await open();
        const name = `c:${freshEvent()}:192.0.2.1`;
        const minute = 60_000;
        const t = 1_000 * minute + 5_000; // 5 s into a window
        assert.deepEqual(await store.countInWindow(name, 1, minute, t), { current: 1, previous: 0, endsAtMs: 1_001 * minute });
        assert.deepEqual(await store.countInWindow(name, 2, minute, t + 1_000), { current: 3, previous: 0, endsAtMs: 1_001 * minute });
        assert.deepEqual(await store.countInWindow(name, 0, minute, t + 2_000), { current: 3, previous: 0, endsAtMs: 1_001 * minute });
        assert.deepEqual(await store.countInWindow(name, 1, minute, t + minute), { current: 1, previous: 3, endsAtMs: 1_002 * minute });
        assert.deepEqual(await store.countInWindow(name, 0, minute, t + 3 * minute), { current: 0, previous: 0, endsAtMs: 1_004 * minute });
        assert.deepEqual(await store.countInWindow(`${name}-other`, 0, minute, t), { current: 0, previous: 0, endsAtMs: 1_001 * minute });
      });

      it('concurrent counts are all counted', async () => {
        const store = await open();
        const name = `r:${freshEvent()}`;
        await Promise.all(Array.from({ length: 50 }, () => store.countInWindow(name, 1, 60_000, 120_000)));
        assert.equal((await store.countInWindow(name, 0, 60_000, 120_000)).current, 50);
      });

      it('useOnce is true for the first use only, even for concurrent uses', async () => {
        const store = await open();
        const name = `pow:${freshEvent()}:${randomUUID()}`;
        const now = Date.now();
        const results = await Promise.all(Array.from({ length: 10 }, () => store.useOnce(name, now + 60_000, now)));
        assert.equal(results.filter(Boolean).length, 1);
        assert.equal(await store.useOnce(name, now + 60_000, now + 1_000), false);
        assert.equal(await store.useOnce(`${name}-other`, now + 60_000, now), true);
      });

      it('holdUntil extends a hold, never shortens it, answers until when it held before, and lets it run out', async () => {
        const store = await open();
        const name = `flood:${freshEvent()}`;
        const now = Date.now();
        assert.equal(await store.holdUntil(name, 0, now), 0);
        assert.equal(await store.holdUntil(name, now + 60_000, now), 0);
        assert.equal(await store.holdUntil(name, 0, now + 1_000), now + 60_000);
        assert.equal(await store.holdUntil(name, now + 30_000, now + 1_000), now + 60_000); // not shortened
        assert.equal(await store.holdUntil(name, now + 61_000, now + 1_000), now + 60_000);
        assert.equal(await store.holdUntil(name, 0, now + 2_000), now + 61_000);
        assert.equal(await store.holdUntil(name, 0, now + 61_000), 0); // ran out
        assert.equal(await store.holdUntil(`${name}-other`, 0, now), 0);
      });

      it('holdUntil: of concurrent calls starting a hold, one sees it not held', async () => {
        const store = await open();
        const name = `flood:${freshEvent()}`;
        const now = Date.now();
        const before = await Promise.all(Array.from({ length: 20 }, () => store.holdUntil(name, now + 60_000, now)));
        assert.equal(before.filter((held) => held === 0).length, 1);
      });
    });

    it('claimSecret keeps the first value stored under a name (the winner of a race) and returns it to everyone', async () => {
      const store = await open();
      const name = `secret-${freshEvent()}`;
      const candidates = ['a', 'b', 'c'].map((c) => `${c}-${randomUUID()}`);
      const results = await Promise.all(candidates.map((candidate) => store.claimSecret(name, candidate)));
      assert.equal(new Set(results).size, 1);
      assert.ok(candidates.includes(results[0]!));
      assert.equal(await store.claimSecret(name, 'later'), results[0]);
    });

    it('claimSecret keeps names apart and values byte for byte', async () => {
      const store = await open();
      const base = `secret-${freshEvent()}`;
      const value = JSON.stringify({ adminToken: 'x+/=', note: 'é ✓ "quoted"\n' });
      assert.equal(await store.claimSecret(`${base}:one`, value), value);
      assert.equal(await store.claimSecret(`${base}:two`, 'other'), 'other');
      assert.equal(await store.claimSecret(`${base}:one`, 'ignored'), value);
    });

    it('replaceSecret swaps the stored value only when it is the expected one', async () => {
      const store = await open();
      const name = `secret-${freshEvent()}`;
      assert.equal(await store.replaceSecret(name, 'anything', 'next'), null, 'nothing stored: nothing replaced');
      assert.equal(await store.claimSecret(name, 'first'), 'first', 'replaceSecret must not have stored a value');
      assert.equal(await store.replaceSecret(name, 'stale', 'second'), 'first');
      assert.equal(await store.replaceSecret(name, 'first', 'second'), 'second');
      assert.equal(await store.claimSecret(name, 'ignored'), 'second');
    });

    it('concurrent replaceSecret calls from the same value agree on one winner', async () => {
      const store = await open();
      const name = `secret-${freshEvent()}`;
      await store.claimSecret(name, 'v0');
      const candidates = Array.from({ length: 5 }, (_, i) => `v1-${i}-${randomUUID()}`);
      const results = await Promise.all(candidates.map((candidate) => store.replaceSecret(name, 'v0', candidate)));
      assert.equal(new Set(results).size, 1);
      assert.ok(candidates.includes(results[0]!));
    });

    describe('OpenID Connect authorizations', () => {
      it('are bound to a request ID that has a position, and read back as stored', async () => {
        const store = await open();
        const event = freshEvent();
        const [a, b] = await join(store, event, 2, 100);
        const value = JSON.stringify({ redirect_uri: 'https://rp.example/cb?x=1', state: 'é ✓ "q"', nonce: 'n' });
        assert.equal(await store.saveAuthorization(event, a!, value), true);
        assert.equal(await store.getAuthorization(event, a!), value);
        assert.equal(await store.getAuthorization(event, b!), null);
        assert.equal(await store.getAuthorization(freshEvent(), a!), null, 'events are independent');
      });

      it('saving again replaces the earlier one', async () => {
        const store = await open();
        const event = freshEvent();
        const [a] = await join(store, event, 1, 100);
        await store.saveAuthorization(event, a!, 'one');
        assert.equal(await store.saveAuthorization(event, a!, 'two'), true);
        assert.equal(await store.getAuthorization(event, a!), 'two');
      });

      it('are refused for a request ID without a position', async () => {
        const store = await open();
        const event = freshEvent();
        const id = randomUUID();
        assert.equal(await store.saveAuthorization(event, id, 'x'), false);
        assert.equal(await store.getAuthorization(event, id), null);
      });

      it('are deleted by resetEvent, with the positions', async () => {
        const store = await open();
        const event = freshEvent();
        const [a] = await join(store, event, 1, 100);
        await store.saveAuthorization(event, a!, 'x');
        await store.resetEvent(event);
        assert.equal(await store.getAuthorization(event, a!), null);
        assert.equal(await store.saveAuthorization(event, a!, 'y'), false);
      });
    });

    // ---- leaving the queue and automatic admission (issue 12) ----

    describe('leaveQueue', () => {
      it('gives a waiting position up once: counted in left, marked in the claim context', async () => {
        const store = await open();
        const event = freshEvent();
        const [a, b] = await join(store, event, 2, 100);
        assert.deepEqual(await store.leaveQueue(event, b!), { outcome: 'left', position: 2 });
        assert.deepEqual(await store.leaveQueue(event, b!), { outcome: 'already-left' });
        const counters = await store.getCounters(event);
        assert.equal(counters.left, 1);
        assert.equal(counters.expired, 0);
        assert.equal((await store.getClaimContext(event, b!))?.left, true);
        assert.equal((await store.getClaimContext(event, a!))?.left, false);
        // The position itself is kept (queue_num still answers it).
        assert.deepEqual(await store.getPosition(event, b!), { position: 2, entryTime: 100 });
      });

      it('lists the positions given up above a point, ascending, at most the limit asked (issue 33: people ahead)', async () => {
        const store = await open();
        const event = freshEvent();
        const ids = await join(store, event, 8, 100);
        for (const index of [6, 1, 3, 4]) await store.leaveQueue(event, ids[index]!);
        assert.deepEqual(await store.leftPositionsAbove?.(event, 0, 100), [2, 4, 5, 7]);
        assert.deepEqual(await store.leftPositionsAbove?.(event, 2, 100), [4, 5, 7]);
        assert.deepEqual(await store.leftPositionsAbove?.(event, 2, 2), [4, 5]);
        assert.deepEqual(await store.leftPositionsAbove?.(event, 7, 100), []);
        assert.deepEqual(await store.leftPositionsAbove?.(freshEvent(), 0, 100), []);
      });

      it('refuses a request ID without a position, changing nothing', async () => {
        const store = await open();
        const event = freshEvent();
        await join(store, event, 1, 100);
        assert.deepEqual(await store.leaveQueue(event, randomUUID()), { outcome: 'no-position' });
        assert.equal((await store.getCounters(event)).left, 0);
      });

      it('a left position can no longer be issued a token set', async () => {
        const store = await open();
        const event = freshEvent();
        const [a] = await join(store, event, 1, 100);
        await store.incrementServing(event, 1, 100);
        await store.leaveQueue(event, a!);
        assert.deepEqual(await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 150)), { outcome: 'left' });
        assert.equal((await store.getCounters(event)).tokens, 0);
        assert.equal((await store.getClaimContext(event, a!))?.token, null);
      });

      it('refuses a position that holds a token set, and one recorded as expired', async () => {
        const store = await open();
        const event = freshEvent();
        await store.syncExpirySwitch(event, true, 0);
        const [a, b] = await join(store, event, 2, 100);
        await store.incrementServing(event, 2, 100);
        await store.issueTokenIfAbsent(event, tokenFor(a!, 1, 110));
        assert.deepEqual(await store.leaveQueue(event, a!), { outcome: 'claimed' });
        await store.advanceExpiry(event, 200, false, 200);
        assert.deepEqual(await store.leaveQueue(event, b!), { outcome: 'expired' });
        const counters = await store.getCounters(event);
        assert.equal(counters.left, 0);
        assert.equal(counters.expired, 1);
      });

      it('of a leave and a first claim of the same position at once, exactly one succeeds', async () => {
        const store = await open();
        const event = freshEvent();
        const ids = await join(store, event, 20, 100);
        await store.incrementServing(event, 20, 100);
        const outcomes = await Promise.all(
          ids.map((id, i) => Promise.all([store.leaveQueue(event, id), store.issueTokenIfAbsent(event, tokenFor(id, i + 1, 100))])),
        );
        for (const [leave, issue] of outcomes) {
          const pair = `${leave.outcome}/${issue.outcome}`;
          assert.ok(pair === 'left/left' || pair === 'claimed/issued', pair);
        }
        const counters = await store.getCounters(event);
        assert.equal(counters.left + counters.tokens, 20);
        assert.equal(counters.left, outcomes.filter(([leave]) => leave.outcome === 'left').length);
      });

      it('the expiry job passes over left positions without counting them as expired', async () => {
        const store = await open();
        const event = freshEvent();
        await store.syncExpirySwitch(event, true, 0);
        const ids = await join(store, event, 4, 100);
        await store.incrementServing(event, 4, 100);
        await store.leaveQueue(event, ids[1]!);
        await store.issueTokenIfAbsent(event, tokenFor(ids[2]!, 3, 110));
        const step = await store.advanceExpiry(event, 200, true, 200);
        assert.equal(step.maxExpired, 4);
        assert.equal(step.newlyExpiredUnclaimed, 2, 'positions 1 and 4: not the left 2 nor the claimed 3');
        const counters = await store.getCounters(event);
        assert.equal(counters.expired, 2);
        assert.equal(counters.left, 1);
      });

      it('resetEvent forgets left positions', async () => {
        const store = await open();
        const event = freshEvent();
        const [a] = await join(store, event, 1, 100);
        await store.leaveQueue(event, a!);
        await store.resetEvent(event);
        assert.equal((await store.getCounters(event)).left, 0);
        assert.deepEqual(await store.leaveQueue(event, a!), { outcome: 'no-position' });
        const [b] = await join(store, event, 1, 200);
        assert.equal((await store.getClaimContext(event, b!))?.left, false, 'position 1 again, not left');
      });
    });

    describe('incrementServingWithinQueue', () => {
      it('moves by min(by, queue − serving) and says from where to where', async () => {
        const store = await open();
        const event = freshEvent();
        await join(store, event, 5, 100);
        assert.deepEqual(await store.incrementServingWithinQueue(event, 3, 100), { previousServing: 0, serving: 3 });
        assert.deepEqual(await store.incrementServingWithinQueue(event, 10, 101), { previousServing: 3, serving: 5 });
        assert.deepEqual(await store.incrementServingWithinQueue(event, 1, 102), { previousServing: 5, serving: 5 });
        assert.equal(await store.getServingCounter(event), 5);
      });

      it('an empty queue admits nobody; a counter already past the queue never moves back', async () => {
        const store = await open();
        const event = freshEvent();
        assert.deepEqual(await store.incrementServingWithinQueue(event, 4, 100), { previousServing: 0, serving: 0 });
        await join(store, event, 2, 100);
        await store.incrementServing(event, 7, 100); // the manual move keeps VWR's unclamped behaviour
        assert.deepEqual(await store.incrementServingWithinQueue(event, 4, 101), { previousServing: 7, serving: 7 });
        assert.deepEqual(await store.incrementServingWithinQueue(event, 0, 102), { previousServing: 7, serving: 7 });
      });

      it('with ifServing, moves only from the counter the caller read (two overlapping ticks admit once)', async () => {
        const store = await open();
        const event = freshEvent();
        await join(store, event, 10, 100);
        // Two ticks read the counter at 0; the first moves it, the second's move from 0 changes nothing.
        assert.deepEqual(await store.incrementServingWithinQueue(event, 4, 100, 0), { previousServing: 0, serving: 4 });
        assert.deepEqual(await store.incrementServingWithinQueue(event, 4, 101, 0), { previousServing: 4, serving: 4 });
        assert.equal(await store.getServingCounter(event), 4);
        assert.deepEqual(await store.incrementServingWithinQueue(event, 4, 102, 4), { previousServing: 4, serving: 8 });
        const racing = await Promise.all([store.incrementServingWithinQueue(event, 1, 103, 8), store.incrementServingWithinQueue(event, 1, 103, 8)]);
        assert.equal(racing.filter((m) => m.serving !== m.previousServing).length, 1, 'exactly one of two racing moves from 8');
        assert.equal(await store.getServingCounter(event), 9);
      });

      it('records when each new highest value was first reached', async () => {
        const store = await open();
        const event = freshEvent();
        const [a, b] = await join(store, event, 2, 100);
        await store.incrementServingWithinQueue(event, 1, 300);
        await store.incrementServingWithinQueue(event, 5, 400);
        assert.equal((await store.getClaimContext(event, a!))?.servedAt, 300);
        assert.equal((await store.getClaimContext(event, b!))?.servedAt, 400);
      });

      it('concurrent moves never pass the last position handed out', async () => {
        const store = await open();
        const event = freshEvent();
        await join(store, event, 10, 100);
        const moves = await Promise.all(Array.from({ length: 25 }, () => store.incrementServingWithinQueue(event, 1, 100)));
        assert.equal(await store.getServingCounter(event), 10);
        assert.equal(moves.filter((m) => m.serving > m.previousServing).length, 10);
      });

      it('advanceExpiry with incrServing never moves the counter past the queue either', async () => {
        const store = await open();
        const event = freshEvent();
        await store.syncExpirySwitch(event, true, 0);
        await join(store, event, 6, 100);
        await store.incrementServing(event, 5, 100);
        const step = await store.advanceExpiry(event, 200, true, 200);
        assert.equal(step.newlyExpiredUnclaimed, 5);
        assert.deepEqual([step.previousServing, step.serving], [5, 6]);
        assert.equal(await store.getServingCounter(event), 6);
      });
    });

    describe('getAdmissionSnapshot', () => {
      it('counts the positions first reached in the window and in this second, from the serving history', async () => {
        const store = await open();
        const event = freshEvent();
        await join(store, event, 10, 90);
        await store.incrementServingWithinQueue(event, 3, 100);
        await store.incrementServingWithinQueue(event, 2, 150);
        await store.incrementServing(event, -2, 155); // back down: reaching 4 and 5 again is not new
        await store.incrementServingWithinQueue(event, 3, 160);
        const at = (windowStart: number) => store.getAdmissionSnapshot(event, 160, windowStart);
        assert.equal((await at(101)).reachedInWindow, 3, 'values 4..6, reached at 150 and 160');
        assert.equal((await at(100)).reachedInWindow, 6);
        assert.equal((await at(161)).reachedInWindow, 0);
        const snapshot = await at(101);
        assert.equal(snapshot.reachedThisSecond, 1, 'value 6, reached at 160');
        assert.equal(snapshot.queue, 10);
        assert.equal(snapshot.serving, 6);
      });

      it('occupancy: admitted positions not claimed, expired or left, and open unexpired sessions', async () => {
        const store = await open();
        const event = freshEvent();
        await store.syncExpirySwitch(event, true, 0);
        const ids = await join(store, event, 8, 100);
        await store.incrementServing(event, 2, 100); // 1, 2 eligible at 100: expire below
        await store.incrementServing(event, 4, 300); // 3..6 admitted at 300
        await store.advanceExpiry(event, 200, false, 301); // 1, 2 expired
        await store.issueTokenIfAbsent(event, tokenFor(ids[2]!, 3, 310, 100)); // exp 410
        await store.issueTokenIfAbsent(event, tokenFor(ids[3]!, 4, 310, 100));
        await store.closeSession(event, ids[3]!, 1);
        await store.leaveQueue(event, ids[4]!); // 5 left
        const snapshot = await store.getAdmissionSnapshot(event, 400, 340);
        assert.equal(snapshot.awaitingClaim, 1, 'only position 6');
        assert.equal(snapshot.activeSessions, 1, 'position 3; 4 is closed');
        assert.equal((await store.getAdmissionSnapshot(event, 411, 351)).activeSessions, 0, 'exp 410 < 411');
        await store.leaveQueue(event, ids[7]!); // 8 is not admitted: leaving it frees nothing admitted
        assert.equal((await store.getAdmissionSnapshot(event, 400, 340)).awaitingClaim, 1);
      });

      it('a counter past the queue admits no more than the queue', async () => {
        const store = await open();
        const event = freshEvent();
        await join(store, event, 3, 100);
        await store.incrementServing(event, 50, 100);
        const snapshot = await store.getAdmissionSnapshot(event, 100, 41);
        assert.equal(snapshot.awaitingClaim, 3);
        assert.equal(snapshot.reachedInWindow, 50, 'the history counts what the counter reached');
      });

      it('an unknown event reads as empty', async () => {
        const store = await open();
        assert.deepEqual(await store.getAdmissionSnapshot(freshEvent(), 100, 41), {
          queue: 0, serving: 0, reachedInWindow: 0, reachedThisSecond: 0, awaitingClaim: 0, activeSessions: 0,
        });
      });
    });

    // ---- Pre-queue and the draw ----

    describe('pre-queue and the draw', () => {
      let seedCounter = 0;
      /** A distinct, well-formed candidate each time (the store treats it as opaque text). */
      const candidate = () => {
        const n = String(++seedCounter).padStart(4, '0');
        return { seed: `${n}${'a'.repeat(60)}`, commitment: `${n}${'c'.repeat(60)}`, algorithm: 'test/v1' };
      };
      const joinsOf = (ids: readonly string[], entryTime: number) => ids.map((requestId) => ({ requestId, entryTime }));
      const ids = (n: number) => Array.from({ length: n }, () => randomUUID());
      /** Every entry in join order, read in chunks of `chunk`. */
      const readAll = async (store: Store, event: string, chunk = 2) => {
        const all = [];
        for (let after = 0; ; ) {
          const page = await store.readPrequeue(event, after, chunk);
          if (page.length === 0) return all;
          all.push(...page);
          after = page.at(-1)!.joinOrder;
        }
      };

      // The draw's record without the pre-queue figure's counts (listed, leftPrequeue: issue 33), which getDraw
      // adds where the store keeps them and the writing operations need not answer.
      const drawRecord = <T extends object | null>(draw: T) => {
        if (!draw) return draw;
        const { listed: _listed, leftPrequeue: _left, ...rest } = draw as T & { listed?: number; leftPrequeue?: number };
        return rest;
      };

      it('a room has no draw until one is committed; the first candidate stored wins every race', async () => {
        const store = await open();
        const event = freshEvent();
        assert.equal(await store.getDraw(event), null);
        const candidates = [candidate(), candidate(), candidate()];
        const results = await Promise.all(candidates.map((c) => store.commitDraw(event, c)));
        assert.equal(new Set(results.map((r) => r.seed)).size, 1);
        const winner = candidates.find((c) => c.seed === results[0]!.seed)!;
        assert.ok(winner, 'the stored seed is one of the candidates');
        const stored = drawRecord(await store.getDraw(event));
        assert.deepEqual(stored, {
          state: 'committed', seed: winner.seed, commitment: winner.commitment, algorithm: 'test/v1',
          drawnThrough: 0, entryCount: 0, progress: 0, firstPosition: 0, numberedThrough: 0,
        });
        assert.deepEqual(drawRecord(await store.commitDraw(event, candidate())), stored);
      });

      it('joinPrequeue lists joins in join order without positions, and commits the draw with the first join', async () => {
        const store = await open();
        const event = freshEvent();
        const first = candidate();
        const [a, b, c] = ids(3);
        assert.deepEqual(await store.joinPrequeue(event, joinsOf([a!, b!], 100), first), [0, 0]);
        assert.deepEqual(await store.joinPrequeue(event, joinsOf([c!], 101), candidate()), [0]);
        assert.equal((await store.getDraw(event))?.seed, first.seed, 'the first join stored the seed; later ones kept it');
        assert.equal((await store.getCounters(event)).queue, 0, 'nobody has a position');
        assert.equal(await store.getPosition(event, a!), null);
        assert.deepEqual(await store.getPrequeueEntry(event, c!), {
          requestId: c, entryTime: 101, joinOrder: 3, left: false, position: null,
        });
        assert.equal(await store.getPrequeueEntry(event, randomUUID()), null);
        assert.equal(await store.getPrequeueEntry(freshEvent(), a!), null, 'rooms are independent');
        assert.deepEqual((await readAll(store, event)).map((e) => [e.requestId, e.joinOrder, e.entryTime]), [
          [a, 1, 100], [b, 2, 100], [c, 3, 101],
        ]);
      });

      it('joinPrequeue lists a request ID once: a repeat inside a batch or a redelivery keeps the first entry', async () => {
        const store = await open();
        const event = freshEvent();
        const [a, b] = ids(2);
        assert.deepEqual(await store.joinPrequeue(event, [...joinsOf([a!, b!], 1), ...joinsOf([a!], 2)], candidate()), [0, 0, 0]);
        assert.deepEqual(await store.joinPrequeue(event, joinsOf([b!], 5), candidate()), [0]);
        const entries = await readAll(store, event);
        assert.deepEqual(entries.map((e) => [e.requestId, e.joinOrder, e.entryTime]), [[a, 1, 1], [b, 2, 1]]);
      });

      it('joinPrequeue answers the position of a request ID that has one, and never lists it', async () => {
        const store = await open();
        const event = freshEvent();
        const [queued] = await join(store, event, 1, 50);
        assert.deepEqual(await store.joinPrequeue(event, joinsOf([queued!], 60), candidate()), [1]);
        assert.equal(await store.getPrequeueEntry(event, queued!), null);
      });

      it('readPrequeue pages in join order, flags those who left, and shows positions once numbered', async () => {
        const store = await open();
        const event = freshEvent();
        const people = ids(5);
        await store.joinPrequeue(event, joinsOf(people, 10), candidate());
        assert.equal(await store.leavePrequeue(event, people[1]!), 'left');
        assert.deepEqual((await store.readPrequeue(event, 0, 2)).map((e) => e.joinOrder), [1, 2]);
        assert.deepEqual((await store.readPrequeue(event, 2, 10)).map((e) => e.joinOrder), [3, 4, 5]);
        assert.deepEqual(await store.readPrequeue(event, 5, 10), []);
        const all = await readAll(store, event);
        assert.deepEqual(all.map((e) => e.left), [false, true, false, false, false]);
        assert.ok(all.every((e) => e.position === null));
      });

      it('startDraw fixes the entries that have not left and where place 1 starts; a started draw stays as it is', async () => {
        const store = await open();
        const event = freshEvent();
        await join(store, event, 2, 1); // positions 1 and 2 were handed out before the pre-queue
        const people = ids(4);
        await store.joinPrequeue(event, joinsOf(people, 10), candidate());
        await store.leavePrequeue(event, people[2]!);
        const started = await store.startDraw(event, candidate());
        assert.equal(started.state, 'drawing');
        assert.equal(started.drawnThrough, 4);
        assert.equal(started.entryCount, 3);
        assert.equal(started.progress, 0);
        assert.equal(started.firstPosition, 3);
        assert.equal(started.numberedThrough, 4);
        // Joins keep arriving while the draw runs: listed behind the drawn entries.
        const [late] = ids(1);
        assert.deepEqual(await store.joinPrequeue(event, joinsOf([late!], 20), candidate()), [0]);
        assert.deepEqual(drawRecord(await store.startDraw(event, candidate())), drawRecord(started), 'a second start (a resumed draw) changes nothing');
      });

      it('startDraw of a room without a draw stores the candidate: a draw of no entries', async () => {
        const store = await open();
        const event = freshEvent();
        const seed = candidate();
        const started = await store.startDraw(event, seed);
        assert.equal(started.seed, seed.seed);
        assert.equal(started.entryCount, 0);
        const done = await store.numberLateArrivals(event, 10);
        assert.equal(done?.state, 'done');
      });

      it('numberDrawn numbers places in the order given, keeps entry times and moves the queue counter', async () => {
        const store = await open();
        const event = freshEvent();
        const people = ids(5);
        for (const [i, id] of people.entries()) await store.joinPrequeue(event, joinsOf([id], 100 + i), candidate());
        await store.startDraw(event, candidate());
        const order = [people[3]!, people[0]!, people[4]!, people[1]!, people[2]!];
        const afterFirst = await store.numberDrawn(event, 0, order.slice(0, 2));
        assert.equal(afterFirst?.progress, 2);
        assert.equal((await store.getCounters(event)).queue, 2);
        const afterSecond = await store.numberDrawn(event, 2, order.slice(2));
        assert.equal(afterSecond?.progress, 5);
        assert.equal(afterSecond?.state, 'drawing', 'done only once the late arrivals are numbered');
        for (const [place, id] of order.entries()) {
          assert.deepEqual(await store.getPosition(event, id), { position: place + 1, entryTime: 100 + people.indexOf(id) });
          assert.equal((await store.getPrequeueEntry(event, id))?.position, place + 1);
        }
        assert.equal((await store.getCounters(event)).queue, 5);
      });

      it('numberDrawn changes nothing unless the progress is the expected one and the chunk fits', async () => {
        const store = await open();
        const event = freshEvent();
        const people = ids(3);
        await store.joinPrequeue(event, joinsOf(people, 1), candidate());
        assert.equal((await store.numberDrawn(event, 0, [people[0]!]))?.state, 'committed', 'not started: nothing');
        assert.equal(await store.numberDrawn(freshEvent(), 0, [people[0]!]), null, 'no draw at all');
        await store.startDraw(event, candidate());
        await store.numberDrawn(event, 0, [people[1]!]);
        // A stale runner that still thinks no place is numbered: refused, nothing written.
        const stale = await store.numberDrawn(event, 0, [people[0]!]);
        assert.equal(stale?.progress, 1);
        assert.equal(await store.getPosition(event, people[0]!), null);
        // More places than the draw has: refused.
        const over = await store.numberDrawn(event, 1, [people[0]!, people[2]!, randomUUID()]);
        assert.equal(over?.progress, 1);
        assert.equal((await store.getCounters(event)).queue, 1);
      });

      it('numberDrawn refuses, writing nothing, an ID that is not an unnumbered entry of the draw', async () => {
        const store = await open();
        const event = freshEvent();
        const people = ids(4);
        await store.joinPrequeue(event, joinsOf(people.slice(0, 3), 1), candidate());
        await store.leavePrequeue(event, people[2]!);
        await store.startDraw(event, candidate());
        await store.joinPrequeue(event, joinsOf([people[3]!], 2), candidate()); // a late arrival
        for (const intruder of [people[2]!, people[3]!, randomUUID()]) {
          await assert.rejects(store.numberDrawn(event, 0, [people[0]!, intruder]));
        }
        await store.numberDrawn(event, 0, [people[0]!]);
        await assert.rejects(store.numberDrawn(event, 1, [people[0]!]), 'an entry numbered already');
        assert.equal(await store.getPosition(event, people[1]!), null);
        assert.equal((await store.getCounters(event)).queue, 1);
        assert.equal((await store.getDraw(event))?.progress, 1);
      });

      it('numberLateArrivals numbers those who joined during the draw FIFO behind it, then marks it done', async () => {
        const store = await open();
        const event = freshEvent();
        const drawn = ids(2);
        await store.joinPrequeue(event, joinsOf(drawn, 1), candidate());
        await store.startDraw(event, candidate());
        const late = ids(4);
        await store.joinPrequeue(event, joinsOf(late, 5), candidate());
        assert.equal((await store.numberLateArrivals(event, 10))?.numberedThrough, 2, 'not before every place is numbered');
        assert.equal(await store.getPosition(event, late[0]!), null);
        await store.numberDrawn(event, 0, [drawn[1]!, drawn[0]!]);
        assert.equal(await store.leavePrequeue(event, late[1]!), 'left', 'a late arrival can leave before it is numbered');
        const partly = await store.numberLateArrivals(event, 2);
        assert.equal(partly?.state, 'drawing');
        assert.equal(partly?.numberedThrough, 4);
        assert.deepEqual(await store.getPosition(event, late[0]!), { position: 3, entryTime: 5 });
        // Another join while the late arrivals are being numbered: still FIFO.
        const [later] = ids(1);
        assert.deepEqual(await store.joinPrequeue(event, joinsOf([later!], 6), candidate()), [0]);
        const done = await store.numberLateArrivals(event, 10);
        assert.equal(done?.state, 'done');
        assert.deepEqual(
          await Promise.all([late[2]!, late[3]!, later!].map(async (id) => (await store.getPosition(event, id))?.position)),
          [4, 5, 6],
        );
        assert.equal(await store.getPosition(event, late[1]!), null, 'who left is never numbered');
        assert.equal((await store.getCounters(event)).queue, 6);
        // After the draw, a join routed to the pre-queue gets the next position at once.
        const [after] = ids(1);
        assert.deepEqual(await store.joinPrequeue(event, joinsOf([after!, after!], 9), candidate()), [7, 7]);
        assert.equal(await store.getPrequeueEntry(event, after!), null);
        assert.deepEqual(await store.getPosition(event, after!), { position: 7, entryTime: 9 }, 'found by its request ID');
        assert.deepEqual(await store.joinPrequeue(event, joinsOf([after!], 10), candidate()), [7], 'a redelivery keeps its position');
        assert.deepEqual(drawRecord(await store.numberLateArrivals(event, 10)), drawRecord(await store.getDraw(event)), 'done stays done');
      });

      it('leavePrequeue: left, already-left, not in the pre-queue, being drawn, numbered', async () => {
        const store = await open();
        const event = freshEvent();
        const people = ids(3);
        await store.joinPrequeue(event, joinsOf(people, 1), candidate());
        assert.equal(await store.leavePrequeue(event, people[0]!), 'left');
        assert.equal(await store.leavePrequeue(event, people[0]!), 'already-left');
        assert.equal((await store.getPrequeueEntry(event, people[0]!))?.left, true);
        assert.equal(await store.leavePrequeue(event, randomUUID()), 'not-in-prequeue');
        await store.startDraw(event, candidate());
        assert.equal(await store.leavePrequeue(event, people[1]!), 'being-drawn');
        assert.equal((await store.getPrequeueEntry(event, people[1]!))?.left, false);
        await store.numberDrawn(event, 0, [people[2]!, people[1]!]);
        assert.equal(await store.leavePrequeue(event, people[1]!), 'numbered');
        assert.equal((await store.getDraw(event))?.entryCount, 2);
      });

      it('numbers a chunk of 5,000 places in one call', async () => {
        const store = await open();
        const event = freshEvent();
        const people = ids(5000);
        for (let i = 0; i < people.length; i += 1000) {
          await store.joinPrequeue(event, joinsOf(people.slice(i, i + 1000), 1), candidate());
        }
        await store.startDraw(event, candidate());
        const reversed = [...people].reverse();
        assert.equal((await store.numberDrawn(event, 0, reversed))?.progress, 5000);
        assert.equal((await store.getPosition(event, people[0]!))?.position, 5000);
        assert.equal((await store.getPosition(event, people[4999]!))?.position, 1);
        assert.equal((await readAll(store, event, 5000)).length, 5000);
      });

      it('resetEvent deletes the pre-queue and the draw', async () => {
        const store = await open();
        const event = freshEvent();
        const people = ids(2);
        await store.joinPrequeue(event, joinsOf(people, 1), candidate());
        await store.startDraw(event, candidate());
        await store.numberDrawn(event, 0, people);
        await store.resetEvent(event);
        assert.equal(await store.getDraw(event), null);
        assert.equal(await store.getPrequeueEntry(event, people[0]!), null);
        assert.deepEqual(await store.readPrequeue(event, 0, 10), []);
        assert.equal(await store.leavePrequeue(event, people[0]!), 'not-in-prequeue');
        // A new pre-queue starts at join order 1 with a new seed.
        const fresh = candidate();
        await store.joinPrequeue(event, joinsOf([people[0]!], 2), fresh);
        assert.equal((await store.getPrequeueEntry(event, people[0]!))?.joinOrder, 1);
        assert.equal((await store.getDraw(event))?.seed, fresh.seed);
      });
    });

    // ---- rooms at runtime (the rooms API) ----
    describe('rooms at runtime', () => {
      const settingsOf = (eventId: string, extra: Record<string, unknown> = {}) => JSON.stringify({ event_id: eventId, ...extra });

      it('putRoom creates, then replaces, and bumps the version for each change but not for the same text', async () => {
        const store = await open();
        const room = freshEvent();
        const v0 = await store.roomsVersion();
        assert.equal(await store.putRoom(room, settingsOf(room)), 'created');
        const v1 = await store.roomsVersion();
        assert.ok(v1 > v0, `version ${v0} → ${v1}`);
        assert.equal(await store.putRoom(room, settingsOf(room)), 'unchanged');
        assert.equal(await store.roomsVersion(), v1, 'the same text bumps nothing');
        assert.equal(await store.putRoom(room, settingsOf(room, { validity_period: 60 })), 'replaced');
        const v2 = await store.roomsVersion();
        assert.ok(v2 > v1, `version ${v1} → ${v2}`);
        const stored = await store.getRoom(room);
        assert.equal(stored?.settings, settingsOf(room, { validity_period: 60 }));
        assert.equal(stored?.createdVersion, v1, 'a replace keeps the version the room was created at');
        assert.equal(await store.getRoom(freshEvent()), null);
      });

      it('keeps the settings text byte for byte', async () => {
        const store = await open();
        const room = freshEvent();
        const text = JSON.stringify({ event_id: room, issuer: 'é ✓ "quoted" \\ \n', webhooks: [] }, null, 2);
        await store.putRoom(room, text);
        assert.equal((await store.getRoom(room))?.settings, text);
      });

      it('listRooms answers every room with the version they are of, in the order they were created', async () => {
        const store = await open();
        // Created in an order other than the names' order.
        const [a, b] = [`z-${freshEvent()}`, `a-${freshEvent()}`];
        await store.putRoom(a, settingsOf(a));
        await store.putRoom(b, settingsOf(b, { validity_period: 5 }));
        const listed = await store.listRooms();
        assert.equal(listed.version, await store.roomsVersion());
        const mine = listed.rooms.filter((room) => room.eventId === a || room.eventId === b);
        assert.deepEqual(
          mine.map((room) => [room.eventId, room.settings]),
          [[a, settingsOf(a)], [b, settingsOf(b, { validity_period: 5 })]],
        );
        assert.deepEqual(mine.map((room) => room.createdVersion), [(await store.getRoom(a))!.createdVersion, (await store.getRoom(b))!.createdVersion]);
        assert.ok(mine[0]!.createdVersion < mine[1]!.createdVersion);
      });

      it('a room deleted and created again has a new creation version', async () => {
        const store = await open();
        const room = freshEvent();
        await store.putRoom(room, settingsOf(room));
        const first = (await store.getRoom(room))!.createdVersion;
        assert.equal(await store.deleteRoomSettings(room), true);
        assert.equal(await store.putRoom(room, settingsOf(room)), 'created');
        assert.ok((await store.getRoom(room))!.createdVersion > first);
      });

      it('deleteRoomSettings, then deleteRoomData, delete the settings and all the room\'s data, and nothing of another room', async () => {
        const store = await open();
        const [room, other] = [freshEvent(), freshEvent()];
        for (const id of [room, other]) {
          await store.putRoom(id, settingsOf(id));
          await store.syncExpirySwitch(id, true, 50);
          await store.addSigningKeyIfNone(id, { kid: `k-${id}`, privateJwk: '{}', publicJwk: '{}', createdAt: 1 });
        }
        const [a, b] = await join(store, room, 2, 100);
        const [o] = await join(store, other, 1, 100);
        await store.incrementServing(room, 2, 100);
        await store.issueTokenIfAbsent(room, tokenFor(a!, 1, 100, 3600));
        await store.issueTokenIfAbsent(room, tokenFor(b!, 2, 100, 1));
        await store.saveAuthorization(room, a!, 'authorization');
        const before = await store.roomsVersion();

        assert.equal(await store.deleteRoomSettings(room), true);
        assert.ok((await store.roomsVersion()) > before);
        assert.equal(await store.getRoom(room), null);
        assert.ok(!(await store.listRooms()).rooms.some((r) => r.eventId === room));
        assert.equal((await store.getCounters(room)).queue, 2, 'the data is the second step\'s');
        await store.deleteRoomData(room);
        const { generation: _generation, ...counters } = await store.getCounters(room);
        assert.deepEqual(counters, {
          queue: 0, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0,
        });
        assert.equal(await store.getPosition(room, a!), null);
        assert.equal(await store.countActiveTokens(room, 100), 0);
        assert.deepEqual(await store.listExpiredTokens(room, 1e12, 10), []);
        assert.equal(await store.getAuthorization(room, a!), null);
        assert.deepEqual(await store.getSigningKeys(room), []);
        // The other room is untouched.
        assert.ok(await store.getRoom(other));
        assert.deepEqual(await store.getPosition(other, o!), { position: 1, entryTime: 100 });
        assert.equal((await store.getSigningKeys(other)).length, 1);

        // Created again, the room starts from nothing: position 1, no history, no expiry switch, a new key.
        await store.putRoom(room, settingsOf(room));
        const [c] = await join(store, room, 1, 200);
        const context = await store.getClaimContext(room, c!);
        assert.equal(context?.position, 1);
        assert.equal(context?.servedAt, null);
        assert.equal(context?.expiryEnabledSince, null);
        assert.equal(context?.token, null);
        assert.equal(await store.countActiveTokens(room, 100), 0);
        const key = await store.addSigningKeyIfNone(room, { kid: 'new', privateJwk: '{}', publicJwk: '{}', createdAt: 2 });
        assert.equal(key.kid, 'new');
        await store.incrementServing(room, 1, 200);
        assert.equal((await store.issueTokenIfAbsent(room, tokenFor(c!, 1, 200))).outcome, 'issued');
        assert.equal((await store.getCounters(room)).tokens, 1);
      });

      it('deleteRoomSettings of an unknown room changes nothing; deleteRoomData needs no settings', async () => {
        const store = await open();
        const room = freshEvent();
        // Data left by a delete interrupted between its two steps.
        const [a] = await join(store, room, 1, 100);
        const before = await store.roomsVersion();
        assert.equal(await store.deleteRoomSettings(room), false);
        assert.equal(await store.roomsVersion(), before);
        assert.deepEqual(await store.getPosition(room, a!), { position: 1, entryTime: 100 });
        await store.deleteRoomData(room);
        assert.equal(await store.getPosition(room, a!), null);
        assert.equal((await store.getCounters(room)).queue, 0);
        assert.equal(await store.roomsVersion(), before);
      });

      it('resetEvent keeps the room\'s settings and the version', async () => {
        const store = await open();
        const room = freshEvent();
        await store.putRoom(room, settingsOf(room));
        await join(store, room, 1, 100);
        const before = await store.roomsVersion();
        await store.resetEvent(room);
        assert.equal((await store.getRoom(room))?.settings, settingsOf(room));
        assert.equal(await store.roomsVersion(), before);
      });
    });

    runPresenceContract(open);

    it('ping answers while the store is reachable', async () => {
      const store = await open();
      await store.ping();
    });
  });
}
