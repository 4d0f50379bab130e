// The wait estimate on record (issue 16 item 6, src/domain/wait-estimates.ts): an estimate from the pace seen
// lately, kept at the first lookup of a place, judged at admission; the median absolute error per room.
// The same over HTTP (/queue_num, the figures, /metrics): test/http/wait-estimates.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultSettings } from '../../src/domain/room-settings.ts';
import { WaitEstimates } from '../../src/domain/wait-estimates.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { composeCore } from '../../src/compose/core.ts';

describe('WaitEstimates', () => {
  it('no estimate before the pace is measured over 20 s; then (people ahead) / pace, as a range', () => {
    const e = new WaitEstimates();
    e.observe('E', 0, 0);
    assert.equal(e.estimate('E', 100, 0, 10_000), undefined);
    e.observe('E', 10, 10_000);
    e.observe('E', 20, 20_000); // 1 a second
    assert.equal(e.pace('E', 20_000), 1);
    assert.deepEqual(e.estimate('E', 120, 20, 20_000), { lowSec: 80, highSec: 125 });
  });

  it('judges the estimate given at the first lookup against the actual wait; median of the errors', () => {
    const e = new WaitEstimates();
    assert.deepEqual(e.accuracy('E'), { samples: 0, median_abs_error_s: null });
    const give = (id: string, lowSec: number, highSec: number) => e.given('E', id, 0, { lowSec, highSec });
    give('a', 80, 120); // middle 100
    give('a', 1, 2); // the first estimate is kept
    give('b', 10, 10);
    give('c', 50, 50);
    e.admitted('E', 'a', 130_000); // |130 - 100| = 30
    e.admitted('E', 'b', 15_000); // 5
    e.admitted('E', 'c', 50_000); // 0
    e.admitted('E', 'unknown', 1_000); // never given one: not counted
    assert.deepEqual(e.accuracy('E'), { samples: 3, median_abs_error_s: 5 });
    assert.equal(e.of('E', 'a'), undefined, 'judged once');
  });

  it('a reset (the counter moving back) starts the pace again', () => {
    const e = new WaitEstimates();
    e.observe('E', 0, 0);
    e.observe('E', 50, 30_000);
    assert.ok(e.pace('E', 30_000));
    e.observe('E', 0, 31_000);
    assert.equal(e.pace('E', 31_000), undefined);
  });
});

describe('WaitEstimates: the pace', () => {
  it('is measured to now, not to the last change of the counter', () => {
    const e = new WaitEstimates();
    e.observe('E', 0, 0);
    e.observe('E', 10, 20_000);
    assert.equal(e.pace('E', 40_000), 0.25);
  });

  it('counts only the people let in over the span, and needs 20 s of it', () => {
    const e = new WaitEstimates();
    e.observe('E', 10, 0);
    e.observe('E', 15, 10_000);
    assert.equal(e.pace('E', 19_999), undefined);
    e.observe('E', 20, 20_000);
    assert.equal(e.pace('E', 20_000), 0.5);
  });

  it('is unknown for a room never seen, for one observation, and for a counter that has not moved', () => {
    const e = new WaitEstimates();
    assert.equal(e.pace('Unknown', 60_000), undefined);
    e.observe('E', 5, 0);
    assert.equal(e.pace('E', 60_000), undefined);
    e.observe('E', 5, 30_000);
    e.observe('E', 5, 50_000);
    assert.equal(e.pace('E', 60_000), undefined);
  });

  it('after a reset, only what was seen since counts', () => {
    const e = new WaitEstimates();
    e.observe('E', 0, 0);
    e.observe('E', 50, 30_000);
    e.observe('E', 0, 31_000);
    e.observe('E', 10, 51_000);
    assert.equal(e.pace('E', 51_000), 0.5);
  });

  it('over the last 5 minutes: a counter idle for long before admissions started does not slow the pace', () => {
    const e = new WaitEstimates();
    e.observe('E', 0, 0);
    e.observe('E', 0, 600_000); // polled again 10 min later, still 0
    e.observe('E', 10, 620_000);
    assert.equal(e.pace('E', 620_000), 0.5, '10 in the 20 s since the counter was last seen at 0');
  });

  it('an observation exactly 5 minutes old still counts; older ones are dropped, but two are always kept', () => {
    const e = new WaitEstimates();
    e.observe('E', 0, 0);
    e.observe('E', 10, 20_000);
    e.observe('E', 20, 300_000);
    assert.equal(e.pace('E', 300_000), 20 / 300);
    const f = new WaitEstimates();
    f.observe('F', 0, 0);
    f.observe('F', 10, 20_000);
    f.observe('F', 10, 600_000); // unchanged: nothing to keep, nothing dropped
    assert.equal(f.pace('F', 600_000), 10 / 600);
  });

  it('polls of an unchanged counter, however many, keep the pace', () => {
    const e = new WaitEstimates();
    e.observe('E', 0, 0);
    e.observe('E', 10, 20_000);
    for (let i = 1; i <= 2000; i++) e.observe('E', 10, 20_000 + i * 20);
    assert.equal(e.pace('E', 60_000), 10 / 60);
  });

  it('keeps the last 1000 changes', () => {
    const e = new WaitEstimates();
    e.observe('E', 0, 0);
    for (let i = 1; i <= 1000; i++) e.observe('E', i, 60_000 + i * 30);
    // The first change (0 at 0 s) is dropped: 999 let in between 60.03 s and 90 s.
    assert.equal(e.pace('E', 90_000), 999 / (29_970 / 1000));
  });
});

describe('WaitEstimates: estimates on record and their errors', () => {
  it('the first estimate given is the one on record until the visitor is let in; unknown rooms and visitors have none', () => {
    const e = new WaitEstimates();
    e.given('E', 'a', 0, { lowSec: 80, highSec: 120 });
    e.given('E', 'a', 0, { lowSec: 1, highSec: 2 });
    assert.deepEqual(e.of('E', 'a'), { lowSec: 80, highSec: 120 });
    assert.equal(e.of('E', 'b'), undefined);
    assert.equal(e.of('Unknown', 'a'), undefined);
    assert.equal(e.admitted('Unknown', 'a', 1_000), undefined);
    assert.equal(e.admitted('E', 'a', 130_000), 30);
  });

  it('keeps at most 100 000 open estimates per room, forgetting the oldest first', () => {
    const e = new WaitEstimates();
    for (let i = 0; i <= 100_000; i++) e.given('E', `v${i}`, 0, { lowSec: i, highSec: i });
    assert.equal(e.of('E', 'v0'), undefined);
    assert.deepEqual(e.of('E', 'v1'), { lowSec: 1, highSec: 1 });
    assert.deepEqual(e.of('E', 'v100000'), { lowSec: 100_000, highSec: 100_000 });
  });

  it('judges the last 1000 admitted visitors', () => {
    const e = new WaitEstimates();
    const admit = (id: string, errorSec: number) => {
      e.given('E', id, 0, { lowSec: 0, highSec: 0 });
      e.admitted('E', id, errorSec * 1000);
    };
    for (let i = 0; i < 1000; i++) admit(`v${i}`, 1);
    assert.equal(e.accuracy('E').samples, 1000);
    admit('last', 1);
    assert.equal(e.accuracy('E').samples, 1000);
  });

  it('the median of the errors, as numbers; of an even count, the mean of the two middle ones', () => {
    const e = new WaitEstimates();
    const admit = (id: string, errorSec: number) => {
      e.given('E', id, 0, { lowSec: 0, highSec: 0 });
      e.admitted('E', id, errorSec * 1000);
    };
    admit('a', 100);
    admit('b', 9);
    admit('c', 10);
    assert.deepEqual(e.accuracy('E'), { samples: 3, median_abs_error_s: 10 });
    admit('d', 1);
    assert.deepEqual(e.accuracy('E'), { samples: 4, median_abs_error_s: 9.5 });
  });

  it('forgetting a room drops its open estimates and its pace', () => {
    const e = new WaitEstimates();
    e.observe('E', 0, 0);
    e.observe('E', 10, 20_000);
    e.given('E', 'a', 0, { lowSec: 1, highSec: 2 });
    e.forget('Unknown');
    assert.deepEqual(e.of('E', 'a'), { lowSec: 1, highSec: 2 });
    e.forget('E');
    assert.equal(e.of('E', 'a'), undefined);
    assert.equal(e.pace('E', 20_000), undefined);
  });
});

describe('the service records the estimate it answers on /queue_num and judges it at the claim', () => {
  it('figures give the median absolute error of admitted visitors', async () => {
    const clock = { ms: 1_800_000_000_000 };
    const core = await composeCore({
      store: new SqliteStore({ path: ':memory:' }),
      rooms: [defaultSettings('E')],
      clock: () => clock.ms,
      defaultIssuer: () => 'http://127.0.0.1',
    });
    const service = core.room;
    const join = async () => (await service.queue.assignQueueNum('E', {})).body as { api_request_id: string };
    // Ten joined and let in over 60 s: a pace of 1 every 6 s, seen by the polls.
    for (let i = 0; i < 10; i++) await join();
    await service.queue.servingNum('E');
    for (let i = 0; i < 10; i++) {
      clock.ms += 6_000;
      await service.admission.incrementServingCounter('E', 1);
      await service.queue.servingNum('E');
    }
    // A visitor with 5 ahead: about 30 s.
    for (let i = 0; i < 4; i++) await join();
    const { api_request_id: id } = await join();
    const answer = (await service.queue.queueNum('E', id)).body as { queue_number: number; wait_estimate_s?: [number, number] };
    assert.equal(answer.queue_number, 15);
    assert.deepEqual(answer.wait_estimate_s, [24, 38]);
    // Let in 40 s later (the middle of the range was 31 s): an error of 9 s.
    clock.ms += 40_000;
    await service.admission.incrementServingCounter('E', 5);
    assert.equal((await service.claims.generateToken('E', id)).status, 200);
    const figures = (await service.reports.roomFigures('E')).body as { estimate_accuracy: unknown };
    assert.deepEqual(figures.estimate_accuracy, { samples: 1, median_abs_error_s: 9 });
  });
});
