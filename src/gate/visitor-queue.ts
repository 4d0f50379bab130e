// The gate's answer to a visitor without a valid admission cookie (spec rooms.md §5): keep or take a place,
// and either admit them — claim the token set, set it as a cookie, send them on to the URL they first asked
// for — or show the waiting page (or JSON for a client that asks for JSON).
//
// While the visitor's position is known and above the serving counter held in memory, a poll costs no store
// call: the place cookie carries the position, encrypted (cookies.ts).

import type { FastifyReply, FastifyRequest } from 'fastify';
import { ContractError } from '../domain/errors.ts';
import { roomMessages } from '../domain/page-branding.ts';
import type { RoomSettings } from '../domain/room-settings.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import { waitingOf } from '../domain/services/room-context.ts';
import { chooseEncoding } from '../web/static-pages.ts';
import { renderGatePage, type WaitingPage, type WaitingPageVisitor } from '../web/gate-page.ts';
import { queueId } from '../web/page-template.ts';
import type { Counters } from '../domain/ports/store.ts';
import {
  JOIN_COOKIE,
  JOIN_COOKIE_MAX_AGE_SEC,
  PLACE_COOKIE,
  PLACE_COOKIE_MAX_AGE_SEC,
  TOKEN_COOKIE,
  cookieAttributes,
  joinKeyOf,
  newJoinKey,
  type Place,
  type PlaceCookies,
} from './cookies.ts';
import { GATE_CHALLENGE_PATH, joinThroughGate, type GateJoinDeps, type JoinRefusal } from './gate-join.ts';
import { safeLocalPath } from './normalise-path.ts';
import { refreshSeconds } from './refresh-interval.ts';
import { UNSENT_MESSAGE, UNSENT_RETRY_AFTER_SEC, carriesAction, wantsPage } from './unsent-requests.ts';

/** Marks the gate's own answers, so the waiting page can tell them from the origin's. */
export const GATE_ANSWER_HEADER = 'anteroom-gate';

export interface QueueDeps extends GateJoinDeps {
  room: Pick<WaitingRoom, 'claims' | 'queue' | 'reports' | 'rooms' | 'presence'>;
  places: PlaceCookies;
  pagesRoot?: string | undefined;
  /** Milliseconds since the epoch (the room's phase and pace for the page). Default Date.now. */
  clockMs?: (() => number) | undefined;
}

type Outcome = { kind: 'admitted'; place: Place; token: string; expiresIn: number } | { kind: 'queued'; place: Place } | JoinRefusal;

export async function answerVisitor(
  deps: QueueDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  room: RoomSettings,
  returnTo: string,
  /** Sends the request on to the site (a request that carries an action, admitted at this very request). */
  letThrough?: (token: string, requestId: string) => void,
): Promise<FastifyReply> {
  let place = deps.places.decode(request.cookies[PLACE_COOKIE]);
  if (place && place.eventId !== room.event_id) place = undefined;
  const secure = request.protocol === 'https';
  // The join's Idempotency-Key, in the join cookie before the join is tried, so that it is on the answer whatever
  // the answer (a 503 included): the key of the visitor's refused join again, or a fresh one.
  const keyFor = (retry: boolean): string => {
    const key = (retry ? joinKeyOf(request.cookies[JOIN_COOKIE]) : undefined) ?? newJoinKey();
    reply.setCookie(JOIN_COOKIE, key, cookieAttributes(secure, JOIN_COOKIE_MAX_AGE_SEC));
    return key;
  };
  let outcome = await decide(deps, request, room, place, returnTo, () => keyFor(true));
  // The place is gone (left, expired, a closed session, a reset): a new one, at the back of the line, under a new
  // key (the old one names the place that is gone).
  if (outcome === 'rejoin') outcome = await decide(deps, request, room, undefined, returnTo, () => keyFor(false));
  if (outcome === 'rejoin') throw new Error('a fresh place could not be used');
  // The place cookie holds the place from now on: the join key has done its work.
  if ((outcome.kind === 'queued' || outcome.kind === 'admitted') && (request.cookies[JOIN_COOKIE] !== undefined || place !== outcome.place)) {
    reply.clearCookie(JOIN_COOKIE, { path: '/' });
  }
  reply.header('cache-control', 'no-store').header(GATE_ANSWER_HEADER, outcome.kind);
  // A request that carries an action is never lost silently (unsent-requests.ts).
  const action = carriesAction(request.method);
  const json = action ? !wantsPage(request.headers.accept) : wantsJson(request.headers.accept);
  // Before the pre-queue opens: no place is taken; the page counts down to the opening and asks again by itself.
  if (outcome.kind === 'before') {
    reply.code(room.gate?.queueing_status_code ?? 200);
    const opensAt = room.prequeue_start_time ?? room.event_start_time ?? null;
    if (json) return reply.send({ status: 'before', event_id: room.event_id, phase: 'before', opens_at: opensAt, messages: roomMessages(room.branding) });
    return sendPage(deps, request, reply, room, { reason: 'before' });
  }
  if (outcome.kind === 'closed') {
    reply.clearCookie(PLACE_COOKIE, { path: '/' }).code(403);
    if (json) return reply.send({ status: 'closed', event_id: room.event_id, error: outcome.message, messages: roomMessages(room.branding) });
    return sendPage(deps, request, reply, room, { reason: 'closed' });
  }
  // Bot defence (gate-join.ts): a challenge to solve first, or a per-client limit to wait out; no place taken.
  if (outcome.kind === 'challenge') {
    reply.clearCookie(PLACE_COOKIE, { path: '/' }).code(403);
    if (json) {
      const challenge = `${GATE_CHALLENGE_PATH}?event_id=${encodeURIComponent(room.event_id)}`;
      return reply.send({ status: 'challenge', event_id: room.event_id, error: outcome.message, challenge });
    }
    return sendPage(deps, request, reply, room, { reason: 'challenge' });
  }
  if (outcome.kind === 'limited') {
    reply.clearCookie(PLACE_COOKIE, { path: '/' }).code(429).header('retry-after', outcome.retryAfter);
    if (json) return reply.send({ status: 'limited', event_id: room.event_id, error: outcome.message });
    return sendPage(deps, request, reply, room, { reason: 'limited' });
  }
  if (outcome.kind === 'admitted') {
    reply
      .setCookie(TOKEN_COOKIE, outcome.token, cookieAttributes(secure, outcome.expiresIn))
      .clearCookie(PLACE_COOKIE, { path: '/' });
    if (action && letThrough) {
      reply.removeHeader(GATE_ANSWER_HEADER);
      letThrough(outcome.token, outcome.place.requestId);
      return reply;
    }
    // Stored normalised; read through the same rule again (a cookie from before it, or another key's), so the
    // Location is always a path on this host.
    const location = safeLocalPath(outcome.place.returnTo) ?? '/';
    if (json) return reply.send({ status: 'admitted', event_id: room.event_id, location });
    return reply.redirect(location, 303);
  }
  const queued = outcome.place;
  // Encrypted and sent only when it changed (a new place, or its position just learnt) or came in the old
  // readable format: a waiting visitor's polls cost no encryption.
  if (queued !== place || deps.places.isLegacy(queued)) reply.setCookie(PLACE_COOKIE, deps.places.encode(queued), cookieAttributes(secure, PLACE_COOKIE_MAX_AGE_SEC));
  reply.code(room.gate?.queueing_status_code ?? 200);
  const counters = await countersOf(deps.room, room.event_id);
  // The people still waiting ahead (not those who left: src/domain/people-ahead.ts), from memory between leaves.
  const peopleAhead = queued.position === undefined ? undefined : await deps.room.queue.peopleAhead.of(room.event_id, queued.position, counters);
  if (action) reply.code(503).header('retry-after', String(UNSENT_RETRY_AFTER_SEC));
  if (json) {
    return reply.send({
      ...(action ? { error: UNSENT_MESSAGE } : {}),
      status: 'queued',
      event_id: room.event_id,
      queue_number: queued.position ?? null,
      serving_counter: counters.serving,
      waiting_num: counters.waiting,
      // Anteroom's page: the room's phase (pause, close, the start reach an open page at its next poll), the people
      // ahead and the short queue ID.
      phase: await deps.room.rooms.roomPhase(room.event_id),
      people_ahead: peopleAhead ?? null,
      queue_id: queueId(queued.requestId),
      // The visitor's own request ID, which their HttpOnly cookie hides from them: to check the draw with (this
      // answer goes to the cookie's holder alone, never cached).
      request_id: queued.requestId,
      // The operator's messages (branding), for the open page to show a change without a reload.
      messages: roomMessages(room.branding),
    });
  }
  return sendPage(deps, request, reply, room, {
    reason: 'queued',
    position: queued.position,
    serving: counters.serving,
    unsent: action,
    peopleAhead,
    requestId: queued.requestId,
  });
}

/**
 * The waiting page, with the visitor's numbers and its no-script refresh (src/gate/refresh-interval.ts) back to
 * the URL of this request — the protected URL, or /_anteroom/wait?to=… — a path of this host only.
 */
function sendPage(
  deps: QueueDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  room: RoomSettings,
  visitor: Pick<WaitingPageVisitor, 'reason' | 'position' | 'serving' | 'unsent' | 'peopleAhead' | 'requestId'>,
): FastifyReply {
  const nowMs = (deps.clockMs ?? Date.now)();
  const ahead = visitor.peopleAhead ?? (visitor.position !== undefined && visitor.serving !== undefined ? Math.max(0, visitor.position - visitor.serving) : undefined);
  const seconds = refreshSeconds(room, { ahead, measuredPerSecond: deps.room.queue.estimates.pace(room.event_id, nowMs), nowMs });
  const page = renderGatePage(
    room,
    {
      mode: 'gate',
      ...visitor,
      acceptLanguage: request.headers['accept-language'],
      // ?lang= as on the site's page (one language choice for both).
      queryLang: typeof (request.query as Record<string, unknown> | undefined)?.lang === 'string' ? ((request.query as Record<string, string>).lang) : undefined,
      refresh: { seconds, path: safeLocalPath(request.url) ?? '/' },
    },
    deps.pagesRoot,
    nowMs,
  );
  return sendWaitingPage(request, reply, page);
}

/** A waiting page as bytes, compressed when the client accepts it. */
export function sendWaitingPage(request: FastifyRequest, reply: FastifyReply, page: WaitingPage): FastifyReply {
  reply.type(page.contentType).header('vary', 'accept-encoding');
  const encoding = chooseEncoding(request.headers['accept-encoding'], page);
  if (encoding) return reply.header('content-encoding', encoding).send(page[encoding]);
  return reply.send(page.body);
}

async function decide(
  deps: QueueDeps,
  request: FastifyRequest,
  room: RoomSettings,
  given: Place | undefined,
  returnTo: string,
  joinKey: () => string,
): Promise<Outcome | 'rejoin'> {
  const service = deps.room;
  const eventId = room.event_id;
  let place = given;
  if (!place) {
    // The join of every door, judged by the room's bot defence with this visitor's IP and proof of work.
    const joined = await joinThroughGate(deps, request, eventId, joinKey());
    if ('refused' in joined) return joined.refused;
    place = { eventId, requestId: joined.requestId, returnTo };
  }
  if (place.position === undefined) {
    const position = await service.queue.queueNum(eventId, place.requestId).catch(ignoreContractError);
    if (position === undefined) return 'rejoin';
    // 202: a drawn room numbers its pre-queue at the start.
    if (position.status === 200) place = { ...place, position: position.body.queue_number };
  }
  if (place.position !== undefined && room.state !== 'off') {
    service.presence.seen(eventId, place.position);
    // The serving counter from memory when the store keeps it there (SQLite; the Redis hot-read cache), else
    // one read — cheaper than the claim context generate_token reads.
    const serving = service.queue.countersInMemory(eventId)?.serving ?? (await servingOf(service, eventId));
    if (serving !== undefined && place.position > serving) return { kind: 'queued', place };
  }
  const claim = await service.claims.generateToken(eventId, place.requestId).catch(ignoreContractError);
  if (claim === undefined) return 'rejoin';
  if (claim.status === 202) return { kind: 'queued', place };
  return { kind: 'admitted', place, token: claim.body.access_token, expiresIn: claim.body.expires_in };
}

async function servingOf(service: Pick<WaitingRoom, 'claims' | 'queue' | 'reports'>, eventId: string): Promise<number | undefined> {
  const answer = await service.queue.servingNum(eventId);
  return answer.status === 200 ? answer.body.serving_counter : undefined;
}

/** A contract refusal (unknown, left, expired, closed session) means the place cannot be used: undefined. */
function ignoreContractError(error: unknown): undefined {
  if (error instanceof ContractError && error.status >= 400 && error.status < 500) return undefined;
  throw error;
}

async function countersOf(service: Pick<WaitingRoom, 'claims' | 'queue' | 'reports'>, eventId: string): Promise<Counters & { waiting: number }> {
  const memory = service.queue.countersInMemory(eventId);
  if (memory) return { ...memory, waiting: waitingOf(memory) };
  return service.reports.counters(eventId);
}

/** A client asking for JSON rather than a page (fetch with Accept: application/json, API clients). */
export function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.includes('application/json') && !accept.includes('text/html');
}
