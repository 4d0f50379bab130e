// The room registry: synchronous reads, writes that tell every listener what changed (with the settings
// before and after) and resolve once their reactions are done.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RoomRegistry, type RoomChange } from '../../src/domain/room-registry.ts';
import { defaultSettings } from '../../src/domain/room-settings.ts';

const summary = (change: RoomChange) => [change.kind, change.eventId, change.before?.validity_period, change.after?.validity_period];

describe('room registry', () => {
  it('puts, changes and removes rooms, telling listeners what changed with before and after', async () => {
    const rooms = new RoomRegistry([defaultSettings('A')]);
    const seen: unknown[] = [];
    rooms.onChange((change) => void seen.push(summary(change)));
    await rooms.put({ ...defaultSettings('B'), validity_period: 60 });
    await rooms.put({ ...defaultSettings('B'), validity_period: 120 });
    assert.equal(await rooms.remove('A'), true);
    assert.equal(await rooms.remove('A'), false, 'removing a room that is not there');
    assert.deepEqual(seen, [
      ['added', 'B', undefined, 60],
      ['changed', 'B', 60, 120],
      ['removed', 'A', 3600, undefined],
    ]);
    assert.deepEqual(rooms.ids(), ['B']);
    assert.equal(rooms.get('B')?.validity_period, 120);
    assert.equal(rooms.get('A'), undefined);
    assert.equal(rooms.get(42), undefined);
  });

  it('a put of the settings already held notifies no one', async () => {
    const rooms = new RoomRegistry([defaultSettings('A')]);
    let calls = 0;
    rooms.onChange(() => void calls++);
    await rooms.put(defaultSettings('A'));
    assert.equal(calls, 0);
  });

  it('replaceAll removes the rooms not listed and puts the others', async () => {
    const rooms = new RoomRegistry([defaultSettings('A'), defaultSettings('B')]);
    const seen: unknown[] = [];
    rooms.onChange((change) => void seen.push([change.kind, change.eventId]));
    await rooms.replaceAll([defaultSettings('B'), { ...defaultSettings('C'), validity_period: 5 }]);
    assert.deepEqual(seen, [['removed', 'A'], ['added', 'C']]);
    assert.deepEqual(rooms.ids(), ['B', 'C']);
  });

  it('reads see the new room before listeners run; a write resolves only after their reactions', async () => {
    const rooms = new RoomRegistry();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reacted = false;
    let seenInListener: unknown;
    rooms.onChange(async (change) => {
      seenInListener = rooms.get(change.eventId)?.event_id;
      await gate;
      reacted = true;
    });
    const put = rooms.put(defaultSettings('A'));
    assert.equal(rooms.get('A')?.event_id, 'A', 'the read is synchronous');
    assert.equal(seenInListener, 'A');
    assert.equal(reacted, false);
    release();
    await put;
    assert.equal(reacted, true);
  });

  it('a failed reaction rejects the write, after the other listeners ran; the room is put anyway', async () => {
    const rooms = new RoomRegistry();
    let other = 0;
    rooms.onChange(() => {
      throw new Error('sink down');
    });
    rooms.onChange(() => void other++);
    await assert.rejects(rooms.put(defaultSettings('A')), (error: AggregateError) => {
      assert.match(error.message, /room "A" added, but 1 reaction/);
      assert.equal((error.errors[0] as Error).message, 'sink down');
      return true;
    });
    assert.equal(other, 1);
    assert.ok(rooms.get('A'));
  });

  it('held settings are a read-only copy: neither the caller nor a listener can change them', async () => {
    const settings = { ...defaultSettings('A'), webhooks: [{ url: 'https://h.example', secret: '0123456789abcdef' }] };
    const rooms = new RoomRegistry();
    await rooms.put(settings);
    settings.webhooks[0]!.url = 'https://elsewhere.example';
    assert.equal(rooms.get('A')?.webhooks[0]?.url, 'https://h.example');
    assert.throws(() => {
      (rooms.get('A') as { validity_period: number }).validity_period = 1;
    }, TypeError);
    assert.throws(() => {
      (rooms.get('A')?.webhooks[0] as { url: string }).url = 'https://changed.example';
    }, TypeError, 'nested members too');
    assert.throws(() => (rooms.get('A')?.webhooks as unknown[]).push({}), TypeError);
    const configured = new RoomRegistry([settings]);
    assert.throws(() => {
      (configured.get('A')?.webhooks[0] as { url: string }).url = 'https://changed.example';
    }, TypeError, 'rooms given at construction as well');
  });

  it('holds settings with a null member (read-only like the rest)', async () => {
    const rooms = new RoomRegistry();
    await rooms.put({ ...defaultSettings('A'), extra: null } as never);
    assert.equal((rooms.get('A') as unknown as { extra: unknown }).extra, null);
  });

  it('starts empty without rooms; the snapshot is one array until a room changes', async () => {
    const rooms = new RoomRegistry();
    assert.deepEqual(rooms.all(), []);
    const empty = rooms.snapshotAll();
    assert.equal(rooms.snapshotAll(), empty);
    await rooms.put(defaultSettings('A'));
    const one = rooms.snapshotAll();
    assert.notEqual(one, empty);
    assert.deepEqual(one.map((r) => r.event_id), ['A']);
    assert.ok(Object.isFrozen(one));
    await rooms.remove('A');
    assert.deepEqual(rooms.snapshotAll(), []);
  });

  it('replaceAll makes every write, then rejects with every failed reaction', async () => {
    const rooms = new RoomRegistry([defaultSettings('A')]);
    rooms.onChange((change) => {
      if (change.eventId !== 'C') throw new Error(`no ${change.eventId}`);
    });
    await assert.rejects(rooms.replaceAll([defaultSettings('B'), defaultSettings('C')]), (error: AggregateError) => {
      assert.equal(error.message, 'some reactions to the new set of rooms failed');
      assert.deepEqual(
        error.errors.map((e: AggregateError) => e.errors.map((inner: Error) => inner.message)),
        [['no A'], ['no B']],
      );
      return true;
    });
    assert.deepEqual(rooms.ids(), ['B', 'C']);
  });

  it('a listener that rejects (async) fails the write like one that throws', async () => {
    const rooms = new RoomRegistry();
    rooms.onChange(async () => {
      throw new Error('async sink down');
    });
    await assert.rejects(rooms.remove('none').then(() => rooms.put(defaultSettings('A'))), /room "A" added, but 1 reaction\(s\) to it failed/);
  });

  it('an unsubscribed listener is told nothing more', async () => {
    const rooms = new RoomRegistry();
    let calls = 0;
    const stop = rooms.onChange(() => void calls++);
    await rooms.put(defaultSettings('A'));
    stop();
    await rooms.put(defaultSettings('B'));
    assert.equal(calls, 1);
  });
});
