// The presence part of the store contract (issue 34, src/domain/ports/presence.ts), run by runStoreContract for
// every store: SQLite, Redis standalone and Cluster, the AWS composite store (and Sentinel, presence-sentinel.test.ts).
// A position that never beat (was never marked) is never absent: each test's room has every position beat long
// before (BEAT_LONG_AGO), so that a position not marked since is absent.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { newTokenRecord } from '../../src/domain/claims.ts';
import type { PresenceQuery } from '../../src/domain/ports/presence.ts';
import type { Store } from '../../src/domain/ports/store.ts';

let counter = 0;
const freshEvent = () => `presence-${process.pid}-${Date.now()}-${++counter}`;
const T = 1_900_000_000;
const WINDOW = 5;
const BEAT_LONG_AGO = T - 1000;

function query(now: number, overrides: Partial<PresenceQuery> = {}): PresenceQuery {
  return { now, timeout: 60, windowSeconds: WINDOW, arrivalCutoff: null, rateWindowStart: now - 59, limit: 10, ...overrides };
}

async function room(store: Store, count: number, entryTime = T, beaten = true): Promise<{ eventId: string; ids: string[] }> {
  const eventId = freshEvent();
  const ids = Array.from({ length: count }, () => randomUUID());
  await store.assignPositions(eventId, ids.map((requestId) => ({ requestId, entryTime })));
  // Every position beat long ago (see the top of this file).
  if (beaten) await store.presence.markSeen(eventId, Array.from({ length: count }, (_, i) => i + 1), BEAT_LONG_AGO, WINDOW);
  return { eventId, ids };
}

const token = (requestId: string, position: number, now: number) =>
  newTokenRecord({ requestId, position, now, validityPeriod: 3600, issuer: 'https://issuer', kid: 'k1' });

export function runPresenceContract(open: () => Promise<Store>): void {
  it('presence: positions marked seen are present until the timeout passes, the others absent', async () => {
    const store = await open();
    const { eventId } = await room(store, 10);
    await store.presence.markSeen(eventId, [2, 4, 7], T, WINDOW);
    const soon = await store.presence.presenceView(eventId, query(T + 30));
    assert.equal(soon.presentWaiting, 3);
    assert.equal(soon.absentWaiting, 7);
    assert.deepEqual(soon.nextPresent, [2, 4, 7]);
    assert.deepEqual((await store.presence.presenceView(eventId, query(T + 30, { limit: 2 }))).nextPresent, [2, 4]);
    // Seen again later by another node: still present; the others gone once the timeout passed.
    await store.presence.markSeen(eventId, [7], T + 50, WINDOW);
    const later = await store.presence.presenceView(eventId, query(T + 80));
    assert.equal(later.presentWaiting, 1);
    assert.deepEqual(later.nextPresent, [7]);
    // Presence off (timeout 0): every waiting visitor counts as present.
    const off = await store.presence.presenceView(eventId, query(T + 80, { timeout: 0, limit: 3 }));
    assert.equal(off.presentWaiting, 10);
    assert.deepEqual(off.nextPresent, [1, 2, 3]);
  });

  it('presence: a position that never beat is never absent, however long ago it joined', async () => {
    const store = await open();
    const { eventId } = await room(store, 6, T, false);
    const quiet = await store.presence.presenceView(eventId, query(T + 3600));
    assert.equal(quiet.presentWaiting, 6, 'no position of the room ever beat');
    assert.deepEqual(quiet.nextPresent, [1, 2, 3, 4, 5, 6]);
    // 2 and 5 beat once: an hour later they are absent, the others still present.
    await store.presence.markSeen(eventId, [2, 5], T, WINDOW);
    const later = await store.presence.presenceView(eventId, query(T + 3600));
    assert.equal(later.presentWaiting, 4);
    assert.equal(later.absentWaiting, 2);
    assert.deepEqual(later.nextPresent, [1, 3, 4, 6]);
    const soon = await store.presence.presenceView(eventId, query(T + 30));
    assert.equal(soon.presentWaiting, 6, 'within the timeout of their beat, 2 and 5 are present');
  });

  it('presence: deleteRoomData forgets the room\'s presence: created again, nobody has beaten, skipped or arrived late', async () => {
    const store = await open();
    const { eventId } = await room(store, 4);
    await store.incrementServing(eventId, 2, T);
    await store.presence.recordTick(eventId, [[1, 2]], T, 0);
    assert.equal(await store.presence.recordClaim(eventId, 1, false), true);
    await store.deleteRoomData(eventId);
    await store.assignPositions(eventId, Array.from({ length: 4 }, () => ({ requestId: randomUUID(), entryTime: T + 1 })));
    const view = await store.presence.presenceView(eventId, query(T + 2));
    assert.equal(view.presentWaiting, 4, 'the old beats are gone: nobody is absent');
    assert.equal(view.absentWaiting, 0);
    assert.equal(view.skippedInWindow, 0);
    assert.equal(view.lateArrivals, 0);
    assert.equal(await store.presence.recordClaim(eventId, 1, false), false, 'position 1 was not skipped in this room');
  });

  it('presence: left positions are neither present nor absent, and never listed as next', async () => {
    const store = await open();
    const { eventId, ids } = await room(store, 5);
    await store.leaveQueue(eventId, ids[1]!);
    await store.presence.markSeen(eventId, [1, 2, 3], T, WINDOW);
    const view = await store.presence.presenceView(eventId, query(T + 1));
    assert.equal(view.presentWaiting, 2);
    assert.equal(view.absentWaiting, 2);
    assert.deepEqual(view.nextPresent, [1, 3]);
  });

  it('presence: admitted visitors count against capacity while present and within their arrival window; then they are no-shows', async () => {
    const store = await open();
    const { eventId, ids } = await room(store, 6);
    await store.incrementServing(eventId, 4, T);
    assert.equal((await store.issueTokenIfAbsent(eventId, token(ids[0]!, 1, T + 2))).outcome, 'issued');
    await store.presence.markSeen(eventId, [2, 3], T + 5, WINDOW);
    const within = await store.presence.presenceView(eventId, query(T + 10, { arrivalCutoff: T + 10 - 120 }));
    assert.equal(within.countedAwaiting, 2, '2 and 3: present and unclaimed; 4 is absent');
    assert.equal(within.noShows, 0);
    assert.equal(within.serving, 4);
    const offPresence = await store.presence.presenceView(eventId, query(T + 10, { timeout: 0, arrivalCutoff: T + 10 - 120 }));
    assert.equal(offPresence.countedAwaiting, 3);
    const past = await store.presence.presenceView(eventId, query(T + 200, { timeout: 0, arrivalCutoff: T + 200 - 120 }));
    assert.equal(past.countedAwaiting, 0);
    assert.equal(past.noShows, 3);
    assert.equal(past.arrivalBoundary, 4);
    const noWindow = await store.presence.presenceView(eventId, query(T + 200, { timeout: 0 }));
    assert.equal(noWindow.countedAwaiting, 3, 'arrival window off: they count until their claim window ends');
    assert.equal(noWindow.noShows, 0);
  });

  it('presence: skips count in the rate window; a claim after a skip or past the arrival window is a late arrival', async () => {
    const store = await open();
    const { eventId } = await room(store, 8);
    await store.incrementServing(eventId, 5, T);
    await store.presence.recordTick(eventId, [[1, 2], [4, 4]], T, 0);
    const view = await store.presence.presenceView(eventId, query(T));
    assert.equal(view.skippedInWindow, 3);
    assert.equal(view.skippedThisSecond, 3);
    const next = await store.presence.presenceView(eventId, query(T + 1));
    assert.equal(next.skippedInWindow, 3);
    assert.equal(next.skippedThisSecond, 0);
    assert.equal((await store.presence.presenceView(eventId, query(T + 60))).skippedInWindow, 0);
    assert.equal(await store.presence.recordClaim(eventId, 2, false), true, 'passed while absent');
    assert.equal(await store.presence.recordClaim(eventId, 3, false), false);
    assert.equal(await store.presence.recordClaim(eventId, 5, true), true, 'past the arrival window');
    assert.equal((await store.presence.presenceView(eventId, query(T + 2))).lateArrivals, 2);
  });

  it('presence: the no-show boundary moves once, answering the unclaimed positions that crossed it', async () => {
    const store = await open();
    const { eventId, ids } = await room(store, 6);
    await store.incrementServing(eventId, 6, T);
    assert.equal((await store.issueTokenIfAbsent(eventId, token(ids[2]!, 3, T))).outcome, 'issued');
    await store.leaveQueue(eventId, ids[4]!).catch(() => undefined);
    assert.deepEqual((await store.presence.recordTick(eventId, [], T + 1, 1)).newNoShows, [], 'the first tick only records where it stands');
    assert.deepEqual((await store.presence.recordTick(eventId, [], T + 2, 4)).newNoShows, [2, 4]);
    assert.deepEqual((await store.presence.recordTick(eventId, [], T + 3, 4)).newNoShows, [], 'once');
    assert.deepEqual((await store.presence.recordTick(eventId, [], T + 4, 6)).newNoShows, [6]);
  });

  it('presence: a reset starts presence afresh', async () => {
    const store = await open();
    const { eventId } = await room(store, 3);
    await store.presence.recordTick(eventId, [[1, 1]], T, 0);
    await store.resetEvent(eventId);
    await store.assignPositions(eventId, [{ requestId: randomUUID(), entryTime: T + 1 }, { requestId: randomUUID(), entryTime: T + 1 }]);
    await store.presence.markSeen(eventId, [2], T - 500, WINDOW);
    const view = await store.presence.presenceView(eventId, query(T + 2));
    assert.equal(view.presentWaiting, 1, 'position 1 of the new run never beat (the old run\'s position 1 did, long ago)');
    assert.equal(view.absentWaiting, 1, 'position 2 beat, long ago');
    assert.equal(view.skippedInWindow, 0);
    assert.equal(await store.presence.recordClaim(eventId, 1, false), false);
  });
}
