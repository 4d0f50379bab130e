// The bot defence's counters, flood holds and single-use marks kept in this process's memory: the embedded
// (SQLite) store's implementation of BotDefenceStore. The SQLite store serves one process, so memory is shared by
// every request it answers; writing each count or mark to the database would add an fsync to every join. What a
// restart forgets is bounded: counters of at most two minutes, a flood hold of at most a minute, and marks of
// challenges still valid (a restart lets a solution used before it be used once more within its challenge_ttl).
// Redis keeps all of them in Redis instead (docs/bots.md "Per-client limits").

import type { BotDefenceStore, WindowCounts } from '../domain/ports/store.ts';

/** Entries are swept when this many were added since the last sweep, so memory stays bounded by the traffic of a window. */
const SWEEP_EVERY = 10_000;

export class InMemoryBotDefence implements BotDefenceStore {
  /** name -> [window index, count]; the previous window's count under the name of that window. */
  private readonly windows = new Map<string, { count: number; expiresAtMs: number }>();
  private readonly used = new Map<string, number>();
  /** name -> until when the mark holds (ms since the epoch). */
  private readonly holds = new Map<string, number>();
  private added = 0;

  async countInWindow(name: string, by: number, windowMs: number, nowMs: number): Promise<WindowCounts> {
    const index = Math.floor(nowMs / windowMs);
    const endsAtMs = (index + 1) * windowMs;
    const currentKey = `${name}@${index}`;
    let current = this.windows.get(currentKey);
    if (!current && by > 0) {
      current = { count: 0, expiresAtMs: endsAtMs + windowMs };
      this.windows.set(currentKey, current);
      this.noteAdded(nowMs);
    }
    if (current) current.count += by;
    const previous = this.windows.get(`${name}@${index - 1}`);
    return { current: current?.count ?? 0, previous: previous?.count ?? 0, endsAtMs };
  }

  async useOnce(name: string, untilMs: number, nowMs: number): Promise<boolean> {
    const until = this.used.get(name);
    if (until !== undefined && until > nowMs) return false;
    this.used.set(name, untilMs);
    this.noteAdded(nowMs);
    return true;
  }

  async holdUntil(name: string, untilMs: number, nowMs: number): Promise<number> {
    const held = this.holds.get(name) ?? 0;
    if (untilMs > held) {
      this.holds.set(name, untilMs);
      this.noteAdded(nowMs);
    }
    return held > nowMs ? held : 0;
  }

  private noteAdded(nowMs: number): void {
    if (++this.added < SWEEP_EVERY) return;
    this.added = 0;
    for (const [key, entry] of this.windows) if (entry.expiresAtMs <= nowMs) this.windows.delete(key);
    for (const [key, until] of this.used) if (until <= nowMs) this.used.delete(key);
    for (const [key, until] of this.holds) if (until <= nowMs) this.holds.delete(key);
  }
}
