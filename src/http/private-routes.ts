// The private API (authenticated), as spec/core-api.md "Private API" defines it, plus the event stream and the
// rooms API (spec/rooms.md §1, docs/rooms.md).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { Errors } from '../domain/errors.ts';
import { reportCsv } from '../domain/room-report.ts';
import type { RoomView } from '../domain/room-edits.ts';
import type { RoomChangeAnswer } from '../domain/services/room-service.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import type { SseSink } from '../events/sse-sink.ts';
import { privateCaller } from './auth/private-auth.ts';
import { mountRoutes, type MountOptions } from './route-table.ts';
import {
  AuditQuery,
  ReportQuery,
  ReportResponse,
  DrawPositionsQuery,
  EventBody,
  EventQuery,
  IncrementBody,
  PrivateGenerateTokenBody,
  UpdateSessionBody,
} from './schemas.ts';

type Q<T> = FastifyRequest<{ Querystring: T }>;
type B<T> = FastifyRequest<{ Body: T }>;
type RoomRequest = FastifyRequest<{ Params: { event_id: string }; Body: unknown }>;

/**
 * A room's settings, its page template included: 1 Mi characters at most, up to 4 bytes each in UTF-8, and the
 * other settings (webhooks and inlets fit in a few dozen KB). A body past this is a mistake, not a room.
 */
export const ROOM_BODY_LIMIT = 5 * 1024 * 1024;

export function privateRoutes(app: FastifyInstance, room: Pick<WaitingRoom, 'admission' | 'claims' | 'draws' | 'queue' | 'reports' | 'rooms' | 'sessions'>, sse: SseSink, options: MountOptions): void {
  mountRoutes(app, [
    {
      method: 'POST',
      url: '/generate_token',
      schema: { body: PrivateGenerateTokenBody },
      handler: (req) => {
        const b = (req as B<Static<typeof PrivateGenerateTokenBody>>).body;
        return room.claims.generateToken(b.event_id, b.request_id, { issuer: b.issuer, validityPeriod: b.validity_period });
      },
    },
    {
      method: 'POST',
      url: '/increment_serving_counter',
      schema: { body: IncrementBody },
      handler: async (req) => {
        const b = (req as B<Static<typeof IncrementBody>>).body;
        // For the audit log: the counter as read just before the move (null if the room is unknown).
        const before = await room.queue.servingNum(b.event_id).then((a) => a.body, () => null);
        const answer = await room.admission.incrementServingCounter(b.event_id, b.increment_by, b.present_only === true);
        req.auditChange = { before, after: answer.body };
        req.log.info({ event_id: b.event_id, increment_by: b.increment_by, serving: answer.body }, 'serving counter moved');
        return answer;
      },
    },
    {
      method: 'GET',
      url: '/num_active_tokens',
      schema: { querystring: EventQuery },
      invalidQuery: Errors.unknownEventKey,
      handler: (req) => room.sessions.numActiveTokens((req as Q<Static<typeof EventQuery>>).query.event_id),
    },
    {
      method: 'GET',
      url: '/expired_tokens',
      schema: { querystring: EventQuery },
      invalidQuery: Errors.invalidEventId,
      handler: (req) => room.sessions.expiredTokens((req as Q<Static<typeof EventQuery>>).query.event_id),
    },
    {
      method: 'POST',
      url: '/update_session',
      schema: { body: UpdateSessionBody },
      handler: (req) => {
        const b = (req as B<Static<typeof UpdateSessionBody>>).body;
        return room.sessions.updateSession(b.event_id, b.request_id, b.status);
      },
    },
    {
      // The positions the drawn entries got, for `anteroom verify-draw` to check every place (spec rooms.md §3).
      method: 'GET',
      url: '/draw_positions',
      schema: { querystring: DrawPositionsQuery },
      handler: (req) => {
        const q = (req as Q<Static<typeof DrawPositionsQuery>>).query;
        return room.draws.drawPositions(q.event_id, Number(q.offset ?? 0), Number(q.limit ?? 5_000));
      },
    },
    {
      method: 'POST',
      url: '/reset_initial_state',
      schema: { body: EventBody },
      handler: async (req) => {
        const b = (req as B<Static<typeof EventBody>>).body;
        const answer = await room.admission.resetInitialState(b.event_id);
        req.log.info({ event_id: b.event_id }, 'event reset');
        return answer;
      },
    },
    {
      method: 'GET',
      url: '/events',
      schema: { querystring: EventQuery },
      invalidQuery: Errors.invalidEventId,
      handler: async (req, reply) => {
        const eventId = (req as Q<Static<typeof EventQuery>>).query.event_id;
        if (!room.rooms.roomSettings(eventId)) throw Errors.invalidEventId();
        reply.hijack();
        sse.attach(reply.raw, eventId);
        return { status: 200, body: undefined };
      },
    },
    {
      // The audit log: every change made through this API, newest first (src/http/audit.ts).
      method: 'GET',
      url: '/audit',
      schema: { querystring: AuditQuery },
      handler: async (req) => {
        const q = (req as Q<Static<typeof AuditQuery>>).query;
        const limit = Number(q.limit ?? 100);
        const entries = await room.reports.auditLog(limit, q.before === undefined ? undefined : Number(q.before), q.event_id);
        const last = entries.at(-1);
        return { status: 200, body: { entries, ...(entries.length === limit && last ? { next_before: last.seq } : {}) } };
      },
    },
    // ---- rooms at runtime (spec/rooms.md §1): the settings live in the store; every node follows them ----
    {
      method: 'GET',
      url: '/rooms',
      handler: () => room.rooms.listRooms(),
    },
    {
      method: 'GET',
      url: '/rooms/:event_id',
      handler: (req) => room.rooms.getRoom((req as RoomRequest).params.event_id),
    },
    {
      // What the control panel shows of a room: counts of people, each explained (docs/rooms.md "Control panel").
      method: 'GET',
      url: '/rooms/:event_id/figures',
      handler: (req) => room.reports.roomFigures((req as RoomRequest).params.event_id),
    },
    {
      // After-event report (minute by minute, from the room's history): JSON, or CSV with format=csv or Accept: text/csv.
      method: 'GET',
      url: '/rooms/:event_id/report',
      schema: { querystring: ReportQuery, response: ReportResponse },
      handler: async (req, reply) => {
        const q = (req as Q<Static<typeof ReportQuery>>).query;
        const to = q.to === undefined ? Math.floor(Date.now() / 1000) : Number(q.to);
        const from = q.from === undefined ? to - 86_400 : Number(q.from);
        if (from > to) throw Errors.invalidRequestBody();
        const answer = await room.reports.roomReport((req as RoomRequest).params.event_id, from, to);
        const csv = q.format === 'csv' || (q.format === undefined && (req.headers.accept ?? '').includes('text/csv'));
        if (!csv) return answer;
        reply.header('content-type', 'text/csv; charset=utf-8');
        return { status: 200, body: reportCsv(answer.body.minutes) };
      },
    },
    {
      method: 'PUT',
      url: '/rooms/:event_id',
      bodyLimit: ROOM_BODY_LIMIT,
      handler: async (req) => {
        const r = req as RoomRequest;
        return audited(r, 'put', await room.rooms.putRoom(r.params.event_id, r.body));
      },
    },
    {
      method: 'PATCH',
      url: '/rooms/:event_id',
      bodyLimit: ROOM_BODY_LIMIT,
      handler: async (req) => {
        const r = req as RoomRequest;
        return audited(r, 'patch', await room.rooms.patchRoom(r.params.event_id, r.body));
      },
    },
    {
      method: 'DELETE',
      url: '/rooms/:event_id',
      handler: async (req) => {
        const r = req as RoomRequest;
        return audited(r, 'delete', await room.rooms.deleteRoom(r.params.event_id));
      },
    },
  ], options);
}

/**
 * Writes the change to the audit log (spec/rooms.md §1: who — the credential; what — the room before and
 * after, secrets left out as in every answer) and answers it.
 */
function audited<T extends RoomView | Record<string, never>>(
  request: RoomRequest,
  action: 'put' | 'patch' | 'delete',
  change: RoomChangeAnswer<T>,
): { status: 200 | 201; body: T } {
  const after = action === 'delete' ? null : change.body;
  request.auditChange = { before: change.before, after };
  request.log.info(
    { audit: 'room', action, event_id: request.params.event_id, caller: privateCaller(request), before: change.before, after },
    'room changed',
  );
  return { status: change.status, body: change.body };
}
