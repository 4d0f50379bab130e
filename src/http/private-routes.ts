// The private API (authenticated), as spec/core-api.md "Private API" defines it, plus the event stream.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { Errors } from '../domain/errors.ts';
import type { WaitingRoomService } from '../domain/waiting-room-service.ts';
import type { SseSink } from '../events/sse-sink.ts';
import { mountRoutes, type MountOptions } from './route-table.ts';
import {
  DrawPositionsQuery,
  EventBody,
  EventQuery,
  IncrementBody,
  PrivateGenerateTokenBody,
  UpdateSessionBody,
} from './schemas.ts';

type Q<T> = FastifyRequest<{ Querystring: T }>;
type B<T> = FastifyRequest<{ Body: T }>;

export function privateRoutes(app: FastifyInstance, room: WaitingRoomService, sse: SseSink, options: MountOptions): void {
  mountRoutes(app, [
    {
      method: 'POST',
      url: '/generate_token',
      schema: { body: PrivateGenerateTokenBody },
      handler: (req) => {
        const b = (req as B<Static<typeof PrivateGenerateTokenBody>>).body;
        return room.generateToken(b.event_id, b.request_id, { issuer: b.issuer, validityPeriod: b.validity_period });
      },
    },
    {
      method: 'POST',
      url: '/increment_serving_counter',
      schema: { body: IncrementBody },
      handler: async (req) => {
        const b = (req as B<Static<typeof IncrementBody>>).body;
        const answer = await room.incrementServingCounter(b.event_id, b.increment_by);
        req.log.info({ event_id: b.event_id, increment_by: b.increment_by, serving: answer.body }, 'serving counter moved');
        return answer;
      },
    },
    {
      method: 'GET',
      url: '/num_active_tokens',
      schema: { querystring: EventQuery },
      invalidQuery: Errors.unknownEventKey,
      handler: (req) => room.numActiveTokens((req as Q<Static<typeof EventQuery>>).query.event_id),
    },
    {
      method: 'GET',
      url: '/expired_tokens',
      schema: { querystring: EventQuery },
      invalidQuery: Errors.invalidEventId,
      handler: (req) => room.expiredTokens((req as Q<Static<typeof EventQuery>>).query.event_id),
    },
    {
      method: 'POST',
      url: '/update_session',
      schema: { body: UpdateSessionBody },
      handler: (req) => {
        const b = (req as B<Static<typeof UpdateSessionBody>>).body;
        return room.updateSession(b.event_id, b.request_id, b.status);
      },
    },
    {
      // The positions the drawn entries got, for `anteroom verify-draw` to check every place (spec rooms.md §3).
      method: 'GET',
      url: '/draw_positions',
      schema: { querystring: DrawPositionsQuery },
      handler: (req) => {
        const q = (req as Q<Static<typeof DrawPositionsQuery>>).query;
        return room.drawPositions(q.event_id, Number(q.offset ?? 0), Number(q.limit ?? 5_000));
      },
    },
    {
      method: 'POST',
      url: '/reset_initial_state',
      schema: { body: EventBody },
      handler: async (req) => {
        const b = (req as B<Static<typeof EventBody>>).body;
        const answer = await room.resetInitialState(b.event_id);
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
        if (!room.roomSettings(eventId)) throw Errors.invalidEventId();
        reply.hijack();
        sse.attach(reply.raw, eventId);
        return { status: 200, body: undefined };
      },
    },
  ], options);
}
