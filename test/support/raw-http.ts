// HTTP with the request target sent exactly as written (fetch would normalise `//x`, `%5F` or an absolute
// form before sending), and a bare node:http server around one handler: for testing edge steps alone.

import { once } from 'node:events';
import { createServer, request, type IncomingHttpHeaders, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export function rawRequest(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    // A connection of its own: the server closes one after a target it cannot parse.
    const req = request({ host: '127.0.0.1', port, method, path: target, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface RawServer {
  port: number;
  close: () => Promise<void>;
}

/** A node:http server on 127.0.0.1 (any free port) answering with `handler`. */
export async function serveRaw(handler: RequestListener): Promise<RawServer> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
