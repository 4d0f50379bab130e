// What the gate's tests share: a real origin (a small node:http app with a WebSocket echo), a cookie jar for
// fetch, and a node with a gate in front of the origin.

import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { RoomSettings } from '../../src/domain/room-settings.ts';
import { eventSettings, startTestNode, type TestClock, type TestNode } from '../support/node.ts';
import type { ServerConfig } from '../../src/config/config.ts';
import { ensurePagesBuilt } from '../web/support.ts';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
}

export interface Origin {
  url: string;
  port: number;
  seen: SeenRequest[];
  server: Server;
  close(): Promise<void>;
}

/**
 * The protected site. GET /revoke answers with `Anteroom-Command: revoke`; /echo answers what it received as
 * JSON (method, path, headers, body length, counted while streaming); /ws is a WebSocket echo; anything else
 * is a small HTML page naming its path.
 */
export async function startOrigin(port = 0): Promise<Origin> {
  const seen: SeenRequest[] = [];
  const server = createServer((request, response) => {
    let bodyBytes = 0;
    request.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
    request.on('end', () => {
      const url = request.url ?? '/';
      seen.push({ method: request.method ?? '', url, headers: request.headers, bodyBytes });
      if (url.startsWith('/revoke')) {
        response.writeHead(200, { 'content-type': 'text/plain', 'anteroom-command': 'revoke' }).end('thanks, you are done');
        return;
      }
      if (url.startsWith('/echo')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ method: request.method, url, headers: request.headers, bodyBytes }));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><title>Origin</title><h1 id="origin-page">Origin page ${url.replaceAll('<', '&lt;')}</h1>`);
    });
  });
  const wss = new WebSocketServer({ server, path: '/ws' });
  wss.on('connection', (socket, request) => {
    socket.send(`hello ${request.headers['x-forwarded-for'] ?? 'nobody'}`);
    socket.on('message', (data) => socket.send(`echo ${String(data)}`));
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    seen,
    server,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A room protecting `origin` on every host and path. */
export function gatedRoom(eventId: string, origin: string, overrides: Partial<RoomSettings> = {}): RoomSettings {
  return eventSettings(eventId, {
    gate: { origin, routes: [{ path: '/' }], queueing_status_code: 200 },
    ...overrides,
  });
}

export interface GateNode extends TestNode {
  gateUrl: string;
}

export async function startGateNode(
  rooms: RoomSettings[],
  overrides: Partial<ServerConfig> = {},
  options: { clock?: TestClock; jobs?: boolean } = {},
): Promise<GateNode> {
  // The gate serves the built waiting page (`npm test` builds it first; a direct `node --test` may not have).
  ensurePagesBuilt();
  const node = await startTestNode({ events: rooms, gatePort: 0, ...overrides }, options);
  if (!node.gate) throw new Error('no gate');
  return { ...node, gateUrl: node.gate.url };
}

/** A browser's cookies for one site, as fetch needs them (Set-Cookie in, Cookie out; Max-Age=0 deletes). */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  /** The attributes of the last Set-Cookie seen per name (tests check them). */
  readonly attributes = new Map<string, string>();

  take(response: Response): Response {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      this.attributes.set(name, attributes.map((a) => a.trim()).join('; '));
      if (value === '' || /max-age=0\b/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async fetch(url: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
    const headers = { ...(init.headers ?? {}), ...(this.cookies.size ? { cookie: this.header() } : {}) };
    return this.take(await fetch(url, { redirect: 'manual', ...init, headers }));
  }
}
