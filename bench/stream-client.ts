// One process of listeners for bench/stream.ts: opens CONNECTIONS raw TCP connections to GET /stream (from its
// own loopback address, so that several processes are not limited by one address's ephemeral ports), keeps the
// last serving counter each one heard, and tells the parent through IPC when every connection has heard a value.
// Raw sockets rather than an HTTP client: a client per connection would cost the load generator more than the
// server it measures.

import { connect, type Socket } from 'node:net';

const [host, portText, eventId, countText, localAddress] = process.argv.slice(2);
const port = Number(portText);
const count = Number(countText);
const request = Buffer.from(`GET /stream?event_id=${eventId} HTTP/1.1\r\nHost: ${host}:${port}\r\nAccept: text/event-stream\r\n\r\n`);
const COUNTER = /"serving_counter":(\d+)/g;

interface Listener {
  socket: Socket;
  /** Highest serving counter this connection has heard. */
  heard: number;
  /** When (ms, performance.timeOrigin-based wall time) it first heard the value the parent waits for. */
  heardAt: number;
}

const listeners: Listener[] = [];
let expecting: { value: number; reached: number; times: number[] } | null = null;
let closed = 0;
const now = () => performance.timeOrigin + performance.now();

function onValue(listener: Listener, value: number): void {
  if (value <= listener.heard) return;
  listener.heard = value;
  if (expecting && value >= expecting.value && listener.heardAt === 0) {
    listener.heardAt = now();
    expecting.times.push(listener.heardAt);
    if (++expecting.reached === listeners.length) {
      process.send!({ type: 'heard', value: expecting.value, times: expecting.times });
      expecting = null;
    }
  }
}

function open(): Promise<void> {
  return new Promise((resolve, reject) => {
    const listener: Listener = { socket: connect({ host, port, localAddress }), heard: -1, heardAt: 0 };
    let connected = false;
    listener.socket.setNoDelay(true);
    listener.socket.on('connect', () => listener.socket.write(request));
    listener.socket.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (!connected) {
        connected = true;
        if (!text.startsWith('HTTP/1.1 200')) {
          reject(new Error(`stream refused: ${text.split('\r\n')[0]}`));
          return;
        }
        resolve();
      }
      for (const m of text.matchAll(COUNTER)) onValue(listener, Number(m[1]));
    });
    listener.socket.on('error', (error) => (connected ? undefined : reject(error)));
    listener.socket.on('close', () => closed++);
    listeners.push(listener);
  });
}

async function main(): Promise<void> {
  // Connect in waves, so the server's accept queue is never the limit.
  for (let i = 0; i < count; i += 250) {
    await Promise.all(Array.from({ length: Math.min(250, count - i) }, open));
  }
  process.send!({ type: 'ready', connections: listeners.length });
  process.on('message', (message: { type: string; value?: number }) => {
    if (message.type === 'expect') {
      // Sent before the counter moves: nobody can have heard the value yet.
      for (const l of listeners) l.heardAt = 0;
      expecting = { value: message.value!, reached: 0, times: [] };
      process.send!({ type: 'expecting' });
    } else if (message.type === 'stats') {
      process.send!({ type: 'stats', open: listeners.length - closed, closed });
    } else if (message.type === 'stop') {
      for (const l of listeners) l.socket.destroy();
      process.exit(0);
    }
  });
}

main().catch((error: Error) => {
  process.send!({ type: 'error', message: error.message });
  process.exit(1);
});
