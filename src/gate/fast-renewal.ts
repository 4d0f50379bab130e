// The edge's renewal (GET /_anteroom/renew, edge-renewal.ts) answered from node:http, before Fastify routes the
// request: Fastify's routing, hooks and cookie plugin were about a quarter of a renewal's CPU (docs/benchmarks.md,
// issue 36), and a renewal is what Anteroom costs per visitor in the edge set-up. Only the edge's own form is
// taken here — GET, `event_id` a plain ID of a gated room, `mac_only` plain or absent, no `to`, no body, an
// X-Forwarded-Proto of `http` or `https` or none — and only a session GateSessions.check finds open is answered
// here (the same check, the same cookie, the same headers as the route). Anything else, a refused cookie
// included, goes on to the Fastify route, which checks it again and answers in the one JSON error shape: the
// two paths cannot differ in what they refuse, as only the route refuses.

import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { fastifyCookie } from '@fastify/cookie';
import { TOKEN_COOKIE, cookieAttributes } from './cookies.ts';
import { EDGE_COOKIE, freshEdgeCookie, type EdgeRenewalDeps } from './edge-renewal.ts';

/** The edge's request: a plain event ID (nothing to decode) and mac_only plain or absent. */
const EDGE_RENEWAL = /^\/_anteroom\/renew\?event_id=([A-Za-z0-9._~-]{1,128})(?:&mac_only=([A-Za-z0-9]{0,8}))?$/;

export interface FastRenewalDeps extends EdgeRenewalDeps {
  /** Whether --trust-proxy trusts the peer's X-Forwarded-Proto (listener-limits.ts trustedPeer, as Fastify's). */
  trustedPeer: (address: string) => boolean;
}

/** The renewal fast path: a request listener in front of Fastify's (`next`). */
export function fastRenewal(deps: FastRenewalDeps, next: RequestListener): RequestListener {
  return (req, res) => {
    const taken = takes(req);
    if (!taken) return next(req, res);
    // Not answered (a refused cookie) or failed before writing (the store down): the route decides and answers.
    answer(deps, req, res, taken).then(
      (answered) => answered || next(req, res),
      () => next(req, res),
    );
  };
}

interface Taken {
  eventId: string;
  macOnly: boolean;
}

function takes(req: IncomingMessage): Taken | undefined {
  if (req.method !== 'GET' || req.url === undefined || !req.url.startsWith('/_anteroom/renew?')) return undefined;
  if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) return undefined;
  const match = EDGE_RENEWAL.exec(req.url);
  if (!match) return undefined;
  const proto = req.headers['x-forwarded-proto'];
  if (proto !== undefined && proto !== 'http' && proto !== 'https') return undefined;
  return { eventId: match[1] as string, macOnly: match[2] === '1' };
}

/** Answers an open session's renewal and returns true, or returns false having written nothing. */
async function answer(deps: FastRenewalDeps, req: IncomingMessage, res: ServerResponse, taken: Taken): Promise<boolean> {
  const room = deps.roomOf(taken.eventId);
  if (!room?.gate) return false;
  const header = req.headers.cookie;
  const token = header ? (fastifyCookie.parse(header) as Record<string, string | undefined>)[TOKEN_COOKIE] : undefined;
  const verdict = await deps.sessions.check(room, token);
  if (!verdict.ok) return false;
  const fresh = await freshEdgeCookie(deps, room, verdict.claims, taken.macOnly);
  const cookie = fastifyCookie.serialize(EDGE_COOKIE, fresh.cookie, cookieAttributes(https(req, deps), fresh.maxAge));
  res.writeHead(200, {
    'cache-control': 'no-store',
    'x-accel-expires': fresh.accelExpires,
    'set-cookie': cookie,
    'content-length': '0',
  });
  res.end();
  return true;
}

/** request.protocol === 'https' as Fastify reads it: X-Forwarded-Proto from a trusted peer, else the socket. */
function https(req: IncomingMessage, deps: FastRenewalDeps): boolean {
  const proto = req.headers['x-forwarded-proto'];
  const address = req.socket.remoteAddress;
  if (proto !== undefined && address !== undefined && deps.trustedPeer(address)) return proto === 'https';
  return (req.socket as TLSSocket).encrypted === true;
}
