// Every error the contract (spec/core-api.md) defines, in one catalogue: its HTTP status and its message.
// The domain throws these; one HTTP error handler renders them as {"error": message}. Messages are part of
// the contract that VWR's clients rely on, so they are spelled exactly as the spec spells them.

export class ContractError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ContractError';
    this.status = status;
    this.headers = headers;
  }
}

const define = (status: number, message: string) => () => new ContractError(status, message);

export const Errors = {
  invalidRequestBody: define(400, 'Invalid request body'),
  invalidEventId: define(400, 'Invalid event ID'),
  invalidEventOrRequestId: define(400, 'Invalid event or request ID'),
  /** POST /private/inlet/max_size for an event configured without the MaxSize inlet. */
  maxSizeInletNotConfigured: define(400, 'Event has no max_size inlet'),
  missingParameters: (names: string[]) =>
    new ContractError(400, `Missing required request parameters: [${names.join(', ')}]`),
  forbidden: define(403, 'Forbidden'),
  missingAuthenticationToken: define(401, 'Missing Authentication Token'),
  unknownEventKey: define(404, 'Invalid event ID'),
  invalidRequestId: define(404, 'Invalid request ID'),
  sessionNotFound: define(404, "Request ID doesn't exist or status already set."),
  notFound: define(404, 'Not found'),
  methodNotAllowed: (allowed: string[]) =>
    new ContractError(405, 'Method not allowed', { allow: allowed.join(', ') }),
  payloadTooLarge: define(413, 'Request body too large'),
  unsupportedMediaType: define(415, 'Unsupported media type'),
  tooManyRequests: define(429, 'Too many requests'),
  tokenSessionClosed: define(410, 'Token corresponding to request id has expired'),
  queuePositionExpired: define(410, 'Queue position has expired'),
  storeUnavailable: () =>
    new ContractError(503, 'Service temporarily unavailable', { 'retry-after': '1' }),
  shuttingDown: () => new ContractError(503, 'Server is shutting down', { 'retry-after': '1' }),
} as const;

/**
 * Non-error answers with a status other than 200 (VWR answers "not yet" with 202 and an "error" body).
 * They are not failures of the request, so they are returned, not thrown.
 */
export const Pending = {
  requestIdNotFound: { status: 202, body: { error: 'Request ID not found' } },
  notServedYet: { status: 202, body: { error: 'Request ID not being served yet' } },
  expiryNotEnabled: { status: 202, body: { error: 'Queue position expiration not enabled' } },
} as const;
