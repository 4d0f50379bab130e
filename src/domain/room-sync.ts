// Rooms live in the store (RoomStore); each node serves them from its RoomRegistry. RoomSync brings the
// registry in line with the store: the node's timer asks it every second (one read of the rooms version, and
// only when that moved, one list of the rooms), and the rooms API asks it after each change it makes, so the
// node that made the change serves it at once and every other node within about a second.
//
// Only rooms that came from the store are its business: a room put into the registry by other means (a test)
// is left alone. A stored room whose settings the schema refuses (written by a newer version of Anteroom
// during a rolling upgrade, or by hand) is reported once and skipped: not served if it was not, served as it
// was if it was — a node never stops because of one bad room.

import { parseRoomSettings, type RoomSettings } from './room-settings.ts';
import type { RoomRegistry } from './room-registry.ts';
import { describeProblem, type Parsed } from './setting-problems.ts';
import type { RoomStore, StoredRoom, StoredRooms } from './ports/store.ts';

/** How often each node (and each warm Lambda execution environment, at most) looks at the rooms version. */
export const ROOM_CHECK_INTERVAL_MS = 1000;

/**
 * The bound of the rooms API: every node serves the rooms of the store as they were at most this long ago (a
 * look every second, plus room for a slow one). A deleted room's data goes this long after its settings, once
 * no node serves the room any more.
 */
export const ROOM_PROPAGATION_MS = 2 * ROOM_CHECK_INTERVAL_MS;

export interface RoomSyncDeps {
  store: RoomStore;
  rooms: RoomRegistry;
  /** Told once per stored text of a room that the schema refuses; `problem` names the field (never a value). */
  onRefused?: ((eventId: string, problem: string) => void) | undefined;
}

interface Applied {
  settings: string;
  createdVersion: number;
}

export class RoomSync {
  private readonly store: RoomStore;
  private readonly rooms: RoomRegistry;
  private readonly onRefused: (eventId: string, problem: string) => void;
  /** The rooms version last applied in full (undefined: none yet, the next check lists the rooms). */
  private version: number | undefined;
  /** The rooms this sync put into the registry, as stored then. */
  private readonly applied = new Map<string, Applied>();
  /** The refused text of each room, so that it is reported once. */
  private readonly refused = new Map<string, string>();
  /** Checks run one after the other: the timer's and the API's never interleave their registry writes. */
  private queue: Promise<void> = Promise.resolve();

  constructor(deps: RoomSyncDeps) {
    this.store = deps.store;
    this.rooms = deps.rooms;
    this.onRefused = deps.onRefused ?? (() => {});
  }

  /**
   * Writes each configured room (events file, --event-id, the AWS environment) to the store as a put — the
   * configuration wins over API edits for the rooms it lists — then serves every stored room.
   */
  async open(configured: readonly RoomSettings[]): Promise<void> {
    for (const room of configured) await this.store.putRoom(room.event_id, JSON.stringify(room));
    await this.serially(async () => this.apply(await this.store.listRooms()));
  }

  /** Applies the stored rooms if their version moved since the last look; otherwise costs one read. */
  check(): Promise<void> {
    return this.serially(async () => {
      if ((await this.store.roomsVersion()) === this.version) return;
      await this.apply(await this.store.listRooms());
    });
  }

  private serially(work: () => Promise<void>): Promise<void> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => {});
    return run;
  }

  private async apply(stored: StoredRooms): Promise<void> {
    const failures: unknown[] = [];
    const settle = (write: Promise<unknown>) => write.catch((error: unknown) => void failures.push(error));
    const present = new Set(stored.rooms.map((room) => room.eventId));
    for (const eventId of [...this.applied.keys()]) {
      if (present.has(eventId)) continue;
      this.applied.delete(eventId);
      this.refused.delete(eventId);
      await settle(this.rooms.remove(eventId));
    }
    for (const room of stored.rooms) {
      const known = this.applied.get(room.eventId);
      if (known && known.settings === room.settings && known.createdVersion === room.createdVersion) continue;
      // Deleted and created again since the last look: a new room under an old name (new key, no data).
      const reborn = known !== undefined && known.createdVersion !== room.createdVersion;
      if (reborn) {
        this.applied.delete(room.eventId);
        await settle(this.rooms.remove(room.eventId));
      }
      const parsed = parseStoredRoom(room);
      if (!parsed.ok) {
        if (this.refused.get(room.eventId) !== room.settings) {
          this.refused.set(room.eventId, room.settings);
          this.onRefused(room.eventId, describeProblem(parsed.problem));
        }
        continue;
      }
      this.refused.delete(room.eventId);
      this.applied.set(room.eventId, { settings: room.settings, createdVersion: room.createdVersion });
      await settle(this.rooms.put(parsed.settings));
    }
    if (failures.length > 0) throw new AggregateError(failures, 'some reactions to the stored rooms failed');
    // Only after a clean pass: after a failure the next check lists the rooms again.
    this.version = stored.version;
  }
}

/** A stored room's settings through the one schema; the stored event_id must be the room's own. */
export function parseStoredRoom(room: StoredRoom): Parsed<RoomSettings> {
  let input: unknown;
  try {
    input = JSON.parse(room.settings);
  } catch {
    return { ok: false, problem: { path: [], rule: 'the stored settings are not JSON' } };
  }
  const parsed = parseRoomSettings(input);
  if (parsed.ok && parsed.settings.event_id !== room.eventId) {
    return { ok: false, problem: { path: ['event_id'], rule: 'differs from the ID the room is stored under' } };
  }
  return parsed;
}
