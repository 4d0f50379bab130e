// The room's counters pushed by the server (GET /stream, Server-Sent Events) instead of polled: one connection
// per waiting page, a frame whenever the serving counter or the line moves. EventSource reconnects by itself
// after a dropped connection; when the server refuses the stream (503: the node is full; 404: a server without
// streams, such as VWR or API Gateway) it gives up, and the page goes back to polling.

export interface StreamCounters {
  serving: number;
  waiting: number;
  /** The room's generation (resets so far); absent from servers that do not send it. */
  generation?: number;
  /** The room's phase (src/domain/room-phase.ts); absent from servers that do not send it. */
  phase?: string;
}

/** The operator's messages of the room (its branding), those set; servers that do not send them send no frame. */
export interface RoomMessages {
  message?: string;
  paused_message?: string;
  closed_message?: string;
}

/** The messages of a frame or an answer: only text values are taken. */
export function messagesOf(value: unknown): RoomMessages | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const out: RoomMessages = {};
  for (const key of ['message', 'paused_message', 'closed_message'] as const) {
    const text = (value as Record<string, unknown>)[key];
    if (typeof text === 'string') out[key] = text;
  }
  return out;
}

export class CounterStream {
  private source: EventSource | undefined;
  /** A frame arrived since the stream last (re)connected: the numbers on screen are live. */
  live = false;
  /** The last frame. */
  private last: StreamCounters | undefined;
  private readonly onCounters: (c: StreamCounters) => void;
  private readonly onDrop: (gaveUp: boolean) => void;

  /**
   * Opens the stream; `onCounters` gets every frame. `onDrop` is called when the stream breaks: `gaveUp` false
   * while EventSource reconnects by itself (the page polls meanwhile), true when the stream cannot be used.
   */
  constructor(url: string, onCounters: (c: StreamCounters) => void, onDrop: (gaveUp: boolean) => void, onMessages?: (m: RoomMessages) => void) {
    this.onCounters = onCounters;
    this.onDrop = onDrop;
    if (typeof EventSource === 'undefined') {
      queueMicrotask(() => this.onDrop(true));
      return;
    }
    const source = new EventSource(url);
    this.source = source;
    source.addEventListener('counters', (event) => {
      const data = JSON.parse((event as MessageEvent<string>).data) as { serving_counter?: unknown; waiting_num?: unknown; generation?: unknown; phase?: unknown };
      const serving = Number(data.serving_counter);
      const waiting = Number(data.waiting_num);
      if (!Number.isFinite(serving) || !Number.isFinite(waiting)) return;
      this.live = true;
      this.last = {
        serving,
        waiting,
        ...(typeof data.generation === 'number' ? { generation: data.generation } : {}),
        ...(typeof data.phase === 'string' ? { phase: data.phase } : {}),
      };
      this.onCounters(this.last);
    });
    source.addEventListener('messages', (event) => {
      let data: unknown;
      try {
        data = JSON.parse((event as MessageEvent<string>).data);
      } catch {
        return;
      }
      const messages = messagesOf(data);
      if (messages) onMessages?.(messages);
    });
    source.addEventListener('error', () => {
      this.live = false;
      // CLOSED: refused (not a 200 event stream); EventSource will not try again. CONNECTING: it retries itself.
      const gaveUp = source.readyState === EventSource.CLOSED;
      if (gaveUp) this.close();
      this.onDrop(gaveUp);
    });
  }

  close(): void {
    this.source?.close();
    this.source = undefined;
    this.live = false;
  }
}
