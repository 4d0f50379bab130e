// What a connection gets when Node's HTTP parser refuses what it sent (malformed request line or headers,
// headers too large, a request that did not arrive in time): an answer in the contract's one error shape,
// `{"error": "Bad request"}`, counted in /metrics under route "malformed" — and nothing logged of it: the
// parser's error carries the raw bytes received (`rawPacket`), which may hold credentials (an admin token).

import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { Errors } from '../domain/errors.ts';
import type { Metrics } from '../observability/metrics.ts';

/** The route label of /metrics under which refused malformed requests are counted. */
export const MALFORMED_ROUTE = 'malformed';

export function clientErrorHandler(metrics: Metrics): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    // A reset connection: nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const answer = status === 400 ? Errors.badRequest() : Errors.frameworkClientError(status);
    metrics.observeRequest(MALFORMED_ROUTE, 'unknown', status, 0);
    const body = JSON.stringify({ error: answer.message });
    // As Node's own handler: never a second answer on a connection whose answer has begun (a request refused
    // before its body was read: the parser then fails on the body's bytes).
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          'Cache-Control: no-store\r\n' +
          'Connection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroySoon();
  };
}
