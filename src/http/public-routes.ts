// The public API (no authentication), as spec/core-api.md "Public API" defines it, and leave_queue (spec/rooms.md §4).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { Errors } from '../domain/errors.ts';
import { IDEMPOTENCY_KEY_HEADER, readIdempotencyKey } from '../domain/idempotency-key.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import { mountRoutes, type MountOptions } from './route-table.ts';
import {
  DrawQuery,
  EventQuery,
  EventRequestBody,
  EventRequestQuery,
  QueueNumQuery,
  HandoffBody,
  HandoffCodeBody,
  JoinBody,
  JoinResponse,
  QueueNumResponse,
  ServingResponse,
  WaitingResponse,
} from './schemas.ts';

type Q<T> = FastifyRequest<{ Querystring: T }>;
type B<T> = FastifyRequest<{ Body: T }>;

export function publicRoutes(app: FastifyInstance, room: Pick<WaitingRoom, 'claims' | 'draws' | 'queue'>, options: MountOptions): void {
  mountRoutes(app, [
    {
      method: 'POST',
      url: '/assign_queue_num',
      schema: { body: JoinBody, response: JoinResponse },
      handler: (req) => {
        const b = (req as B<Static<typeof JoinBody>>).body;
        // The client is the address Fastify names, which follows --trust-proxy (X-Forwarded-For from trusted hops).
        const idempotencyKey = readIdempotencyKey(req.headers[IDEMPOTENCY_KEY_HEADER]);
        return room.queue.assignQueueNum(b.event_id, { client: req.ip, proofOfWork: b.proof_of_work, enqueueKey: b.enqueue_key, idempotencyKey });
      },
    },
    {
      // A proof-of-work challenge for the room's bot defence (docs/bots.md); never cacheable: each is used once.
      method: 'GET',
      url: '/challenge',
      schema: { querystring: EventQuery },
      invalidQuery: Errors.invalidEventId,
      handler: (req) => room.queue.challenge((req as Q<Static<typeof EventQuery>>).query.event_id),
    },
    {
      method: 'GET',
      url: '/queue_num',
      schema: { querystring: QueueNumQuery, response: QueueNumResponse },
      cache: 'queue',
      // A beat is never cached: a cache in front (CloudFront keeps /queue_num 60 s) would swallow it.
      uncached: (req) => (req as Q<Static<typeof QueueNumQuery>>).query.beat === '1',
      invalidQuery: Errors.invalidEventOrRequestId,
      handler: (req) => {
        const q = (req as Q<Static<typeof QueueNumQuery>>).query;
        return room.queue.queueNum(q.event_id, q.request_id, q.beat === '1');
      },
    },
    {
      method: 'GET',
      url: '/serving_num',
      schema: { querystring: EventQuery, response: ServingResponse },
      cache: 'poll',
      invalidQuery: Errors.invalidEventId,
      handler: (req) => room.queue.servingNum((req as Q<Static<typeof EventQuery>>).query.event_id),
    },
    {
      method: 'GET',
      url: '/waiting_num',
      schema: { querystring: EventQuery, response: WaitingResponse },
      cache: 'poll',
      invalidQuery: Errors.invalidEventId,
      handler: (req) => room.queue.waitingNum((req as Q<Static<typeof EventQuery>>).query.event_id),
    },
    {
      method: 'POST',
      url: '/generate_token',
      schema: { body: EventRequestBody },
      // The public endpoint ignores issuer / validity_period in the body.
      handler: (req) => {
        const b = (req as B<Static<typeof EventRequestBody>>).body;
        return room.claims.generateToken(b.event_id, b.request_id);
      },
    },
    {
      method: 'GET',
      url: '/public_key',
      schema: { querystring: EventQuery },
      cache: 'key',
      invalidQuery: Errors.unknownEventKey,
      handler: (req) => room.claims.publicKey((req as Q<Static<typeof EventQuery>>).query.event_id),
    },
    {
      method: 'GET',
      url: '/jwks.json',
      schema: { querystring: EventQuery },
      cache: 'key',
      invalidQuery: Errors.unknownEventKey,
      handler: (req) => room.claims.jwks((req as Q<Static<typeof EventQuery>>).query.event_id),
    },
    {
      // The room's draw (spec rooms.md §3): built once per draw by the service, sent as the JSON bytes it built.
      method: 'GET',
      url: '/draw',
      schema: { querystring: DrawQuery },
      cache: 'poll',
      invalidQuery: Errors.invalidEventId,
      handler: async (req, reply) => {
        const q = (req as Q<Static<typeof DrawQuery>>).query;
        const answer = await room.draws.drawPublication(q.event_id, q.page === undefined ? undefined : Number(q.page));
        reply.type('application/json; charset=utf-8');
        return answer;
      },
    },
    {
      method: 'GET',
      url: '/queue_pos_expiry',
      schema: { querystring: EventRequestQuery },
      cache: 'poll',
      invalidQuery: Errors.invalidEventOrRequestId,
      handler: (req) => {
        const q = (req as Q<Static<typeof EventRequestQuery>>).query;
        return room.claims.queuePosExpiry(q.event_id, q.request_id);
      },
    },
    // spec/rooms.md §4: the visitor gives their place up.
    {
      method: 'POST',
      url: '/leave_queue',
      schema: { body: EventRequestBody },
      handler: (req) => {
        const b = (req as B<Static<typeof EventRequestBody>>).body;
        // With an Idempotency-Key, a leave that finds the place given up already is the retry of one that took
        // effect (its answer was a 5xx or lost): 200 again, not 410 (docs/distributed.md, "What a 5xx means").
        const keyed = readIdempotencyKey(req.headers[IDEMPOTENCY_KEY_HEADER]) !== undefined;
        return room.queue.leaveQueue(b.event_id, b.request_id, { keyed });
      },
    },
    // spec/rooms.md §5, the hand-off without a gate: the page asks for a code, the site's server spends it.
    {
      method: 'POST',
      url: '/handoff_code',
      schema: { body: HandoffCodeBody },
      handler: (req) => {
        const b = (req as B<Static<typeof HandoffCodeBody>>).body;
        return room.claims.handoffCode(b.event_id, b.request_id, b.return_to);
      },
    },
    {
      method: 'POST',
      url: '/handoff',
      schema: { body: HandoffBody },
      handler: (req) => {
        const b = (req as B<Static<typeof HandoffBody>>).body;
        return room.claims.exchangeHandoff(b.event_id, b.code);
      },
    },
  ], options);
}
