// The embedded store's index from request ID to position, kept in memory (issue 15). Request IDs are random
// (122 bits), so an on-disk index of them takes each new ID to a random page: at a queue of 1M every join
// wrote its own 4 KiB page to the WAL and again at the checkpoint (~10 KB per join). The positions table is
// keyed by position and grows at its end, so a batch of joins fills pages one after another; this index finds
// a position from a request ID without writing anything. The database stays the one truth: the index is
// rebuilt from the positions table when the store opens, and only changes after a commit.
//
// An open-addressing hash table of 32-bit tags (a keyed hash of the ID) and positions: 12 bytes a slot, at
// most half the slots used, so ≤ 24 bytes a visitor. A tag is not the ID: callers read the position's row and
// compare the stored request ID, so a tag shared by two IDs costs one extra read, never a wrong answer.

import { randomInt } from 'node:crypto';

/** Per process: where an ID lands cannot be chosen from outside, whatever IDs are looked up. */
const SEED = randomInt(0, 2 ** 32) | 0;

/** FNV-1a over the ID's UTF-16 code units, seeded. */
export function requestTag(requestId: string): number {
  let hash = 0x811c9dc5 ^ SEED;
  for (let i = 0; i < requestId.length; i++) hash = Math.imul(hash ^ requestId.charCodeAt(i), 0x01000193);
  return hash | 0;
}

const MIN_CAPACITY = 1024;

export class RequestIndex {
  private tags = new Int32Array(MIN_CAPACITY);
  /** 0 = empty slot (positions start at 1). */
  private positions = new Float64Array(MIN_CAPACITY);
  private used = 0;
  private readonly tagOf: (requestId: string) => number;

  /** `tag` replaces the keyed hash (tests use it to make IDs share a tag). */
  constructor(tag: (requestId: string) => number = requestTag) {
    this.tagOf = tag;
  }

  get size(): number {
    return this.used;
  }

  add(requestId: string, position: number): void {
    if ((this.used + 1) * 2 > this.positions.length) this.grow();
    this.place(this.tagOf(requestId) | 0, position);
    this.used += 1;
  }

  /** Positions whose ID has the same tag as `requestId`: the one sought (if any) and, rarely, others. */
  candidates(requestId: string): number[] {
    const tag = this.tagOf(requestId) | 0;
    const mask = this.positions.length - 1;
    const found: number[] = [];
    for (let slot = this.slotOf(tag); this.positions[slot] !== 0; slot = (slot + 1) & mask) {
      if (this.tags[slot] === tag) found.push(this.positions[slot] as number);
    }
    return found;
  }

  private slotOf(tag: number): number {
    // Fibonacci hashing: the high bits of the product, as many as the table needs.
    const bits = 31 - Math.clz32(this.positions.length);
    return Math.imul(tag, 0x9e3779b1) >>> (32 - bits);
  }

  private place(tag: number, position: number): void {
    const mask = this.positions.length - 1;
    let slot = this.slotOf(tag);
    while (this.positions[slot] !== 0) slot = (slot + 1) & mask;
    this.tags[slot] = tag;
    this.positions[slot] = position;
  }

  private grow(): void {
    const tags = this.tags;
    const positions = this.positions;
    this.tags = new Int32Array(tags.length * 2);
    this.positions = new Float64Array(positions.length * 2);
    for (let slot = 0; slot < positions.length; slot++) {
      if (positions[slot] !== 0) this.place(tags[slot] as number, positions[slot] as number);
    }
  }
}
