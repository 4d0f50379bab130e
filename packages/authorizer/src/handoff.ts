// The site's side of the hand-off without a gate (spec rooms.md §5; docs/gate.md#hand-off): the waiting-room
// page sends a served visitor to the site with `?anteroom_handoff=<code>`; these middlewares exchange the code
// with the waiting room (POST /handoff, good once), set the access token as an HttpOnly cookie and send the
// visitor on to the same URL without the code. The guards (`fastifyAuthorizer`, `expressAuthorizer` with
// `cookieName: 'anteroom_token'`) then find the token in the cookie on every request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const HANDOFF_PARAMETER = 'anteroom_handoff';
/** The cookie the gate uses too: one name for the token whichever way the visitor came in. */
export const DEFAULT_TOKEN_COOKIE = 'anteroom_token';

export interface HandoffOptions {
  /** The waiting room's public API base URL, e.g. https://waitingroom.example.com */
  publicApiUrl: string | URL;
  eventId: string;
  /** Default `anteroom_token`. */
  cookieName?: string;
  /** Mark the cookie Secure. Default: when the request came over TLS or with X-Forwarded-Proto: https. */
  secureCookie?: boolean;
  /** Default 5 000. */
  timeoutMs?: number;
  fetch?: typeof globalThis.fetch;
}

export interface ExchangedToken {
  accessToken: string;
  expiresIn: number;
}

/** POST /handoff: the access token for a code, or undefined (unknown, used, expired, waiting room unreachable). */
export async function exchangeHandoffCode(code: string, options: HandoffOptions): Promise<ExchangedToken | undefined> {
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  try {
    const response = await doFetch(new URL('handoff', withSlash(options.publicApiUrl)), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event_id: options.eventId, code }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      return undefined;
    }
    const body = (await response.json()) as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== 'string' || typeof body.expires_in !== 'number') return undefined;
    return { accessToken: body.access_token, expiresIn: body.expires_in };
  } catch {
    return undefined;
  }
}

/** What the middleware answers for a request carrying a code: the redirect, with the cookie when exchanged. */
async function handoffAnswer(
  url: string,
  headers: IncomingMessage['headers'],
  encrypted: boolean,
  options: HandoffOptions,
): Promise<{ location: string; setCookie?: string } | undefined> {
  const parsed = new URL(url, 'http://site.invalid');
  const code = parsed.searchParams.get(HANDOFF_PARAMETER);
  if (code === null) return undefined;
  parsed.searchParams.delete(HANDOFF_PARAMETER);
  const location = `${parsed.pathname}${parsed.search}`;
  const token = await exchangeHandoffCode(code, options);
  if (!token) return { location };
  const secure = options.secureCookie ?? (encrypted || headers['x-forwarded-proto'] === 'https');
  const attributes = ['Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${Math.max(0, Math.floor(token.expiresIn))}`, ...(secure ? ['Secure'] : [])];
  return { location, setCookie: `${options.cookieName ?? DEFAULT_TOKEN_COOKIE}=${token.accessToken}; ${attributes.join('; ')}` };
}

/** `app.addHook('onRequest', fastifyHandoff(options))`, before `fastifyAuthorizer`. */
export function fastifyHandoff(options: HandoffOptions): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined> {
  return async function anteroomHandoff(request, reply) {
    if (!request.url.includes(HANDOFF_PARAMETER)) return undefined;
    const answer = await handoffAnswer(request.url, request.headers, isEncrypted(request.raw), options);
    if (!answer) return undefined;
    if (answer.setCookie) reply.header('set-cookie', answer.setCookie);
    return reply.code(303).header('cache-control', 'no-store').header('location', answer.location).send();
  };
}

/** `app.use(expressHandoff(options))`, before `expressAuthorizer`. */
export function expressHandoff(options: HandoffOptions): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  return function anteroomHandoff(req, res, next) {
    const url = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
    if (!url.includes(HANDOFF_PARAMETER)) return next();
    handoffAnswer(url, req.headers, isEncrypted(req), options).then((answer) => {
      if (!answer) return next();
      const headers: Record<string, string> = { location: answer.location, 'cache-control': 'no-store' };
      if (answer.setCookie) headers['set-cookie'] = answer.setCookie;
      res.writeHead(303, headers).end();
    }, next);
  };
}

function isEncrypted(req: IncomingMessage): boolean {
  return Boolean((req.socket as { encrypted?: boolean } | undefined)?.encrypted);
}

function withSlash(base: string | URL): string {
  const text = String(base);
  return text.endsWith('/') ? text : `${text}/`;
}
