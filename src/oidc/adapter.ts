// The OpenID Connect adapter (spec/integrations.md §2): the waiting room as an identity provider, so that
// off-the-shelf relying parties (AWS ALB authenticate-oidc, Cognito, Keycloak brokering, any OIDC library)
// can put it in front of a site with no code. Mapping: event ID = client_id = aud; request ID = code = sub.
//
// Served under `basePath` (default /oidc) of the public listener; issuer = the public URL + basePath.
//   GET  /.well-known/openid-configuration   discovery          GET      /login      the waiting-room page
//   GET  /.well-known/jwks.json              keys               POST     /join       page: join the queue
//   GET|POST /authorize                      → 302 /login       POST     /continue   page: where to go when served
//   POST /token                              code → tokens      GET|POST /userInfo   claims of an access token
// and, behind the private API's authentication: GET /oidc/client, POST /oidc/rotate_client_secret.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Clock } from '../domain/clock.ts';
import type { RoomRegistry } from '../domain/room-registry.ts';
import { Errors, OAuthError, OAuthErrors, OidcErrors, Pending } from '../domain/errors.ts';
import { isRequestId, normaliseRequestId } from '../domain/ids.ts';
import type { Answer } from '../domain/services/room-context.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import { tokenFromAuthorization } from 'anteroom-authorizer';
import { parseJsonBody } from '../http/json-body.ts';
import { mountPreflightAndMethodGuard, mountRoutes, type MountOptions } from '../http/route-table.ts';
import { EventBody, EventQuery } from '../http/schemas.ts';
import type { SecretStore } from '../domain/ports/store.ts';
import type { PublicJwk } from '../domain/ports/tokens.ts';
import {
  AUTHORIZE_PARAMETERS,
  MAX_PARAMETER_LENGTH,
  checkAuthorizationRequest,
  errorRedirect,
  loginPageQuery,
  redirectWith,
  type AuthorizeOutcome,
} from './authorize-checks.ts';
import { bindAuthorization, readBoundAuthorization } from './bound-authorization.ts';
import { ClientSecrets } from './client-secrets.ts';
import { OidcClients, type OidcClient } from './clients.ts';
import { discoveryDocument } from './discovery.ts';
import { ERROR_PAGE_HEADERS, errorPageHtml, loginPageHeaders, loginPageHtml } from './login-page.ts';
import { isFormEncoded, rawParameters } from './parameters.ts';
import { exchangeCode } from './token-checks.ts';
import { TokenRateLimit } from './token-rate-limit.ts';
import { userInfoClaims } from './userinfo.ts';

export const OIDC_BASE_PATH = '/oidc';

export interface OidcAdapterOptions {
  room: Pick<WaitingRoom, 'claims' | 'queue' | 'rooms'>;
  /** Where generated client secrets are kept, shared by every node. */
  secrets: SecretStore;
  /** The public base URL of the server (e.g. https://queue.example.com), read per request: known once listening. */
  publicUrl: () => string;
  clock: Clock;
  /** Path of the adapter on the public listener; the issuer is publicUrl + basePath. Default /oidc. */
  basePath?: string;
  /**
   * Absolute base URL of the public API the login page polls (serving_num, waiting_num), when it is not this
   * server's: on AWS, the core stack's CloudFront URL, whose 1-second cache absorbs the polling. Default: this
   * server's public API, relative to the page.
   */
  publicApiUrl?: string | undefined;
  /**
   * Where the clients are read from (each room with an `oidc` section): default the rooms `room` serves. On AWS
   * the OpenID function lays its own client settings over the core's room (src/aws/oidc.ts).
   */
  clientRooms?: Pick<RoomRegistry, 'get' | 'all'> | undefined;
  /**
   * The proof-of-work solver the login page imports when a room asks a challenge (docs/bots.md): the waiting-room
   * page's own, built as waiting-room-site/solver.js. Default: the pages this server serves, relative to the
   * page; an absolute URL for pages hosted elsewhere; false for none (the page then cannot join a room that
   * asks a proof of work).
   */
  solverUrl?: string | false | undefined;
}

export interface OidcAdapter {
  /** The issuer (= discovery base URL). */
  issuer(): string;
  /** Public routes, for `plugins` of the HTTP server. */
  routes(app: FastifyInstance): Promise<void>;
  /** Private API routes, for `privatePlugins` (mounted under the private base path, behind its authentication). */
  privateRoutes(scope: FastifyInstance, mount: MountOptions): void;
}

const ok = <T>(body: T): Answer<T> => ({ status: 200, body });

const Parameter = Type.Optional(Type.String({ maxLength: MAX_PARAMETER_LENGTH }));
/** The authorize parameters, as the login page sends them (AUTHORIZE_PARAMETERS). */
const JoinBody = Type.Object({
  client_id: Parameter,
  redirect_uri: Parameter,
  response_type: Parameter,
  scope: Parameter,
  state: Parameter,
  nonce: Parameter,
  code_challenge: Parameter,
  code_challenge_method: Parameter,
  prompt: Parameter,
  /** The room's bot defence (docs/bots.md): an ALTCHA payload and an enqueue key, as POST /assign_queue_num takes them. */
  proof_of_work: Type.Optional(Type.String({ maxLength: 4096 })),
  enqueue_key: Type.Optional(Type.String({ maxLength: 2048 })),
});
const ContinueBody = Type.Object({
  client_id: Type.String({ maxLength: 1024 }),
  request_id: Type.String({ maxLength: 1024 }),
});

export function oidcAdapter(options: OidcAdapterOptions): OidcAdapter {
  const { room, clock } = options;
  const basePath = options.basePath ?? OIDC_BASE_PATH;
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(basePath)) throw new Error(`OIDC base path must look like /oidc (got "${basePath}")`);
  const issuer = () => `${options.publicUrl()}${basePath}`;
  const clients = new OidcClients(options.clientRooms ?? { get: (id) => room.rooms.roomSettings(id), all: () => room.rooms.rooms() });
  const secrets = new ClientSecrets(options.secrets);
  const rateLimit = new TokenRateLimit();
  // From <basePath>/login back to the root, where the public API is; or the public API given.
  const publicApi = options.publicApiUrl ? new URL(options.publicApiUrl) : undefined;
  if (publicApi && (!/^https?:$/.test(publicApi.protocol) || publicApi.username || publicApi.password || /[?#]/.test(options.publicApiUrl!))) {
    throw new Error(`the public API URL must be http(s) without credentials, query or fragment (got "${options.publicApiUrl}")`);
  }
  const toRoot = '../'.repeat(basePath.split('/').length - 1);
  const solver = options.solverUrl === false ? undefined : (options.solverUrl ?? `${toRoot}waiting-room-site/solver.js`);
  const solverOrigin = solver === undefined ? undefined : /^https?:\/\//.test(solver) ? new URL(solver).origin : "'self'";
  const loginPage = loginPageHtml(publicApi ? `${publicApi.origin}${publicApi.pathname.replace(/\/*$/, '/')}` : toRoot, solver);
  const loginHeaders = loginPageHeaders(publicApi?.origin, solverOrigin);

  /** The keys of every client: a relying party finds its own by `kid`. */
  async function publishedKeys(): Promise<{ keys: PublicJwk[] }> {
    const all = clients.all();
    if (all.length === 0) throw OidcErrors.noOidcClients();
    const sets = await Promise.all(all.map((client) => room.claims.jwks(client.clientId)));
    const keys = sets.flatMap((answer) => (answer.status === 200 ? answer.body.keys : []));
    // A missing key set is a failure of ours, never an empty list a relying party would cache.
    if (keys.length === 0) throw new Error('no signing key could be read for the OIDC clients');
    return { keys };
  }

  /** The answer to an authorization request that cannot continue to the login page. */
  function answerUnfinished(
    request: FastifyRequest,
    reply: FastifyReply,
    outcome: Exclude<AuthorizeOutcome, { kind: 'valid' }>,
  ): FastifyReply {
    if (outcome.kind === 'redirect-error') {
      return redirect(reply, errorRedirect(outcome.redirectUri, outcome.error, outcome.state));
    }
    // Never a redirect: the redirect URI is not (known to be) the client's.
    if (prefersHtml(request)) {
      return reply.code(400).headers(ERROR_PAGE_HEADERS).send(errorPageHtml(outcome.error.oauthError, outcome.error.message));
    }
    throw outcome.error;
  }

  async function authorize(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    let parameters: URLSearchParams;
    if (request.method === 'POST') {
      if (!isFormEncoded(request.headers['content-type'])) throw OAuthErrors.invalidRequest('the body must be application/x-www-form-urlencoded');
      parameters = new URLSearchParams(bodyText(request));
    } else {
      parameters = queryOf(request);
    }
    const outcome = checkAuthorizationRequest(rawParameters(parameters), clients);
    if (outcome.kind !== 'valid') return answerUnfinished(request, reply, outcome);
    // Relative to <basePath>/authorize, so it holds under any prefix the server is reached through (e.g. API
    // Gateway's stage: /api/oidc/authorize → /api/oidc/login).
    return redirect(reply, `login?${loginPageQuery(outcome.request)}`);
  }

  async function login(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    // Checked again: the page's URL is in the visitor's hands.
    const outcome = checkAuthorizationRequest(rawParameters(queryOf(request)), clients);
    if (outcome.kind !== 'valid') return answerUnfinished(request, reply, outcome);
    return reply.code(200).headers(loginHeaders).send(loginPage);
  }

  async function token(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const tokens = await exchangeCode(
      { headers: request.headers, body: Buffer.isBuffer(request.body) ? request.body : undefined },
      { room, clients, secrets, issuer, rateLimit },
    );
    return reply.code(200).header('pragma', 'no-cache').send({
      access_token: tokens.access_token,
      id_token: tokens.id_token,
      refresh_token: tokens.refresh_token,
      token_type: tokens.token_type,
      expires_in: tokens.expires_in,
    });
  }

  async function userInfo(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const claims = await userInfoClaims(tokenFromAuthorization(request.headers.authorization), {
      room,
      clients,
      issuer,
      clock,
    });
    return reply.code(200).send(claims);
  }

  async function join(request: FastifyRequest): Promise<Answer<{ request_id: string; queue_number?: number; event_id: string }>> {
    const body = (request as FastifyRequest<{ Body: Static<typeof JoinBody> }>).body;
    const raw = new Map<string, string[]>();
    for (const name of AUTHORIZE_PARAMETERS) {
      const value = body[name];
      if (value !== undefined) raw.set(name, [value]);
    }
    const outcome = checkAuthorizationRequest(raw, clients);
    if (outcome.kind !== 'valid') throw OidcErrors.invalidAuthorizationRequest(outcome.error.message);
    const eventId = outcome.request.client.clientId;
    // The public API's join, carrying the authorization request, which whoever numbers the join binds to the
    // position (this process, or on AWS the intake consumer behind the SQS queue). The room's bot defence
    // applies as at POST /assign_queue_num: limits per client, and a proof of work or an enqueue key the client
    // sends (the login page solves a challenge itself when refused for want of one).
    const joined = await room.queue.assignQueueNum(
      eventId,
      { client: request.ip, proofOfWork: body.proof_of_work, enqueueKey: body.enqueue_key },
      bindAuthorization(outcome.request),
    );
    if (joined.status !== 200) throw OidcErrors.joinInterrupted();
    const requestId = joined.body.api_request_id;
    // Numbered later (AWS): the page asks the public API's /queue_num for the position until it exists.
    if (room.queue.joinsNumberedLater) return ok({ request_id: requestId, event_id: eventId });
    const position = await room.queue.queueNum(eventId, requestId);
    if (position.status !== 200) throw OidcErrors.joinInterrupted();
    return ok({ request_id: requestId, queue_number: position.body.queue_number, event_id: eventId });
  }

  async function continueWhenServed(request: FastifyRequest): Promise<Answer<{ redirect_to: string }>> {
    const body = (request as FastifyRequest<{ Body: Static<typeof ContinueBody> }>).body;
    const client = clients.get(body.client_id);
    if (!client || !isRequestId(body.request_id)) throw Errors.invalidEventOrRequestId();
    const requestId = normaliseRequestId(body.request_id);
    const stored = await room.claims.boundAuthorization(client.clientId, requestId);
    if (stored === null) throw Errors.invalidRequestId();
    const bound = readBoundAuthorization(stored);
    // The allow-list may have changed since the visitor joined: only ever send them to a URI it holds now.
    if (!client.redirectUris.includes(bound.redirect_uri)) {
      throw OidcErrors.invalidAuthorizationRequest('redirect_uri is not registered for this client');
    }
    const readiness = await room.claims.claimReadiness(client.clientId, requestId);
    switch (readiness) {
      case 'no-position':
        throw Errors.invalidRequestId();
      case 'not-served-yet':
        return Pending.notServedYet;
      case 'position-expired':
      case 'position-left':
      case 'session-closed': {
        // The relying party learns it through the standard error redirect and may start a new login.
        const reason = {
          'position-expired': 'Queue position has expired',
          'position-left': 'Queue position was given up',
          'session-closed': 'The waiting-room session has ended',
        }[readiness];
        return ok({ redirect_to: errorRedirect(bound.redirect_uri, OAuthErrors.accessDenied(reason), bound.state) });
      }
      case 'issue':
      case 'reissue':
        return ok({ redirect_to: redirectWith(bound.redirect_uri, { code: requestId, state: bound.state }) });
    }
  }

  async function routes(app: FastifyInstance): Promise<void> {
    mountRoutes(
      app,
      [
        {
          method: 'GET',
          url: `${basePath}/.well-known/openid-configuration`,
          cache: 'key',
          handler: async () => ok(discoveryDocument(issuer(), clients.all().map((client) => client.signingAlgorithm))),
        },
        { method: 'GET', url: `${basePath}/.well-known/jwks.json`, cache: 'key', handler: async () => ok(await publishedKeys()) },
        { method: 'POST', url: `${basePath}/join`, schema: { body: JoinBody }, handler: join },
        { method: 'POST', url: `${basePath}/continue`, schema: { body: ContinueBody }, handler: continueWhenServed },
      ],
      { parseBody: parseJsonBody, pollTtl: 0 },
    );
    mountOAuthRoute(app, `${basePath}/authorize`, ['GET', 'POST'], authorize);
    mountOAuthRoute(app, `${basePath}/login`, ['GET'], login);
    mountOAuthRoute(app, `${basePath}/token`, ['POST'], token);
    mountOAuthRoute(app, `${basePath}/userInfo`, ['GET', 'POST'], userInfo);
  }

  function privateRoutes(scope: FastifyInstance, mount: MountOptions): void {
    const clientOf = (eventId: string): OidcClient => {
      if (!room.rooms.roomSettings(eventId)) throw Errors.invalidEventId();
      const client = clients.get(eventId);
      if (!client) throw OidcErrors.oidcNotEnabled();
      return client;
    };
    const describe = (client: OidcClient, secret: string) => ({
      client_id: client.clientId,
      client_secret: secret,
      redirect_uris: [...client.redirectUris],
    });
    mountRoutes(
      scope,
      [
        {
          method: 'GET',
          url: '/oidc/client',
          schema: { querystring: EventQuery },
          invalidQuery: Errors.invalidEventId,
          handler: async (req) => {
            const client = clientOf((req as FastifyRequest<{ Querystring: Static<typeof EventQuery> }>).query.event_id);
            return ok(describe(client, await secrets.current(client)));
          },
        },
        {
          method: 'POST',
          url: '/oidc/rotate_client_secret',
          schema: { body: EventBody },
          handler: async (req) => {
            const client = clientOf((req as FastifyRequest<{ Body: Static<typeof EventBody> }>).body.event_id);
            const secret = await secrets.rotate(client);
            // The event only: the secret itself is never logged.
            req.log.info({ event_id: client.clientId }, 'OIDC client secret rotated');
            return ok(describe(client, secret));
          },
        },
      ],
      mount,
    );
  }

  return { issuer, routes, privateRoutes };
}

// ---- HTTP details of the OAuth2 endpoints ----

/**
 * An OAuth2 endpoint: its OAuth2 errors rendered as `{"error", "error_description"}` with their status and
 * challenge headers (anything else goes to the server's error handler: 5xx, never a stack trace); never
 * cacheable; CORS like the rest of the public API; preflights and 405 like route-table.ts.
 */
function mountOAuthRoute(
  app: FastifyInstance,
  url: string,
  methods: readonly ('GET' | 'POST')[],
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>,
): void {
  app.route({
    method: [...methods],
    url,
    handler: async (request, reply) => {
      reply.header('access-control-allow-origin', '*').header('cache-control', 'no-store');
      try {
        return await handler(request, reply);
      } catch (error) {
        if (!(error instanceof OAuthError)) throw error;
        return reply.code(error.status).headers(error.headers).send(error.body);
      }
    },
  });
  mountPreflightAndMethodGuard(app, url, methods);
}

function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(302).header('location', location).header('cache-control', 'no-store').send();
}

function queryOf(request: FastifyRequest): URLSearchParams {
  const url = request.raw.url ?? '';
  const mark = url.indexOf('?');
  return new URLSearchParams(mark < 0 ? '' : url.slice(mark + 1));
}

function bodyText(request: FastifyRequest): string {
  return Buffer.isBuffer(request.body) ? request.body.toString('utf8') : '';
}

/** Browsers navigating get a page; API clients and tests asking for JSON get OAuth2's JSON error. */
function prefersHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html');
}
