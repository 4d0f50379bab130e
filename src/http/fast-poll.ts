// The polling fast path. Thousands of waiting visitors call GET /serving_num and /waiting_num every second
// or two, and GET /queue_num until they know their place; the answer is a counter this process already holds
// in memory, or a position it found before and still knows to be unchanged (src/domain/position-cache.ts). For exactly that case — a
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
    if (!route) return url.startsWith(QUEUE_NUM.prefix) && this.answerPosition(url, res);
    const eventId = url.slice(route.prefix.length);
    if (!PLAIN_EVENT_ID.test(eventId)) return false;
    const counters = this.room.queue.countersInMemory(eventId);
    if (!counters) return false;
    write(res, route.label, route.body(counters), this.cacheControl);
    return true;
  }

  /** GET /queue_num?event_id=E&request_id=R[&beat=1], R in lowercase, from the positions kept in memory. */
  private answerPosition(url: string, res: ServerResponse): boolean {
    const beat = url.endsWith(QUEUE_NUM.beatParam);
    const end = beat ? url.length - QUEUE_NUM.beatParam.length : url.length;
    const split = url.indexOf(QUEUE_NUM.requestParam, QUEUE_NUM.prefix.length);
    if (split < 0 || end - split - QUEUE_NUM.requestParam.length !== 36) return false;
    const eventId = url.slice(QUEUE_NUM.prefix.length, split);
    const requestId = url.slice(split + QUEUE_NUM.requestParam.length, end);
    if (!LOWERCASE_UUID.test(requestId) || !PLAIN_EVENT_ID.test(eventId)) return false;
    const answer = this.room.queue.queueNumInMemory(eventId, requestId, beat);
    if (answer === undefined) return false;
    // A beat is never cached (the routed path's rule: a cache in front would swallow it).
    write(res, QUEUE_NUM.label, answer, beat ? 'no-store' : QUEUE_NUM.cacheControl);
    return true;
  }
}

/** A position's answer: the routed path's (spec: a 200 of /queue_num is cacheable for 60 s). */
const QUEUE_NUM = {
  prefix: '/queue_num?event_id=',
  requestParam: '&request_id=',
  /** The waiting page's beat (presence, issue 34). */
  beatParam: '&beat=1',
  label: { route: '/queue_num', fromMemory: true } as AnswerLabel,
  cacheControl: 'public, max-age=60',
};

/** A request ID as the store keeps it (the ordinary path lowercases one written in capitals first). */
const LOWERCASE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function write(res: ServerResponse, label: AnswerLabel, text: string, cacheControl: string): void {
  answeredFor(res, label);
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'access-control-allow-origin': '*',
    'cache-control': cacheControl,
  });
  res.end(text);
}
