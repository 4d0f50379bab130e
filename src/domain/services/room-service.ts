// Rooms: which rooms this node serves and with what settings — the rooms API (/private/rooms: list, get, put,
// patch, delete), the configured rooms written to the store at start, every node following the stored rooms
// (../room-sync.ts), each room's phase, and what a room needs before it is served (its expiry switch in the
// store, a signing key). Sealed: the private routes, the drivers that look a room up (gate, OpenID, inlets,
// intake) and the room-polling job call these methods and never reach the store or the registry.

import { Errors } from '../errors.ts';
import type { QueueStore, RoomStore, StoredRoom } from '../ports/store.ts';
import type { SigningKeys } from '../ports/tokens.ts';
import { isJsonObject, mergePatch, roomView, withoutReadOnlyFields, withStoredSecrets, type RoomView } from '../room-edits.ts';
import type { RoomPhase } from '../room-phase.ts';
import type { RoomChange } from '../room-registry.ts';
import { EVENT_ID_PATTERN, parseRoomSettings, type RoomDefaults, type RoomSettings } from '../room-settings.ts';
import { parseStoredRoom, ROOM_PROPAGATION_MS, type RoomSync } from '../room-sync.ts';
import { RoomSettingsError, roomSettingsProblems } from '../room-settings-problems.ts';
import { describeProblem } from '../setting-problems.ts';
import type { WaitTally } from '../wait-histogram.ts';
import { ok, type Answer, type RoomContext } from './room-context.ts';

/** A change made through the rooms API: the answer (201 for a room created), and the room as it was before. */
export type RoomChangeAnswer<T> = { status: 200 | 201; body: T; before: RoomView | null };

export type RoomStoreUsed = RoomStore & Pick<QueueStore, 'syncExpirySwitch'>;

export interface RoomServiceDeps {
  store: RoomStoreUsed;
  context: RoomContext;
  keys: SigningKeys;
  roomSync: RoomSync;
  waitTally: WaitTally;
  /** Defaults of the settings a room put through the rooms API leaves out (the serve flags); else the schema's. */
  roomDefaults: RoomDefaults;
  /** Waits `ms` milliseconds (a DELETE of a room waits ROOM_PROPAGATION_MS). */
  sleep: (ms: number) => Promise<unknown>;
}

export class RoomService {
  private readonly store: RoomStoreUsed;
  private readonly context: RoomContext;
  private readonly keys: SigningKeys;
  private readonly roomSync: RoomSync;
  private readonly waitTally: WaitTally;
  private readonly roomDefaults: RoomDefaults;
  private readonly sleep: (ms: number) => Promise<unknown>;
  private stopFollowingRooms: (() => void) | undefined;
  /** The store writes for room changes, one after the other: two quick changes land in their order. */
  private roomWrites: Promise<void> = Promise.resolve();

  constructor(deps: RoomServiceDeps) {
    this.store = deps.store;
    this.context = deps.context;
    this.keys = deps.keys;
    this.roomSync = deps.roomSync;
    this.waitTally = deps.waitTally;
    this.roomDefaults = deps.roomDefaults;
    this.sleep = deps.sleep;
  }

  // ---- serving the rooms ----

  /**
   * Brings the store in line with the rooms (expiry switch times), creates missing keys, and from then on does
   * the same for every room put in the registry: a room put later is served like one configured at start.
   */
  async start(): Promise<void> {
    this.stopFollowingRooms ??= this.context.catalog.onChange((change) => this.followRoom(change));
    for (const event of this.context.catalog.all()) await this.prepareRoom(event);
  }

  /** Stops following room changes and waits for the store writes of those already made. */
  async close(): Promise<void> {
    this.stopFollowingRooms?.();
    await this.roomWrites;
  }

  private followRoom(change: RoomChange): Promise<void> {
    // A room removed is gone from the store, its keys with it (deleteRoom): one created again gets its own.
    if (change.kind === 'removed') {
      this.keys.forget(change.eventId);
      this.waitTally.forget(change.eventId);
    }
    if (!change.after) return Promise.resolve();
    const room = change.after;
    const write = this.roomWrites.then(() => this.prepareRoom(room));
    this.roomWrites = write.catch(() => {});
    return write;
  }

  private async prepareRoom(event: RoomSettings): Promise<void> {
    await this.store.syncExpirySwitch(event.event_id, event.enable_queue_position_expiry, this.context.now());
    await this.keys.current(event.event_id, event.signing_algorithm);
  }

  /**
   * Writes the configured rooms (events file, --event-id, the AWS environment) to the store as puts — the
   * configuration wins for the rooms it lists — and serves every stored room. Called once, after start().
   */
  openRooms(configured: readonly RoomSettings[]): Promise<void> {
    return this.roomSync.open(configured);
  }

  /** Serves the rooms as stored now, if they changed since the last look (one cheap read when not). Every second. */
  syncRooms(): Promise<void> {
    return this.roomSync.check();
  }

  // ---- what the drivers may know of the rooms, without reaching the registry ----

  /** The settings of every room this node serves. */
  rooms(): RoomSettings[] {
    return this.context.catalog.all();
  }

  /** The rooms as one read-only array, the same one until a room changes (the gate caches its routes by it). */
  roomsSnapshot(): readonly RoomSettings[] {
    return this.context.catalog.snapshotAll();
  }

  /** The IDs of every room this node serves. */
  roomIds(): string[] {
    return this.context.catalog.ids();
  }

  /** The settings of a room, or undefined for an ID that names none (any value: callers pass raw input). */
  roomSettings(eventId: unknown): RoomSettings | undefined {
    return this.context.catalog.get(eventId);
  }

  /** The room's phase now (spec/rooms.md §2: the rooms API reports it). Unknown room → 400. */
  async roomPhase(eventId: unknown): Promise<RoomPhase> {
    return this.context.phaseOf(this.context.event(eventId));
  }

  // ---- the rooms API (/private/rooms) ----

  /** Every stored room (GET /private/rooms), in the order they were created; one the schema refuses is left out. */
  async listRooms(): Promise<Answer<{ rooms: RoomView[] }>> {
    const { rooms } = await this.store.listRooms();
    const views = await Promise.all(
      rooms.map(async (room) => {
        const parsed = parseStoredRoom(room);
        return parsed.ok ? [roomView(parsed.settings, await this.context.phaseOf(parsed.settings))] : [];
      }),
    );
    return ok({ rooms: views.flat() });
  }

  /** One stored room with its phase (GET /private/rooms/{event_id}). Unknown → 404. */
  async getRoom(eventId: unknown): Promise<Answer<RoomView>> {
    return ok(await this.viewOf(await this.storedRoom(eventId)));
  }

  /** Creates (201) or replaces (200) a room with the body's settings (PUT /private/rooms/{event_id}). */
  async putRoom(eventId: unknown, body: unknown): Promise<RoomChangeAnswer<RoomView>> {
    const id = this.roomIdForPut(eventId);
    const input = this.roomInput(id, body);
    const stored = await this.store.getRoom(id);
    return this.writeRoom(id, this.withStoredSecrets(input, stored && jsonOf(stored)), stored);
  }

  /** Merges the body into a room's settings (PATCH /private/rooms/{event_id}). Unknown → 404. */
  async patchRoom(eventId: unknown, body: unknown): Promise<RoomChangeAnswer<RoomView>> {
    const stored = await this.storedRoom(eventId);
    const patch = this.roomInput(stored.eventId, body);
    const current = jsonOf(stored);
    // The patch's "[redacted]" and left-out secrets are resolved before the merge, so that a null in the patch
    // still removes a secret.
    const merged = { ...(mergePatch(current, this.withStoredSecrets(patch, current)) as Record<string, unknown>), event_id: stored.eventId };
    return this.writeRoom(stored.eventId, merged, stored);
  }

  /**
   * Deletes a room, its settings and all its data (DELETE /private/rooms/{event_id}). Unknown → 404.
   *
   * The settings go first: this node stops serving the room at once, every other node within
   * ROOM_PROPAGATION_MS. Only then does the data go — a node still serving the room in between (or a join
   * batch of it still committing) would otherwise write positions after the data was deleted, and a room
   * created again later would find them. So a DELETE takes about two seconds. A room created again under the
   * same ID during that wait keeps what it has. A DELETE of an ID without settings deletes whatever data is
   * left under it (a DELETE interrupted between its two steps) and answers 404.
   */
  async deleteRoom(eventId: unknown): Promise<RoomChangeAnswer<Record<string, never>>> {
    if (!isRoomId(eventId)) throw Errors.unknownRoom();
    const stored = await this.store.getRoom(eventId);
    const existed = await this.store.deleteRoomSettings(eventId);
    await this.roomSync.check();
    if (existed) await this.sleep(ROOM_PROPAGATION_MS);
    if (!(await this.store.getRoom(eventId))) await this.store.deleteRoomData(eventId);
    if (!existed) throw Errors.unknownRoom();
    return { status: 200, body: {}, before: await this.auditView(stored) };
  }

  /** The body with the stored secrets it refers to (room-edits.ts); "[redacted]" where none is stored: 400. */
  private withStoredSecrets(input: Record<string, unknown>, stored: unknown): Record<string, unknown> {
    const restored = withStoredSecrets(input, stored);
    if (!restored.ok) throw Errors.invalidRoomSettings(describeProblem(restored.problem));
    return restored.value;
  }

  /** The stored room named by the path, or 404 (an ID no room can have is not looked up). */
  private async storedRoom(eventId: unknown): Promise<StoredRoom> {
    const stored = isRoomId(eventId) ? await this.store.getRoom(eventId) : null;
    if (!stored) throw Errors.unknownRoom();
    return stored;
  }

  /** A PUT may create a room, so its ID must be one a room can have: 400 naming event_id otherwise. */
  private roomIdForPut(eventId: unknown): string {
    if (isRoomId(eventId)) return eventId;
    const problem = parseRoomSettings({ event_id: eventId });
    throw Errors.invalidRoomSettings(problem.ok ? 'event_id: is not a valid room ID' : describeProblem(problem.problem));
  }

  /** The body as settings input: an object, without read-only fields, whose event_id (if any) is the path's. */
  private roomInput(eventId: string, body: unknown): Record<string, unknown> {
    if (!isJsonObject(body)) throw Errors.invalidRoomSettings('the settings must be a JSON object');
    if ('event_id' in body && body.event_id !== eventId) {
      throw Errors.invalidRoomSettings("event_id: differs from the room's ID in the path");
    }
    return { ...withoutReadOnlyFields(body), event_id: eventId };
  }

  private async writeRoom(eventId: string, input: unknown, stored: StoredRoom | null): Promise<RoomChangeAnswer<RoomView>> {
    const parsed = parseRoomSettings(input, this.roomDefaults);
    if (!parsed.ok) {
      // Every problem listed too, for the panel to show each beside its field (../room-settings-problems.ts).
      throw new RoomSettingsError(Errors.invalidRoomSettings(describeProblem(parsed.problem)), roomSettingsProblems(input, this.roomDefaults));
    }
    const outcome = await this.store.putRoom(eventId, JSON.stringify(parsed.settings));
    await this.roomSync.check();
    return {
      status: outcome === 'created' ? 201 : 200,
      body: roomView(parsed.settings, await this.context.phaseOf(parsed.settings)),
      before: await this.auditView(stored),
    };
  }

  /** A room as it was before a change, for the audit log; settings this version refuses are not shown (a PUT fixes them). */
  private async auditView(stored: StoredRoom | null): Promise<RoomView | null> {
    const parsed = stored && parseStoredRoom(stored);
    return parsed?.ok ? roomView(parsed.settings, await this.context.phaseOf(parsed.settings)) : null;
  }

  /** A stored room as answered; its stored settings are read through the schema (refused: a failure of ours). */
  private async viewOf(stored: StoredRoom): Promise<RoomView> {
    const parsed = parseStoredRoom(stored);
    if (!parsed.ok) throw new Error(`the stored settings of room "${stored.eventId}" are refused: ${describeProblem(parsed.problem)}`);
    return roomView(parsed.settings, await this.context.phaseOf(parsed.settings));
  }
}

const ROOM_ID = new RegExp(EVENT_ID_PATTERN);

/** Whether the value is an ID a room can have (anything else names no room, stored or not). */
function isRoomId(value: unknown): value is string {
  return typeof value === 'string' && ROOM_ID.test(value);
}

/** A stored room's settings as the JSON value they spell (undefined when they spell none). */
function jsonOf(stored: StoredRoom): unknown {
  try {
    return JSON.parse(stored.settings);
  } catch {
    return undefined;
  }
}
