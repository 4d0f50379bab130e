// Delivers an event's envelopes to one webhook URL: POST with the JSON body and an
// X-Anteroom-Signature header (HMAC-SHA256 of the exact body with the webhook's secret). Deliveries are
// queued (bounded: the oldest is dropped when full), sent one at a time and retried with capped exponential
// back-off, so a slow or dead receiver never slows the API.

import { createHmac } from 'node:crypto';
import type { EventSink } from './bus.ts';
import type { Envelope } from './envelope.ts';

export interface WebhookSinkOptions {
  eventId: string;
  url: string;
  secret: string;
  maxQueue?: number;
  maxAttempts?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  timeoutMs?: number;
  onOutcome?: (outcome: 'delivered' | 'failed' | 'dropped', detail: { url: string; attempts?: number; status?: number }) => void;
}

export function signatureOf(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export class WebhookSink implements EventSink {
  readonly name: string;
  private readonly options: Required<Omit<WebhookSinkOptions, 'onOutcome'>> & Pick<WebhookSinkOptions, 'onOutcome'>;
  private readonly queue: string[] = [];
  private sending: Promise<void> | null = null;
  private closed = false;
  private readonly abort = new AbortController();

  constructor(options: WebhookSinkOptions) {
    this.options = {
      maxQueue: 10_000,
      maxAttempts: 6,
      retryBaseMs: 500,
      retryMaxMs: 30_000,
      timeoutMs: 5_000,
      ...options,
    };
    this.name = `webhook:${new URL(options.url).host}`;
  }

  /** Where this sink POSTs. */
  get url(): string {
    return this.options.url;
  }

  deliver(event: Envelope): void {
    if (this.closed || event.detail.event_id !== this.options.eventId) return;
    if (this.queue.length >= this.options.maxQueue) {
      this.queue.shift();
      this.options.onOutcome?.('dropped', { url: this.options.url });
    }
    this.queue.push(JSON.stringify(event));
    this.sending ??= this.drain().finally(() => {
      this.sending = null;
    });
  }

  /** Resolves when everything queued so far has been delivered or given up (tests and shutdown use it). */
  async idle(): Promise<void> {
    while (this.sending) await this.sending;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    await this.sending?.catch(() => {});
  }

  private async drain(): Promise<void> {
    for (let body = this.queue.shift(); body !== undefined && !this.closed; body = this.queue.shift()) {
      await this.send(body);
    }
  }

  private async send(body: string): Promise<void> {
    const { url, secret, maxAttempts, retryBaseMs, retryMaxMs, timeoutMs } = this.options;
    const signature = signatureOf(body, secret);
    let status: number | undefined;
    for (let attempt = 1; attempt <= maxAttempts && !this.closed; attempt++) {
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-anteroom-signature': signature },
          body,
          signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(timeoutMs)]),
        });
        status = response.status;
        await response.body?.cancel();
        if (response.ok) {
          this.options.onOutcome?.('delivered', { url, attempts: attempt, status });
          return;
        }
        // A 4xx other than 408/429 will not get better by retrying.
        if (status < 500 && status !== 408 && status !== 429) break;
      } catch {
        status = undefined;
      }
      if (attempt < maxAttempts) await this.pause(Math.min(retryMaxMs, retryBaseMs * 2 ** (attempt - 1)));
    }
    this.options.onOutcome?.('failed', { url, status });
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.abort.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }
}
