// Mounts a list of routes so that every path also answers CORS preflights (OPTIONS, never authenticated)
// and 405 for the methods it does not serve, and carries its caching policy (spec: "Caching headers").

import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Answer } from '../domain/waiting-room.ts';
import { Errors, type ContractError } from '../domain/errors.ts';

/** poll: max-age=pollTtl; queue: 60 s; key: 300 s. Only a 200 is ever cacheable. */
export type CachePolicy = 'poll' | 'queue' | 'key';

declare module 'fastify' {
  interface FastifyContextConfig {
    cache?: CachePolicy;
    /** The contract error for a query parameter that is present but malformed (e.g. repeated). */
    invalidQuery?: () => ContractError;
  }
  interface FastifyRequest {
    rawBody?: Buffer;
  }
}

export interface RouteSpec {
  method: 'GET' | 'POST';
  url: string;
  schema?: FastifySchema;
  cache?: CachePolicy;
  invalidQuery?: () => ContractError;
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<Answer<unknown>>;
}

export const ALLOWED_HEADERS =
  'Content-Type,X-Amz-Date,Authorization,X-Api-Key,X-Amz-Security-Token,X-Amz-Content-Sha256';

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function mountRoutes(app: FastifyInstance, routes: readonly RouteSpec[]): void {
  const methodsByUrl = new Map<string, Set<string>>();
  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.url,
      ...(route.schema ? { schema: route.schema } : {}),
      config: { cache: route.cache, invalidQuery: route.invalidQuery },
      handler: async (request, reply) => {
        const answer = await route.handler(request, reply);
        reply.code(answer.status);
        return answer.body;
      },
    });
    const methods = methodsByUrl.get(route.url) ?? new Set<string>();
    methods.add(route.method);
    if (route.method === 'GET') methods.add('HEAD');
    methodsByUrl.set(route.url, methods);
  }
  for (const [url, methods] of methodsByUrl) {
    const allowed = [...methods, 'OPTIONS'];
    app.route({
      method: 'OPTIONS',
      url,
      handler: async (_request, reply) => {
        reply
          .code(204)
          .header('access-control-allow-methods', allowed.join(','))
          .header('access-control-allow-headers', ALLOWED_HEADERS)
          .header('access-control-max-age', '600');
      },
    });
    const others = ALL_METHODS.filter((m) => !methods.has(m));
    if (others.length > 0) {
      app.route({
        method: others,
        url,
        handler: async () => {
          throw Errors.methodNotAllowed(allowed);
        },
      });
    }
  }
}
