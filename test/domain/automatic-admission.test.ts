// Automatic admission's steps (src/domain/admission/automatic.ts), one rule per test: the plan from settings and
// phase, the rate (⌈n/60⌉ per second, n per 60 s), the capacity, never past the queue, and their minimum.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  admissionModeOf,
  capacityAllowance,
  decideAdmission,
  planTick,
  rateAllowance,
  ticksMatter,
  rateWindowStart,
  waitingAllowance,
} from '../../src/domain/admission/automatic.ts';
import type { AdmissionSnapshot } from '../../src/domain/ports/store.ts';
import { defaultSettings, type RoomSettings } from '../../src/domain/room-settings.ts';

const limits = { newUsersPerMinute: 120, totalActiveUsers: 10 };
const empty: AdmissionSnapshot = {
  queue: 0, serving: 0, reachedInWindow: 0, reachedThisSecond: 0, awaitingClaim: 0, activeSessions: 0,
};

describe('admissionModeOf', () => {
  const room = (extra: object) => ({ ...defaultSettings('E'), ...extra }) as RoomSettings;
  it('manual unless the room says automatic (VWR)', () => {
    assert.deepEqual(admissionModeOf(defaultSettings('E')), { kind: 'manual' });
    assert.deepEqual(admissionModeOf(room({ admission: 'manual', new_users_per_minute: 5 })), { kind: 'manual' });
  });
  it('automatic with both limits', () => {
    assert.deepEqual(admissionModeOf(room({ admission: 'automatic', new_users_per_minute: 60, total_active_users: 7 })), {
      kind: 'automatic', limits: { newUsersPerMinute: 60, totalActiveUsers: 7 },
    });
  });
  it('automatic with a limit missing is never guessed', () => {
    assert.deepEqual(admissionModeOf(room({ admission: 'automatic', new_users_per_minute: 60 })), { kind: 'automatic-without-limits' });
    assert.deepEqual(admissionModeOf(room({ admission: 'automatic', total_active_users: 7 })), { kind: 'automatic-without-limits' });
  });
});

describe('ticksMatter: whether admission ticks can ever move the room', () => {
  const room = (extra: object) => ({ ...defaultSettings('E'), ...extra }) as RoomSettings;
  it('an automatic room, and a room that is off (everyone in), whatever the other setting', () => {
    assert.equal(ticksMatter(room({ admission: 'automatic', state: 'open' })), true);
    assert.equal(ticksMatter(room({ admission: 'automatic', state: 'off' })), true);
    assert.equal(ticksMatter(room({ admission: 'manual', state: 'off' })), true);
  });
  it('not a manual room that has a queue: its ticks never do anything', () => {
    assert.equal(ticksMatter(room({ admission: 'manual', state: 'paused' })), false);
    assert.equal(ticksMatter(defaultSettings('E')), false);
  });
});

describe('planTick: from the mode and the phase alone', () => {
  const automatic = { kind: 'automatic', limits } as const;
  it('an off room admits everyone, automatic or manual', () => {
    assert.deepEqual(planTick({ kind: 'manual' }, 'off'), { kind: 'everyone' });
    assert.deepEqual(planTick(automatic, 'off'), { kind: 'everyone' });
  });
  it('an open automatic room admits within its limits; a manual one is left alone', () => {
    assert.deepEqual(planTick(automatic, 'open'), { kind: 'within-limits', limits });
    assert.deepEqual(planTick({ kind: 'manual' }, 'open'), { kind: 'nothing', reason: 'manual' });
    assert.deepEqual(planTick({ kind: 'automatic-without-limits' }, 'open'), { kind: 'nothing', reason: 'automatic-without-limits' });
  });
  it('nobody is admitted before the start, while the draw runs, paused, closed or ended', () => {
    for (const phase of ['before', 'prequeue', 'paused', 'closed', 'ended'] as const) {
      assert.deepEqual(planTick(automatic, phase), { kind: 'nothing', reason: `phase ${phase}` });
    }
  });
});

describe('rateAllowance: at most ⌈n/60⌉ in any second and n in any 60 s', () => {
  it('⌈n/60⌉ per second', () => {
    assert.equal(rateAllowance(120, empty), 2);
    assert.equal(rateAllowance(61, empty), 2);
    assert.equal(rateAllowance(60, empty), 1);
    assert.equal(rateAllowance(1, empty), 1);
  });
  it('less what this second already admitted (two ticks in one second admit no more than one)', () => {
    assert.equal(rateAllowance(120, { reachedInWindow: 1, reachedThisSecond: 1 }), 1);
    assert.equal(rateAllowance(120, { reachedInWindow: 2, reachedThisSecond: 2 }), 0);
  });
  it('never more than n − admitted in the last 60 s', () => {
    assert.equal(rateAllowance(90, { reachedInWindow: 89, reachedThisSecond: 0 }), 1);
    assert.equal(rateAllowance(90, { reachedInWindow: 90, reachedThisSecond: 0 }), 0);
    assert.equal(rateAllowance(5, { reachedInWindow: 4, reachedThisSecond: 0 }), 1);
  });
  it('never negative (a manual move may have admitted more than the rate)', () => {
    assert.equal(rateAllowance(10, { reachedInWindow: 500, reachedThisSecond: 500 }), 0);
  });
  it('the window is the 60 whole seconds ending now', () => {
    assert.equal(rateWindowStart(1060), 1001);
  });
});

describe('capacityAllowance and waitingAllowance', () => {
  it('capacity: total − admitted not yet claimed − active sessions, never negative', () => {
    assert.equal(capacityAllowance(10, { awaitingClaim: 3, activeSessions: 4 }), 3);
    assert.equal(capacityAllowance(10, { awaitingClaim: 3, activeSessions: 7 }), 0);
    assert.equal(capacityAllowance(10, { awaitingClaim: 8, activeSessions: 7 }), 0);
  });
  it('waiting: queue − serving, never negative (a counter past the queue admits nobody)', () => {
    assert.equal(waitingAllowance({ queue: 10, serving: 4 }), 6);
    assert.equal(waitingAllowance({ queue: 10, serving: 14 }), 0);
  });
});

describe('decideAdmission', () => {
  const within = { kind: 'within-limits', limits } as const;
  it('the smallest of rate, capacity and waiting', () => {
    assert.deepEqual(decideAdmission(within, { ...empty, queue: 100 }), { by: 2, waiting: 100, rate: 2, capacity: 10 });
    assert.deepEqual(decideAdmission(within, { ...empty, queue: 100, activeSessions: 9 }), { by: 1, waiting: 100, rate: 2, capacity: 1 });
    assert.deepEqual(decideAdmission(within, { ...empty, queue: 1 }), { by: 1, waiting: 1, rate: 2, capacity: 10 });
    assert.deepEqual(decideAdmission(within, { ...empty, queue: 5, serving: 5 }).by, 0);
  });
  it('everyone: all who wait, no limits', () => {
    assert.deepEqual(decideAdmission({ kind: 'everyone' }, { ...empty, queue: 5000, serving: 1, activeSessions: 99 }), {
      by: 4999, waiting: 4999,
    });
  });
});
