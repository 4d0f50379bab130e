// A room's schedule as the pre-queue and the draw read it (src/domain/prequeue.ts): times in whole epoch
// seconds, rounded up; a room draws with shuffle_at_event_start and a start; its draw is due from the start.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drawIsDue, roomDraws, roomSchedule } from '../../src/domain/prequeue.ts';
import { defaultSettings, type RoomSettings } from '../../src/domain/room-settings.ts';

const START = '2026-12-01T10:00:00Z';
const START_SEC = Date.parse(START) / 1000;
const room = (settings: Partial<RoomSettings>): RoomSettings => ({ ...defaultSettings('Sale'), ...settings });

describe('roomSchedule', () => {
  it('every time in epoch seconds, rounded up (nothing starts before the instant written); absent times are null', () => {
    assert.deepEqual(roomSchedule(room({ prequeue_start_time: '2026-12-01T09:00:00.001Z', event_start_time: START, event_end_time: '2026-12-01T12:00:00.999Z' })), {
      prequeueStart: START_SEC - 3600 + 1,
      eventStart: START_SEC,
      eventEnd: START_SEC + 7200 + 1,
      shuffle: false,
    });
    assert.deepEqual(roomSchedule(room({})), { prequeueStart: null, eventStart: null, eventEnd: null, shuffle: false });
  });

  it('shuffles only when shuffle_at_event_start is true', () => {
    assert.equal(roomSchedule(room({ event_start_time: START, shuffle_at_event_start: true })).shuffle, true);
    assert.equal(roomSchedule(room({ event_start_time: START, shuffle_at_event_start: false })).shuffle, false);
    assert.equal(roomSchedule(room({ event_start_time: START })).shuffle, false);
  });
});

describe('roomDraws and drawIsDue', () => {
  it('a room draws with shuffle_at_event_start and a start, not with one of them alone', () => {
    assert.equal(roomDraws(room({ event_start_time: START, shuffle_at_event_start: true })), true);
    assert.equal(roomDraws(room({ shuffle_at_event_start: true })), false, 'the settings refuse it; the rule does too');
    assert.equal(roomDraws(room({ event_start_time: START })), false);
  });

  it('the draw is due from the start, for a room that draws only', () => {
    const drawing = room({ event_start_time: START, shuffle_at_event_start: true });
    assert.equal(drawIsDue(drawing, START_SEC - 1), false);
    assert.equal(drawIsDue(drawing, START_SEC), true);
    assert.equal(drawIsDue(room({ event_start_time: START }), START_SEC + 60), false);
    assert.equal(drawIsDue(room({ shuffle_at_event_start: true }), START_SEC + 60), false);
  });
});
