// How often the gate's page asks again without script (src/gate/refresh-interval.ts; docs/gate.md "Without
// JavaScript"): a quarter of the expected wait, between 5 and 30 s, capped by the start and the expiry period.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REFRESH_CEILING_SEC, REFRESH_FLOOR_SEC, refreshSeconds } from '../../src/gate/refresh-interval.ts';
import type { RoomSettings } from '../../src/domain/room-settings.ts';
import { eventSettings } from '../support/node.ts';

const nowMs = Date.UTC(2026, 10, 22, 12, 0, 0);
const manual = eventSettings('Shop');
const at = (room: RoomSettings, ahead: number | undefined, measuredPerSecond?: number) => refreshSeconds(room, { ahead, measuredPerSecond, nowMs });

describe('the no-script refresh interval', () => {
  it('is a quarter of people ahead ÷ the measured pace, between the floor and the ceiling', () => {
    assert.equal(REFRESH_FLOOR_SEC, 5);
    assert.equal(REFRESH_CEILING_SEC, 30);
    assert.equal(at(manual, 0, 2), 5);
    assert.equal(at(manual, 10, 2), 5, '5 s of wait: the floor');
    assert.equal(at(manual, 100, 2), 13, '50 s of wait: 12.5 → 13');
    assert.equal(at(manual, 200, 2), 25);
    assert.equal(at(manual, 1_000, 2), 30, 'far back: the ceiling');
  });

  it('automatic admission: new_users_per_minute when no pace is measured; a measured pace wins', () => {
    const automatic = eventSettings('Auto', { admission: 'automatic', new_users_per_minute: 120, total_active_users: 10 });
    assert.equal(at(automatic, 120), 15, '120 ahead at 2/s: 60 s / 4');
    assert.equal(at(automatic, 120, 4), 8, 'measured 4/s: 30 s / 4 → 8');
  });

  it('the ceiling when nobody is let in or the place has no number yet', () => {
    assert.equal(at(manual, 5), 30, 'manual admission, no pace measured');
    assert.equal(at(manual, 5, 0), 30);
    assert.equal(at(manual, undefined, 2), 30, 'a drawn room before its draw');
    assert.equal(at(eventSettings('P', { state: 'paused' }), 5, 2), 30, 'paused');
    assert.equal(at(eventSettings('C', { state: 'closed' }), 5, 2), 30, 'closed');
    assert.equal(at(eventSettings('O', { state: 'off' }), 50, 2), 7, 'off admits: the formula');
  });

  it('never later than a third of queue_position_expiry_period, nor than the start', () => {
    assert.equal(at(eventSettings('E', { queue_position_expiry_period: 60 }), 1_000, 1), 20);
    assert.equal(at(eventSettings('E', { queue_position_expiry_period: 6 }), 1_000, 1), 5, 'never below the floor');
    assert.equal(at(eventSettings('E', { queue_position_expiry_period: 60, enable_queue_position_expiry: false }), 1_000, 1), 30);
    const startingIn = (seconds: number) => eventSettings('S', { event_start_time: new Date(nowMs + seconds * 1000).toISOString() });
    assert.equal(at(startingIn(12), undefined), 12, 'asks again at the start');
    assert.equal(at(startingIn(2), undefined), 5, 'never below the floor');
    assert.equal(at(startingIn(3_600), undefined), 30);
    assert.equal(at(startingIn(-60), 20, 2), 5, 'started: the formula');
  });
});
