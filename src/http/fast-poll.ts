// The polling fast path. Thousands of waiting visitors call GET /serving_num and /waiting_num every second
// or two; the answer is a counter this process already holds in memory. For exactly that case — a
// well-formed query naming a configured event, the API key (if any) right, the counters in memory — the
// answer is written straight from node:http, before Fastify routes the request (which costs about as much as
// everything else on this path together). Anything else — a malformed or unknown query, a wrong key, counters
// not in memory yet — falls through to the Fastify routes, which validate it and answer with the contract's
// errors. Both paths give the same status, body and headers.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { waitingOf, type WaitingRoomService } from '../domain/waiting-room-service.ts';
import type { Counters } from '../domain/ports/store.ts';
import { secretsEqual } from './auth/constant-time.ts';

export interface FastPollOptions {
  room: WaitingRoomService;
  pollTtl: number;
  publicApiKey?: string | undefined;
  /** Counts a request answered here (Fastify's hooks do not run for it). */
  count: (route: '/serving_num' | '/waiting_num') => void;
}

/** Query values the fast path accepts as they are: what an event ID may contain, nothing to decode. */
const PLAIN_EVENT_ID = /^[A-Za-z0-9._~-]{1,128}$/;

const ROUTES = [
  { prefix: '/serving_num?event_id=', route: '/serving_num', body: (c: Counters) => `{"serving_counter":${c.serving}}` },
  { prefix: '/waiting_num?event_id=', route: '/waiting_num', body: (c: Counters) => `{"waiting_num":${waitingOf(c)}}` },
] as const;

/** Returns a function that answers the request and returns true, or returns false to let Fastify answer. */
export function fastPoll(options: FastPollOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const cacheControl = `public, max-age=${options.pollTtl}`;
  const room = options.room;
  const apiKey = options.publicApiKey;
  if (!room.answersPollsFromMemory) return () => false;
  return (req, res) => {
    if (req.method !== 'GET') return false;
    const url = req.url;
    if (url === undefined) return false;
    const route = url.startsWith(ROUTES[0].prefix) ? ROUTES[0] : url.startsWith(ROUTES[1].prefix) ? ROUTES[1] : undefined;
    if (!route) return false;
    const eventId = url.slice(route.prefix.length);
    if (!PLAIN_EVENT_ID.test(eventId)) return false;
    if (apiKey !== undefined) {
      const given = req.headers['x-api-key'];
      if (typeof given !== 'string' || !secretsEqual(given, apiKey)) return false;
    }
    const counters = room.countersInMemory(eventId);
    if (!counters) return false;
    const body = route.body(counters);
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'access-control-allow-origin': '*',
      'cache-control': cacheControl,
    });
    res.end(body);
    options.count(route.route);
    return true;
  };
}
