// A room's figures from its counters and admission snapshot (src/domain/room-figures.ts), without a store: each
// a count of people of one kind, never negative. Over HTTP, on both stores: test/http/room-figures.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdmissionSnapshot, Counters } from '../../src/domain/ports/store.ts';
import { roomFigures } from '../../src/domain/room-figures.ts';

const counters = (c: Partial<Counters>): Counters => ({
  queue: 0, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0, ...c,
});
const snapshot = (s: Partial<AdmissionSnapshot>): AdmissionSnapshot => ({
  queue: 0, serving: 0, reachedInWindow: 0, reachedThisSecond: 0, awaitingClaim: 0, activeSessions: 0, ...s,
});

describe('roomFigures', () => {
  it('a room with people in line, let in and not arrived, and in sessions: every figure', () => {
    // 20 handed out, counter at 12: 6 token sets, 2 expired, 3 left, so 9 still waiting; 3 of them let in and
    // not arrived, the other 6 in line beyond the counter (8 positions, 2 of them given up).
    const c = counters({ queue: 20, serving: 12, tokens: 6, expired: 2, left: 3, completed: 4, abandoned: 5, maxExpired: 9 });
    const s = snapshot({ queue: 20, serving: 12, awaitingClaim: 3, activeSessions: 7, reachedInWindow: 10, reachedThisSecond: 1 });
    assert.deepEqual(roomFigures('E', 'open', c, s), {
      event_id: 'E',
      phase: 'open',
      queue: 20,
      serving: 12,
      in_line: 6,
      awaiting_claim: 3,
      active_sessions: 7,
      room_in_queue: 8,
      let_in_ahead: 0,
      admitted_last_minute: 10,
      waiting_num: 9,
      prequeue_num: 0,
      tokens_issued: 6,
      expired: 2,
      left: 3,
      completed: 4,
      abandoned: 5,
    });
  });

  it('in line is never more than the positions beyond the counter', () => {
    // 10 handed out, counter at 4, nobody has claimed or left: 10 "waiting", but only 6 beyond the counter.
    const f = roomFigures('E', 'open', counters({ queue: 10, serving: 4 }), snapshot({ awaitingClaim: 0 }));
    assert.equal(f.waiting_num, 10);
    assert.equal(f.in_line, 6);
    assert.equal(f.room_in_queue, 6);
  });

  it('the counter past the last position: nobody in line, the difference let in ahead', () => {
    const f = roomFigures('E', 'open', counters({ queue: 5, serving: 8, tokens: 3 }), snapshot({ awaitingClaim: 2 }));
    assert.equal(f.waiting_num, 2);
    assert.equal(f.awaiting_claim, 2);
    assert.equal(f.in_line, 0);
    assert.equal(f.room_in_queue, 0);
    assert.equal(f.let_in_ahead, 3);
  });

  it('the counter exactly at the last position: neither room in the queue nor let in ahead', () => {
    const f = roomFigures('E', 'open', counters({ queue: 5, serving: 5, tokens: 5 }), snapshot({}));
    assert.equal(f.room_in_queue, 0);
    assert.equal(f.let_in_ahead, 0);
    assert.equal(f.in_line, 0);
  });

  it('awaiting a claim is at most the waiting number, which is never negative', () => {
    // The snapshot and the counters are two reads: the snapshot may count more awaiting than are still waiting.
    const capped = roomFigures('E', 'open', counters({ queue: 10, serving: 10, tokens: 8 }), snapshot({ awaitingClaim: 5 }));
    assert.equal(capped.waiting_num, 2);
    assert.equal(capped.awaiting_claim, 2);
    assert.equal(capped.in_line, 0);
    // More token sets, expiries and leaves than positions (counters read mid-reset): zero, not negative.
    const over = roomFigures('E', 'closed', counters({ queue: 3, serving: 3, tokens: 2, expired: 1, left: 1 }), snapshot({ awaitingClaim: 1 }));
    assert.equal(over.waiting_num, 0);
    assert.equal(over.awaiting_claim, 0);
    assert.equal(over.in_line, 0);
    assert.equal(over.phase, 'closed');
  });
});
