// The queue-position expiry arithmetic (src/domain/expiry.ts) and the small rules beside it: request IDs,
// the clock's units, the room registry. The decision order built on them is in claim-decision.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { epochSeconds, systemClock } from '../../src/domain/clock.ts';
import { eligibleSince, expiryCutoff, hasExpired, secondsLeft, type ExpiryFacts } from '../../src/domain/expiry.ts';
import { isRequestId, newRequestId, normaliseRequestId } from '../../src/domain/ids.ts';
import { RoomRegistry } from '../../src/domain/room-registry.ts';
import { defaultSettings } from '../../src/domain/room-settings.ts';

const facts: ExpiryFacts = { position: 5, entryTime: 1000, servedAt: 2000, expiryEnabledSince: 500, maxExpired: 0 };

describe('expiry arithmetic', () => {
  it('a position is eligible from the latest of its join, the counter reaching it and expiry being switched on', () => {
    assert.equal(eligibleSince(facts), 2000);
    assert.equal(eligibleSince({ ...facts, entryTime: 2500 }), 2500);
    assert.equal(eligibleSince({ ...facts, expiryEnabledSince: 3000 }), 3000);
    assert.equal(eligibleSince({ ...facts, servedAt: null }), null, 'never reached: not eligible');
    assert.equal(eligibleSince({ ...facts, expiryEnabledSince: null }), null, 'expiry off: not eligible');
  });

  it('expired once more than `period` seconds have passed since eligibility; or recorded expired by the job', () => {
    assert.equal(hasExpired(facts, 2900, 900), false);
    assert.equal(hasExpired(facts, 2901, 900), true);
    assert.equal(hasExpired({ ...facts, servedAt: null }, 1e9, 900), false);
    assert.equal(hasExpired({ ...facts, maxExpired: 5 }, 2000, 900), true);
    assert.equal(hasExpired({ ...facts, maxExpired: 4 }, 2000, 900), false);
    assert.equal(hasExpired({ ...facts, maxExpired: 5, expiryEnabledSince: null }, 1e9, 900), false, 'expiry off: never');
  });

  it('seconds left run from the period down to 0 and never outside', () => {
    assert.equal(secondsLeft(facts, 2000, 900), 900);
    assert.equal(secondsLeft(facts, 2100, 900), 800);
    assert.equal(secondsLeft(facts, 2900, 900), 0);
    assert.equal(secondsLeft(facts, 5000, 900), 0);
    assert.equal(secondsLeft(facts, 1500, 900), 900, 'a clock before eligibility does not add time');
    assert.equal(secondsLeft({ ...facts, servedAt: null }, 5000, 900), 900, 'not eligible yet: the whole period');
  });

  it('the job\'s cutoff agrees with the API: eligible at T is expired at now iff T < now − period', () => {
    assert.equal(expiryCutoff(2901, 900), 2001);
    for (const now of [2899, 2900, 2901, 2902]) {
      assert.equal(hasExpired(facts, now, 900), facts.servedAt! < expiryCutoff(now, 900), `now ${now}`);
    }
  });
});

describe('request IDs', () => {
  it('are whole UUIDs, in either case', () => {
    const id = newRequestId();
    assert.equal(isRequestId(id), true);
    assert.notEqual(newRequestId(), id);
    assert.equal(isRequestId(id.toUpperCase()), true);
    for (const bad of [`${id}0`, ` ${id}`, `${id.slice(0, 35)}g`, id.replaceAll('-', ''), id.slice(0, 35), 42, null, undefined]) {
      assert.equal(isRequestId(bad), false, String(bad));
    }
    assert.equal(isRequestId(`x${id.slice(1)}`), false, 'a first character outside hex');
  });

  it('are stored lowercase, so one visitor cannot hold two spellings', () => {
    assert.equal(normaliseRequestId('ABCDEF01-0000-4000-8000-00000000000A'), 'abcdef01-0000-4000-8000-00000000000a');
  });
});

describe('the clock', () => {
  it('is milliseconds since the epoch; the contract\'s times are whole seconds, floored', () => {
    const before = Date.now();
    const now = systemClock();
    assert.ok(before <= now && now <= Date.now());
    assert.equal(epochSeconds(() => 1_999), 1);
    assert.equal(epochSeconds(() => 2_000), 2);
  });
});

describe('the room registry', () => {
  it('finds a room by its ID only (any other value is no room), and lists them in configuration order', () => {
    const registry = new RoomRegistry([defaultSettings('B'), defaultSettings('A')]);
    assert.equal(registry.get('A')?.event_id, 'A');
    assert.equal(registry.get('C'), undefined);
    assert.equal(registry.get(['A']), undefined);
    assert.equal(registry.get({ toString: () => 'A' }), undefined);
    assert.deepEqual(registry.ids(), ['B', 'A']);
    assert.deepEqual(registry.all().map((r) => r.event_id), ['B', 'A']);
  });
});
