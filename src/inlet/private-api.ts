// The only way inlet strategies act on a waiting room: three calls of the private API (spec/integrations.md
// §3). Two implementations with the same semantics: over HTTP with SigV4 or a bearer token
// (PrivateApiClient of src/client/private-api-client.ts, used by the standalone CLI and the inlet Lambdas, and
// able to drive VWR's own API) and in-process on the WaitingRoom (used by the inlets that run inside the server).

import { ContractError } from '../domain/errors.ts';
import type { Answer, WaitingRoom } from '../domain/waiting-room.ts';

export type SessionStatus = 1 | -1;

export interface PrivateApi {
  /** POST /increment_serving_counter; returns the new serving counter. `by` 0 reads it unchanged. */
  incrementServingCounter(eventId: string, by: number): Promise<number>;
  /** GET /num_active_tokens. */
  numActiveTokens(eventId: string): Promise<number>;
  /**
   * POST /update_session; true when this call closed the session, false when it answered 404 (no token
   * set for the ID, or its session was already closed) — "not closed now", not a failure.
   */
  updateSession(eventId: string, requestId: string, status: SessionStatus): Promise<boolean>;
}

/** The private API on this process's WaitingRoom: same validation, events and answers as the HTTP routes. */
export function inProcessPrivateApi(room: WaitingRoom): PrivateApi {
  return {
    async incrementServingCounter(eventId, by) {
      return ok(await room.incrementServingCounter(eventId, by)).serving_num;
    },
    async numActiveTokens(eventId) {
      return ok(await room.numActiveTokens(eventId)).active_tokens;
    },
    async updateSession(eventId, requestId, status) {
      try {
        await room.updateSession(eventId, requestId, status);
        return true;
      } catch (error) {
        if (error instanceof ContractError && error.status === 404) return false;
        throw error;
      }
    },
  };
}

/** These operations answer 200 or throw; a 202 would be a contract change. */
function ok<T>(answer: Answer<T>): T {
  if (answer.status !== 200) throw new Error(`unexpected answer: ${answer.body.error}`);
  return answer.body;
}
