// Guards for Node servers: a Fastify onRequest hook and a Connect/Express-style `(req, res, next)` function.
// Missing token → 401, invalid → 403, keys unreachable → 503, each with a JSON body `{"error", "reason"}`.
// Both take only types from their frameworks, so neither framework is loaded by `anteroom-authorizer`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthorizerError } from './errors.ts';
import { extractToken } from './extract.ts';
import type { ExtractOptions } from './extract.ts';
import { createVerifier } from './verify.ts';
import type { VerifiedClaims, VerifierOptions } from './verify.ts';

export type AuthorizerOptions = VerifierOptions & ExtractOptions;

declare module 'fastify' {
  interface FastifyRequest {
    /** The visitor's verified access-token claims, set by `fastifyAuthorizer`. */
    waitingRoom?: VerifiedClaims;
  }
}

/** An Express/Connect request after `expressAuthorizer` let it through. */
export type WaitingRoomRequest = IncomingMessage & { waitingRoom?: VerifiedClaims };

/** `app.addHook('onRequest', fastifyAuthorizer(options))`, or a route's `onRequest` option. */
export function fastifyAuthorizer(
  options: AuthorizerOptions,
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined> {
  const verifier = createVerifier(options);
  return async function anteroomAuthorizer(request, reply) {
    try {
      request.waitingRoom = await verifier.verify(extractToken(request.headers, options));
      return undefined;
    } catch (error) {
      if (!(error instanceof AuthorizerError)) throw error;
      const { status, headers, body } = refusalResponse(error);
      // Returning the reply tells Fastify the async hook has answered and the route must not run.
      return reply.code(status).headers(headers).send(body);
    }
  };
}

/** `app.use(expressAuthorizer(options))`; the claims are then on `(req as WaitingRoomRequest).waitingRoom`. */
export function expressAuthorizer(
  options: AuthorizerOptions,
): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  const verifier = createVerifier(options);
  return function anteroomAuthorizer(req, res, next) {
    verifier.verify(extractToken(req.headers, options)).then(
      (claims) => {
        (req as WaitingRoomRequest).waitingRoom = claims;
        next();
      },
      (error: unknown) => {
        if (!(error instanceof AuthorizerError)) return next(error);
        const { status, headers, body } = refusalResponse(error);
        res.writeHead(status, headers).end(body);
      },
    );
  };
}

function refusalResponse(error: AuthorizerError): { status: number; headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
  };
  // RFC 6750 §3: a 401 names the scheme the client should use.
  if (error.status === 401) headers['www-authenticate'] = 'Bearer';
  return { status: error.status, headers, body: JSON.stringify({ error: error.message, reason: error.reason }) };
}
