// What the page shows for the room's phase (web/waiting-room-site/phase-view.ts, issue 33), one rule per test.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aheadToShow, cardFor, clockText, endingKey, pagePhaseOfRoom, queueIdOf, waitWords } from '../../web/waiting-room-site/phase-view.ts';

describe('the page and the room phase', () => {
  it('maps every room phase to a page phase; open and off are waiting; anything else is ignored', () => {
    assert.deepEqual(['before', 'prequeue', 'open', 'paused', 'closed', 'off', 'ended'].map(pagePhaseOfRoom), ['before', 'prequeue', 'waiting', 'paused', 'closed', 'waiting', 'ended']);
    assert.equal(pagePhaseOfRoom('nonsense'), undefined);
    assert.equal(pagePhaseOfRoom(undefined), undefined);
  });

  it('one card at a time: the checkout is kept whatever the room does; closed and ended end the line; before the opening nothing to join', () => {
    assert.equal(cardFor('closed', { inLine: true, served: true }), 'checkout');
    assert.equal(cardFor('closed', { inLine: true, served: false }), 'ending');
    assert.equal(cardFor('ended', { inLine: false, served: false }), 'ending');
    assert.equal(cardFor('before', { inLine: false, served: false }), 'none');
    assert.equal(cardFor('paused', { inLine: true, served: false }), 'queue');
    assert.equal(cardFor('prequeue', { inLine: false, served: false }), 'intro');
    assert.equal(cardFor('waiting', { inLine: false, served: false }), 'intro');
  });

  it('the ending says "before your turn came" only to people in line', () => {
    assert.equal(endingKey('closed', true), 'ending_closed');
    assert.equal(endingKey('ended', true), 'ending_ended');
    assert.equal(endingKey('closed', false), 'phase_closed');
    assert.equal(endingKey('ended', false), 'phase_ended');
  });
});

describe('the estimate in words', () => {
  const room = (phase: Parameters<typeof waitWords>[1]['phase'], serving: number | undefined, admission = 'manual') => ({ phase, serving, admission });

  it('says "Paused" only when the room is paused, whatever the estimator measured', () => {
    assert.deepEqual(waitWords('range', room('paused', 10)), { eta: 'paused', note: 'paused_note' });
    assert.deepEqual(waitWords('stalled', room('paused', 10)), { eta: 'paused', note: 'paused_note' });
    for (const phase of ['waiting', 'prequeue', 'before'] as const) {
      assert.notEqual(waitWords('stalled', room(phase, 10, 'automatic'))?.eta, 'paused', phase);
    }
  });

  it('before the start it waits for the start', () => {
    assert.deepEqual(waitWords('estimating', room('prequeue', 0)), { eta: 'waiting_start', note: 'waiting_start_note' });
    assert.deepEqual(waitWords('stalled', room('before', undefined)), { eta: 'waiting_start', note: 'waiting_start_note' });
  });

  it('a stopped line in a room that admits within a capacity waits for someone to finish', () => {
    assert.deepEqual(waitWords('stalled', room('waiting', 4, 'automatic')), { eta: 'waiting_finish', note: 'waiting_finish_note' });
  });

  it('a stopped line let in by hand or an inlet waits for the next people; nobody let in yet is "not started"', () => {
    assert.deepEqual(waitWords('stalled', room('waiting', 4)), { eta: 'waiting_next', note: 'waiting_next_note' });
    assert.deepEqual(waitWords('stalled', room('waiting', 0, 'automatic')), { eta: 'not_started', note: 'not_started_note' });
  });

  it('a measured range in an open room keeps its numbers', () => {
    assert.equal(waitWords('range', room('waiting', 4, 'automatic')), undefined);
    assert.equal(waitWords('estimating', room('waiting', 4)), undefined);
  });
});

describe('numbers and the queue ID', () => {
  it('people ahead: 0 for the next in line; the server\'s count (without those who left), never more than the gap', () => {
    assert.equal(aheadToShow(11, 10, undefined), 0);
    assert.equal(aheadToShow(20, 10, undefined), 9);
    assert.equal(aheadToShow(20, 10, 6), 6);
    // The counter moved on since the server counted: the gap is smaller than the stale count.
    assert.equal(aheadToShow(20, 17, 6), 2);
    assert.equal(aheadToShow(5, 9, 3), 0);
  });

  it('the queue ID is the request ID\'s first 8 hex digits, grouped; nothing for an ID without them', () => {
    assert.equal(queueIdOf('6f1c2a3e-5b7d-4c1e-9a2b-0d3c4e5f6a7b'), '6F1C-2A3E');
    assert.equal(queueIdOf(''), '');
  });

  it('the countdown reads h:mm:ss past an hour, mm:ss below', () => {
    assert.equal(clockText(3_725), '1:02:05');
    assert.equal(clockText(65), '01:05');
    assert.equal(clockText(0), '00:00');
  });
});
