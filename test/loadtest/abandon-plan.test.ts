import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { abandonPlanOf, type AbandonSettings } from '../../src/loadtest/abandon-plan.ts';

const settings: AbandonSettings = { abandon: 0.3, comeBack: 0.4, comeBackAfterMs: 20_000, seed: 1 };
const plans = (s: AbandonSettings, n = 10_000) => Array.from({ length: n }, (_, i) => abandonPlanOf(s, i));

describe('who closes the tab (--abandon, --come-back, --seed)', () => {
  it('the same seed gives every visitor the same plan; another seed, other visitors', () => {
    assert.deepEqual(plans(settings), plans({ ...settings }));
    const a = plans(settings).map((p) => p !== null);
    const b = plans({ ...settings, seed: 2 }).map((p) => p !== null);
    assert.notDeepEqual(a, b);
    // A visitor's plan depends on its index alone, not on how many visitors the run has.
    assert.deepEqual(plans(settings, 100), plans(settings).slice(0, 100));
  });

  it('the shares hold: --abandon of the visitors, two thirds of them while waiting, --come-back of them return after 0.5–1.5 × --come-back-after', () => {
    const leaving = plans(settings).filter((p) => p !== null);
    assert.ok(Math.abs(leaving.length / 10_000 - 0.3) < 0.02, `${leaving.length} of 10,000 leave`);
    const waiting = leaving.filter((p) => p.stage === 'waiting').length / leaving.length;
    assert.ok(Math.abs(waiting - 2 / 3) < 0.04, `${waiting} leave while waiting`);
    const back = leaving.filter((p) => p.awayMs !== null);
    assert.ok(Math.abs(back.length / leaving.length - 0.4) < 0.04, `${back.length} of ${leaving.length} come back`);
    for (const p of back) assert.ok(p.awayMs! >= 10_000 && p.awayMs! <= 30_000, String(p.awayMs));
    for (const p of leaving) assert.ok(p.remainingShare >= 0 && p.remainingShare < 1);
    const early = leaving.filter((p) => p.remainingShare >= 0.5).length / leaving.length;
    assert.ok(Math.abs(early - 0.5) < 0.04, 'the point of leaving is uniform along the way through the line');
  });

  it('nobody leaves with --abandon 0, everybody with 1; nobody comes back with --come-back 0', () => {
    assert.ok(plans({ ...settings, abandon: 0 }, 1000).every((p) => p === null));
    assert.ok(plans({ ...settings, abandon: 1 }, 1000).every((p) => p !== null));
    assert.ok(plans({ ...settings, comeBack: 0 }, 1000).every((p) => p === null || p.awayMs === null));
  });
});
