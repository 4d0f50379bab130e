// The three calls of the private API an inlet strategy running outside the server uses to act on a waiting room
// (spec/integrations.md §3): the standalone CLI and the Lambda handlers carry the domain's admission steps
// (src/domain/admission/) out through them. Implemented over HTTP with SigV4 or a bearer token
// (PrivateApiClient, src/client/private-api-client.ts), which also drives VWR's own API. Inside the server the inlets go through
// AdmissionService.admit instead.

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
