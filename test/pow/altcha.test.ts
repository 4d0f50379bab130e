// The challenge's hidden counter (the number of hashes a solver must reach): drawn between difficulty/2 and
// difficulty, so no challenge is cheap. The counter is not in the challenge; solving finds it (the solver
// counts up from 0, so the solution's counter is the drawn one).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { AltchaProofOfWork } from '../../src/pow/altcha.ts';

describe('AltchaProofOfWork.issue: the counter a challenge hides', () => {
  const pow = new AltchaProofOfWork('test-secret');

  for (const difficulty of [2, 7, 40]) {
    it(`at difficulty ${difficulty}: never below ${difficulty}/2 nor above ${difficulty}, over 60 challenges`, async () => {
      // With a counter drawn from 1..difficulty instead (`randomInt(difficulty)`), 60 challenges all in range
      // happen with probability about (1/2)^60 at difficulties 7 and 40: the test fails (checked by planting it).
      const counters: number[] = [];
      for (let i = 0; i < 60; i++) {
        const challenge = await pow.issue('Sample', difficulty, Date.UTC(2030, 0, 1));
        const solution = await solveChallenge({ challenge, deriveKey });
        assert.ok(solution, 'the challenge is solvable');
        counters.push(solution.counter);
      }
      const low = counters.filter((counter) => counter < difficulty / 2 || counter > difficulty);
      assert.deepEqual(low, [], `counters out of [${difficulty}/2, ${difficulty}]: ${counters.join(',')}`);
    });
  }
});
