// "People ahead of you" (src/domain/people-ahead.ts, issue 33): the people still waiting ahead — 0 for the next
// in line, never those who left — and the per-room list of the positions given up, read once per change.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countBetween, PeopleAhead, peopleAhead } from '../../src/domain/people-ahead.ts';

describe('peopleAhead', () => {
  it('the next in line has nobody ahead; position − serving − 1 otherwise', () => {
    assert.equal(peopleAhead(11, 10), 0);
    assert.equal(peopleAhead(15, 10), 4);
  });
  it('a place already reached (or passed) has nobody ahead, never a negative count', () => {
    assert.equal(peopleAhead(10, 10), 0);
    assert.equal(peopleAhead(3, 10), 0);
  });
  it('those who left between the serving counter and the place are not ahead', () => {
    assert.equal(peopleAhead(15, 10, 3), 1);
    assert.equal(peopleAhead(15, 10, 9), 0);
  });
  it('counts the entries strictly between two positions', () => {
    assert.equal(countBetween([2, 4, 5, 7], 2, 7), 2);
    assert.equal(countBetween([2, 4, 5, 7], 0, 100), 4);
    assert.equal(countBetween([2, 4, 5, 7], 7, 9), 0);
    assert.equal(countBetween([], 0, 9), 0);
  });
});

describe('PeopleAhead', () => {
  function fakeStore(left: number[]) {
    const reads: number[] = [];
    return {
      reads,
      store: {
        leftPositionsAbove: async (_event: string, after: number, limit: number) => {
          reads.push(after);
          return left.filter((p) => p > after).slice(0, limit);
        },
      },
    };
  }

  it('reads nothing while nobody has left', async () => {
    const { store, reads } = fakeStore([]);
    const ahead = new PeopleAhead(store);
    assert.equal(await ahead.of('E', 20, { serving: 10, left: 0 }), 9);
    assert.deepEqual(reads, []);
  });

  it('subtracts the people who left ahead, reading the list once per change of the left count', async () => {
    const left = [12, 14, 30];
    const { store, reads } = fakeStore(left);
    const ahead = new PeopleAhead(store);
    // Serving 10: 11..19 are ahead of 20, 12 and 14 left: 7.
    assert.equal(await ahead.of('E', 20, { serving: 10, left: 3 }), 7);
    assert.equal(await ahead.of('E', 40, { serving: 10, left: 3 }), 29 - 3);
    // The counter moves on past 12: no new read, the same list.
    assert.equal(await ahead.of('E', 20, { serving: 13, left: 3 }), 6 - 1);
    assert.equal(reads.length, 1);
    // Someone else leaves: read again.
    left.splice(2, 0, 16);
    assert.equal(await ahead.of('E', 20, { serving: 13, left: 4 }), 6 - 2);
    assert.equal(reads.length, 2);
    // A counter moved back (below what the list was read above): read again.
    assert.equal(await ahead.of('E', 20, { serving: 5, left: 4 }), 14 - 3);
    assert.equal(reads.length, 3);
  });

  it('a reset (another generation) reads again', async () => {
    const { store, reads } = fakeStore([12]);
    const ahead = new PeopleAhead(store);
    await ahead.of('E', 20, { serving: 10, left: 1, generation: 0 });
    await ahead.of('E', 20, { serving: 10, left: 1, generation: 1 });
    assert.equal(reads.length, 2);
  });

  it('a store without the list counts everyone between as ahead', async () => {
    assert.equal(await new PeopleAhead({}).of('E', 20, { serving: 10, left: 5 }), 9);
  });
});
