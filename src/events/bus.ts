// Fan-out of emitted events to pluggable sinks (SSE stream, webhooks, log, later EventBridge). Events are
// emitted only after the state they describe is durable. A sink must never block or fail the caller: each
// one queues or drops on its own terms.

import type { Envelope } from './envelope.ts';

export interface EventSink {
  readonly name: string;
  deliver(event: Envelope): void;
  close?(): Promise<void>;
}

export class EventBus {
  private readonly sinks = new Set<EventSink>();
  /** Where a sink's failure is reported (the node sets its logger here). */
  onSinkError: (sink: EventSink, error: unknown) => void = () => {};

  subscribe(sink: EventSink): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
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
