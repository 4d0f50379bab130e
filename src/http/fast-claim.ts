// The claim fast path (issue 37): a re-claim — POST /generate_token for a visitor whose token set was issued — is
// answered from the set kept in memory (src/domain/claim-cache.ts), straight from node:http, before Fastify routes
// the request (its routing, hooks, body parsing and serialiser were about as much as the rest of a re-claim).
// Only exactly that case: a body of the two strings event_id and request_id, a configured event, a lowercase
// request ID, a kept set the room's counters still vouch for (confirmed by the store first where other nodes
// write: Redis). Anything else — a first claim, a malformed body, a set not kept — goes on to Fastify with the
// body already read (preReadBody below hands it to Fastify's parser), which answers as it always has. Both paths
// give the same status, body and headers. An edge step after the API key, like the polling fast path.

import { PassThrough, type Readable } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import type { EdgeHandler, EdgeStep } from './edge/edge-chain.ts';
import { answeredFor, type AnswerLabel } from './edge/request-metrics.ts';

/** A claim's body is two short strings; a longer one is not read here (Fastify applies the body limit). */
const MAX_BODY = 512;

/** Bodies this step read but did not answer: Fastify parses them instead of the spent request stream. */
const preRead = new WeakMap<IncomingMessage, Buffer>();

/** Fastify's preParsing hook: the body the fast path already read, as the stream Fastify's parser reads. */
export async function preReadBody(request: FastifyRequest, _reply: unknown, payload: Readable): Promise<Readable> {
  const body = preRead.get(request.raw);
  if (body === undefined) return payload;
  preRead.delete(request.raw);
  const stream = new PassThrough();
  stream.end(body);
  return stream;
}

/** The fast path as an edge step, or undefined where re-claims are never answered from memory. */
export function fastClaimStep(options: { room: WaitingRoom; writesLimited: boolean }): EdgeStep | undefined {
  // A per-client limit on public writes is a Fastify hook: with one, every claim takes the routed path.
  if (options.writesLimited || !options.room.claims.answersReclaimsFromMemory) return undefined;
  return new FastClaim(options.room);
}

const LABEL: AnswerLabel = { route: '/generate_token', fromMemory: true, method: 'POST' };
const PLAIN_EVENT_ID = /^[A-Za-z0-9._~-]{1,128}$/;
const LOWERCASE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

class FastClaim implements EdgeStep {
  readonly name = 'fast claim';
  private readonly room: WaitingRoom;

  constructor(room: WaitingRoom) {
    this.room = room;
  }

  handle(req: IncomingMessage, res: ServerResponse, next: EdgeHandler): void {
    if (req.method !== 'POST' || req.url !== '/generate_token') return next(req, res);
    const length = Number(req.headers['content-length']);
    if (!(length > 0 && length <= MAX_BODY) || req.headers['transfer-encoding'] !== undefined) return next(req, res);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => this.answer(req, res, next, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
  }

  private answer(req: IncomingMessage, res: ServerResponse, next: EdgeHandler, body: Buffer): void {
    const routed = () => {
      preRead.set(req, body);
      next(req, res);
    };
    const claim = readClaim(body);
    const answer = claim && this.room.claims.reclaimInMemory(claim.eventId, claim.requestId);
    if (answer === undefined) return routed();
    if (typeof answer === 'string') return write(res, answer);
    answer.then(
      (text) => (text === undefined ? routed() : write(res, text)),
      () => routed(), // the store's error is the ordinary path's to answer
    );
  }
}

/** The two IDs of a claim's body, when it is exactly `{"event_id": E, "request_id": R}` in the forms kept. */
function readClaim(body: Buffer): { eventId: string; requestId: string } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { event_id: eventId, request_id: requestId } = value as Record<string, unknown>;
  if (Object.keys(value).length !== 2 || typeof eventId !== 'string' || typeof requestId !== 'string') return undefined;
  if (!PLAIN_EVENT_ID.test(eventId) || !LOWERCASE_UUID.test(requestId)) return undefined;
  return { eventId, requestId };
}

/** The routed 200's headers (route-table.ts: a 200 of a route without a cache policy is no-store). */
function write(res: ServerResponse, text: string): void {
  answeredFor(res, LABEL);
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'access-control-allow-origin': '*',
    'cache-control': 'no-store',
  });
  res.end(text);
}
