// The rooms (events) served now and their settings. An event ID that is not here is a client error
// everywhere, never a crash, and never creates state.
//
// Rooms are data: they can be put, changed and removed while the node runs, and whatever depends on a room
// (its webhooks, its inlet job, its expiry switch and signing key, its OIDC client) subscribes to changes
// instead of reading the rooms once at start. Reads are synchronous map lookups (the polling path asks for
// a room on every request); writes notify the listeners and resolve once their reactions are done. Nothing
// persists rooms here: a source of rooms (the configuration at start, later the store-backed rooms API)
// calls put/remove/replaceAll.

import { Value } from '@sinclair/typebox/value';
import type { RoomSettings } from './room-settings.ts';

export type RoomChange =
  | { kind: 'added'; eventId: string; before: undefined; after: RoomSettings }
  | { kind: 'changed'; eventId: string; before: RoomSettings; after: RoomSettings }
  | { kind: 'removed'; eventId: string; before: RoomSettings; after: undefined };

/**
 * Told of every change once the registry holds it (get() already answers the new settings). What it
 * returns is awaited by the write that caused the change; it must not throw for a room it has no business
 * with.
 */
export type RoomChangeListener = (change: RoomChange) => void | Promise<void>;

export class RoomRegistry {
  private readonly rooms = new Map<string, RoomSettings>();
  private readonly listeners = new Set<RoomChangeListener>();
  /** all() as one array, kept until the next change (the gate matches every request against it). */
  private snapshot: readonly RoomSettings[] | undefined;

  constructor(rooms: readonly RoomSettings[] = []) {
    for (const room of rooms) this.rooms.set(room.event_id, frozenCopy(room));
  }

  /** The room's settings (read-only), or undefined for an ID that names none (any value: callers pass raw input). */
  get(eventId: unknown): RoomSettings | undefined {
    return typeof eventId === 'string' ? this.rooms.get(eventId) : undefined;
  }

  ids(): string[] {
    return [...this.rooms.keys()];
  }

  all(): RoomSettings[] {
    return [...this.rooms.values()];
  }

  /** The rooms as one read-only array, the same array until a room changes (callers may cache by identity). */
  snapshotAll(): readonly RoomSettings[] {
    this.snapshot ??= Object.freeze([...this.rooms.values()]);
    return this.snapshot;
  }

  /** Calls `listener` after every change from now on; returns the function that stops it. */
  onChange(listener: RoomChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Adds the room, or replaces its settings. Settings equal to those held change nothing and notify no one
   * (a source that re-puts every room it knows does not restart their jobs). Resolves when every listener's
   * reaction is done; rejects if one failed — the room is put either way.
   */
  async put(settings: RoomSettings): Promise<void> {
    const eventId = settings.event_id;
    const before = this.rooms.get(eventId);
    if (before && Value.Equal(before, settings)) return;
    const after = frozenCopy(settings);
    this.rooms.set(eventId, after);
    this.snapshot = undefined;
    await this.notify(before ? { kind: 'changed', eventId, before, after } : { kind: 'added', eventId, before: undefined, after });
  }

  /** Removes the room; false when there was none. Resolves when every listener's reaction is done. */
  async remove(eventId: string): Promise<boolean> {
    const before = this.rooms.get(eventId);
    if (!before) return false;
    this.rooms.delete(eventId);
    this.snapshot = undefined;
    await this.notify({ kind: 'removed', eventId, before, after: undefined });
    return true;
  }

  /** Makes `rooms` the whole set: removes the others, then puts each one (in order). */
  async replaceAll(rooms: readonly RoomSettings[]): Promise<void> {
    const kept = new Set(rooms.map((room) => room.event_id));
    const failures: unknown[] = [];
    const settle = (write: Promise<unknown>) => write.catch((error: unknown) => void failures.push(error));
    for (const eventId of this.ids()) if (!kept.has(eventId)) await settle(this.remove(eventId));
    for (const room of rooms) await settle(this.put(room));
    if (failures.length > 0) throw new AggregateError(failures, 'some reactions to the new set of rooms failed');
  }

  private async notify(change: RoomChange): Promise<void> {
    const reactions: Promise<void>[] = [];
    for (const listener of [...this.listeners]) {
      try {
        reactions.push(Promise.resolve(listener(change)));
      } catch (error) {
        reactions.push(Promise.reject(error));
      }
    }
    const failures = (await Promise.allSettled(reactions)).flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    if (failures.length > 0) {
      throw new AggregateError(failures, `room "${change.eventId}" ${change.kind}, but ${failures.length} reaction(s) to it failed`);
    }
  }
}

/** Held settings are the registry's own and cannot change under a listener that kept `before`. */
function frozenCopy(settings: RoomSettings): RoomSettings {
  return deepFreeze(Value.Clone(settings));
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
