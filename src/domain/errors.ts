// Every error Anteroom raises on purpose, in one catalogue. Each has a stable code in the style of Fastify's
// FST_ERR_…: ANTEROOM_ERR_<NAME>, on the thrown error (`error.code`), in the log line of every 5xx and listed
// with its status and message in docs/api.md, so that an operator can search logs by code. Three kinds:
// - contract errors, answered with their status and {"error": message}. The messages are part of the contract
//   VWR's clients rely on (spec/core-api.md), so they are spelled exactly as the spec spells them;
// - OAuth2 errors of the OpenID Connect adapter's /authorize, /token and /userInfo, answered in OAuth2's own
//   shape {"error": <OAuth error value>, "error_description": text} (RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3):
//   relying-party libraries branch on the OAuth value;
// - configuration errors, which stop the process at start (exit status 2) with a message naming the option.
// The code never goes on the wire: bodies stay exactly what VWR's clients and relying parties know.
//
// A message may hold <placeholders>, filled in where the error is raised (the parameter names of a 400, the
// description of a failed OAuth2 check, the configuration problem). Errors with the same message but another
// status have codes of their own (a 400 "Invalid event ID" is not a 404 "Invalid event ID").

export type ErrorCode = `ANTEROOM_ERR_${string}`;

/** The `error` values of OAuth2 that the adapter uses (RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3.1). */
export type OAuthErrorValue =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'login_required'
  | 'access_denied'
  | 'invalid_token'
  | 'temporarily_unavailable';

/** One error as the catalogue describes it: what docs/api.md lists and test/domain/errors.test.ts checks. */
export type CatalogueEntry =
  | {
      readonly kind: 'contract';
      readonly code: ErrorCode;
      /** '4xx': the status the web framework gave the failure it stands for (see frameworkClientError). */
      readonly status: number | '4xx';
      readonly message: string;
    }
  | {
      readonly kind: 'oauth';
      readonly code: ErrorCode;
      readonly status: number;
      readonly oauthError: OAuthErrorValue;
      /** The error_description. */
      readonly message: string;
    }
  | { readonly kind: 'config'; readonly code: ErrorCode; readonly message: string };

type Headers = Record<string, string>;

/** An error of the catalogue: `code` says which entry raised it. */
export class AnteroomError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'AnteroomError';
    this.code = code;
  }
}

/** Answered with `status`, `headers` and {"error": message} by the HTTP server's error handler. */
export class ContractError extends AnteroomError {
  readonly status: number;
  readonly headers: Headers;
  constructor(code: ErrorCode, status: number, message: string, headers: Headers) {
    super(code, message);
    this.name = 'ContractError';
    this.status = status;
    this.headers = headers;
  }
}

/** Answered with `status`, `headers` and `body` by the OpenID Connect adapter's OAuth2 endpoints. */
export class OAuthError extends AnteroomError {
  readonly oauthError: OAuthErrorValue;
  readonly status: number;
  readonly headers: Headers;
  constructor(code: ErrorCode, oauthError: OAuthErrorValue, description: string, status: number, headers: Headers) {
    super(code, description);
    this.name = 'OAuthError';
    this.oauthError = oauthError;
    this.status = status;
    this.headers = headers;
  }

  get body(): { error: OAuthErrorValue; error_description: string } {
    return { error: this.oauthError, error_description: this.message };
  }
}

/** Invalid configuration: the command prints the message (which names the option at fault) and exits 2. */
export class ConfigError extends AnteroomError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
    this.name = 'ConfigError';
  }
}

const entries: CatalogueEntry[] = [];

/** Every entry, in the order defined below. Filled as the module loads, by the helpers that define them. */
export const CATALOGUE: readonly CatalogueEntry[] = entries;

function register(entry: CatalogueEntry): void {
  entries.push(entry);
}

/** The message with its <placeholders> replaced by `values` (inserted as they are). */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/<([a-z]+)>/g, (placeholder, name: string) => values[name] ?? placeholder);
}

/** A contract error whose message and headers never change. */
function contract(code: ErrorCode, status: number, message: string, headers: Headers = {}): () => ContractError {
  register({ kind: 'contract', code, status, message });
  return () => new ContractError(code, status, message, { ...headers });
}

/** A contract error whose message placeholders or headers come from the call. */
function contractWith<Args extends unknown[]>(
  code: ErrorCode,
  status: number,
  template: string,
  details: (...args: Args) => { values?: Record<string, string>; headers?: Headers },
): (...args: Args) => ContractError {
  register({ kind: 'contract', code, status, message: template });
  return (...args) => {
    const { values = {}, headers = {} } = details(...args);
    return new ContractError(code, status, fill(template, values), headers);
  };
}

/**
 * The one entry without a status of its own: a 4xx the web framework gave a failure other than 400, 413 and
 * 415. No such failure is known to reach the error handler; one would keep its status rather than be turned
 * into a 400 or a 500.
 */
function frameworkClientError(code: ErrorCode, message: string): (status: number) => ContractError {
  register({ kind: 'contract', code, status: '4xx', message });
  return (status) => new ContractError(code, status, message, {});
}

export const Errors = {
  invalidRequestBody: contract('ANTEROOM_ERR_INVALID_REQUEST_BODY', 400, 'Invalid request body'),
  invalidEventId: contract('ANTEROOM_ERR_INVALID_EVENT_ID', 400, 'Invalid event ID'),
  invalidEventOrRequestId: contract('ANTEROOM_ERR_INVALID_EVENT_OR_REQUEST_ID', 400, 'Invalid event or request ID'),
  /** POST /private/inlet/max_size for an event configured without the MaxSize inlet. */
  maxSizeInletNotConfigured: contract('ANTEROOM_ERR_MAX_SIZE_INLET_NOT_CONFIGURED', 400, 'Event has no max_size inlet'),
  missingParameters: contractWith(
    'ANTEROOM_ERR_MISSING_PARAMETERS',
    400,
    'Missing required request parameters: [<names>]',
    (names: string[]) => ({ values: { names: names.join(', ') } }),
  ),
  /** A URL the router cannot read, or a request the web framework refused with 400 before any route ran. */
  badRequest: contract('ANTEROOM_ERR_BAD_REQUEST', 400, 'Bad request'),
  missingAuthenticationToken: contract('ANTEROOM_ERR_MISSING_AUTHENTICATION_TOKEN', 401, 'Missing Authentication Token'),
  forbidden: contract('ANTEROOM_ERR_FORBIDDEN', 403, 'Forbidden'),
  /** An unknown event where VWR answers 404, not 400: its keys (public_key, jwks.json) and num_active_tokens. */
  unknownEventKey: contract('ANTEROOM_ERR_UNKNOWN_EVENT', 404, 'Invalid event ID'),
  invalidRequestId: contract('ANTEROOM_ERR_INVALID_REQUEST_ID', 404, 'Invalid request ID'),
  sessionNotFound: contract('ANTEROOM_ERR_SESSION_NOT_FOUND', 404, "Request ID doesn't exist or status already set."),
  notFound: contract('ANTEROOM_ERR_NOT_FOUND', 404, 'Not found'),
  /** leave_queue of a pre-queue entry while the draw numbers the places: it has a position within seconds. */
  drawInProgress: contract('ANTEROOM_ERR_DRAW_IN_PROGRESS', 409, 'The draw is giving out places: try again in a few seconds', {
    'retry-after': '2',
  }),
  /** GET /draw (and the private draw_positions) of a room without shuffle_at_event_start: it publishes no draw. */
  drawNotEnabled: contract('ANTEROOM_ERR_DRAW_NOT_ENABLED', 404, 'This waiting room has no draw'),
  drawPageNotFound: contract('ANTEROOM_ERR_DRAW_PAGE_NOT_FOUND', 404, 'The draw has no such page'),
  methodNotAllowed: contractWith('ANTEROOM_ERR_METHOD_NOT_ALLOWED', 405, 'Method not allowed', (allowed: string[]) => ({
    headers: { allow: allowed.join(', ') },
  })),
  tokenSessionClosed: contract('ANTEROOM_ERR_TOKEN_SESSION_CLOSED', 410, 'Token corresponding to request id has expired'),
  queuePositionExpired: contract('ANTEROOM_ERR_QUEUE_POSITION_EXPIRED', 410, 'Queue position has expired'),
  payloadTooLarge: contract('ANTEROOM_ERR_PAYLOAD_TOO_LARGE', 413, 'Request body too large'),
  unsupportedMediaType: contract('ANTEROOM_ERR_UNSUPPORTED_MEDIA_TYPE', 415, 'Unsupported media type'),
  frameworkClientError: frameworkClientError('ANTEROOM_ERR_FRAMEWORK_CLIENT_ERROR', 'Bad request'),
  /** A failure of ours (a bug, an unexpected answer of a dependency): never its details on the wire. */
  internal: contract('ANTEROOM_ERR_INTERNAL', 500, 'Internal server error'),
  storeUnavailable: contract('ANTEROOM_ERR_STORE_UNAVAILABLE', 503, 'Service temporarily unavailable', {
    'retry-after': '1',
  }),
  shuttingDown: contract('ANTEROOM_ERR_SHUTTING_DOWN', 503, 'Server is shutting down', { 'retry-after': '1' }),
  /** GET /stream on a node that holds as many streams as it may: the page polls instead, and tries again later. */
  streamsFull: contract('ANTEROOM_ERR_STREAMS_FULL', 503, 'Too many open streams: poll instead', { 'retry-after': '30' }),
  /** The sample store (/store/…) before the server knows its own public URL, the issuer of its tokens. */
  storeApiStartingUp: contract('ANTEROOM_ERR_STORE_API_STARTING_UP', 503, 'Starting up', { 'retry-after': '1' }),

  // ---- rooms that run a sale by themselves (spec/rooms.md §2–4) ----
  /** A join before the room's prequeue_start_time (phase "before"). */
  roomNotOpenYet: contract('ANTEROOM_ERR_ROOM_NOT_OPEN_YET', 403, 'Waiting room is not open yet'),
  /** A join while the room is closed (state "closed", or after event_end_time). */
  roomClosed: contract('ANTEROOM_ERR_ROOM_CLOSED', 403, 'Waiting room is closed'),
  /** generate_token for a position given up with leave_queue, and a second leave_queue. */
  queuePositionLeft: contract('ANTEROOM_ERR_QUEUE_POSITION_LEFT', 410, 'Queue position was given up'),
  /** leave_queue for a position that already holds a token set: its session ends with update_session. */
  queuePositionClaimed: contract(
    'ANTEROOM_ERR_QUEUE_POSITION_CLAIMED',
    410,
    'A token was already issued for this request ID',
  ),
  // ---- the hand-off without a gate (spec/rooms.md §5) ----
  /** POST /handoff_code with a return_to outside the room's allowed_return_origins: never an open redirect. */
  returnToNotAllowed: contract('ANTEROOM_ERR_RETURN_TO_NOT_ALLOWED', 400, 'return_to is not an allowed origin of this room'),
  /** POST /handoff with a code never made, malformed, or past its lifetime. */
  invalidHandoffCode: contract('ANTEROOM_ERR_INVALID_HANDOFF_CODE', 404, 'Invalid hand-off code'),
  /** POST /handoff with a code exchanged already: a code is good once. */
  handoffCodeUsed: contract('ANTEROOM_ERR_HANDOFF_CODE_USED', 410, 'Hand-off code already used'),
  // ---- rooms at runtime (the rooms API, /private/rooms) ----
  /** GET, PATCH or DELETE of a room that does not exist. */
  unknownRoom: contract('ANTEROOM_ERR_UNKNOWN_ROOM', 404, 'Room not found'),
  /** PUT or PATCH of settings the room-settings schema refuses: the problem names the field and the rule. */
  invalidRoomSettings: contractWith(
    'ANTEROOM_ERR_INVALID_ROOM_SETTINGS',
    400,
    'Invalid room settings: <problem>',
    (problem: string) => ({ values: { problem } }),
  ),
  // ---- keeping bots out of the line (docs/bots.md) ----
  /** A join to a room whose bot defence asks a proof of work now, without one (the page fetches GET /challenge). */
  proofOfWorkRequired: contract('ANTEROOM_ERR_PROOF_OF_WORK_REQUIRED', 403, 'Proof of work required'),
  /** A join whose proof of work does not verify: malformed, wrong solution, expired, or another room's. */
  proofOfWorkInvalid: contract('ANTEROOM_ERR_PROOF_OF_WORK_INVALID', 403, 'Invalid proof of work'),
  /** A proof of work already used for a join (on any node). */
  proofOfWorkUsed: contract('ANTEROOM_ERR_PROOF_OF_WORK_USED', 403, 'Proof of work already used'),
  /** GET /challenge of a room whose bot_defence.challenge is off. */
  challengeNotEnabled: contract('ANTEROOM_ERR_CHALLENGE_NOT_ENABLED', 404, 'This waiting room asks no proof of work'),
  /** A join without an enqueue key to a room with require_enqueue_key. */
  enqueueKeyRequired: contract('ANTEROOM_ERR_ENQUEUE_KEY_REQUIRED', 403, 'Enqueue key required'),
  /** An enqueue key with a wrong signature, another room's, expired, or sent to a room without enqueue keys. */
  enqueueKeyInvalid: contract('ANTEROOM_ERR_ENQUEUE_KEY_INVALID', 403, 'Invalid enqueue key'),
  /** An Idempotency-Key header that is not 16-64 characters of [A-Za-z0-9_-] (quoted or not): src/domain/idempotency-key.ts. */
  invalidIdempotencyKey: contract('ANTEROOM_ERR_INVALID_IDEMPOTENCY_KEY', 400, 'Invalid Idempotency-Key header'),
  /** Over a per-client limit (a room's joins_per_client_per_minute, or --writes-per-client-per-minute). */
  tooManyRequests: contractWith('ANTEROOM_ERR_TOO_MANY_REQUESTS', 429, 'Too many requests', (retryAfterSeconds: number) => ({
    headers: { 'retry-after': String(retryAfterSeconds) },
  })),
} as const;

/**
 * Non-error answers with a status other than 200 (VWR answers "not yet" with 202 and an "error" body).
 * They are not failures of the request, so they are returned, not thrown, and have no code.
 */
export const Pending = {
  requestIdNotFound: { status: 202, body: { error: 'Request ID not found' } },
  notServedYet: { status: 202, body: { error: 'Request ID not being served yet' } },
  expiryNotEnabled: { status: 202, body: { error: 'Queue position expiration not enabled' } },
  /** /queue_num of a visitor in the pre-queue: their position is drawn at the start (spec rooms.md §3). */
  awaitingDraw: { status: 202, body: { error: 'Waiting for the draw at the start' } },
  /** The private draw_positions before the draw is done. */
  drawNotDone: { status: 202, body: { error: 'The draw has not taken place yet' } },
} as const;

// ---- The OpenID Connect adapter ----

/** An OAuth2 error whose description is the call's; `headers` (a challenge) may depend on it. */
function oauth(
  code: ErrorCode,
  oauthError: OAuthErrorValue,
  status = 400,
  headers: (description: string) => Headers = () => ({}),
): (description: string) => OAuthError {
  register({ kind: 'oauth', code, status, oauthError, message: '<description>' });
  return (description) => new OAuthError(code, oauthError, description, status, headers(description));
}

/** RFC 6749 §5.2: a client that tried HTTP Basic gets 401 with a challenge for the scheme it used. */
const invalidClientBasic = oauth('ANTEROOM_ERR_OAUTH_INVALID_CLIENT_BASIC', 'invalid_client', 401, () => ({
  'www-authenticate': 'Basic realm="anteroom", charset="UTF-8"',
}));
/** One that sent its credentials in the form gets 400 (a 401 must carry a challenge, and Basic is not what it used). */
const invalidClientForm = oauth('ANTEROOM_ERR_OAUTH_INVALID_CLIENT', 'invalid_client', 400);

/** RFC 6750 §3: no credentials at all → 401 with a bare challenge (no error value in it). */
function missingBearerToken(code: ErrorCode, description: string): () => OAuthError {
  register({ kind: 'oauth', code, status: 401, oauthError: 'invalid_token', message: description });
  return () => new OAuthError(code, 'invalid_token', description, 401, { 'www-authenticate': 'Bearer realm="anteroom"' });
}

export const OAuthErrors = {
  invalidRequest: oauth('ANTEROOM_ERR_OAUTH_INVALID_REQUEST', 'invalid_request'),
  invalidGrant: oauth('ANTEROOM_ERR_OAUTH_INVALID_GRANT', 'invalid_grant'),
  unsupportedGrantType: oauth('ANTEROOM_ERR_OAUTH_UNSUPPORTED_GRANT_TYPE', 'unsupported_grant_type'),
  unsupportedResponseType: oauth('ANTEROOM_ERR_OAUTH_UNSUPPORTED_RESPONSE_TYPE', 'unsupported_response_type'),
  invalidScope: oauth('ANTEROOM_ERR_OAUTH_INVALID_SCOPE', 'invalid_scope'),
  loginRequired: oauth('ANTEROOM_ERR_OAUTH_LOGIN_REQUIRED', 'login_required'),
  accessDenied: oauth('ANTEROOM_ERR_OAUTH_ACCESS_DENIED', 'access_denied'),
  invalidClient: (description: string, usedBasic: boolean) =>
    usedBasic ? invalidClientBasic(description) : invalidClientForm(description),
  missingBearerToken: missingBearerToken('ANTEROOM_ERR_OAUTH_MISSING_BEARER_TOKEN', 'No access token was presented'),
  /** POST /token beyond the client's rate (src/oidc/token-rate-limit.ts). */
  tooManyRequests: oauth('ANTEROOM_ERR_OAUTH_TOO_MANY_REQUESTS', 'temporarily_unavailable', 429, () => ({ 'retry-after': '1' })),
  /**
   * RFC 6750 §3: a token that does not verify → 401 with error="invalid_token". Descriptions are fixed ASCII
   * texts without quotes (header-safe).
   */
  invalidBearerToken: oauth('ANTEROOM_ERR_OAUTH_INVALID_TOKEN', 'invalid_token', 401, (description) => ({
    'www-authenticate': `Bearer realm="anteroom", error="invalid_token", error_description="${description}"`,
  })),
} as const;

/** Errors of the adapter's own JSON endpoints (the login page's calls, the private API): the contract's shape. */
export const OidcErrors = {
  /** An event that exists but has no `oidc` section in the configuration. */
  oidcNotEnabled: contract('ANTEROOM_ERR_OIDC_NOT_ENABLED', 404, 'OpenID Connect is not enabled for this event'),
  /** The JWKS with no client to publish keys for (never an empty key list). */
  noOidcClients: contract('ANTEROOM_ERR_OIDC_NO_CLIENTS', 404, 'OpenID Connect is not enabled for any event'),
  /** The login page's join call with parameters /authorize would refuse. */
  invalidAuthorizationRequest: contractWith(
    'ANTEROOM_ERR_OIDC_INVALID_AUTHORIZATION_REQUEST',
    400,
    '<description>',
    (description: string) => ({ values: { description } }),
  ),
  /** The event was reset between the join and the binding of the authorization request. */
  joinInterrupted: contract(
    'ANTEROOM_ERR_OIDC_JOIN_INTERRUPTED',
    503,
    'The waiting room was reset while joining; please try again',
  ),
} as const;

// ---- Configuration ----

/** A configuration error; the problem is the message, naming the option or field at fault. */
function config(code: ErrorCode): (problem: string) => ConfigError {
  register({ kind: 'config', code, message: '<problem>' });
  return (problem) => new ConfigError(code, problem);
}

export const ConfigErrors = {
  /** A command-line flag or ANTEROOM_* environment variable: missing, malformed, out of range or in conflict. */
  option: config('ANTEROOM_ERR_CONFIG_OPTION'),
  /** The events file (--config): unreadable, not the expected shape, an event listed twice, a bad inlet. */
  eventsFile: config('ANTEROOM_ERR_CONFIG_EVENTS_FILE'),
  /** Admin credentials kept in the data directory or in the shared store with a field missing. */
  credentials: config('ANTEROOM_ERR_CONFIG_CREDENTIALS'),
  /** An AWS function's environment variable, or a secret it names, missing or invalid (deploy/aws). */
  awsEnvironment: config('ANTEROOM_ERR_CONFIG_AWS_ENVIRONMENT'),
} as const;
