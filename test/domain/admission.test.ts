// The admission rules (src/domain/admission/), one rule or step per test: who is let in, how many, and when.
// Periodic (spec/integrations.md §3): the window, the pause, increment_by. MaxSize: the report's checks and
// min(capacity, exited + closed), never backwards. Expiry: incr_serving_on_expiry. And the Admission itself:
// every kind of request ends in the one move of the counter.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admission, type AdmissionDeps } from '../../src/domain/admission/admission.ts';
import { decideMaxSize, maxSizeReportProblem, MAX_EXITED, MAX_REPORT_IDS } from '../../src/domain/admission/max-size.ts';
import { expiryIncrementEvent, expiryMovesCounter } from '../../src/domain/admission/on-expiry.ts';
import { decidePeriodicTick, periodicTick, periodicWindow, type PauseVerdict } from '../../src/domain/admission/periodic.ts';
import type { EventDetails } from '../../src/domain/ports/events.ts';
import type { AdmissionSnapshot, ExpiryAdvance } from '../../src/domain/ports/store.ts';
import type { RoomPhase } from '../../src/domain/room-phase.ts';
import { defaultSettings, type RoomSettings } from '../../src/domain/room-settings.ts';

const base = { startTime: 1000, endTime: 2000, incrementBy: 10, paused: false };

describe('periodic admission: decidePeriodicTick', () => {
  it('before the start time the counter does not move', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 999 }), { kind: 'before-start' });
  });
  it('at exactly the start time it does not move yet (start_time < now)', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 1000 }), { kind: 'before-start' });
  });
  it('inside the window it adds increment_by', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 1001 }), { kind: 'increment', by: 10 });
    assert.deepEqual(decidePeriodicTick({ ...base, now: 1999 }), { kind: 'increment', by: 10 });
  });
  it('at exactly the end time and after it the counter does not move (now < end_time)', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 2000 }), { kind: 'ended' });
    assert.deepEqual(decidePeriodicTick({ ...base, now: 5000 }), { kind: 'ended' });
  });
  it('end_time 0 means no end', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, endTime: 0, now: 4_000_000_000 }), { kind: 'increment', by: 10 });
  });
  it('start_time 0 admits from the first tick', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, startTime: 0, endTime: 0, now: 1 }), { kind: 'increment', by: 10 });
  });
  it('while the pause check says ALARM the tick is skipped', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 1500, paused: true }), { kind: 'paused' });
  });
  it('outside the window the window wins over a pause', () => {
    assert.deepEqual(decidePeriodicTick({ ...base, now: 10, paused: true }), { kind: 'before-start' });
    assert.deepEqual(decidePeriodicTick({ ...base, now: 3000, paused: true }), { kind: 'ended' });
  });
  it('periodicWindow names where now lies', () => {
    assert.equal(periodicWindow(5, 10, 20), 'before-start');
    assert.equal(periodicWindow(15, 10, 20), 'open');
    assert.equal(periodicWindow(25, 10, 20), 'ended');
    assert.equal(periodicWindow(25, 10, 0), 'open');
  });
});

describe('periodic admission: one tick (periodicTick), with the pause check and the move handed in', () => {
  const moves: number[] = [];
  const move = async (by: number) => {
    moves.push(by);
    return { previousServing: 7, serving: 7 + by };
  };
  /** A pause check that answers `verdict` and counts how often it was asked. */
  const check = (verdict: PauseVerdict) => {
    const asked = { count: 0 };
    return { asked, pauseCheck: async () => (asked.count++, verdict) };
  };
  const inlet = { eventId: 'E', incrementBy: 10, startTime: 1000, endTime: 2000 };

  it('inside the window, with the site healthy, moves by increment_by and answers the move', async () => {
    moves.length = 0;
    const { asked, pauseCheck } = check({ state: 'OK', reason: 'fine' });
    assert.deepEqual(await periodicTick({ ...inlet, pauseCheck }, 1500, move), { kind: 'moved', by: 10, servingNum: 17 });
    assert.deepEqual(moves, [10]);
    assert.equal(asked.count, 1);
  });
  it('inside the window, with the site in ALARM, skips the tick with the check\'s reason and moves nothing', async () => {
    moves.length = 0;
    const { asked, pauseCheck } = check({ state: 'ALARM', reason: 'site answered 503' });
    assert.deepEqual(await periodicTick({ ...inlet, pauseCheck }, 1500, move), { kind: 'paused', reason: 'site answered 503' });
    assert.deepEqual(moves, []);
    assert.equal(asked.count, 1);
  });
  it('outside the window answers where now lies, without asking the pause check or moving', async () => {
    moves.length = 0;
    const { asked, pauseCheck } = check({ state: 'ALARM', reason: 'down' });
    assert.deepEqual(await periodicTick({ ...inlet, pauseCheck }, 1000, move), { kind: 'before-start' });
    assert.deepEqual(await periodicTick({ ...inlet, pauseCheck }, 2000, move), { kind: 'ended' });
    assert.deepEqual(moves, []);
    assert.equal(asked.count, 0);
  });
  it('without a pause check, never paused', async () => {
    moves.length = 0;
    assert.deepEqual(await periodicTick(inlet, 1999, move), { kind: 'moved', by: 10, servingNum: 17 });
  });
});

describe('MaxSize admission: decideMaxSize', () => {
  it('moves by exited + closed when capacity allows', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 100, activeTokens: 40, exited: 3, closedNow: 2 }), { capacity: 60, moveBy: 5 });
  });
  it('moves by no more than the capacity', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 100, activeTokens: 97, exited: 10, closedNow: 5 }), { capacity: 3, moveBy: 3 });
  });
  it('capacity exactly equal to what was reported moves by all of it', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 10, activeTokens: 5, exited: 2, closedNow: 3 }), { capacity: 5, moveBy: 5 });
  });
  it('capacity 0: no movement', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 50, activeTokens: 50, exited: 7, closedNow: 1 }), { capacity: 0, moveBy: 0 });
  });
  it('negative capacity: no movement, never backwards (VWR moved the counter back)', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 10, activeTokens: 25, exited: 4, closedNow: 0 }), { capacity: -15, moveBy: 0 });
  });
  it('nothing reported: no movement even with room', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 100, activeTokens: 0, exited: 0, closedNow: 0 }), { capacity: 100, moveBy: 0 });
  });
  it('max_size 0 lets nobody in', () => {
    assert.deepEqual(decideMaxSize({ maxSize: 0, activeTokens: 0, exited: 5, closedNow: 5 }), { capacity: 0, moveBy: 0 });
  });
  it('each report stands alone: the same input gives the same answer (no module-level running total)', () => {
    const input = { maxSize: 10, activeTokens: 2, exited: 3, closedNow: 0 };
    assert.deepEqual(decideMaxSize(input), decideMaxSize(input));
  });
  it('refuses a negative or fractional exited, and other non-counts', () => {
    assert.throws(() => decideMaxSize({ maxSize: 10, activeTokens: 0, exited: -1, closedNow: 0 }), RangeError);
    assert.throws(() => decideMaxSize({ maxSize: 10, activeTokens: 0, exited: 1.5, closedNow: 0 }), RangeError);
    assert.throws(() => decideMaxSize({ maxSize: -1, activeTokens: 0, exited: 0, closedNow: 0 }), RangeError);
    assert.throws(() => decideMaxSize({ maxSize: 10, activeTokens: Number.NaN, exited: 0, closedNow: 0 }), RangeError);
    assert.throws(() => decideMaxSize({ maxSize: 10, activeTokens: 0, exited: 1.5, closedNow: 0 }), {
      name: 'RangeError',
      message: 'exited must be a whole number ≥ 0 (got 1.5)',
    });
  });
});

describe('MaxSize admission: the report is checked whole (maxSizeReportProblem)', () => {
  const id = '6f1c2b4e-8a3d-4c5e-9f10-1a2b3c4d5e6f';
  it('accepts a well-formed report', () => {
    assert.equal(maxSizeReportProblem({ exited: 0, completed: [id], abandoned: [id.toUpperCase()] }), null);
  });
  it('refuses a negative exited', () => {
    assert.match(maxSizeReportProblem({ exited: -1, completed: [], abandoned: [] }) ?? '', /exited/);
  });
  it('accepts exited up to MAX_EXITED, not one more', () => {
    assert.equal(maxSizeReportProblem({ exited: MAX_EXITED, completed: [], abandoned: [] }), null);
    assert.match(maxSizeReportProblem({ exited: MAX_EXITED + 1, completed: [], abandoned: [] }) ?? '', /exited must be/);
  });
  it('quotes a bad ID cut to 64 characters (a huge one is not echoed whole)', () => {
    const huge = 'x'.repeat(10_000);
    assert.equal(maxSizeReportProblem({ exited: 0, completed: [huge], abandoned: [] }), `completed: "${'x'.repeat(64)}" is not a request ID`);
  });
  it('refuses an ID that is not a UUID, naming its list', () => {
    assert.match(maxSizeReportProblem({ exited: 0, completed: [id], abandoned: [`${id}x`] }) ?? '', /^abandoned/);
  });
  it('refuses more IDs than one report may hold', () => {
    const many = Array.from({ length: MAX_REPORT_IDS + 1 }, () => id);
    assert.match(maxSizeReportProblem({ exited: 0, completed: many, abandoned: [] }) ?? '', /at most/);
    assert.equal(maxSizeReportProblem({ exited: 0, completed: many.slice(1), abandoned: many.slice(1) }), null, 'exactly the most is fine');
  });
});

describe('admission on expiry: the rule the store applies atomically', () => {
  const room = (incr: boolean) => ({ event_id: 'E', incr_serving_on_expiry: incr, admission: 'manual' as const });
  const step = (previousServing: number, serving: number) => ({ previousServing, serving });

  it('the expiry step moves the counter only with incr_serving_on_expiry, in a phase that admits', () => {
    assert.equal(expiryMovesCounter(room(true), 'open'), true);
    assert.equal(expiryMovesCounter(room(true), 'off'), true);
    assert.equal(expiryMovesCounter(room(false), 'open'), false);
    for (const phase of ['before', 'prequeue', 'paused', 'closed', 'ended'] as const) {
      assert.equal(expiryMovesCounter(room(true), phase), false, phase);
    }
  });
  it('never in a room that admits automatically: its admission tick gives the freed places, within the rate', () => {
    assert.equal(expiryMovesCounter({ ...room(true), admission: 'automatic' }, 'open'), false);
  });
  it('a step that moved the counter is announced with where it was, by how much, and where it is', () => {
    assert.deepEqual(expiryIncrementEvent(room(true), step(10, 13)), {
      event_id: 'E',
      previous_serving_counter_position: 10,
      increment_by: 3,
      current_serving_counter_position: 13,
    });
  });
  it('a step that expired nobody unclaimed moves nothing and announces nothing', () => {
    assert.equal(expiryIncrementEvent(room(true), step(10, 10)), null);
  });
  it('with the switch off nothing is announced', () => {
    assert.equal(expiryIncrementEvent(room(false), step(10, 13)), null);
  });
});

describe('Admission: every request ends in the one move of the counter', () => {
  /**
   * A store that does what the real ones do with the counter (floor at 0; never past the queue for the clamped
   * move) and records every call; the room's phase is the test's.
   */
  function recordingDeps(initial: { serving: number; active: number; open: string[]; queue?: number; phase?: RoomPhase }) {
    const calls: string[] = [];
    const published: EventDetails['automatic_serving_counter_incr'][] = [];
    let serving = initial.serving;
    let active = initial.active;
    const queue = initial.queue ?? 1000;
    const open = new Set(initial.open);
    const snapshot: AdmissionSnapshot = {
      queue, serving, reachedInWindow: 0, reachedThisSecond: 0, awaitingClaim: 0, activeSessions: initial.active,
    };
    const deps: AdmissionDeps = {
      now: () => 5000,
      phase: async () => initial.phase ?? 'open',
      store: {
        async incrementServing(eventId, by, now) {
          calls.push(`incrementServing ${eventId} ${by} @${now}`);
          serving = Math.max(0, serving + by);
          return serving;
        },
        async incrementServingWithinQueue(eventId, by, now) {
          calls.push(`incrementServingWithinQueue ${eventId} ${by} @${now}`);
          const previousServing = serving;
          serving += Math.max(0, Math.min(by, queue - serving));
          return { previousServing, serving };
        },
        async advanceExpiry(eventId, cutoff, incrServing, now): Promise<ExpiryAdvance> {
          calls.push(`advanceExpiry ${eventId} cutoff=${cutoff} incrServing=${incrServing} @${now}`);
          const previousServing = serving;
          if (incrServing) serving += 2;
          return { previousMaxExpired: 0, maxExpired: 2, newlyExpiredUnclaimed: 2, previousServing, serving };
        },
        async countActiveTokens(eventId) {
          calls.push(`countActiveTokens ${eventId}`);
          return active;
        },
        async getServingCounter(eventId) {
          calls.push(`getServingCounter ${eventId}`);
          return serving;
        },
        async getAdmissionSnapshot(eventId, now, windowStart) {
          calls.push(`getAdmissionSnapshot ${eventId} @${now} window from ${windowStart}`);
          return { ...snapshot, serving };
        },
      },
      events: {
        publish(type, detail) {
          assert.equal(type, 'automatic_serving_counter_incr');
          published.push(detail as EventDetails['automatic_serving_counter_incr']);
        },
      },
      async closeSession(eventId, requestId, status) {
        calls.push(`closeSession ${eventId} ${requestId} ${status}`);
        if (!open.delete(requestId)) return false;
        active--;
        return true;
      },
    };
    return { admission: new Admission(deps), calls, published, snapshot };
  }

  const E = defaultSettings('E');

  it('manual: moves by exactly what was asked, negative included (VWR); the store keeps the counter ≥ 0', async () => {
    const { admission, calls } = recordingDeps({ serving: 3, active: 0, open: [] });
    assert.deepEqual(await admission.admit(E, { kind: 'manual', by: 4 }), { serving_num: 7 });
    assert.deepEqual(await admission.admit(E, { kind: 'manual', by: -10 }), { serving_num: 0 });
    assert.deepEqual(calls, ['incrementServing E 4 @5000', 'incrementServing E -10 @5000']);
  });

  it('manual: never held and never clamped, whatever the phase (the operator owns it)', async () => {
    const { admission, calls } = recordingDeps({ serving: 0, active: 0, open: [], queue: 2, phase: 'paused' });
    assert.deepEqual(await admission.admit(E, { kind: 'manual', by: 5 }), { serving_num: 5 });
    assert.deepEqual(calls, ['incrementServing E 5 @5000']);
  });

  it('periodic: the tick decides with the transport\'s time, then moves without passing the queue', async () => {
    const { admission, calls } = recordingDeps({ serving: 0, active: 0, open: [], queue: 14 });
    const inlet = { eventId: 'E', incrementBy: 10, startTime: 100, endTime: 200 };
    assert.deepEqual(await admission.admit(E, { kind: 'periodic', inlet, now: 150 }), { kind: 'moved', by: 10, servingNum: 10 });
    assert.deepEqual(await admission.admit(E, { kind: 'periodic', inlet, now: 160 }), { kind: 'moved', by: 4, servingNum: 14 });
    assert.deepEqual(await admission.admit(E, { kind: 'periodic', inlet, now: 250 }), { kind: 'ended' });
    assert.deepEqual(calls, ['incrementServingWithinQueue E 10 @5000', 'incrementServingWithinQueue E 10 @5000']);
  });

  it('periodic: held while the room does not admit (paused, closed, before the start)', async () => {
    for (const phase of ['paused', 'closed', 'prequeue', 'before', 'ended'] as const) {
      const { admission, calls } = recordingDeps({ serving: 0, active: 0, open: [], phase });
      const inlet = { eventId: 'E', incrementBy: 10, startTime: 100, endTime: 200 };
      assert.deepEqual(await admission.admit(E, { kind: 'periodic', inlet, now: 150 }), { kind: 'paused', reason: `the room is ${phase}` });
      assert.deepEqual(calls, [], phase);
    }
  });

  it('max-size: closes, counts after closing, decides, then moves through the same call', async () => {
    const { admission, calls } = recordingDeps({ serving: 10, active: 5, open: ['a', 'b'] });
    const result = await admission.admit(E, {
      kind: 'max-size',
      maxSize: 6,
      report: { exited: 1, completed: ['a', 'x'], abandoned: ['b'] },
    });
    assert.deepEqual(result, { serving_num: 13, moved_by: 3, closed: 2, capacity: 3 });
    assert.deepEqual(calls, [
      'closeSession E a 1',
      'closeSession E x 1',
      'closeSession E b -1',
      'countActiveTokens E',
      'incrementServingWithinQueue E 3 @5000',
    ]);
  });

  it('max-size: reports how far the counter really moved (never past the queue), and nothing while paused', async () => {
    const clamped = recordingDeps({ serving: 10, active: 0, open: [], queue: 11 });
    const report = { exited: 5, completed: [], abandoned: [] };
    assert.deepEqual(await clamped.admission.admit(E, { kind: 'max-size', maxSize: 50, report }), {
      serving_num: 11, moved_by: 1, closed: 0, capacity: 50,
    });
    const paused = recordingDeps({ serving: 10, active: 1, open: ['a'], phase: 'paused' });
    const result = await paused.admission.admit(E, { kind: 'max-size', maxSize: 50, report: { ...report, completed: ['a'] } });
    assert.deepEqual(result, { serving_num: 10, moved_by: 0, closed: 1, capacity: 50 });
    assert.deepEqual(paused.calls, ['closeSession E a 1', 'countActiveTokens E', 'getServingCounter E']);
  });

  it('expiry: one atomic store call, told by the rule whether to move; a move is announced', async () => {
    const on = recordingDeps({ serving: 4, active: 0, open: [] });
    await on.admission.advanceExpiry({ ...defaultSettings('E'), incr_serving_on_expiry: true, queue_position_expiry_period: 900 });
    assert.deepEqual(on.calls, ['advanceExpiry E cutoff=4100 incrServing=true @5000']);
    assert.deepEqual(on.published, [
      { event_id: 'E', previous_serving_counter_position: 4, increment_by: 2, current_serving_counter_position: 6 },
    ]);

    const off = recordingDeps({ serving: 4, active: 0, open: [] });
    await off.admission.advanceExpiry({ ...defaultSettings('E'), incr_serving_on_expiry: false, queue_position_expiry_period: 900 });
    assert.deepEqual(off.calls, ['advanceExpiry E cutoff=4100 incrServing=false @5000']);
    assert.deepEqual(off.published, []);

    const paused = recordingDeps({ serving: 4, active: 0, open: [], phase: 'paused' });
    await paused.admission.advanceExpiry({ ...defaultSettings('E'), incr_serving_on_expiry: true, queue_position_expiry_period: 900 });
    assert.deepEqual(paused.calls, ['advanceExpiry E cutoff=4100 incrServing=false @5000'], 'expiries recorded, nobody admitted');
  });

  describe('automatic: one tick of one room', () => {
    const automatic = { ...E, admission: 'automatic', new_users_per_minute: 120, total_active_users: 10 } as RoomSettings;

    it('a manual room costs no store call', async () => {
      const { admission, calls } = recordingDeps({ serving: 0, active: 0, open: [] });
      assert.deepEqual(await admission.admitAutomatically(E), { kind: 'nothing', reason: 'manual' });
      assert.deepEqual(calls, []);
    });

    it('reads the snapshot over the last 60 s, admits min(rate, capacity, waiting) and announces the move', async () => {
      const { admission, calls, published, snapshot } = recordingDeps({ serving: 0, active: 3, open: [], queue: 50 });
      snapshot.awaitingClaim = 6; // capacity 10 − 6 − 3 = 1
      const outcome = await admission.admitAutomatically(automatic);
      assert.deepEqual(outcome, { kind: 'admitted', by: 1, waiting: 50, rate: 2, capacity: 1, previousServing: 0, serving: 1 });
      assert.deepEqual(calls, ['getAdmissionSnapshot E @5000 window from 4941', 'incrementServingWithinQueue E 1 @5000']);
      assert.deepEqual(published, [
        { event_id: 'E', previous_serving_counter_position: 0, increment_by: 1, current_serving_counter_position: 1 },
      ]);
    });

    it('with nothing allowed it reads and moves nothing', async () => {
      const { admission, calls, published, snapshot } = recordingDeps({ serving: 0, active: 10, open: [], queue: 50 });
      snapshot.activeSessions = 10;
      const outcome = await admission.admitAutomatically(automatic);
      assert.deepEqual(outcome, { kind: 'admitted', by: 0, waiting: 50, rate: 2, capacity: 0, previousServing: 0, serving: 0 });
      assert.deepEqual(calls, ['getAdmissionSnapshot E @5000 window from 4941']);
      assert.deepEqual(published, []);
    });

    it('a room that is off admits everyone waiting, whatever its admission mode', async () => {
      const { admission, calls, published } = recordingDeps({ serving: 3, active: 0, open: [], queue: 40, phase: 'off' });
      const outcome = await admission.admitAutomatically(E);
      assert.equal(outcome.kind === 'admitted' && outcome.serving, 40);
      assert.deepEqual(calls.at(-1), 'incrementServingWithinQueue E 37 @5000');
      assert.deepEqual(published, [
        { event_id: 'E', previous_serving_counter_position: 3, increment_by: 37, current_serving_counter_position: 40 },
      ]);
    });

    it('holds in every phase but open and off, without a store call', async () => {
      for (const phase of ['before', 'prequeue', 'paused', 'closed', 'ended'] as const) {
        const { admission, calls } = recordingDeps({ serving: 0, active: 0, open: [], phase });
        assert.deepEqual(await admission.admitAutomatically(automatic), { kind: 'nothing', reason: `phase ${phase}` });
        assert.deepEqual(calls, [], phase);
      }
    });
  });
});
