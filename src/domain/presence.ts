// Presence (issue 34; docs/rooms.md "Presence and the arrival window"): which waiting visitors are still there.
//
// Only beats count: an open /stream naming the request ID, a request of the gate's waiting page, and a
// GET /queue_num with the request ID and beat=1 (Anteroom's waiting page sends one every 10 s). A visitor who
// never beat is never absent (presence-settings.ts), so clients that do not beat — VWR's, which poll
// /serving_num after their first /queue_num, and inlets-only set-ups — are admitted exactly as before. The join
// is not a beat (every client joins).
//
// A beat costs a Set.add on this node (seen): nothing is written on the polling hot path. Every FLUSH_MS the
// node merges the positions it saw into the store, one call per room (PresenceStore.markSeen: one Lua script on
// Redis, memory on SQLite), and the admission tick merges its own room first. Marks of another node reach the
// store up to FLUSH_MS late, and no node waits for them; that is harmless because a position becomes absent
// only after one of its beats was merged and then presence_timeout (≥ 30 s, 15 merges) passed without another.
// A visitor absent for the whole timeout who comes back on another node may be passed in the ≤ FLUSH_MS before
// their mark is merged: they then claim at once as a late arrival, within the overshoot bound.

import type { PresenceStore } from './ports/presence.ts';
import type { AdmissionSnapshot } from './ports/store.ts';
import { presenceFigures, type PresenceFigures } from './presence-figures.ts';
import { presenceApplies, presenceTimeoutOf } from './presence-settings.ts';
import type { RoomSettings } from './room-settings.ts';

/** How often a node merges the positions it saw into the store. */
export const PRESENCE_FLUSH_MS = 2000;

/**
 * The presence window's length for a timeout: at least 5 s, and at most 12 windows per timeout (the windows
 * a read combines). A visitor seen is present for between timeout and timeout + one window.
 */
export function presenceWindowSeconds(timeout: number): number {
  return Math.max(5, Math.ceil(timeout / 12));
}

export interface PresenceTrackerDeps {
  store: PresenceStore;
  /** Epoch seconds (the service's clock). */
  now: () => number;
  /** The room's settings as served now (undefined: not served). */
  room: (eventId: string) => RoomSettings | undefined;
  flushMs?: number;
}

export class PresenceTracker {
  private readonly deps: PresenceTrackerDeps;
  /** Positions seen since the last flush, per room and second. */
  private pending = new Map<string, Map<number, Set<number>>>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(deps: PresenceTrackerDeps) {
    this.deps = deps;
  }

  /** A beat of the visitor at `position`. Never waits, never throws; no-op where presence is off. */
  seen(eventId: string, position: number): void {
    const room = this.deps.room(eventId);
    if (!room || presenceTimeoutOf(room) === 0) return;
    // Kept by the second it was seen in, so that a late merge does not make the sign of life look newer.
    const now = this.deps.now();
    let bySecond = this.pending.get(eventId);
    if (!bySecond) this.pending.set(eventId, (bySecond = new Map()));
    let positions = bySecond.get(now);
    if (!positions) bySecond.set(now, (positions = new Set()));
    positions.add(position);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.deps.flushMs ?? PRESENCE_FLUSH_MS).unref();
  }

  /** Merges what this node saw (of one room, or of all) into the store. A failed merge is dropped: presence is soft. */
  flush(eventId?: string): Promise<void> {
    const taken = new Map<string, Map<number, Set<number>>>();
    if (eventId === undefined) {
      for (const [id, bySecond] of this.pending) taken.set(id, bySecond);
      this.pending = new Map();
    } else {
      const bySecond = this.pending.get(eventId);
      if (bySecond) taken.set(eventId, bySecond);
      this.pending.delete(eventId);
    }
    const merges = [...taken].map(async ([id, bySecond]) => {
      const room = this.deps.room(id);
      if (!room) return;
      const timeout = presenceTimeoutOf(room);
      if (timeout === 0) return;
      try {
        for (const [second, positions] of bySecond) {
          await this.deps.store.markSeen(id, [...positions], second, presenceWindowSeconds(timeout));
        }
      } catch {
        // The store is unreachable: these visitors look absent a few seconds early at worst; they poll again.
      }
    });
    const done = this.flushing.then(() => Promise.all(merges)).then(() => {});
    this.flushing = done;
    return done;
  }

  /**
   * A first claim (a token set just issued for `position`, which the counter first reached at `servedAt`):
   * counted as a late arrival when past its arrival window or passed while absent. Off the answer's path.
   */
  claimed(room: RoomSettings, position: number, servedAt: number | null): void {
    if (!presenceApplies(room)) return;
    const late = room.arrival_window > 0 && servedAt !== null && this.deps.now() - servedAt > room.arrival_window;
    this.deps.store.recordClaim(room.event_id, position, late).catch(() => {});
  }

  /** The room's presence figures now (presence-figures.ts), after merging this node's marks of it. */
  async figures(room: RoomSettings, snapshot: Pick<AdmissionSnapshot, 'activeSessions'>): Promise<PresenceFigures> {
    await this.flush(room.event_id);
    const now = this.deps.now();
    const timeout = presenceTimeoutOf(room);
    const view = await this.deps.store.presenceView(room.event_id, {
      now,
      timeout,
      windowSeconds: presenceWindowSeconds(timeout),
      arrivalCutoff: room.arrival_window > 0 ? now - room.arrival_window : null,
      rateWindowStart: now - 59,
      limit: 0,
    });
    return presenceFigures(room, view, snapshot);
  }

  /** Stops the timer and merges what is left. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
