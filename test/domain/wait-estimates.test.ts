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

describe('the service records the estimate it answers on /queue_num and judges it at the claim', () => {
  it('figures give the median absolute error of admitted visitors', async () => {
    const clock = { ms: 1_800_000_000_000 };
    const core = await composeCore({
      store: new SqliteStore({ path: ':memory:' }),
      rooms: [defaultSettings('E')],
      clock: () => clock.ms,
      defaultIssuer: () => 'http://127.0.0.1',
    });
    const service = core.service;
    const join = async () => (await service.assignQueueNum('E')).body as { api_request_id: string };
    // Ten joined and let in over 60 s: a pace of 1 every 6 s, seen by the polls.
    for (let i = 0; i < 10; i++) await join();
    await service.servingNum('E');
    for (let i = 0; i < 10; i++) {
      clock.ms += 6_000;
      await service.incrementServingCounter('E', 1);
      await service.servingNum('E');
    }
    // A visitor with 5 ahead: about 30 s.
    for (let i = 0; i < 4; i++) await join();
    const { api_request_id: id } = await join();
    const answer = (await service.queueNum('E', id)).body as { queue_number: number; wait_estimate_s?: [number, number] };
    assert.equal(answer.queue_number, 15);
    assert.deepEqual(answer.wait_estimate_s, [24, 38]);
    // Let in 40 s later (the middle of the range was 31 s): an error of 9 s.
    clock.ms += 40_000;
    await service.incrementServingCounter('E', 5);
    assert.equal((await service.generateToken('E', id)).status, 200);
    const figures = (await service.roomFigures('E')).body as { estimate_accuracy: unknown };
    assert.deepEqual(figures.estimate_accuracy, { samples: 1, median_abs_error_s: 9 });
  });
});
