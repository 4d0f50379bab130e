// Mounts a list of routes so that every path also answers CORS preflights (OPTIONS, never authenticated)
// and 405 for the methods it does not serve, and carries its caching policy (spec: "Caching headers").

import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, preValidationHookHandler } from 'fastify';
import type { Answer } from '../domain/services/room-context.ts';
import { Errors, type ContractError } from '../domain/errors.ts';

/** poll: max-age=pollTtl; queue: 60 s; key: 300 s. Only a 200 is ever cacheable. */
export type CachePolicy = 'poll' | 'queue' | 'key';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The contract error for a query parameter that is present but malformed (e.g. repeated). */
    invalidQuery?: () => ContractError;
  }
}

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  schema?: FastifySchema;
  cache?: CachePolicy;
  /** True for a request whose 200 must not be cached all the same (a presence beat must reach the server). */
  uncached?: (request: FastifyRequest) => boolean;
  invalidQuery?: () => ContractError;
  /** Overrides the server's body limit for this route. */
  bodyLimit?: number;
  /** 201: a room created through the rooms API. */
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<Answer<unknown> | { status: 201; body: unknown }>;
}

export const ALLOWED_HEADERS =
  'Content-Type,X-Amz-Date,Authorization,X-Api-Key,X-Amz-Security-Token,X-Amz-Content-Sha256,Idempotency-Key';

/** `hide` leaves a route out of the OpenAPI document (@fastify/swagger); Fastify itself ignores the key. */
const PLUMBING = { hide: true } as FastifySchema;

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const METHODS_WITH_BODY = new Set<RouteSpec['method']>(['POST', 'PUT', 'PATCH']);

export interface MountOptions {
  /** Runs before validation on routes with a body (JSON parsing). */
  parseBody: preValidationHookHandler;
  /** max-age of the polling endpoints. */
  pollTtl: number;
}

export function mountRoutes(app: FastifyInstance, routes: readonly RouteSpec[], options: MountOptions): void {
  const cacheValues: Record<CachePolicy, string> = {
    poll: `public, max-age=${options.pollTtl}`,
    queue: 'public, max-age=60',
    key: 'public, max-age=300',
  };
  const methodsByUrl = new Map<string, Set<string>>();
  for (const route of routes) {
    const cacheValue = route.cache ? cacheValues[route.cache] : 'no-store';
    app.route({
      method: route.method,
      url: route.url,
      ...(route.schema ? { schema: route.schema } : {}),
      ...(route.bodyLimit ? { bodyLimit: route.bodyLimit } : {}),
      ...(METHODS_WITH_BODY.has(route.method) ? { preValidation: options.parseBody } : {}),
      config: { invalidQuery: route.invalidQuery },
      handler: async (request, reply) => {
        const answer = await route.handler(request, reply);
        // Only a 200 may be cached (spec: every 202/4xx/5xx is no-store); errors are rendered elsewhere.
        reply
          .code(answer.status)
          .header('access-control-allow-origin', '*')
          .header('cache-control', answer.status === 200 && route.uncached?.(request) !== true ? cacheValue : 'no-store');
        return answer.body;
      },
    });
    const methods = methodsByUrl.get(route.url) ?? new Set<string>();
    methods.add(route.method);
    if (route.method === 'GET') methods.add('HEAD');
    methodsByUrl.set(route.url, methods);
  }
  for (const [url, methods] of methodsByUrl) mountPreflightAndMethodGuard(app, url, [...methods]);
}

/**
 * For one path: OPTIONS answers the CORS preflight (never authenticated), and every method the path does
 * not serve answers 405 with Allow. `methods` are the served ones (HEAD is added for GET unless `headWithGet` is false).
 */
export function mountPreflightAndMethodGuard(
  app: FastifyInstance,
  url: string,
  methods: readonly string[],
  { headWithGet = true }: { headWithGet?: boolean } = {},
): void {
  const served = new Set(methods);
  if (served.has('GET') && headWithGet) served.add('HEAD');
  const allowed = [...served, 'OPTIONS'];
  app.route({
    method: 'OPTIONS',
    url,
    // Every path has a preflight and a 405 guard: they are not operations of the OpenAPI document.
    schema: PLUMBING,
    handler: async (_request, reply) => {
      reply
        .code(204)
        .header('access-control-allow-origin', '*')
        .header('cache-control', 'no-store')
        .header('access-control-allow-methods', allowed.join(','))
        .header('access-control-allow-headers', ALLOWED_HEADERS)
        .header('access-control-max-age', '600');
    },
  });
  const others = ALL_METHODS.filter((m) => !served.has(m));
  if (others.length > 0) {
    app.route({
      method: others,
      url,
      schema: PLUMBING,
      handler: async () => {
        throw Errors.methodNotAllowed(allowed);
      },
    });
  }
}
