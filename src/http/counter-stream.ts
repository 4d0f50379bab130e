// The public counter stream, GET /stream?event_id=E (Server-Sent Events): a waiting page keeps one connection
// open instead of polling /serving_num and /waiting_num every second or two, and hears of every change of the
// room's counters within a fraction of a second.
//
// One broadcaster per node. Each open stream is one entry in its room's set; nothing runs per connection. Every
// BROADCAST_MS the broadcaster reads, for each room that has listeners, the room's counters (one store read per
// room, served from memory where the store keeps them there) and, when they changed, builds the frame once and
// writes the same bytes to every listener of the room. A comment line every HEARTBEAT_MS keeps idle connections
// alive through proxies. A listener that does not read (its socket buffer past MAX_BUFFERED_BYTES) is dropped:
// it reconnects, or its page falls back to polling. Past `maxConnections` a node answers 503 with Retry-After,
// and the page polls instead (web/waiting-room-site).
//
// Frames: `event: counters` with `data: {"serving_counter": S, "waiting_num": W, "generation": G, "phase": P}` (G: resets so far; P: the
// room's phase, src/domain/room-phase.ts), first on connect, then on each
// change; `retry:` tells EventSource to reconnect after RETRY_MS. With `messagesOf`, also `event: messages` with
// `data: {"message"?, "paused_message"?, "closed_message"?}` (the room's branding messages, those set): on connect,
// then when the operator changes one, so an open page shows it without a reload. Read from the node's registry
// (memory), built once per room and change like the counters.

import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { Errors } from '../domain/errors.ts';
import { writeEventStreamHead } from '../events/sse-sink.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import type { RoomMessages } from '../domain/page-branding.ts';
import { mountPreflightAndMethodGuard } from './route-table.ts';
import { StreamQuery } from './schemas.ts';

/** How often the rooms with listeners are read: a change reaches every listener within this plus the write. */
export const BROADCAST_MS = 100;
export const HEARTBEAT_MS = 15_000;
/** EventSource's reconnection delay after a dropped stream. */
export const RETRY_MS = 3_000;
/** A listener whose unsent bytes pass this is not reading: dropped rather than buffered without bound. */
const MAX_BUFFERED_BYTES = 64 * 1024;

/** How often the visitors of open streams are marked seen (presence, issue 34): well within the shortest timeout. */
export const PRESENCE_MARK_MS = 5_000;

export interface CounterStreamsOptions {
  room: Pick<WaitingRoom, 'queue' | 'presence'>;
  /** Streams one node keeps open at most; past it, 503 and the page polls. */
  maxConnections: number;
  broadcastMs?: number;
  heartbeatMs?: number;
  /** The room's messages (src/domain/page-branding.ts roomMessages), sent as `event: messages` frames. */
  messagesOf?: (eventId: string) => RoomMessages | undefined;
}

interface RoomListeners {
  listeners: Set<ServerResponse>;
  /** The positions of listeners that named their request ID: marked seen every PRESENCE_MARK_MS. */
  positions: Map<ServerResponse, number>;
  /** The last frame sent (null before the first read). */
  last: string | null;
  /** The last messages frame sent (null without messagesOf, or before the first). */
  lastMessages: string | null;
}

export class CounterStreams {
  private readonly rooms = new Map<string, RoomListeners>();
  private readonly options: CounterStreamsOptions;
  private readonly broadcastTimer: NodeJS.Timeout;
  private readonly heartbeatTimer: NodeJS.Timeout;
  private readonly presenceTimer: NodeJS.Timeout;
  private connections = 0;
  private broadcasting = false;
  private closed = false;

  constructor(options: CounterStreamsOptions) {
    this.options = options;
    this.broadcastTimer = setInterval(() => void this.broadcast(), options.broadcastMs ?? BROADCAST_MS);
    this.heartbeatTimer = setInterval(() => this.heartbeat(), options.heartbeatMs ?? HEARTBEAT_MS);
    this.presenceTimer = setInterval(() => this.markPresent(), PRESENCE_MARK_MS);
    this.presenceTimer.unref();
    this.broadcastTimer.unref();
    this.heartbeatTimer.unref();
  }

  /** Open streams on this node. */
  get size(): number {
    return this.connections;
  }

  get full(): boolean {
    return this.connections >= this.options.maxConnections;
  }

  /** Starts the stream: headers, the reconnection delay and the current counters, then every change. */
  attach(response: ServerResponse, eventId: string, counters: StreamCounters, position?: number): void {
    writeEventStreamHead(response);
    let room = this.rooms.get(eventId);
    if (!room) this.rooms.set(eventId, (room = { listeners: new Set(), positions: new Map(), last: null, lastMessages: null }));
    if (position !== undefined) room.positions.set(response, position);
    const frame = counterFrame(counters);
    room.lastMessages ??= this.messagesFrame(eventId);
    response.write(`retry: ${RETRY_MS}\n${room.last ?? frame}${room.lastMessages ?? ''}`);
    room.last ??= frame;
    room.listeners.add(response);
    this.connections++;
    const listeners = room.listeners;
    const positions = room.positions;
    response.once('close', () => {
      positions.delete(response);
      if (listeners.delete(response)) this.connections--;
      if (listeners.size === 0 && this.rooms.get(eventId)?.listeners === listeners) this.rooms.delete(eventId);
    });
  }

  /** Ends every stream (the server is closing: their clients reconnect to another node). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.broadcastTimer);
    clearInterval(this.heartbeatTimer);
    clearInterval(this.presenceTimer);
    for (const room of this.rooms.values()) for (const response of room.listeners) response.end();
    this.rooms.clear();
    this.connections = 0;
  }

  /** Reads each room with listeners and sends its frame where it changed. One broadcast at a time. */
  async broadcast(): Promise<void> {
    if (this.broadcasting || this.closed) return;
    this.broadcasting = true;
    try {
      for (const [eventId, room] of this.rooms) {
        let counters: StreamCounters;
        try {
          counters = await this.options.room.queue.streamCounters(eventId);
        } catch {
          // The store is down or the room was deleted: nothing to send this time; pages keep their numbers.
          continue;
        }
        const messages = this.messagesFrame(eventId);
        if (messages !== room.lastMessages) {
          room.lastMessages = messages;
          if (messages !== null) this.send(room, messages);
        }
        const frame = counterFrame(counters);
        if (frame === room.last) continue;
        room.last = frame;
        this.send(room, frame);
      }
    } finally {
      this.broadcasting = false;
    }
  }

  /** The room's messages frame (null without messagesOf or for a room the registry no longer has). */
  private messagesFrame(eventId: string): string | null {
    const messages = this.options.messagesOf?.(eventId);
    return messages === undefined ? null : `event: messages\ndata: ${JSON.stringify(messages)}\n\n`;
  }

  /** An open stream that named its request ID is a sign of life of that visitor (presence). */
  markPresent(): void {
    const presence = this.options.room.presence;
    if (!presence) return;
    for (const [eventId, room] of this.rooms) for (const position of room.positions.values()) presence.seen(eventId, position);
  }

  private heartbeat(): void {
    for (const room of this.rooms.values()) this.send(room, ': keep-alive\n\n');
  }

  private send(room: RoomListeners, frame: string): void {
    // The bytes are built once for the room, however many listeners: the frame, and the frame as one HTTP/1.1
    // chunk, written straight to the sockets of chunked responses (what res.write would frame per listener).
    const bytes = Buffer.from(frame);
    const chunk = Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, CRLF]);
    for (const response of room.listeners) {
      const socket = response.socket;
      if (socket === null || socket.destroyed) continue;
      if (socket.writableLength > MAX_BUFFERED_BYTES) {
        response.destroy();
        continue;
      }
      if (response.chunkedEncoding) socket.write(chunk);
      else response.write(bytes);
    }
  }
}

const CRLF = Buffer.from('\r\n');

export interface StreamCounters {
  serving_counter: number;
  waiting_num: number;
  /** How many times the room was reset: a page that joined in another generation lost its place. */
  generation?: number;
  /** The room's phase (src/domain/room-phase.ts): an open page follows a pause, a close or the start at once. */
  phase?: string;
}

export function counterFrame(c: StreamCounters): string {
  const phase = c.phase === undefined ? '' : `,"phase":"${c.phase}"`;
  return `event: counters\ndata: {"serving_counter":${c.serving_counter},"waiting_num":${c.waiting_num},"generation":${c.generation ?? 0}${phase}}\n\n`;
}

/** GET /stream?event_id=E on the public scope; 400/404 as /serving_num, 503 with Retry-After when the node is full. */
export function counterStreamRoute(app: FastifyInstance, room: Pick<WaitingRoom, 'queue'>, streams: CounterStreams): void {
  app.route({
    method: 'GET',
    url: '/stream',
    // HEAD would open a stream with no body to carry it: GET only (HEAD answers 405).
    exposeHeadRoute: false,
    schema: { querystring: StreamQuery },
    config: { invalidQuery: Errors.invalidEventId },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const { event_id: eventId, request_id: requestId } = (request as FastifyRequest<{ Querystring: Static<typeof StreamQuery> }>).query;
      if (streams.full) throw Errors.streamsFull();
      // Validates the room (400 / 404 as the polls answer) and reads the first frame before the stream starts.
      const counters = await room.queue.streamCounters(eventId);
      // With the request ID, the visitor's place (a beat now, and while the stream stays open).
      const place = requestId === undefined ? undefined : await room.queue.queueNum(eventId, requestId, true).catch(() => undefined);
      reply.hijack();
      streams.attach(reply.raw, eventId, counters, place?.status === 200 ? place.body.queue_number : undefined);
    },
  });
  mountPreflightAndMethodGuard(app, '/stream', ['GET'], { headWithGet: false });
}
