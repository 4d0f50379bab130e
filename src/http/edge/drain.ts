// Edge step: the drain on shutdown (SIGTERM). From the moment the node starts closing, every request that
// arrives is answered 503 `{"error": "Server is shutting down"}` with Retry-After, and every answer — those
// of requests already in flight included — carries `Connection: close`, so clients stop reusing their
// connections and each connection closes right after an answer, never under a request in flight.
//
// The order of a drain (closeGracefully): stop accepting connections; let the open connections close by
// themselves after their next answer, up to `idleGraceMs`; then close those still idle (a client that sends
// on one at that very instant is the only one that can see a reset) and wait for the requests in flight.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Errors } from '../../domain/errors.ts';
import type { EdgeHandler, EdgeStep } from './edge-chain.ts';
import { answeredFor, routeLabel } from './request-metrics.ts';

/** How long open idle connections are given to close by themselves before they are closed. */
export const IDLE_GRACE_MS = 1000;

export class DrainStep implements EdgeStep {
  readonly name = 'drain on shutdown';
  draining = false;
  private readonly refusal: { status: number; headers: Record<string, string | number>; body: string };

  constructor() {
    const answer = Errors.shuttingDown();
    const body = JSON.stringify({ error: answer.message });
    this.refusal = {
      status: answer.status,
      headers: {
        ...answer.headers,
        'access-control-allow-origin': '*',
        'cache-control': 'no-store',
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      },
      body,
    };
  }

  handle(req: IncomingMessage, res: ServerResponse, next: EdgeHandler): void {
    if (!this.draining) {
      next(req, res);
      return;
    }
    answeredFor(res, routeLabel('shutting down'));
    res.writeHead(this.refusal.status, this.refusal.headers);
    res.end(this.refusal.body);
  }

  /**
   * Starts the drain and resolves once every connection has closed: in-flight requests answered (with
   * `Connection: close`), idle connections closed after at most `idleGraceMs`.
   */
  async closeGracefully(server: Server, idleGraceMs = IDLE_GRACE_MS): Promise<void> {
    // Answers of requests in flight get Connection: close from the HTTP server's onSend hook (server.ts).
    this.draining = true;
    const allClosed = new Promise<void>((resolve) => {
      // net.Server#close stops listening without closing idle HTTP connections (http.Server#close would).
      if (server.listening) NetServer.prototype.close.call(server, () => resolve());
      else resolve();
    });
    const deadline = Date.now() + idleGraceMs;
    while (Date.now() < deadline && (await connectionCount(server)) > 0) await sleep(20);
    server.closeIdleConnections();
    await allClosed;
  }
}

function connectionCount(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}
