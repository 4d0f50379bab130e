// What the load test does to the room itself: reads its settings (does it admit by itself? how fast, how many
// at once, how long is the claim window?), gives it a pre-queue that closes at a start time a few seconds into
// the run (--prequeue), pauses and resumes it (--pause-at/--pause-for), and puts back every setting it changed
// when the run ends. All through the rooms API (docs/rooms.md); a target without it (a VWR stack) is a room
// with manual admission, driven as before.

import { PrivateApiError, type PrivateApiClient } from '../client/private-api-client.ts';
import { ROOM_PROPAGATION_MS } from '../domain/room-sync.ts';

/** The room's settings the run needs, as GET /private/rooms/{id} answers them. */
export interface RoomView {
  admission?: string;
  new_users_per_minute?: number;
  total_active_users?: number;
  enable_queue_position_expiry?: boolean;
  queue_position_expiry_period?: number;
  state?: string;
  prequeue_start_time?: string;
  event_start_time?: string;
  event_end_time?: string;
  shuffle_at_event_start?: boolean;
  presence_timeout?: number;
  arrival_window?: number;
}

export type RoomAdmission = { kind: 'driver' } | { kind: 'automatic'; newUsersPerMinute: number; totalActiveUsers: number };

export function admissionOf(room: RoomView | null): RoomAdmission {
  if (room?.admission === 'automatic' && room.new_users_per_minute !== undefined && room.total_active_users !== undefined) {
    return { kind: 'automatic', newUsersPerMinute: room.new_users_per_minute, totalActiveUsers: room.total_active_users };
  }
  return { kind: 'driver' };
}

/** The claim window in ms when positions expire, else null. */
export function claimWindowOf(room: RoomView | null): number | null {
  return room?.enable_queue_position_expiry === true && room.queue_position_expiry_period !== undefined
    ? room.queue_position_expiry_period * 1000
    : null;
}

/** A change the run made, and how to undo it (JSON merge patch: null removes a key). */
type Undo = Record<string, unknown>;

export class RoomPlan {
  private readonly api: PrivateApiClient;
  private readonly path: string;
  private readonly undo: Undo = {};
  /** The room as read at set-up; null when the target has no rooms API or no such room. */
  room: RoomView | null = null;

  constructor(api: PrivateApiClient, eventId: string) {
    this.api = api;
    this.path = `/rooms/${encodeURIComponent(eventId)}`;
  }

  async read(): Promise<RoomView | null> {
    try {
      const response = await this.api.send('GET', this.path);
      this.room = response.status === 200 ? ((await response.json()) as RoomView) : null;
    } catch (error) {
      if (!(error instanceof PrivateApiError)) throw error;
      this.room = null;
    }
    return this.room;
  }

  /**
   * Opens a pre-queue now, with the start (and the draw) at `startsAtEpochMs` rounded up to a whole second, then
   * waits until every node has the schedule, so that no join reaches a node that does not know it yet. Returns
   * the start, in epoch ms.
   */
  async openPrequeue(startsAtEpochMs: number): Promise<number> {
    const startMs = Math.ceil((startsAtEpochMs + ROOM_PROPAGATION_MS) / 1000) * 1000;
    const opensMs = (Math.floor(Date.now() / 1000) - 1) * 1000;
    await this.patch({
      prequeue_start_time: new Date(opensMs).toISOString(),
      event_start_time: new Date(startMs).toISOString(),
      shuffle_at_event_start: true,
      // An end time before the new start would make the schedule invalid: the run's room has none.
      event_end_time: null,
    });
    await new Promise((resolve) => setTimeout(resolve, ROOM_PROPAGATION_MS));
    return startMs;
  }

  /**
   * --presence-timeout / --arrival-window: sets them for the run (put back at the end) and waits until every node
   * applies them. Returns the room's settings as they now are.
   */
  async setPresence(presenceTimeout: number | null, arrivalWindow: number | null): Promise<RoomView | null> {
    const changes: Record<string, number> = {};
    if (presenceTimeout !== null) changes.presence_timeout = presenceTimeout;
    if (arrivalWindow !== null) changes.arrival_window = arrivalWindow;
    if (Object.keys(changes).length === 0) return this.room;
    await this.patch(changes);
    await new Promise((resolve) => setTimeout(resolve, ROOM_PROPAGATION_MS));
    return { ...this.room, ...changes };
  }

  /** Sets the room's state (applied on every node within ROOM_PROPAGATION_MS of the answer). */
  async setState(state: 'paused' | 'open'): Promise<void> {
    await this.patch({ state });
  }

  /** Puts back every setting the run changed. */
  async restore(): Promise<void> {
    if (Object.keys(this.undo).length === 0) return;
    await this.send(this.undo);
  }

  private async patch(changes: Record<string, unknown>): Promise<void> {
    for (const key of Object.keys(changes)) {
      if (!(key in this.undo)) this.undo[key] = (this.room as Record<string, unknown> | null)?.[key] ?? null;
    }
    await this.send(changes);
  }

  private async send(changes: Record<string, unknown>): Promise<void> {
    const response = await this.api.send('PATCH', this.path, changes);
    if (response.status !== 200) throw new Error(`PATCH /private${this.path} answered ${response.status} ${(await response.text()).slice(0, 200)}`);
    await response.body?.cancel();
  }
}
