import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { noShowFigures } from '../../src/loadtest/no-show-figures.ts';
import { visitor } from './recorded-visitor.ts';

const tokens = (n: number) => ({ access_token: `a${n}`, refresh_token: 'r', id_token: 'i' });
const leaves = { stage: 'waiting' as const, remainingShare: 0.5, awayMs: null };

/**
 * total_active_users 2, run ends at 10 s. Stayers: X in session 0–6 s; A waits 0–4 s (token 4.5 s); B waits 0–8 s
 * (token 8.2 s). Y closes the tab while waiting for good; Z is let in at 3 s, leaves, comes back at 7 s, claims at 7.1 s.
 */
function recorded() {
  return [
    visitor(0, { placedAt: 0, joinedAt: 0, servedSeenAt: 0, tokens: tokens(0), tokenAt: 0, sessionEndSentAt: 6000 }),
    visitor(1, { placedAt: 0, joinedAt: 0, servedSeenAt: 4000, tokens: tokens(1), tokenAt: 4500, state: 'in session' }),
    visitor(2, { placedAt: 0, joinedAt: 0, servedSeenAt: 8000, tokens: tokens(2), tokenAt: 8200, state: 'in session' }),
    visitor(3, { placedAt: 0, joinedAt: 0, abandon: leaves, leftAt: 2000, state: 'left' }),
    visitor(4, { placedAt: 0, joinedAt: 0, abandon: { ...leaves, stage: 'admitted', awayMs: 4000 }, servedSeenAt: 3000, leftAt: 3000, cameBackAt: 7000, tokens: tokens(4), tokenAt: 7100, state: 'in session' }),
  ];
}

describe('no-show figures: what visitors who leave cost the others', () => {
  it('capacity used: the share of total_active_users in session, averaged over the time stayers wait', () => {
    const { figures } = noShowFigures({ visitors: recorded(), totalActiveUsers: 2, endedAt: 10_000, serverLateArrivals: 1 });
    // Stayers wait 0–8 s. In session: 1 (0–4.5 s), 2 (4.5–6 s), 1 (6–7.1 s), 2 (7.1–8 s) → 10.4 of 16 place-seconds.
    assert.equal(figures.capacity_used, 0.65);
    assert.equal(figures.waited_over_s, 8);
    // After 8.2 s: A, B and Z are in session, one over.
    assert.equal(figures.max_in_session, 3);
    assert.equal(figures.overshoot, 1);
    assert.equal(figures.server_late_arrivals, 1);
  });

  it('counts who left where and who came back; the stayers\' waits from join to token set', () => {
    const { figures, stayerWaits } = noShowFigures({ visitors: recorded(), totalActiveUsers: 2, endedAt: 10_000, serverLateArrivals: null });
    assert.deepEqual(
      { abandoned: figures.abandoned, left_waiting: figures.left_waiting, left_admitted: figures.left_admitted, came_back: figures.came_back, came_back_claimed: figures.came_back_claimed },
      { abandoned: 2, left_waiting: 1, left_admitted: 1, came_back: 1, came_back_claimed: 1 },
    );
    assert.equal(figures.stayers, 3);
    assert.equal(figures.stayers_served, 3);
    assert.deepEqual(stayerWaits, [0, 4.5, 8.2]);
    assert.deepEqual(figures.stayer_wait_s, { count: 3, p50: 4.5, p90: 8.2, max: 8.2 });
  });

  it('capacity over capacity is counted as full, not more; a place over the limit shows only as overshoot', () => {
    // Three in session all along while a stayer waits: used is 100 %, overshoot 1.
    const visitors = [0, 1, 2].map((i) => visitor(i, { placedAt: 0, joinedAt: 0, servedSeenAt: 0, tokens: tokens(i), tokenAt: 0 }));
    visitors.push(visitor(3, { placedAt: 0, joinedAt: 0, state: 'waiting' }));
    const { figures } = noShowFigures({ visitors, totalActiveUsers: 2, endedAt: 5000, serverLateArrivals: null });
    assert.equal(figures.capacity_used, 1);
    assert.equal(figures.overshoot, 1);
    assert.equal(figures.stayers_served, 3, 'the waiting stayer was never served');
  });

  it('one point a second for the charts: in session and stayers waiting', () => {
    const { series } = noShowFigures({ visitors: recorded(), totalActiveUsers: 2, endedAt: 10_000, serverLateArrivals: null });
    assert.equal(series.length, 11);
    assert.deepEqual(series[0], { t: 0, inSession: 1, stayersWaiting: 2 });
    assert.deepEqual(series[5], { t: 5, inSession: 2, stayersWaiting: 1 });
    assert.deepEqual(series[9], { t: 9, inSession: 3, stayersWaiting: 0 });
  });

  it('without a capacity (a driver admits) there is no share of it to use', () => {
    const { figures } = noShowFigures({ visitors: recorded(), totalActiveUsers: null, endedAt: 10_000, serverLateArrivals: null });
    assert.equal(figures.capacity_used, null);
    assert.equal(figures.overshoot, 0);
  });
});
