// Sessions: what happens to a token set once it is issued — update_session (completed or abandoned), the gate's
// shared "last seen" that ends an idle session, and the counts of the private API (active tokens, expired
// tokens). Sealed: the private routes and the gate (src/gate/sessions.ts) call these methods; the Admission
// closes the sessions a MaxSize report names through closeSession.

import { Errors } from '../errors.ts';
import type { EventPublisher } from '../ports/events.ts';
import type { QueueStore, SessionRenewal } from '../ports/store.ts';
import { ok, type Answer, type RoomContext } from './room-context.ts';

/** Upper bound of the expired_tokens list, so one call stays a bounded response. */
export const EXPIRED_TOKENS_LIMIT = 10_000;

export type SessionStoreUsed = Pick<QueueStore, 'closeSession' | 'renewSession' | 'countActiveTokens' | 'listExpiredTokens'>;

export interface SessionServiceDeps {
  store: SessionStoreUsed;
  context: RoomContext;
  events: EventPublisher;
}

export class SessionService {
  private readonly store: SessionStoreUsed;
  private readonly context: RoomContext;
  private readonly events: EventPublisher;

  constructor(deps: SessionServiceDeps) {
    this.store = deps.store;
    this.context = deps.context;
    this.events = deps.events;
  }

  async updateSession(eventId: unknown, requestId: unknown, status: unknown): Promise<Answer<Record<string, never>>> {
    if (!(await this.closeSession(eventId, requestId, status))) throw Errors.sessionNotFound();
    return ok({});
  }

  /**
   * update_session without its 404: false when the request ID has no token set or its session is closed
   * already. Closing emits session_updated. (The MaxSize inlet closes the sessions a site reports this way.)
   */
  async closeSession(eventId: unknown, requestId: unknown, status: unknown): Promise<boolean> {
    const { event, requestId: id } = this.context.eventAndRequest(eventId, requestId);
    if (status !== 1 && status !== -1) throw Errors.invalidEventOrRequestId();
    if (!(await this.store.closeSession(event.event_id, id, status))) return false;
    this.events.publish('session_updated', {
      event_id: event.event_id,
      request_id: id,
      status: status === 1 ? 'completed' : 'abandoned',
    });
    return true;
  }

  /**
   * The gate's shared "last seen" of a session (store.renewSession): records a request (`touch`) and ends the
   * session as abandoned when it was last seen before `idleBeforeMs` on any node. An ended session emits
   * session_updated, as update_session does.
   */
  async renewGateSession(eventId: string, requestId: string, nowMs: number, idleBeforeMs: number | null, touch: boolean): Promise<SessionRenewal> {
    const result = await this.store.renewSession(eventId, requestId, nowMs, idleBeforeMs, touch);
    if (result.outcome === 'ended') this.events.publish('session_updated', { event_id: eventId, request_id: requestId, status: 'abandoned' });
    return result;
  }

  async numActiveTokens(eventId: unknown): Promise<Answer<{ active_tokens: number }>> {
    const event = this.context.event(eventId, Errors.unknownEventKey);
    return ok({ active_tokens: await this.store.countActiveTokens(event.event_id, this.context.now()) });
  }

  async expiredTokens(eventId: unknown): Promise<Answer<string[]>> {
    const event = this.context.event(eventId);
    return ok(await this.store.listExpiredTokens(event.event_id, this.context.now(), EXPIRED_TOKENS_LIMIT));
  }
}
