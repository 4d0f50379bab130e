import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drawCommitment, drawEntry, drawOrder as orderOfDraw, DRAW_ALGORITHM, newDrawSeed, placesOf } from '../../src/domain/draw.ts';
import { CounterLog, GRID_MS } from '../../src/loadtest/counter-log.ts';
import type { Visitor } from '../../src/loadtest/records.ts';
import { visitor } from './recorded-visitor.ts';
import { admissionCapacity, admissionRate, drawOrder, pausedHolds, RATE_CHECK_SPAN_MS, type DrawAnswer } from '../../src/loadtest/room-verdicts.ts';
import { fifoAdmission } from '../../src/loadtest/verdicts.ts';

/** A counter that a server moved to `value` at each time, seen by an instant poll every `every` ms. */
function observed(steps: Array<[number, number]>, until: number, every = 100): CounterLog {
  const log = new CounterLog(0);
  for (let t = 0; t <= until; t += every) {
    let value = 0;
    for (const [at, v] of steps) if (at <= t) value = v;
    log.observe(t, t + 1, value);
  }
  return log;
}

describe('counter log: bounds from /serving_num answers', () => {
  it('the lower bound comes from answers received before, the upper from polls sent after', () => {
    const log = new CounterLog(3);
    log.observe(1000, 1200, 10); // the counter was ≤ 10 at 1000 and ≥ 10 at 1200
    log.observe(5000, 5050, 20);
    assert.equal(log.lowerAt(900), 3, 'before any answer: the initial value');
    assert.equal(log.lowerAt(1200 + GRID_MS), 10);
    assert.equal(log.lowerAt(1199), 3, 'an answer counts only once received');
    assert.equal(log.upperAt(1000), 10);
    assert.equal(log.upperAt(1001), 20, 'only polls sent at or after t bound it from above');
    assert.equal(log.upperAt(5001), Infinity, 'no poll after: unknown');
  });

  it('an answer that was slow never narrows the bounds wrongly', () => {
    const log = new CounterLog(0);
    log.observe(0, 3000, 5); // sent at 0, answered 3 s later: the counter was 5 somewhere in between
    assert.ok(log.upperAt(0) >= 5 && log.lowerAt(2999) <= 5 && log.lowerAt(3010) === 5);
  });
});

describe('verdict: admission rate (new_users_per_minute)', () => {
  it('passes for 10 a second against 600 a minute, and reports the most seen in a window', () => {
    const steps: Array<[number, number]> = [];
    for (let s = 1; s <= 120; s++) steps.push([s * 1000, s * 10]);
    const v = admissionRate(observed(steps, 121_000), 121_000, 600);
    assert.equal(v.ok, true, v.detail);
    assert.match(v.detail, /most admissions seen in any 59 s: 5\d\d/);
  });

  it('fails when more than n were let in within one minute', () => {
    const steps: Array<[number, number]> = [];
    for (let s = 1; s <= 120; s++) steps.push([s * 1000, s * 11]); // 11 a second: 649 in 59 s
    const v = admissionRate(observed(steps, 121_000), 121_000, 600);
    assert.equal(v.ok, false);
    assert.match(v.examples[0]!, /rose by at least 6\d\d \(limit 600\)/);
  });

  it('a burst of n at each edge of a window wider than the checked span is no violation', () => {
    // 600 at t = 1 s and 600 more at t = 1 s + 59.5 s: the server's whole-second window allows it.
    const v = admissionRate(observed([[1000, 600], [60_500, 1200]], 70_000), 70_000, 600);
    assert.equal(v.ok, true, v.detail);
    const tight = admissionRate(observed([[1000, 600], [1000 + RATE_CHECK_SPAN_MS - 1000, 1200]], 70_000), 70_000, 600);
    assert.equal(tight.ok, false, 'two bursts 58 s apart exceed 600 in a minute');
  });
});

describe('verdict: admission capacity (total_active_users)', () => {
  const base = { totalActiveUsers: 2, claimWindowMs: null, wallClockAtZero: 0, endedAt: 20_000 };

  it('passes when each visitor ends its session before the next is let in', () => {
    // Positions 1–2 at 1 s, 3–4 at 3 s; visitors 1–2 end at 2 s.
    const log = observed([[1000, 2], [3000, 4]], 20_000);
    const visitors = [visitor(0, { sessionEndSentAt: 2000 }), visitor(1, { sessionEndSentAt: 2000 }), visitor(2), visitor(3)];
    const v = admissionCapacity({ ...base, visitors, bounds: log });
    assert.equal(v.ok, true, v.detail);
    assert.match(v.detail, /At most 2 visitors/);
  });

  it('fails when a third is let in while two sessions are open', () => {
    const log = observed([[1000, 2], [3000, 3]], 20_000);
    const visitors = [visitor(0, { sessionEndSentAt: 5000 }), visitor(1), visitor(2)];
    const v = admissionCapacity({ ...base, visitors, bounds: log });
    assert.equal(v.ok, false);
    assert.match(v.examples[0]!, /at least 3 visitors were in \(limit 2\)/);
  });

  it('a place ends with its token set, and with the claim window of a visitor who never claimed', () => {
    const log = observed([[1000, 2], [3000, 4]], 20_000);
    const jwt = (expSeconds: number) => `h.${Buffer.from(JSON.stringify({ exp: expSeconds })).toString('base64url')}.s`;
    const expired = visitor(0, { tokens: { access_token: jwt(2), refresh_token: '', id_token: '' } }); // exp at 2 s
    const neverClaimed = visitor(1, { state: 'waiting' });
    const visitors = [expired, neverClaimed, visitor(2), visitor(3)];
    const v = admissionCapacity({ ...base, claimWindowMs: 1500, visitors, bounds: log });
    assert.equal(v.ok, true, v.detail);
    assert.equal(admissionCapacity({ ...base, visitors, bounds: log }).ok, false, 'without the claim window the unclaimed place stays');
    const forever = visitor(0, { tokens: { access_token: jwt(60), refresh_token: '', id_token: '' } });
    assert.equal(admissionCapacity({ ...base, claimWindowMs: 1500, visitors: [forever, neverClaimed, visitor(2), visitor(3)], bounds: log }).ok, false, 'a token that lasts keeps its place');
  });

  it('with an arrival window or presence, an unclaimed visitor stops counting when its window passes or it may be absent', () => {
    // Positions 1–2 at 1 s; 3 at 4 s. Visitor 1 never claims; visitor 2 stays in session.
    const log = observed([[1000, 2], [4000, 3]], 20_000);
    const tokens = { access_token: 'a', refresh_token: 'r', id_token: 'i' };
    const gone = visitor(0, { state: 'left', leftAt: 1100, lastSeenAt: 900 });
    const visitors = [gone, visitor(1, { tokens, tokenAt: 1200 }), visitor(2, { tokens, tokenAt: 4200 })];
    assert.equal(admissionCapacity({ ...base, visitors, bounds: log }).ok, false, 'without either, the place of visitor 1 stays');
    assert.equal(admissionCapacity({ ...base, visitors, bounds: log, arrivalWindowMs: 2000 }).ok, true, 'its arrival window ended at 3 s at the latest');
    assert.equal(admissionCapacity({ ...base, visitors, bounds: log, arrivalWindowMs: 5000 }).ok, false, 'a window that lasts keeps the place');
    assert.equal(admissionCapacity({ ...base, visitors, bounds: log, presenceTimeoutMs: 2500 }).ok, true, 'last seen at 0.9 s: absent from 3.4 s at the latest');
  });

  it('a visitor who came back claims as a late arrival: the room may be over by at most the late arrivals', () => {
    // Positions 1–2 at 1 s; visitor 1 left before claiming and comes back at 6 s, when position 3 (let in at 4 s) is in.
    const log = observed([[1000, 2], [4000, 3], [7000, 4]], 20_000);
    const tokens = (n: number) => ({ access_token: `a${n}`, refresh_token: 'r', id_token: 'i' });
    const back = visitor(0, { leftAt: 1100, cameBackAt: 6000, lastSeenAt: 6000, tokens: tokens(0), tokenAt: 6100 });
    const stayers = [visitor(1, { tokens: tokens(1), tokenAt: 1200 }), visitor(2, { tokens: tokens(2), tokenAt: 4200 })];
    const v = admissionCapacity({ ...base, visitors: [back, ...stayers], bounds: log, arrivalWindowMs: 2000 });
    assert.equal(v.ok, true, v.detail);
    assert.match(v.detail, /At most 3 visitors .* limit 2, plus up to 1 possible late arrivals/);
    // Position 4 let in at 7 s while 3 are in: one more than the late arrivals allow.
    const fourth = visitor(3, { tokens: tokens(3), tokenAt: 7200 });
    const over = admissionCapacity({ ...base, visitors: [back, ...stayers, fourth], bounds: log, arrivalWindowMs: 2000 });
    assert.equal(over.ok, false);
    assert.match(over.examples[0]!, /at least 4 visitors were in \(limit 2 \+ 1 late arrivals\)/);
    // With presence and the arrival window off, a visitor who came back counts from its admission, as before.
    assert.equal(admissionCapacity({ ...base, visitors: [back, ...stayers], bounds: log }).ok, false);
  });
});

describe('verdict: nobody admitted while paused', () => {
  const pause = { ackedAt: 10_000, resumeSentAt: 20_000 };

  it('passes when the counter stands still from the pause (plus propagation) to the resume', () => {
    const log = observed([[1000, 5], [11_000, 7], [25_000, 9]], 30_000);
    const v = pausedHolds(log, pause, 2000);
    assert.equal(v.ok, true, v.detail);
  });

  it('fails when it moved in between', () => {
    const log = observed([[1000, 5], [15_000, 8]], 30_000);
    const v = pausedHolds(log, pause, 2000);
    assert.equal(v.ok, false);
    assert.equal(v.failures, 3);
  });
});

describe('verdict: FIFO from the counter bounds (a room that admits by itself)', () => {
  it('fails for a token issued before the counter reached the position', () => {
    const log = observed([[1000, 1], [5000, 2]], 10_000);
    const ok = fifoAdmission({ eventId: 'E', visitors: [visitor(1, { tokens: { access_token: 'a', refresh_token: 'r', id_token: 'i' }, tokenAt: 6000 })], increments: [], initialServing: 0, expectFirstPosition: null, joinsUnanswered: 0, cutShort: false, bounds: log });
    assert.equal(ok.ok, true, ok.detail);
    const early = fifoAdmission({ eventId: 'E', visitors: [visitor(1, { tokens: { access_token: 'a', refresh_token: 'r', id_token: 'i' }, tokenAt: 2000 })], increments: [], initialServing: 0, expectFirstPosition: null, joinsUnanswered: 0, cutShort: false, bounds: log });
    assert.equal(early.ok, false);
  });
});

describe('verdict: the draw of the pre-queue', () => {
  async function published(entries: Visitor[], firstPosition: number): Promise<{ draw: DrawAnswer; positions: Map<Visitor, number> }> {
    const seed = newDrawSeed();
    const places = placesOf(await orderOfDraw(seed, entries.length));
    const positions = new Map(entries.map((v, i) => [v, firstPosition + places[i]! - 1]));
    const draw = { algorithm: DRAW_ALGORITHM, commitment: drawCommitment(seed), seed, first_position: firstPosition, entries: entries.map((v) => drawEntry(v.requestId!)) };
    return { draw, positions };
  }

  async function scenario() {
    const early = [0, 1, 2, 3, 4].map((i) => visitor(i, { joinSentAt: i * 10, joinedAt: i * 10 + 5 }));
    const late = [5, 6, 7].map((i) => visitor(i, { joinSentAt: 5000 + i * 10, joinedAt: 5000 + i * 10 + 5 }));
    const { draw, positions } = await published(early, 1);
    for (const v of early) v.position = positions.get(v)!;
    late.forEach((v, i) => (v.position = 6 + i));
    return { early, late, draw };
  }

  it('passes when every early visitor holds the place the published seed gives it and later ones queue behind', async () => {
    const { early, late, draw } = await scenario();
    const v = await drawOrder([...early, ...late], 1000, draw);
    assert.equal(v.ok, true, v.detail);
    assert.match(v.detail, /5 entries drawn .* positions 1–5/);
  });

  it('fails on a tampered seed, a swapped place, a visitor left out, and a late arrival placed out of order', async () => {
    const tampered = await scenario();
    assert.equal((await drawOrder([...tampered.early, ...tampered.late], 1000, { ...tampered.draw, seed: newDrawSeed() })).ok, false);

    const swapped = await scenario();
    const [a, b] = swapped.early;
    [a!.position, b!.position] = [b!.position, a!.position];
    assert.equal((await drawOrder([...swapped.early, ...swapped.late], 1000, swapped.draw)).ok, false);

    const leftOut = await scenario();
    const outsider = visitor(9, { joinSentAt: 50, joinedAt: 60, position: 9 });
    assert.match((await drawOrder([...leftOut.early, ...leftOut.late, outsider], 1000, leftOut.draw)).examples.join(), /joined before the start .* not in the draw/);

    const unfair = await scenario();
    [unfair.late[0]!.position, unfair.late[2]!.position] = [unfair.late[2]!.position, unfair.late[0]!.position];
    const v = await drawOrder([...unfair.early, ...unfair.late], 1000, unfair.draw);
    assert.equal(v.ok, false);
    assert.match(v.examples.join(), /earlier position/);
  });
});
