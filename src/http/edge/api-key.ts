// Edge step: the optional origin key (VWR's x-api-key behind CloudFront). Every request for a public API route
// must carry it, whether the fast path or Fastify would answer; CORS preflights (OPTIONS) and everything outside
// the public scope — the operations endpoints (/healthz, /readyz, /metrics), the private API (its own
// authentication), the pages, a 404 — do not need it. A missing or wrong key is answered here with the
// contract's 403, rendered as the HTTP error handler renders every contract error.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { Errors } from '../../domain/errors.ts';
import { secretMatcher } from '../auth/constant-time.ts';
import type { EdgeHandler, EdgeStep } from './edge-chain.ts';
import { answeredFor, routeLabel } from './request-metrics.ts';
import type { RouteScope } from './route-scope.ts';

export class ApiKeyStep implements EdgeStep {
  readonly name = 'public API key';
  private readonly keyMatches: (given: string) => boolean;
  private readonly publicScope: RouteScope;
  /** The refusal, rendered once: it never changes. */
  private readonly refusal: { status: number; headers: Record<string, string | number>; body: string };

  /** `publicScope` holds the routes that need the key: the public scope's, but its preflights. */
  constructor(key: string, publicScope: RouteScope) {
    this.keyMatches = secretMatcher(key);
    this.publicScope = publicScope;
    const forbidden = Errors.forbidden();
    const body = JSON.stringify({ error: forbidden.message });
    this.refusal = {
      status: forbidden.status,
      headers: {
        ...forbidden.headers,
        'access-control-allow-origin': '*',
        'cache-control': 'no-store',
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      },
      body,
    };
  }

  handle(req: IncomingMessage, res: ServerResponse, next: EdgeHandler): void {
    const route = this.publicScope.routeOf(req.method as string, req.url as string);
    const given = route === undefined ? undefined : req.headers['x-api-key'];
    if (route === undefined || (typeof given === 'string' && this.keyMatches(given))) {
      next(req, res);
      return;
    }
    // Counted under the route it was for, as when Fastify refused it.
    answeredFor(res, routeLabel(route));
    res.writeHead(this.refusal.status, this.refusal.headers);
    res.end(this.refusal.body);
  }
}
