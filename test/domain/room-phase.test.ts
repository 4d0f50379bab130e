// The phase of a room (src/domain/room-phase.ts), one rule per test: the schedule, the state, the draw, and
// what the phase means for joins and admission.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  admitsInPhase,
  joinRefusal,
  roomPhase,
  roomScheduleOf,
  type RoomSchedule,
} from '../../src/domain/room-phase.ts';
import { defaultSettings, type RoomSettings } from '../../src/domain/room-settings.ts';

const open: RoomSchedule = { state: 'open', shuffleAtEventStart: false };
const scheduled: RoomSchedule = { ...open, prequeueStart: 1000, eventStart: 2000, eventEnd: 3000 };

describe('roomPhase', () => {
  it('a room without schedule takes its state: open (VWR), paused, closed, off', () => {
    assert.equal(roomPhase(open, 0), 'open');
    assert.equal(roomPhase({ ...open, state: 'paused' }, 0), 'paused');
    assert.equal(roomPhase({ ...open, state: 'closed' }, 0), 'closed');
    assert.equal(roomPhase({ ...open, state: 'off' }, 0), 'off');
  });

  it('before prequeue_start_time: before; from it until event_start_time: prequeue; then the state', () => {
    assert.equal(roomPhase(scheduled, 999), 'before');
    assert.equal(roomPhase(scheduled, 1000), 'prequeue');
    assert.equal(roomPhase(scheduled, 1999.5), 'prequeue');
    assert.equal(roomPhase(scheduled, 2000), 'open');
    assert.equal(roomPhase({ ...scheduled, state: 'paused' }, 2500), 'paused');
  });

  it('a start time without a pre-queue start: joins queue before the start (prequeue), never refused', () => {
    assert.equal(roomPhase({ ...open, eventStart: 2000 }, 0), 'prequeue');
    assert.equal(roomPhase({ ...open, eventStart: 2000 }, 2000), 'open');
  });

  it('at and after event_end_time: ended, whatever the state', () => {
    assert.equal(roomPhase(scheduled, 3000), 'ended');
    assert.equal(roomPhase({ ...scheduled, state: 'closed' }, 3000), 'ended');
    assert.equal(roomPhase({ ...open, eventEnd: 10 }, 10), 'ended');
  });

  it('state closed wins over the schedule before the end', () => {
    assert.equal(roomPhase({ ...scheduled, state: 'closed' }, 500), 'closed');
    assert.equal(roomPhase({ ...scheduled, state: 'closed' }, 1500), 'closed');
  });

  it('paused or off before the start is still before / prequeue: nobody is admitted before the start', () => {
    assert.equal(roomPhase({ ...scheduled, state: 'off' }, 1500), 'prequeue');
    assert.equal(roomPhase({ ...scheduled, state: 'paused' }, 500), 'before');
  });

  it('with shuffle_at_event_start the room stays in prequeue after the start until its draw is done', () => {
    const shuffled = { ...scheduled, shuffleAtEventStart: true };
    assert.equal(roomPhase(shuffled, 2000, { pending: true }), 'prequeue');
    assert.equal(roomPhase(shuffled, 2000, { pending: false }), 'open');
    assert.equal(roomPhase(scheduled, 2000, { pending: true }), 'open', 'no shuffle: no draw to wait for');
    assert.equal(roomPhase(shuffled, 2000), 'open', 'told nothing of the draw: none pending');
    assert.equal(roomPhase({ ...open, shuffleAtEventStart: true }, 0, { pending: true }), 'open', 'no start: no draw');
  });
});

describe('what a phase means', () => {
  it('joins: refused before the pre-queue and once closed or ended, accepted otherwise', () => {
    assert.equal(joinRefusal('before'), 'not-open-yet');
    assert.equal(joinRefusal('closed'), 'closed');
    assert.equal(joinRefusal('ended'), 'closed');
    for (const phase of ['prequeue', 'open', 'paused', 'off'] as const) assert.equal(joinRefusal(phase), null, phase);
  });

  it('admission: only open and off rooms admit', () => {
    assert.deepEqual(
      (['before', 'prequeue', 'open', 'paused', 'closed', 'off', 'ended'] as const).filter(admitsInPhase),
      ['open', 'off'],
    );
  });
});

describe('roomScheduleOf: the settings as the phase reads them', () => {
  it('defaults: state open, no schedule, no shuffle', () => {
    assert.deepEqual(roomScheduleOf(defaultSettings('E')), {
      state: 'open', prequeueStart: undefined, eventStart: undefined, eventEnd: undefined, shuffleAtEventStart: false,
    });
  });

  it('reads ISO 8601 UTC times as whole epoch seconds, a fraction rounded up (nothing starts early)', () => {
    const room = {
      ...defaultSettings('E'),
      state: 'paused',
      prequeue_start_time: '2026-11-27T08:00:00Z',
      event_start_time: '2026-11-27T09:00:00.500Z',
      shuffle_at_event_start: true,
    } as RoomSettings;
    const schedule = roomScheduleOf(room);
    assert.equal(schedule.state, 'paused');
    assert.equal(schedule.prequeueStart, Date.UTC(2026, 10, 27, 8) / 1000);
    assert.equal(schedule.eventStart, Date.UTC(2026, 10, 27, 9) / 1000 + 1);
    assert.equal(schedule.eventEnd, undefined);
    assert.equal(schedule.shuffleAtEventStart, true);
  });
});
