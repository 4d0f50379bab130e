// "People ahead of you" (issue 33): the people still waiting ahead of a position — positions between the serving
// counter and it that were not given up (leave_queue). Positions at or below the serving counter were let in
// (those that expired unclaimed among them): nobody there is ahead. The next in line has 0 ahead.
//
// The positions given up above the serving counter are read from the store once per change of the room's
// `left` count (or a reset, or a counter that moved back), per node and room — never per visitor or per poll —
// and kept in memory as a sorted list; a visitor's count is then a binary search. A room where nobody left never
// reads anything. At most LIST_LIMIT positions are kept: past the last one, people who left are still counted
// as ahead (an overcount, never an undercount).

import type { Counters, Store } from './ports/store.ts';

/** The most positions given up that one room keeps in memory. */
export const LIST_LIMIT = 10_000;

/** People ahead of a position: those between the serving counter and it, minus the ones who left among them. */
export function peopleAhead(position: number, serving: number, leftBetween: number = 0): number {
  return Math.max(0, position - serving - 1 - leftBetween);
}

/** How many entries of an ascending list lie strictly between `low` and `high`. */
export function countBetween(sorted: readonly number[], low: number, high: number): number {
  return Math.max(0, firstAbove(sorted, high - 1) - firstAbove(sorted, low));
}

/** Index of the first entry > value. */
function firstAbove(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface RoomLeft {
  /** The room's `left` and generation counters when the list was read. */
  left: number;
  generation: number;
  /** The serving counter the list was read above. */
  above: number;
  positions: number[];
}

export class PeopleAhead {
  private readonly rooms = new Map<string, RoomLeft>();
  private readonly reading = new Map<string, Promise<RoomLeft>>();

  private readonly store: Pick<Store, 'leftPositionsAbove'>;

  constructor(store: Pick<Store, 'leftPositionsAbove'>) {
    this.store = store;
  }

  /** People still waiting ahead of `position`, given the room's counters as just read. */
  async of(eventId: string, position: number, counters: Pick<Counters, 'serving' | 'left' | 'generation'>): Promise<number> {
    if (counters.left === 0 || !this.store.leftPositionsAbove) return peopleAhead(position, counters.serving);
    const list = await this.listFor(eventId, counters);
    return peopleAhead(position, counters.serving, countBetween(list.positions, counters.serving, position));
  }

  private async listFor(eventId: string, counters: Pick<Counters, 'serving' | 'left' | 'generation'>): Promise<RoomLeft> {
    const known = this.rooms.get(eventId);
    const generation = counters.generation ?? 0;
    if (known && known.left === counters.left && known.generation === generation && known.above <= counters.serving) return known;
    let pending = this.reading.get(eventId);
    if (!pending) {
      pending = this.store
        .leftPositionsAbove!(eventId, counters.serving, LIST_LIMIT)
        .then((positions) => {
          const room = { left: counters.left, generation, above: counters.serving, positions };
          this.rooms.set(eventId, room);
          return room;
        })
        .finally(() => this.reading.delete(eventId));
      this.reading.set(eventId, pending);
    }
    return pending;
  }

  /** Forgets a room (deleted). */
  forget(eventId: string): void {
    this.rooms.delete(eventId);
  }
}
