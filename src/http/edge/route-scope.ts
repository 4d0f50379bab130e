// The routes of one Fastify scope, recognised from a raw request before Fastify routes it. The edge needs
// this to apply a rule to exactly the requests a scope would answer: the public API key guards the routes the
// public scope mounts, as its onRequest hook did when it lived in that scope (not the operations endpoints,
// the private API, the pages, nor a 404).
//
// "Exactly" means as Fastify's router decides, however the request target is spelt: `/serving%5Fnum` and
// `http://host/serving_num` reach /serving_num; `/serving_num/`, `//serving_num` and `/SERVING_NUM` do not.
// So the decision is made by the router Fastify itself uses (find-my-way, with Fastify's options), and only
// for the request targets where spelling matters: a plain target (a path without percent-encoding, then
// the query) is matched against the scope's paths directly, without allocating — that is every poll.

import findMyWay from 'find-my-way';
import type { FastifyInstance } from 'fastify';

/** The router options this server gives Fastify, which the scope's own router must share. */
export interface RouterOptions {
  maxParamLength?: number;
}

const SLASH = 0x2f;
const PERCENT = 0x25;
const QUESTION_MARK = 0x3f;
const HASH = 0x23;

interface ScopePath {
  /** The route's URL as Fastify labels it (here, a fixed path). */
  readonly url: string;
  readonly methods: Set<string>;
}

export class RouteScope {
  private readonly paths: ScopePath[] = [];
  private readonly router: findMyWay.Instance<findMyWay.HTTPVersion.V1>;

  constructor(routerOptions: RouterOptions) {
    this.router = findMyWay(routerOptions);
  }

  /**
   * Adds every route `scope` mounts from now on, but those of `skip` (e.g. OPTIONS: CORS preflights are
   * answered without the key).
   */
  collect(scope: FastifyInstance, skip: { methods: readonly string[] }): void {
    scope.addHook('onRoute', (route) => {
      const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => !skip.methods.includes(m));
      for (const method of methods) this.add(method, route.url);
    });
  }

  add(method: string, url: string): void {
    // The direct match below compares paths as they are; a route with parameters or wildcards would need
    // the whole of Fastify's route table to decide which route wins, so the scope refuses one loudly.
    if (/[:*(]/.test(url)) throw new Error(`the edge recognises fixed paths only, not ${url}`);
    let path = this.paths.find((p) => p.url === url);
    if (!path) {
      path = { url, methods: new Set() };
      this.paths.push(path);
    }
    path.methods.add(method);
    this.router.on(method as findMyWay.HTTPMethod, url, noHandler, { url });
  }

  /** The URL of the scope's route that Fastify would answer this request with, or undefined if none. */
  routeOf(method: string, target: string): string | undefined {
    const pathEnd = plainPathEnd(target);
    if (pathEnd === -1) {
      const found = this.router.find(method as findMyWay.HTTPMethod, target);
      return found ? (found.store as { url: string }).url : undefined;
    }
    for (let i = 0; i < this.paths.length; i++) {
      const path = this.paths[i] as ScopePath;
      if (path.url.length === pathEnd && target.startsWith(path.url)) return path.methods.has(method) ? path.url : undefined;
    }
    return undefined;
  }
}

function noHandler(): void {}

/**
 * Where the path of a plain request target ends (its length, or the index of the `?` or `#` that ends it, as
 * find-my-way splits it), or -1 when the target is not plain: not starting with `/` (absolute form, `*`) or
 * percent-encoded in its path. Only a plain path can be compared with a route's URL as it is.
 */
function plainPathEnd(target: string): number {
  if (target.charCodeAt(0) !== SLASH) return -1;
  for (let i = 1; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === QUESTION_MARK || c === HASH) return i;
    if (c === PERCENT) return -1;
  }
  return target.length;
}
