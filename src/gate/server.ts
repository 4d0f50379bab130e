// The gate listener (`anteroom serve --gate-port`, spec rooms.md §5): a Fastify server of its own in front of
// the rooms' `gate.origin`s. The proxying is @fastify/http-proxy's (undici underneath, streamed bodies,
// WebSocket upgrades through `ws`); the gate adds one preHandler whose steps run in this order, each one job:
//   normalise the path (normalise-path.ts) → match the room (host, longest path) → bypass rules → admission
//   cookie → queue (visitor-queue.ts)
// and two hooks on the way back: `Anteroom-Command: revoke` ends the session, and an unreachable origin is a
// 502 page. Anteroom's own page, assets and forward-auth endpoints live under /_anteroom/.

import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import fastifyCookie from '@fastify/cookie';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import { StoreUnavailableError, type SecretStore } from '../domain/ports/store.ts';
import type { GateSettings } from '../domain/room-settings.ts';
import type { WaitingRoom } from '../domain/services/waiting-room.ts';
import { staticPages } from '../web/static-pages.ts';
import { renderGatePage } from '../web/gate-page.ts';
import { BypassRules } from './bypass.ts';
import { EdgeKeys } from './edge-keys.ts';
import { edgeRenewalRoute } from './edge-renewal.ts';
import { fastRenewal } from './fast-renewal.ts';
import { PlaceCookies, TOKEN_COOKIE, withoutAnteroomCookies } from './cookies.ts';
import { gateDrawRoutes } from './draw-check.ts';
import { gateChallengeRoute } from './gate-join.ts';
import { normaliseTarget, safeLocalPath } from './normalise-path.ts';
import { ORIGIN_DOWN_REFRESH_SEC } from './refresh-interval.ts';
import { routeTableCache, type GatedRoom } from './route-match.ts';
import { GateSessions, RENEW_EVERY_MS, type SessionVerdict } from './sessions.ts';
import { UNSENT_BODY_LIMIT, boundUnreadBody, defaultGateListenerLimits, gateServerFactory, trustedPeer, type GateListenerLimits } from './listener-limits.ts';
import { GATE_ANSWER_HEADER, answerVisitor, sendWaitingPage, wantsJson } from './visitor-queue.ts';

/** The header an origin answers with to end the visitor's session; never shown to the visitor. */
export const COMMAND_HEADER = 'anteroom-command';
/** The secret (in the store, shared by every node) the place cookies' encryption key is derived from (cookies.ts). */
const PLACE_KEY_SECRET = 'gate-place-cookie-key';

export interface GateServerOptions {
  room: WaitingRoom;
  secrets: SecretStore;
  /** Issuer of a room that names none (the node's public URL). */
  defaultIssuer: () => string;
  /** --trust-proxy (src/config/config.ts): true, a hop count, or IPs/CIDRs. */
  trustProxy?: boolean | number | string[] | undefined;
  /** --forward-auth-uri-header: the one header /_anteroom/check reads the original URI from. Default X-Original-URI. */
  forwardAuthUriHeader?: string | undefined;
  logLevel?: string;
  logStream?: DestinationStream | undefined;
  clockMs?: () => number;
  /** Directory of the built pages (tests). */
  pagesRoot?: string;
  /** --writes-per-client-per-minute: a join through the gate and its challenge count as public writes. */
  writesPerClientPerMinute?: number | undefined;
  /** The listener's timeouts and connection caps (listener-limits.ts); each absent one has its default. */
  limits?: Partial<GateListenerLimits> | undefined;
  /** What a connection whose request Node's parser refused (malformed, too slow) is answered; Fastify's default when absent. */
  clientErrorHandler?: ((error: Error & { code?: string }, socket: Socket) => void) | undefined;
}

export interface GateServer {
  app: FastifyInstance;
  sessions: GateSessions;
  /** Closes the sessions of this node that ended (idle, or session_duration after admission). */
  sweep(): Promise<number>;
}

/** What the preHandler found for a proxied request, kept on the request (a decoration: no per-request object). */
const kGate = Symbol('anteroom.gate');
interface GateState {
  /** The matched room and its gate (the route table's own object). */
  match: GatedRoom | null;
  /** Set when the request came with a valid admission cookie (not for bypass requests). */
  token: string | null;
  requestId: string | null;
}
type GateRequest = FastifyRequest & { [kGate]: GateState | null };
const stateOf = (request: FastifyRequest): GateState | null => (request as GateRequest)[kGate];

export async function buildGateServer(options: GateServerOptions): Promise<GateServer> {
  const { room } = options;
  const clockMs = options.clockMs ?? Date.now;
  const key = Buffer.from(await options.secrets.claimSecret(PLACE_KEY_SECRET, randomBytes(32).toString('base64url')), 'base64url');
  const places = new PlaceCookies(key);
  const sessions = new GateSessions(
    {
      jwks: (eventId) => room.claims.jwks(eventId),
      renewGateSession: (eventId, requestId, nowMs, idleBeforeMs, touch) => room.sessions.renewGateSession(eventId, requestId, nowMs, idleBeforeMs, touch),
      updateSession: (eventId, requestId, status) => room.sessions.updateSession(eventId, requestId, status),
    },
    (settings) => settings.issuer ?? options.defaultIssuer(),
    clockMs,
  );
  const queueDeps = { room, places, pagesRoot: options.pagesRoot, writesPerClientPerMinute: options.writesPerClientPerMinute, clockMs };
  const uriHeader = options.forwardAuthUriHeader ?? 'X-Original-URI';
  const routes = routeTableCache();
  const matchRoom = (host: string | undefined, path: string): GatedRoom | undefined => routes(room.rooms.roomsSnapshot()).match(host, path);
  const bypassRules = new WeakMap<GateSettings, BypassRules>();
  const rulesOf = (gate: GateSettings): BypassRules => {
    let rules = bypassRules.get(gate);
    if (!rules) {
      rules = new BypassRules(gate.bypass);
      bypassRules.set(gate, rules);
    }
    return rules;
  };

  const edgeRenewal = { sessions, keys: new EdgeKeys(options.secrets, clockMs), roomOf: (eventId: string) => room.rooms.roomSettings(eventId), nowMs: clockMs };
  const limits: GateListenerLimits = { ...defaultGateListenerLimits(), ...definedOnly(options.limits ?? {}) };
  const app = Fastify({
    // Timeouts and connection caps: listener-limits.ts.
    // The edge's renewals are answered before Fastify routes them (fast-renewal.ts).
    serverFactory: (handler) => gateServerFactory(limits, options.trustProxy)(fastRenewal({ ...edgeRenewal, trustedPeer: trustedPeer(options.trustProxy) }, handler)),
    ...(options.clientErrorHandler ? { clientErrorHandler: options.clientErrorHandler } : {}),
    logger: { level: options.logLevel ?? 'info', ...(options.logStream ? { stream: options.logStream } : {}) },
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger per request (its reqId binding): the gate logs only failures, and a child costs every
    // proxied request an allocation.
    childLoggerFactory: (logger) => logger,
    // A hop count works at run time (proxy-addr) though Fastify's types leave numbers out.
    trustProxy: (options.trustProxy ?? false) as boolean | string[],
    // Bodies the gate parses itself (its own paths under /_anteroom/). Proxied bodies are not parsed: they are
    // streamed to the origin whatever their size, and this limit does not apply to them.
    bodyLimit: UNSENT_BODY_LIMIT,
    // A target the router cannot read (a malformed %-escape): the one JSON error shape.
    frameworkErrors: (_error, _request, reply) => {
      void refuse(reply as FastifyReply, 400, 'The request target is malformed');
    },
  });
  // Every failure in the one JSON error shape: a client's error with its status and Fastify's message (a body the
  // gate's own paths cannot read, 400/413/415), the store down 503, anything else a logged 500 that says nothing.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof StoreUnavailableError) return refuse(reply, 503, 'The waiting room is unavailable');
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return refuse(reply, status, error.message);
    request.log.error({ err: error }, 'gate request failed');
    return refuse(reply, 500, 'Internal error');
  });
  // A method no route takes (TRACE, PROPFIND …): nothing of it reaches a site.
  app.setNotFoundHandler((_request, reply) => refuse(reply, 404, 'Not found'));
  await app.register(fastifyCookie);
  // The gate's own answers (a queued visitor's, a 404) read at most UNSENT_BODY_LIMIT of a body nobody read.
  app.addHook('onSend', (request, reply, payload, done) => {
    const reading = boundUnreadBody(request, reply);
    if (!reading) done(null, payload);
    else void reading.then(() => done(null, payload));
  });
  app.decorateRequest(kGate, null);

  /**
   * The gate's steps for a proxied request (callback style: an admitted visitor's request, the common case,
   * goes through without a promise): normalise the path → match the room → bypass rules → admission cookie →
   * else the queue.
   */
  function admit(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const normal = normaliseTarget(request.url);
    if (!normal.ok) {
      refuse(reply, 400, normal.reason);
      return;
    }
    // From here on the request's URL is the normalised one: every step below, the URL first asked for, and
    // what the origin receives (reply-from's source, the WebSocket leg) read this one.
    request.raw.url = normal.target;
    // The host decides the room and is the origin's X-Forwarded-Host: one name (or [IPv6]) and a port, never a
    // list (`shop.example, x`, which an origin may read as shop.example) or userinfo.
    if (request.host && !HOST.test(request.host)) {
      refuse(reply, 400, 'The Host header is malformed');
      return;
    }
    const path = normal.path;
    const match = matchRoom(request.host, path);
    if (!match) {
      notProtected(reply);
      return;
    }
    const state: GateState = { match, token: null, requestId: null };
    (request as GateRequest)[kGate] = state;
    const rules = rulesOf(match.gate);
    if (!rules.empty && rules.matches({ path, ip: request.ip, headers: request.headers })) {
      done();
      return;
    }
    const token = request.cookies[TOKEN_COOKIE];
    const verdict = sessions.check(match.room, token);
    if (!(verdict instanceof Promise)) {
      afterCheck(request, reply, done, state, token, verdict);
      return;
    }
    verdict.then((settled) => afterCheck(request, reply, done, state, token, settled), done);
  }

  function afterCheck(
    request: FastifyRequest,
    reply: FastifyReply,
    done: (error?: Error) => void,
    state: GateState,
    token: string | undefined,
    verdict: SessionVerdict,
  ): void {
    if (verdict.ok && token) {
      state.token = token;
      state.requestId = verdict.claims.sub;
      done();
      return;
    }
    // Admitted at a request that carries an action (a form's POST): sent on to the site, not redirected.
    const letThrough = (admitted: string, requestId: string): void => {
      state.token = admitted;
      state.requestId = requestId;
      done();
    };
    answerVisitor(queueDeps, request, reply, (state.match as GatedRoom).room, request.url, letThrough).catch(done);
  }

  // ---- Anteroom's own paths ----
  await app.register(
    async (scope) => {
      staticPages(options.pagesRoot ? { root: options.pagesRoot } : {})(scope);
      // The proof-of-work challenge of a room's bot defence, on the site's own host (src/gate/gate-join.ts).
      gateChallengeRoute(scope, queueDeps);
      // The draw of a gated room and the way to its check page, with the visitor's own request ID (draw-check.ts).
      gateDrawRoutes(scope, { room, places, roomOnHost: (eventId, host) => routes(room.rooms.roomsSnapshot()).roomOnHost(eventId, host) });
      // Verify at the edge (docs/edge.md): the edge's renewal call.
      edgeRenewalRoute(scope, edgeRenewal);
      // Forward auth (nginx auth_request, Traefik ForwardAuth, Envoy ext_authz, Caddy forward_auth): 200 let
      // through (Envoy's ext_authz takes no other 2xx), 401 + Location, 403 refused. Only what the proxy sets decides: the original URI from the one
      // configured header, the host from X-Forwarded-Host (docs/gate.md#paths-and-headers-the-gate-trusts).
      // Any method (Envoy sends the original one) and any path below /check (Envoy's path_prefix).
      const check = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
        reply.header('cache-control', 'no-store');
        const uri = onlyHeader(request.headers, uriHeader.toLowerCase());
        // A space never appears in a request target: a value with one is two headers joined, or forged.
        if (uri === undefined || /\s/.test(uri)) return refuse(reply, 403, `The proxy must send the original URI as one ${uriHeader} header`);
        const host = onlyHeader(request.headers, 'x-forwarded-host');
        if (host === undefined || !HOST.test(host)) return refuse(reply, 403, 'The proxy must send the original host as one X-Forwarded-Host header');
        const normal = normaliseTarget(uri);
        if (!normal.ok) return refuse(reply, 403, normal.reason);
        const table = routes(room.rooms.roomsSnapshot());
        // A host no route names (and no route for any host): nothing of it is let through.
        if (!table.coversHost(host)) return refuse(reply, 403, 'No waiting room names this host');
        const match = table.match(host, normal.path);
        // A covered host, a path no room protects: the site's own, let through.
        if (!match) return passes(reply);
        if (rulesOf(match.gate).matches({ path: normal.path, ip: request.ip, headers: request.headers })) return passes(reply);
        const verdict = await sessions.check(match.room, request.cookies[TOKEN_COOKIE]);
        if (verdict.ok) return passes(reply);
        const waitUrl = `/_anteroom/wait?to=${encodeURIComponent(normal.target)}`;
        // nginx reads the Location (auth_request_set) and ignores the body; Traefik ForwardAuth and Envoy
        // ext_authz pass this answer on to the browser, which the body's refresh then takes to the waiting page.
        return reply
          .code(401)
          .header('location', waitUrl)
          .type('text/html; charset=utf-8')
          .send(`<!doctype html><meta http-equiv="refresh" content="0;url=${waitUrl}"><title>Waiting room</title><a href="${waitUrl}">To the waiting room</a>`);
      };
      const checkMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
      scope.route({ method: checkMethods, url: '/check', handler: check });
      scope.route({ method: checkMethods, url: '/check/*', handler: check });
      // The waiting page for forward auth: the visitor waits here and is sent back to `to` (a local path) once in.
      scope.get('/wait', async (request, reply) => {
        // Normalised like every path (`//evil.example/` → `/evil.example/`); not a local path → the home page.
        const to = safeLocalPath((request.query as Record<string, unknown>).to) ?? '/';
        const match = matchRoom(request.host, pathOnly(to));
        if (!match) return notProtected(reply);
        const verdict = await sessions.check(match.room, request.cookies[TOKEN_COOKIE]);
        if (verdict.ok) {
          reply.header('cache-control', 'no-store');
          if (wantsJson(request.headers.accept)) return reply.header(GATE_ANSWER_HEADER, 'admitted').send({ status: 'admitted', event_id: match.room.event_id, location: to });
          return reply.redirect(to, 303);
        }
        return answerVisitor(queueDeps, request, reply, match.room, to);
      });
      scope.all('/*', (_request, reply) => reply.code(404).header('cache-control', 'no-store').send({ error: 'Not found' }));
    },
    { prefix: '/_anteroom' },
  );

  // The WebSocket leg: @fastify/http-proxy supports rewriteRequestHeaders here (its default keeps only the
  // cookie), though its types do not list it.
  const wsClientOptions = {
    headers: {},
    rewriteRequestHeaders: (headers: Record<string, string>, request: FastifyRequest) => {
      const forwarded = forwardedHeaders(request as FastifyRequest, { ...request.headers });
      const kept: Record<string, string> = { ...headers };
      for (const name of ['cookie', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'authorization', 'user-agent', 'origin']) {
        const value = forwarded[name];
        if (typeof value === 'string') kept[name] = value;
      }
      return kept;
    },
  };

  // ---- everything else: the protected sites ----
  // Loaded here, only by a node that runs a gate: the proxy (undici with it) is an eighth of a node's start.
  const { default: fastifyHttpProxy } = await import('@fastify/http-proxy');
  await app.register(fastifyHttpProxy, {
    upstream: '',
    websocket: true,
    // reply-from's two log lines per proxied request (Anteroom logs failures itself).
    disableRequestLogging: true,
    preHandler: admit,
    replyOptions: {
      getUpstream: (request) => stateOf(request as FastifyRequest)?.match?.gate.origin ?? 'http://127.0.0.1:9',
      // A proxy does not retry on the client's behalf (reply-from retries GETs answered 503 by default).
      retryDelay: () => null,
      // The query as the visitor sent it (the default re-encodes it through a query-string parser); the path
      // is the normalised one admit() put on the request.
      queryString: (_search: string | undefined, url: string) => {
        const q = url.indexOf('?');
        return q === -1 ? '' : url.slice(q + 1);
      },
      rewriteRequestHeaders: (request, headers) => forwardedHeaders(request as FastifyRequest, headers),
      rewriteHeaders: (headers, request) => {
        const command = headers[COMMAND_HEADER];
        // The common case: no command (a `delete` would slow the object down for nothing).
        if (command === undefined || !request) return headers;
        delete headers[COMMAND_HEADER];
        const state = stateOf(request as FastifyRequest);
        if (state?.match && state.token && state.requestId && typeof command === 'string' && command.trim().toLowerCase() === 'revoke') {
          const gated = state.match.room;
          sessions.revoke(gated, state.token, state.requestId).catch((error: unknown) => {
            app.log.error({ err: error, event_id: gated.event_id }, 'closing a revoked session failed');
          });
          const cleared = app.serializeCookie(TOKEN_COOKIE, '', { path: '/', httpOnly: true, sameSite: 'lax', maxAge: 0, secure: request.protocol === 'https' });
          const existing = headers['set-cookie'];
          headers['set-cookie'] = existing === undefined ? [cleared] : [...(Array.isArray(existing) ? existing : [existing]), cleared];
        }
        return headers;
      },
      onError: (reply, { error }) => {
        reply.log.warn({ err: error }, 'origin unreachable');
        const match = matchRoom(reply.request.host, pathOnly(reply.request.url));
        reply.code(502).header('cache-control', 'no-store').header(GATE_ANSWER_HEADER, 'origin-down');
        if (!match || wantsJson(reply.request.headers.accept)) return reply.send({ error: 'The protected site did not answer' });
        const refresh = { seconds: ORIGIN_DOWN_REFRESH_SEC, path: safeLocalPath(reply.request.url) ?? '/' };
        const page = renderGatePage(match.room, { mode: 'gate', reason: 'origin-down', acceptLanguage: reply.request.headers['accept-language'], refresh }, options.pagesRoot, clockMs());
        return sendWaitingPage(reply.request as FastifyRequest, reply as FastifyReply, page);
      },
    },
    wsClientOptions,
  });

  return { app, sessions, sweep: () => sessions.sweep((eventId) => room.rooms.roomSettings(eventId)) };
}

/** How often the sweep of ended sessions runs. */
export const SWEEP_EVERY_MS = RENEW_EVERY_MS;

function notProtected(reply: FastifyReply): FastifyReply {
  return refuse(reply, 404, 'No waiting room protects this URL');
}

/** Forward auth's "let through": 200 and no body (every proxy takes a 2xx; Envoy only 200). */
function passes(reply: FastifyReply): FastifyReply {
  return reply.code(200).send();
}

/** The gate's refusals, in the project's one JSON error shape. */
function refuse(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error: message });
}

/** A host name or [IPv6], with an optional port: what X-Forwarded-Host may hold (never a list). */
const HOST = /^(?:[A-Za-z0-9._-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** The path of a normalised target. */
function pathOnly(target: string): string {
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}

/** A header sent once (Node joins repeated ones with ", ", which the callers refuse). */
function onlyHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function firstHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : value?.[0];
}

/**
 * What the origin gets (HTTP and WebSocket legs, bypass requests too): X-Forwarded-For/-Proto/-Host as a proxy
 * adds them (the client's address appended to what came from trusted hops), and the visitor's cookies without
 * Anteroom's own (cookies.ts withoutAnteroomCookies; the token kept when the room's gate.forward_token_cookie says so).
 */
function forwardedHeaders(request: FastifyRequest, headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const cookie = headers.cookie;
  if (cookie !== undefined) {
    const kept = withoutAnteroomCookies(cookie, stateOf(request)?.match?.gate.forward_token_cookie === true);
    if (kept === undefined) delete headers.cookie;
    else if (kept !== cookie) headers.cookie = kept;
  }
  const peer = request.socket.remoteAddress ?? '';
  // request.ips is only filled through trusted proxies; without trust the client's own header is not kept.
  const trustedChain = request.ips && request.ips.length > 1 ? firstHeader(request.headers, 'x-forwarded-for') : undefined;
  headers['x-forwarded-for'] = trustedChain ? `${trustedChain}, ${peer}` : peer;
  headers['x-forwarded-proto'] = request.protocol;
  headers['x-forwarded-host'] = request.host;
  return headers;
}
