// The store contract: the behaviour every Store backend must show. Written once; each backend's test file
// calls runStoreContract with a factory for a fresh, empty store. Tests use their own event IDs so a
// backend shared between tests never sees another test's data.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it, after } from 'node:test';
import { newTokenRecord, type TokenRecord } from '../../src/domain/claims.ts';
import type { Store } from '../../src/domain/ports/store.ts';

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

    it('an unknown event has all counters at zero', async () => {
      const store = await open();
      assert.deepEqual(await store.getCounters(freshEvent()), {
        queue: 0, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0,
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
      assert.deepEqual(await store.getCounters(event), {
        queue: 0, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0,
      });
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

    it('ping answers while the store is reachable', async () => {
      const store = await open();
      await store.ping();
    });
  });
}
