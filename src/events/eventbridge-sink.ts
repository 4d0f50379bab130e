// Delivers envelopes to an Amazon EventBridge bus with PutEvents (VWR's event delivery, same envelope:
// Source custom.waitingroom, DetailType = the envelope's detail-type, Detail = its detail). Entries are sent
// in batches of at most 10 (PutEvents' limit); entries EventBridge reports as failed are retried with capped
// exponential back-off, the others are not re-sent. The queue is bounded: when full, the oldest envelope is
// dropped and counted. A Lambda handler must `await flush()` before returning (a frozen function sends
// nothing); a long-running process may let it drain on its own.

import { PutEventsCommand, type EventBridgeClient, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { EventSink } from './bus.ts';
import type { Envelope } from './envelope.ts';

/** PutEvents accepts at most 10 entries per call. */
export const PUT_EVENTS_MAX_ENTRIES = 10;

export interface EventBridgeSinkOptions {
  client: Pick<EventBridgeClient, 'send'>;
  eventBusName: string;
  maxQueue?: number;
  maxAttempts?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  onOutcome?: (outcome: 'delivered' | 'failed' | 'dropped', count: number) => void;
}

interface Pending {
  entry: PutEventsRequestEntry;
  attempts: number;
}

export class EventBridgeSink implements EventSink {
  readonly name = 'eventbridge';
  private readonly client: Pick<EventBridgeClient, 'send'>;
  private readonly eventBusName: string;
  private readonly maxQueue: number;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly onOutcome: NonNullable<EventBridgeSinkOptions['onOutcome']>;
  private readonly queue: Pending[] = [];
  private sending: Promise<void> | null = null;
  private closed = false;

  constructor(options: EventBridgeSinkOptions) {
    this.client = options.client;
    this.eventBusName = options.eventBusName;
    this.maxQueue = options.maxQueue ?? 10_000;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.retryBaseMs = options.retryBaseMs ?? 100;
    this.retryMaxMs = options.retryMaxMs ?? 5_000;
    this.onOutcome = options.onOutcome ?? (() => {});
  }

  get pending(): number {
    return this.queue.length;
  }

  deliver(event: Envelope): void {
    if (this.closed) return;
    if (this.queue.length >= this.maxQueue) {
      this.queue.shift();
      this.onOutcome('dropped', 1);
    }
    this.queue.push({
      entry: {
        EventBusName: this.eventBusName,
        Source: event.source,
        DetailType: event['detail-type'],
        Detail: JSON.stringify(event.detail),
        Time: new Date(event.time),
      },
      attempts: 0,
    });
    this.sending ??= this.drain().finally(() => {
      this.sending = null;
    });
  }

  /** Resolves once everything queued so far was delivered or given up. */
  async flush(): Promise<void> {
    while (this.sending) await this.sending;
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, PUT_EVENTS_MAX_ENTRIES);
      const retry = await this.send(batch);
      if (retry.length === 0) continue;
      const again = retry.filter((p) => p.attempts < this.maxAttempts);
      if (again.length < retry.length) this.onOutcome('failed', retry.length - again.length);
      if (again.length === 0) continue;
      const attempts = Math.max(...again.map((p) => p.attempts));
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** (attempts - 1))));
      // Retried entries go first, so the order of events is kept as far as EventBridge allows.
      this.queue.unshift(...again);
    }
  }

  /** Sends one batch; returns the entries to try again. */
  private async send(batch: Pending[]): Promise<Pending[]> {
    for (const p of batch) p.attempts += 1;
    try {
      const reply = await this.client.send(new PutEventsCommand({ Entries: batch.map((p) => p.entry) }));
      if (!reply.FailedEntryCount) {
        this.onOutcome('delivered', batch.length);
        return [];
      }
      // Entries of the reply are in request order; a failed one carries an ErrorCode.
      const failed = batch.filter((_, i) => reply.Entries?.[i]?.ErrorCode);
      this.onOutcome('delivered', batch.length - failed.length);
      return failed;
    } catch {
      // The whole call failed (network, throttling): every entry is retried.
      return batch;
    }
  }
}
