// The polling fast path. Thousands of waiting visitors call GET /serving_num and /waiting_num every second
// or two; the answer is a counter this process already holds in memory. For exactly that case — a
// well-formed query naming a configured event, the counters in memory — the answer is written straight from
// node:http, before Fastify routes the request (which costs about as much as everything else on this path
// together). Anything else — a malformed or unknown query, counters not in memory yet — falls through to the
// Fastify routes, which validate it and answer with the contract's errors. Both paths give the same status,
// body and headers. It is the edge chain's last step (src/http/edge/edge-chain.ts): the steps before it (request
// metrics, the API key) hold for its answers as for Fastify's.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { waitingOf } from '../domain/services/room-context.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import type { Counters } from '../domain/ports/store.ts';
import type { EdgeHandler, EdgeStep } from './edge/edge-chain.ts';
import { answeredFor, type AnswerLabel } from './edge/request-metrics.ts';

export interface FastPollOptions {
  room: WaitingRoom;
  pollTtl: number;
}

/** Query values the fast path accepts as they are: what an event ID may contain, nothing to decode. */
const PLAIN_EVENT_ID = /^[A-Za-z0-9._~-]{1,128}$/;

interface PollRoute {
  prefix: string;
  /** Counted under Fastify's route URL, as a routed poll is, but not timed (see AnswerLabel.fromMemory). */
  label: AnswerLabel;
  body: (c: Counters) => string;
}

const ROUTES: readonly [PollRoute, PollRoute] = [
  {
    prefix: '/serving_num?event_id=',
    label: { route: '/serving_num', fromMemory: true },
    body: (c) => `{"serving_counter":${c.serving}}`,
  },
  {
    prefix: '/waiting_num?event_id=',
    label: { route: '/waiting_num', fromMemory: true },
    body: (c) => `{"waiting_num":${waitingOf(c)}}`,
  },
];

/** The fast path as an edge step, or undefined when this node's counters are not in memory (nothing to do). */
export function fastPollStep(options: FastPollOptions): EdgeStep | undefined {
  if (!options.room.queue.answersPollsFromMemory) return undefined;
  return new FastPoll(options.room, `public, max-age=${options.pollTtl}`);
}

class FastPoll implements EdgeStep {
  readonly name = 'fast poll';
  private readonly room: WaitingRoom;
  private readonly cacheControl: string;

  constructor(room: WaitingRoom, cacheControl: string) {
    this.room = room;
    this.cacheControl = cacheControl;
  }

  handle(req: IncomingMessage, res: ServerResponse, next: EdgeHandler): void {
    if (!this.answer(req, res)) next(req, res);
  }

  /** Answers a poll from memory and returns true, or returns false having written nothing. */
  private answer(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET') return false;
    const url = req.url;
    if (url === undefined) return false;
    const route = url.startsWith(ROUTES[0].prefix) ? ROUTES[0] : url.startsWith(ROUTES[1].prefix) ? ROUTES[1] : undefined;
    if (!route) return false;
    const eventId = url.slice(route.prefix.length);
    if (!PLAIN_EVENT_ID.test(eventId)) return false;
    const counters = this.room.queue.countersInMemory(eventId);
    if (!counters) return false;
    const body = route.body(counters);
    answeredFor(res, route.label);
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'access-control-allow-origin': '*',
      'cache-control': this.cacheControl,
    });
    res.end(body);
    return true;
  }
}
