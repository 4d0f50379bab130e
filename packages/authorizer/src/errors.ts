// Every way the authorizer refuses a request, in one catalogue: a stable reason code, the HTTP status the
// contract gives it (spec/integrations.md §1: missing token → 401, invalid → 403) and a short message.
// Messages describe the refusal, never the token: tokens are bearer secrets and are never echoed or logged.

export const REFUSALS = {
  missing_token: { status: 401, message: 'Missing token' },
  malformed_token: { status: 403, message: 'Malformed token' },
  algorithm_not_allowed: { status: 403, message: 'Token algorithm not allowed' },
  unknown_key: { status: 403, message: 'Token signed by an unknown key' },
  bad_signature: { status: 403, message: 'Invalid token signature' },
  expired: { status: 403, message: 'Token expired' },
  not_yet_valid: { status: 403, message: 'Token not yet valid' },
  wrong_audience: { status: 403, message: 'Token is for another event' },
  wrong_issuer: { status: 403, message: 'Token from another issuer' },
  wrong_token_use: { status: 403, message: 'Not an access token' },
  invalid_claims: { status: 403, message: 'Invalid token claims' },
  // Not the visitor's fault: the key endpoint could not be reached or served no usable key. A 503 tells
  // clients to retry instead of discarding a token that may be perfectly valid.
  keys_unavailable: { status: 503, message: 'Token signing keys unavailable' },
} as const;

export type RefusalReason = keyof typeof REFUSALS;

export class AuthorizerError extends Error {
  readonly reason: RefusalReason;
  readonly status: 401 | 403 | 503;
  constructor(reason: RefusalReason, options?: { cause?: unknown }) {
    super(REFUSALS[reason].message, options);
    this.name = 'AuthorizerError';
    this.reason = reason;
    this.status = REFUSALS[reason].status;
  }
}
