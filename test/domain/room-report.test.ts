// The after-event report (src/domain/room-report.ts), without a store: each minute's movements from the counter
// samples (a reset counts from zero again), the state at the minute's end, the wait percentiles of the minute,
// minutes with waits but no sample, the totals of a range and the CSV. Over HTTP: test/http/report.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Counters, HistorySample, MinuteWaits } from '../../src/domain/ports/store.ts';
import { REPORT_COLUMNS, reportCsv, reportMinutes, reportTotals, type ReportMinute } from '../../src/domain/room-report.ts';

const counters = (c: Partial<Counters>): Counters => ({
  queue: 0, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0, ...c,
});
const sample = (minute: number, c: Partial<Counters>, active = 0): HistorySample => ({ minute, counters: counters(c), active });
const NO_WAITS = { waits_measured: 0, wait_p50_s: null, wait_p90_s: null, wait_p99_s: null, estimates_judged: 0, estimate_error_p50_s: null, estimate_error_p90_s: null };
const NO_PRESENCE = { present_waiting: 0, absent_waiting: 0, no_shows: 0, late_arrivals: 0 };
const STILL = { arrivals: 0, admissions: 0, claims: 0, leaves: 0, completions: 0, abandons: 0, expiries: 0 };

// The minute before the range, then three samples: movement, none, and a reset (every counter back near zero).
const PREVIOUS = sample(0, { queue: 10, serving: 4, tokens: 3, completed: 1, left: 1 });
const SAMPLES = [
  sample(60, { queue: 18, serving: 6, tokens: 6, expired: 7, completed: 5, abandoned: 6, left: 2 }, 4),
  sample(120, { queue: 18, serving: 6, tokens: 6, expired: 7, completed: 5, abandoned: 6, left: 2 }, 3),
  sample(240, { queue: 3, serving: 1 }, 0),
];

describe('reportMinutes', () => {
  it("each minute's movements since the sample before, and the state at its end", () => {
    assert.deepEqual(reportMinutes(SAMPLES, PREVIOUS), [
      {
        minute: 60, arrivals: 8, admissions: 2, claims: 3, leaves: 1, completions: 4, abandons: 6, expiries: 7,
        waiting: 10, prequeue: 0, active_sessions: 4, serving_counter: 6, ...NO_PRESENCE, ...NO_WAITS,
      },
      { minute: 120, ...STILL, waiting: 10, prequeue: 0, active_sessions: 3, serving_counter: 6, ...NO_PRESENCE, ...NO_WAITS },
      // The reset: a counter lower than the minute before counts from zero (tokens 6 → 0 is no claim).
      { minute: 240, ...STILL, arrivals: 3, admissions: 1, waiting: 2, prequeue: 0, active_sessions: 0, serving_counter: 1, ...NO_PRESENCE, ...NO_WAITS },
    ]);
  });

  it('without a sample before, the first minute counts from zero', () => {
    const [first] = reportMinutes(SAMPLES);
    assert.deepEqual(first, {
      minute: 60, arrivals: 18, admissions: 6, claims: 6, leaves: 2, completions: 5, abandons: 6, expiries: 7,
      waiting: 10, prequeue: 0, active_sessions: 4, serving_counter: 6, ...NO_PRESENCE, ...NO_WAITS,
    });
  });

  it('waiting is the positions handed out beyond the counter and not given up, never negative', () => {
    const waiting = (c: Partial<Counters>) => reportMinutes([sample(60, c)])[0]?.waiting;
    assert.equal(waiting({ queue: 10, serving: 4, left: 1 }), 5);
    assert.equal(waiting({ queue: 10, serving: 14, left: 0 }), 0, 'the counter past the queue');
    assert.equal(waiting({ queue: 10, serving: 12, left: 1 }), 0, 'past the queue, someone left: not −1');
  });

  it("a minute's wait percentiles; a minute with waits and no sample gets a row with the state of the minute before", () => {
    const waits: MinuteWaits[] = [
      { minute: 60, counts: { w1: 50, w5: 40, w10: 10, e2: 1, e8: 1 } },
      { minute: 180, counts: { w3: 2 } },
      { minute: 300, counts: { e4: 1 } },
      { minute: 0, counts: { w0: 1 } },
    ];
    const rows = reportMinutes(SAMPLES, PREVIOUS, waits);
    assert.deepEqual(rows.map((r) => r.minute), [0, 60, 120, 180, 240, 300], 'in order');
    assert.deepEqual(rows[1], {
      minute: 60, arrivals: 8, admissions: 2, claims: 3, leaves: 1, completions: 4, abandons: 6, expiries: 7,
      waiting: 10, prequeue: 0, active_sessions: 4, serving_counter: 6, ...NO_PRESENCE,
      waits_measured: 100, wait_p50_s: 1, wait_p90_s: 5, wait_p99_s: 15, estimates_judged: 2, estimate_error_p50_s: 2, estimate_error_p90_s: 10,
    });
    // 180 has no sample: no movement known, the state of 120 (the last minute before it, not the first).
    assert.deepEqual(rows[3], {
      minute: 180, ...STILL, waiting: 10, prequeue: 0, active_sessions: 3, serving_counter: 6, ...NO_PRESENCE,
      ...NO_WAITS, waits_measured: 2, wait_p50_s: 3, wait_p90_s: 3, wait_p99_s: 3,
    });
    assert.deepEqual(rows[5], {
      minute: 300, ...STILL, waiting: 2, prequeue: 0, active_sessions: 0, serving_counter: 1, ...NO_PRESENCE,
      ...NO_WAITS, estimates_judged: 1, estimate_error_p50_s: 4, estimate_error_p90_s: 4,
    });
    // Before every sample: nothing known, zeros.
    assert.deepEqual(rows[0], {
      minute: 0, ...STILL, waiting: 0, prequeue: 0, active_sessions: 0, serving_counter: 0, ...NO_PRESENCE,
      ...NO_WAITS, waits_measured: 1, wait_p50_s: 0, wait_p90_s: 0, wait_p99_s: 0,
    });
  });

  it('no samples and no waits: no minutes', () => {
    assert.deepEqual(reportMinutes([]), []);
    assert.deepEqual(reportMinutes([], PREVIOUS, []), []);
  });
});

describe('reportTotals', () => {
  it('sums the movements, finds the peaks, and takes the percentiles over every wait of the range', () => {
    const waits: MinuteWaits[] = [
      { minute: 60, counts: { w1: 50, w5: 40, w10: 10, e2: 1, e8: 1 } },
      { minute: 180, counts: { w3: 100, e4: 2 } },
      { minute: 300, counts: { w1: 10 } },
    ];
    const rows = reportMinutes(SAMPLES, PREVIOUS, waits);
    assert.deepEqual(reportTotals(rows, waits), {
      arrivals: 11, admissions: 3, claims: 3, leaves: 1, completions: 4, abandons: 6, expiries: 7,
      // 10 waiting at 60, 120 and 180: the first of them.
      peak_waiting: 10,
      peak_waiting_minute: 60,
      peak_active_sessions: 4,
      peak_prequeue: 0,
      peak_absent_waiting: 0,
      peak_no_shows: 0,
      late_arrivals: 0,
      // w1: 50 + 10 of the two minutes; the 105th of 210 waits is in the 2–3 s bucket.
      waits_measured: 210, wait_p50_s: 2, wait_p90_s: 5, wait_p99_s: 14,
      estimates_judged: 4, estimate_error_p50_s: 4, estimate_error_p90_s: 9,
    });
  });

  it('the peak is the most waiting, wherever it is', () => {
    const rows = reportMinutes([sample(60, { queue: 2 }, 1), sample(120, { queue: 9 }, 5), sample(180, { queue: 9, serving: 9 }, 2)]);
    const totals = reportTotals(rows, []);
    assert.equal(totals.peak_waiting, 9);
    assert.equal(totals.peak_waiting_minute, 120);
    assert.equal(totals.peak_active_sessions, 5);
  });

  it('the pre-queue at each minute\'s end, and its peak (older samples without it count 0)', () => {
    const rows = reportMinutes([{ ...sample(60, {}), prequeue: 40 }, { ...sample(120, {}), prequeue: 55 }, sample(180, { queue: 55 })]);
    assert.deepEqual(rows.map((r) => [r.prequeue, r.waiting]), [[40, 0], [55, 0], [0, 55]]);
    assert.equal(reportTotals(rows, []).peak_prequeue, 55);
  });

  it('presence (issue 34): present and absent waiting and no-shows at each minute\'s end, the late arrivals of each minute, and their totals', () => {
    const withPresence = (minute: number, present: number, absent: number, noShows: number, late: number): HistorySample => ({
      ...sample(minute, { queue: present + absent }),
      presence: { present_waiting: present, absent_waiting: absent, no_shows: noShows, late_arrivals: late },
    });
    const previous = withPresence(0, 5, 0, 0, 2);
    // 120: an older sample without presence (zeros); 180: a reset sets late arrivals back to 0, then 1.
    const rows = reportMinutes([withPresence(60, 8, 3, 1, 5), sample(120, { queue: 11 }), withPresence(180, 2, 7, 4, 1)], previous);
    assert.deepEqual(
      rows.map((r) => [r.present_waiting, r.absent_waiting, r.no_shows, r.late_arrivals]),
      [[8, 3, 1, 3], [0, 0, 0, 0], [2, 7, 4, 1]],
      '5 − 2 = 3 late arrivals in the first minute; after the reset the count starts again',
    );
    const totals = reportTotals(rows, []);
    assert.equal(totals.late_arrivals, 4);
    assert.equal(totals.peak_absent_waiting, 7);
    assert.equal(totals.peak_no_shows, 4);
  });

  it('an empty range: zeros, no peak minute, no percentiles', () => {
    assert.deepEqual(reportTotals([], []), {
      ...STILL, peak_waiting: 0, peak_waiting_minute: null, peak_active_sessions: 0, peak_prequeue: 0, ...NO_WAITS,
      peak_absent_waiting: 0, peak_no_shows: 0, late_arrivals: 0,
    });
  });
});

describe('reportCsv', () => {
  it('a header of the columns, one line per minute, an empty cell for a percentile without samples', () => {
    const rows: ReportMinute[] = reportMinutes([sample(60, { queue: 3, serving: 1 }, 1)], undefined, [{ minute: 60, counts: { w2: 1 } }]);
    assert.equal(
      reportCsv(rows),
      'minute,arrivals,admissions,claims,leaves,completions,abandons,expiries,waiting,active_sessions,serving_counter,' +
        'waits_measured,wait_p50_s,wait_p90_s,wait_p99_s,estimates_judged,estimate_error_p50_s,estimate_error_p90_s,prequeue,' +
        'present_waiting,absent_waiting,no_shows,late_arrivals\n' +
        '60,3,1,0,0,0,0,0,2,1,1,1,2,2,2,0,,,0,0,0,0,0\n',
    );
    assert.equal(reportCsv([]), `${REPORT_COLUMNS.join(',')}\n`);
  });
});
