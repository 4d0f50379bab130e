// Server-Sent Events stream of one event's envelopes (GET /private/events?event_id=E). Each subscriber is a
// writable HTTP response; one that cannot keep up (its buffer past a bound) is disconnected rather than
// allowed to grow memory without limit.

import type { ServerResponse } from 'node:http';
import type { EventSink } from './bus.ts';
import type { Envelope } from './envelope.ts';

const MAX_BUFFERED_BYTES = 1 << 20;

/** The head of a Server-Sent Events answer (the private event stream and the public counter stream). */
export function writeEventStreamHead(response: ServerResponse): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'access-control-allow-origin': '*',
    // nginx: pass each frame on at once instead of buffering the stream.
    'x-accel-buffering': 'no',
  });
}

export class SseSink implements EventSink {
  readonly name = 'sse';
  private readonly subscribers = new Map<ServerResponse, string>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(heartbeatMs = 15_000) {
    this.heartbeat = setInterval(() => this.broadcastComment('keep-alive'), heartbeatMs);
    this.heartbeat.unref();
  }

  get size(): number {
    return this.subscribers.size;
  }

  /** Starts the stream on `response` and keeps it until the client goes away. */
  attach(response: ServerResponse, eventId: string): void {
    writeEventStreamHead(response);
    response.write(': connected\n\n');
    this.subscribers.set(response, eventId);
    response.on('close', () => this.subscribers.delete(response));
  }

  deliver(event: Envelope): void {
    const frame = `id: ${event.id}\nevent: ${event['detail-type']}\ndata: ${JSON.stringify(event)}\n\n`;
    for (const [response, eventId] of this.subscribers) {
      if (eventId === event.detail.event_id) this.write(response, frame);
    }
  }

  private broadcastComment(text: string): void {
    for (const response of this.subscribers.keys()) this.write(response, `: ${text}\n\n`);
  }

  private write(response: ServerResponse, frame: string): void {
    if (response.writableLength > MAX_BUFFERED_BYTES) {
      this.subscribers.delete(response);
      response.destroy();
      return;
    }
    response.write(frame);
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    for (const response of this.subscribers.keys()) response.end();
    this.subscribers.clear();
  }
}
