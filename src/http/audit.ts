// The private API's audit trail: every change made through it (a successful POST, PUT, PATCH or DELETE) is
// kept in the store — who (the credential, never a secret), from which address, what (the route and its
// parameters), and before/after where the route knows them (rooms, the serving counter) — and read back at
// GET <private>/audit. Failed authentications are counted (anteroom_auth_failures_total) and logged at most
// once a second with the number left out, so a password-guessing client cannot flood the logs.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import type { Metrics } from '../observability/metrics.ts';
import { privateCaller } from './auth/private-auth.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Set by a route that knows the state before and after its change. The request body is then not recorded
     * (room settings carry secrets; the views before/after leave them out).
     */
    auditChange?: { before: unknown; after: unknown };
  }
}

const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function eventIdOf(request: FastifyRequest): string | null {
  const fromBody = (request.body as { event_id?: unknown } | undefined)?.event_id;
  const fromParams = (request.params as { event_id?: unknown } | undefined)?.event_id;
  const id = typeof fromBody === 'string' ? fromBody : fromParams;
  return typeof id === 'string' ? id : null;
}

/** Hooks of the private scope: record each successful change; count and log refused credentials. */
export function auditHooks(scope: FastifyInstance, room: Pick<WaitingRoom, 'reports'>, metrics: Metrics): void {
  const failureLog = { lastMs: 0, suppressed: 0 };

  scope.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    if (reply.statusCode === 401 || reply.statusCode === 403) {
      metrics.authFailures.inc({ api: 'private' });
      const now = Date.now();
      if (now - failureLog.lastMs < 1000) failureLog.suppressed++;
      else {
        request.log.warn(
          { address: request.ip, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode, similar_since_last: failureLog.suppressed },
          'private API authentication failed',
        );
        failureLog.lastMs = now;
        failureLog.suppressed = 0;
      }
      return payload;
    }
    if (!CHANGES.has(request.method) || reply.statusCode >= 400 || request.routeOptions.url === undefined) return payload;
    const change = request.auditChange;
    try {
      await room.reports.recordChange({
        caller: privateCaller(request),
        address: request.ip,
        action: `${request.method} ${request.routeOptions.url}`,
        event_id: eventIdOf(request),
        request: change ? null : (request.body ?? null),
        before: change?.before ?? null,
        after: change?.after ?? null,
      });
    } catch (error) {
      // The change is made; failing to record it must not turn its answer into an error.
      request.log.error({ err: error, action: `${request.method} ${request.routeOptions.url}` }, 'audit log write failed');
    }
    return payload;
  });
}
