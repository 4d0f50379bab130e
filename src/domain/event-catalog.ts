// The configured events (waiting rooms) and their settings. An event ID that is not here is a client
// error everywhere, never a crash, and never creates state.

import type { EventSettings } from './settings.ts';

export class EventCatalog {
  private readonly events = new Map<string, EventSettings>();

  constructor(events: readonly EventSettings[]) {
    for (const event of events) this.events.set(event.event_id, event);
  }

  get(eventId: unknown): EventSettings | undefined {
    return typeof eventId === 'string' ? this.events.get(eventId) : undefined;
  }

  ids(): string[] {
    return [...this.events.keys()];
  }

  all(): EventSettings[] {
    return [...this.events.values()];
  }
}
