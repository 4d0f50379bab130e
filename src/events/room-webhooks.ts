// The webhooks of every room, as one sink of the event bus that follows the rooms: a room put with webhooks
// gets a WebhookSink per target, a target no longer listed (or a room removed) has its sink closed — what
// it had not sent yet is dropped — and a target kept across a change keeps its sink and its queue. Each
// envelope goes only to the sinks of its own room (one map lookup, however many rooms have webhooks).

import type { RoomRegistry } from '../domain/room-registry.ts';
import type { RoomSettings, WebhookTarget } from '../domain/room-settings.ts';
import type { EventSink } from './bus.ts';
import type { Envelope } from './envelope.ts';
import type { WebhookSink } from './webhook-sink.ts';

export type WebhookSinkFactory = (eventId: string, target: WebhookTarget) => WebhookSink;

/** A target is the same target while both its URL and its secret are (kept in memory only, never logged). */
const targetKey = (target: WebhookTarget) => JSON.stringify([target.url, target.secret]);

export class RoomWebhooks implements EventSink {
  readonly name = 'webhooks';
  private readonly makeSink: WebhookSinkFactory;
  /** Event ID → target key → sink. */
  private readonly byRoom = new Map<string, Map<string, WebhookSink>>();
  private readonly stopFollowing: () => void;

  constructor(rooms: Pick<RoomRegistry, 'all' | 'onChange'>, makeSink: WebhookSinkFactory) {
    this.makeSink = makeSink;
    for (const room of rooms.all()) void this.follow(room.event_id, room);
    this.stopFollowing = rooms.onChange((change) => this.follow(change.eventId, change.after));
  }

  deliver(event: Envelope): void {
    const sinks = this.byRoom.get(event.detail.event_id);
    if (sinks) for (const sink of sinks.values()) sink.deliver(event);
  }

  /** The URLs the room's events are sent to now. */
  targets(eventId: string): string[] {
    return [...(this.byRoom.get(eventId)?.values() ?? [])].map((sink) => sink.url);
  }

  /** Resolves when everything queued so far, in every room, has been delivered or given up. */
  async idle(): Promise<void> {
    await Promise.all(this.allSinks().map((sink) => sink.idle()));
  }

  async close(): Promise<void> {
    this.stopFollowing();
    const sinks = this.allSinks();
    this.byRoom.clear();
    await Promise.all(sinks.map((sink) => sink.close()));
  }

  /** Brings the room's sinks in line with its settings (none when it was removed). */
  private async follow(eventId: string, room: RoomSettings | undefined): Promise<void> {
    const current = this.byRoom.get(eventId) ?? new Map<string, WebhookSink>();
    const next = new Map<string, WebhookSink>();
    for (const target of room?.webhooks ?? []) {
      const key = targetKey(target);
      next.set(key, current.get(key) ?? next.get(key) ?? this.makeSink(eventId, target));
    }
    if (next.size > 0) this.byRoom.set(eventId, next);
    else this.byRoom.delete(eventId);
    const dropped = [...current].filter(([key]) => !next.has(key)).map(([, sink]) => sink);
    await Promise.all(dropped.map((sink) => sink.close()));
  }

  private allSinks(): WebhookSink[] {
    return [...this.byRoom.values()].flatMap((sinks) => [...sinks.values()]);
  }
}
