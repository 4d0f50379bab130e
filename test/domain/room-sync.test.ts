// RoomSync keeps a node's registry in line with the rooms of the store: puts what changed, removes what is gone,
// takes a room deleted and created again for a new room, skips (and reports once) a stored room the schema
// refuses, and leaves alone the rooms it did not put there.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RoomChange } from '../../src/domain/room-registry.ts';
import { RoomRegistry } from '../../src/domain/room-registry.ts';
import { defaultSettings } from '../../src/domain/room-settings.ts';
import { ROOM_CHECK_INTERVAL_MS, ROOM_PROPAGATION_MS, RoomSync } from '../../src/domain/room-sync.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

function setUp() {
  const store = new SqliteStore({ path: ':memory:' });
  const rooms = new RoomRegistry();
  const changes: string[] = [];
  rooms.onChange((change: RoomChange) => void changes.push(`${change.kind} ${change.eventId}`));
  const refused: string[] = [];
  const sync = new RoomSync({ store, rooms, onRefused: (eventId, problem) => refused.push(`${eventId}: ${problem}`) });
  let reads = 0;
  const roomsVersion = store.roomsVersion.bind(store);
  const listRooms = store.listRooms.bind(store);
  store.roomsVersion = () => (reads++, roomsVersion());
  store.listRooms = () => (reads++, listRooms());
  return { store, rooms, changes, refused, sync, reads: () => reads };
}

const stored = (eventId: string, extra: Record<string, unknown> = {}) => JSON.stringify({ ...defaultSettings(eventId), ...extra });

describe('RoomSync', () => {
  it('open() writes the configured rooms as puts (they win over stored edits) and serves every stored room', async () => {
    const { store, rooms, sync } = setUp();
    await store.putRoom('Configured', stored('Configured', { validity_period: 5 }));
    await store.putRoom('FromApi', stored('FromApi'));
    await sync.open([{ ...defaultSettings('Configured'), validity_period: 60 }]);
    assert.deepEqual(rooms.ids().sort(), ['Configured', 'FromApi']);
    assert.equal(rooms.get('Configured')?.validity_period, 60);
    assert.equal(JSON.parse((await store.getRoom('Configured'))!.settings).validity_period, 60);
  });

  it('check() costs one read while nothing changed, and applies puts and deletes when the version moved', async () => {
    const { store, rooms, changes, sync, reads } = setUp();
    await sync.open([]);
    const before = reads();
    await sync.check();
    assert.equal(reads() - before, 1, 'one read of the version');
    await store.putRoom('A', stored('A'));
    await store.putRoom('B', stored('B'));
    await sync.check();
    assert.deepEqual(changes, ['added A', 'added B']);
    await store.putRoom('A', stored('A', { validity_period: 7 }));
    await store.deleteRoomSettings('B');
    await sync.check();
    assert.deepEqual(changes, ['added A', 'added B', 'removed B', 'changed A']);
    assert.equal(rooms.get('A')?.validity_period, 7);
  });

  it('a room deleted and created again between two looks is removed, then added: a new room', async () => {
    const { store, changes, sync } = setUp();
    await store.putRoom('A', stored('A'));
    await sync.open([]);
    await store.deleteRoomSettings('A');
    await store.putRoom('A', stored('A'));
    await sync.check();
    assert.deepEqual(changes, ['added A', 'removed A', 'added A']);
  });

  it('a stored room the schema refuses is reported once and skipped; a served one keeps its last settings', async () => {
    const { store, rooms, refused, sync } = setUp();
    await store.putRoom('Served', stored('Served', { validity_period: 9 }));
    await sync.open([]);
    await store.putRoom('Bad', JSON.stringify({ event_id: 'Bad', validity_periodd: 1 }));
    await store.putRoom('Served', JSON.stringify({ event_id: 'Served', admission_modee: 'x' }));
    await store.putRoom('NotJson', '{');
    await store.putRoom('Elsewhere', stored('Other'));
    await sync.check();
    assert.deepEqual(refused.sort(), [
      'Bad: validity_periodd: unknown setting',
      'Elsewhere: event_id: differs from the ID the room is stored under',
      'NotJson: the stored settings are not JSON',
      'Served: admission_modee: unknown setting',
    ]);
    assert.deepEqual(rooms.ids(), ['Served']);
    assert.equal(rooms.get('Served')?.validity_period, 9);
    // Another change elsewhere: the refused texts are not reported again.
    await store.putRoom('Good', stored('Good'));
    await sync.check();
    assert.equal(refused.length, 4);
    assert.deepEqual(rooms.ids().sort(), ['Good', 'Served']);
    // Fixed, the room is served.
    await store.putRoom('Bad', stored('Bad'));
    await sync.check();
    assert.ok(rooms.get('Bad'));
  });

  it('leaves alone the rooms it did not put into the registry', async () => {
    const { store, rooms, sync } = setUp();
    await sync.open([]);
    await rooms.put(defaultSettings('PutByHand'));
    await store.putRoom('A', stored('A'));
    await sync.check();
    assert.deepEqual(rooms.ids().sort(), ['A', 'PutByHand']);
  });

  it('after a failed reaction the next check lists the rooms again', async () => {
    const { store, rooms, sync, reads } = setUp();
    await sync.open([]);
    let fail = true;
    rooms.onChange(() => {
      if (fail) throw new Error('reaction failed');
    });
    await store.putRoom('A', stored('A'));
    await assert.rejects(sync.check(), (error: AggregateError) => {
      assert.equal(error.message, 'some reactions to the stored rooms failed');
      assert.match((error.errors[0] as Error).message, /room "A" added, but 1 reaction/);
      return true;
    });
    assert.ok(rooms.get('A'), 'the room is put either way');
    fail = false;
    const before = reads();
    await sync.check();
    assert.equal(reads() - before, 2, 'the version and the list');
    await sync.check();
    assert.equal(reads() - before, 3, 'then one read again');
  });

  it('refused text is reported again once the room was fixed, or deleted, in between', async () => {
    const { store, refused, sync } = setUp();
    await sync.open([]);
    const bad = JSON.stringify({ event_id: 'Bad', validity_periodd: 1 });
    await store.putRoom('Bad', bad);
    await sync.check();
    await store.putRoom('Bad', stored('Bad'));
    await sync.check();
    await store.putRoom('Bad', bad);
    await sync.check();
    assert.equal(refused.length, 2, 'refused, fixed, refused again');
    await store.deleteRoomSettings('Bad');
    await sync.check();
    await store.putRoom('Bad', bad);
    await sync.check();
    assert.equal(refused.length, 3, 'deleted, then stored with the same text: a new room, reported');
  });

  it('the propagation bound covers a whole check interval and a slow check', () => {
    assert.equal(ROOM_CHECK_INTERVAL_MS, 1000);
    assert.ok(ROOM_PROPAGATION_MS >= 2 * ROOM_CHECK_INTERVAL_MS);
  });
});
