// The gate's answer to a visitor without a valid admission cookie (spec rooms.md §5): keep or take a place,
// and either admit them — claim the token set, set it as a cookie, send them on to the URL they first asked
// for — or show the waiting page (or JSON for a client that asks for JSON).
//
// While the visitor's position is known and above the serving counter held in memory, a poll costs no store
// call: the place cookie carries the position, signed.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { ContractError } from '../domain/errors.ts';
import type { RoomSettings } from '../domain/room-settings.ts';
import type { WaitingRoomService } from '../domain/waiting-room-service.ts';
import { waitingOf } from '../domain/waiting-room-service.ts';
import { chooseEncoding } from '../web/static-pages.ts';
import { renderGatePage, type WaitingPage } from '../web/gate-page.ts';
import { PLACE_COOKIE, PLACE_COOKIE_MAX_AGE_SEC, TOKEN_COOKIE, cookieAttributes, type Place, type PlaceCookies } from './cookies.ts';
import { safeLocalPath } from './normalise-path.ts';

/** Marks the gate's own answers, so the waiting page can tell them from the origin's. */
export const GATE_ANSWER_HEADER = 'anteroom-gate';

export interface QueueDeps {
  room: WaitingRoomService;
  places: PlaceCookies;
  pagesRoot?: string | undefined;
}

type Outcome = { kind: 'admitted'; place: Place; token: string; expiresIn: number } | { kind: 'queued'; place: Place } | { kind: 'closed'; message: string };

export async function answerVisitor(
  deps: QueueDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  room: RoomSettings,
  returnTo: string,
): Promise<FastifyReply> {
  let place = deps.places.decode(request.cookies[PLACE_COOKIE]);
  if (place && place.eventId !== room.event_id) place = undefined;
  let outcome = await decide(deps.room, room, place, returnTo);
  // The place is gone (left, expired, a closed session, a reset): a new one, at the back of the line.
  if (outcome === 'rejoin') outcome = await decide(deps.room, room, undefined, returnTo);
  if (outcome === 'rejoin') throw new Error('a fresh place could not be used');
  const secure = request.protocol === 'https';
  reply.header('cache-control', 'no-store').header(GATE_ANSWER_HEADER, outcome.kind);
  const json = wantsJson(request.headers.accept);
  if (outcome.kind === 'closed') {
    reply.clearCookie(PLACE_COOKIE, { path: '/' }).code(403);
    if (json) return reply.send({ status: 'closed', event_id: room.event_id, error: outcome.message });
    return sendPage(deps, request, reply, room, 'closed');
  }
  if (outcome.kind === 'admitted') {
    reply
      .setCookie(TOKEN_COOKIE, outcome.token, cookieAttributes(secure, outcome.expiresIn))
      .clearCookie(PLACE_COOKIE, { path: '/' });
    // Stored normalised; read through the same rule again (a cookie from before it, or another key's), so the
    // Location is always a path on this host.
    const location = safeLocalPath(outcome.place.returnTo) ?? '/';
    if (json) return reply.send({ status: 'admitted', event_id: room.event_id, location });
    return reply.redirect(location, 303);
  }
  const queued = outcome.place;
  // Signed and sent only when it changed (a new place, or its position just learnt): a waiting visitor's polls
  // cost no signature.
  if (queued !== place) reply.setCookie(PLACE_COOKIE, deps.places.encode(queued), cookieAttributes(secure, PLACE_COOKIE_MAX_AGE_SEC));
  reply.code(room.gate?.queueing_status_code ?? 200);
  if (json) {
    const counters = await countersOf(deps.room, room.event_id);
    return reply.send({
      status: 'queued',
      event_id: room.event_id,
      queue_number: queued.position ?? null,
      serving_counter: counters.serving,
      waiting_num: counters.waiting,
    });
  }
  return sendPage(deps, request, reply, room, 'queued');
}

function sendPage(deps: QueueDeps, request: FastifyRequest, reply: FastifyReply, room: RoomSettings, reason: 'queued' | 'closed'): FastifyReply {
  return sendWaitingPage(request, reply, renderGatePage(room, { mode: 'gate', reason, acceptLanguage: request.headers['accept-language'] }, deps.pagesRoot));
}

/** A waiting page as bytes, compressed when the client accepts it. */
export function sendWaitingPage(request: FastifyRequest, reply: FastifyReply, page: WaitingPage): FastifyReply {
  reply.type(page.contentType).header('vary', 'accept-encoding');
  const encoding = chooseEncoding(request.headers['accept-encoding'], page);
  if (encoding) return reply.header('content-encoding', encoding).send(page[encoding]);
  return reply.send(page.body);
}

async function decide(service: WaitingRoomService, room: RoomSettings, given: Place | undefined, returnTo: string): Promise<Outcome | 'rejoin'> {
  const eventId = room.event_id;
  let place = given;
  if (!place) {
    try {
      const joined = await service.assignQueueNum(eventId);
      if (joined.status !== 200) throw new Error('join answered 202');
      place = { eventId, requestId: joined.body.api_request_id, returnTo };
    } catch (error) {
      if (error instanceof ContractError && error.status === 403) return { kind: 'closed', message: error.message };
      throw error;
    }
  }
  if (place.position === undefined) {
    const position = await service.queueNum(eventId, place.requestId).catch(ignoreContractError);
    if (position === undefined) return 'rejoin';
    // 202: a drawn room numbers its pre-queue at the start.
    if (position.status === 200) place = { ...place, position: position.body.queue_number };
  }
  if (place.position !== undefined && room.state !== 'off') {
    // The serving counter from memory when the store keeps it there (SQLite; the Redis hot-read cache), else
    // one read — cheaper than the claim context generate_token reads.
    const serving = service.countersInMemory(eventId)?.serving ?? (await servingOf(service, eventId));
    if (serving !== undefined && place.position > serving) return { kind: 'queued', place };
  }
  const claim = await service.generateToken(eventId, place.requestId).catch(ignoreContractError);
  if (claim === undefined) return 'rejoin';
  if (claim.status === 202) return { kind: 'queued', place };
  return { kind: 'admitted', place, token: claim.body.access_token, expiresIn: claim.body.expires_in };
}

async function servingOf(service: WaitingRoomService, eventId: string): Promise<number | undefined> {
  const answer = await service.servingNum(eventId);
  return answer.status === 200 ? answer.body.serving_counter : undefined;
}

/** A contract refusal (unknown, left, expired, closed session) means the place cannot be used: undefined. */
function ignoreContractError(error: unknown): undefined {
  if (error instanceof ContractError && error.status >= 400 && error.status < 500) return undefined;
  throw error;
}

async function countersOf(service: WaitingRoomService, eventId: string): Promise<{ serving: number; waiting: number }> {
  const memory = service.countersInMemory(eventId);
  if (memory) return { serving: memory.serving, waiting: waitingOf(memory) };
  const all = await service.counters(eventId);
  return { serving: all.serving, waiting: all.waiting };
}

/** A client asking for JSON rather than a page (fetch with Accept: application/json, API clients). */
export function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.includes('application/json') && !accept.includes('text/html');
}
