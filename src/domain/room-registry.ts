// The configured events (waiting rooms) and their settings. An event ID that is not here is a client
// error everywhere, never a crash, and never creates state.

import type { RoomSettings } from './room-settings.ts';

export class RoomRegistry {
  private readonly events = new Map<string, RoomSettings>();

  constructor(events: readonly RoomSettings[]) {
    for (const event of events) this.events.set(event.event_id, event);
  }

  get(eventId: unknown): RoomSettings | undefined {
    return typeof eventId === 'string' ? this.events.get(eventId) : undefined;
  }

  ids(): string[] {
    return [...this.events.keys()];
  }

  all(): RoomSettings[] {
    return [...this.events.values()];
  }
}
