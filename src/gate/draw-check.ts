// The draw of a gated room, for its visitors (docs/gate.md "Checking the draw"): on the site's own host the
// site owns /draw, so the gate serves the publication and the way to the check page under /_anteroom/:
//   GET /_anteroom/draw-data?event_id=E[&page=N]  GET /draw's answer for a room this gate protects
//   GET /_anteroom/draw[?event_id=E]              303 to the check page (/_anteroom/draw-check/), with the
//       visitor's own request ID — read from their place cookie, which only the gate can decrypt — in the
//       address's fragment (#request_id=…: never sent to any server, and the page removes it at once). Only
//       the cookie's own room and request ID: nobody learns another visitor's.
// Both answer only for a room whose gate routes cover the request's host (one gate may protect several sites: a
// site's address never speaks for another site's room).

import type { FastifyInstance } from 'fastify';
import { ContractError } from '../domain/errors.ts';
import type { RoomSettings } from '../domain/room-settings.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import { PLACE_COOKIE, type PlaceCookies } from './cookies.ts';

export interface GateDrawDeps {
  room: WaitingRoom;
  places: PlaceCookies;
  /** The gated room `eventId` when its routes cover `host` (src/gate/route-match.ts RouteTable.roomOnHost). */
  roomOnHost: (eventId: unknown, host: string | undefined) => RoomSettings | undefined;
}

const PAGE = /^[1-9][0-9]{0,5}$/;

export function gateDrawRoutes(scope: FastifyInstance, deps: GateDrawDeps): void {
  scope.get('/draw-data', async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const room = deps.roomOnHost(q.event_id, request.host);
    if (!room) return reply.code(404).header('cache-control', 'no-store').send({ error: 'No waiting room protects this URL' });
    if (q.page !== undefined && !(typeof q.page === 'string' && PAGE.test(q.page))) {
      return reply.code(400).header('cache-control', 'no-store').send({ error: 'Invalid page' });
    }
    try {
      const answer = await deps.room.draws.drawPublication(room.event_id, q.page === undefined ? undefined : Number(q.page));
      // As GET /draw: the same for everyone, short-lived.
      return reply.header('cache-control', 'public, max-age=1').type('application/json; charset=utf-8').send(answer.body);
    } catch (error) {
      if (error instanceof ContractError && error.status < 500) {
        return reply.code(error.status).header('cache-control', 'no-store').send({ error: error.message });
      }
      throw error;
    }
  });

  scope.get('/draw', (request, reply) => {
    const asked = (request.query as Record<string, unknown>).event_id;
    const place = deps.places.decode(request.cookies[PLACE_COOKIE]);
    const onHost = (eventId: unknown) => (typeof eventId === 'string' && deps.roomOnHost(eventId, request.host) ? eventId : undefined);
    const eventId = onHost(asked) ?? onHost(place?.eventId);
    const query = eventId === undefined ? '' : `?event_id=${encodeURIComponent(eventId)}&draw=${encodeURIComponent('/_anteroom/draw-data')}`;
    const own = place && place.eventId === eventId ? `#request_id=${encodeURIComponent(place.requestId)}` : '';
    return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(`/_anteroom/draw-check/${query}${own}`, 303);
  });
}
