// Fan-out of emitted events to pluggable sinks (SSE stream, webhooks, log, later EventBridge). Events are
// emitted only after the state they describe is durable. A sink must never block or fail the caller: each
// one queues or drops on its own terms.

import type { DetailType, EventDetails, EventPublisher } from '../domain/ports/events.ts';
import { envelope, type Envelope } from './envelope.ts';

export interface EventSink {
  readonly name: string;
  deliver(event: Envelope): void;
  close?(): Promise<void>;
}

export class EventBus implements EventPublisher {
  private readonly sinks = new Set<EventSink>();
  private readonly clockMs: () => number;

  /** `clockMs` dates the envelopes (milliseconds since the epoch). */
  constructor(clockMs: () => number = Date.now) {
    this.clockMs = clockMs;
  }
  /** Where a sink's failure is reported (the node sets its logger here). */
  onSinkError: (sink: EventSink, error: unknown) => void = () => {};

  subscribe(sink: EventSink): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
  }

  /** The domain's port: wraps the event in its envelope, dated now, and delivers it. */
  publish<T extends DetailType>(type: T, detail: EventDetails[T]): void {
    this.emit(envelope(type, detail, this.clockMs()));
  }

  emit(event: Envelope): void {
    for (const sink of this.sinks) {
      try {
        sink.deliver(event);
      } catch (error) {
        this.onSinkError(sink, error);
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.sinks].map((sink) => sink.close?.()));
    this.sinks.clear();
  }
}
