// RouteScope recognises the routes of one Fastify scope from a raw request exactly as Fastify's router does,
// however the request target is spelt: checked against a real Fastify server routing the same targets.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AddressInfo } from 'node:net';
import { RouteScope } from '../../../src/http/edge/route-scope.ts';
import { rawRequest } from '../../support/raw-http.ts';

const ROUTER_OPTIONS = { maxParamLength: 200 };
const SCOPE_ROUTES = ['/serving_num', '/waiting_num', '/jwks.json'];

// (Targets node's HTTP parser refuses, such as `http://host#/x` or an ftp: URL, never reach the edge.)
const TARGETS = [
  '/serving_num', '/serving_num?event_id=Sample', '/serving_num?', '/serving_num#frag', '/serving_num?a=%ZZ',
  '/serving%5Fnum?event_id=Sample', '/%73erving_num', '/waiting%5fnum', '/jwks%2Ejson?event_id=x', '/jwks.json',
  'http://example.com/serving_num?event_id=Sample', 'HTTPS://example.com/jwks.json', '*',
  '/serving_num/', '//serving_num', '/SERVING_NUM', '/serving_num;x=1', '/serving_num%3F', '/serving_num%2F', '/serving_num%ZZ',
  '/serving_nu', '/serving_numx', '/private/serving_num', '/private/../serving_num', '/healthz', '/', '/nope',
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE'];

describe('RouteScope', () => {
  let app: FastifyInstance;
  let port: number;
  const scope = new RouteScope(ROUTER_OPTIONS);

  before(async () => {
    app = Fastify({ routerOptions: ROUTER_OPTIONS });
    // Every answer says which route answered it in a header (HEAD answers have no body); a 404 says none.
    const answer = async (request: FastifyRequest, reply: FastifyReply) => {
      reply.header('x-route', request.routeOptions.url);
      return 'routed';
    };
    app.get('/healthz', answer);
    app.get('/private/serving_num', answer);
    await app.register(async (inScope) => {
      scope.collect(inScope, { methods: ['OPTIONS'] });
      for (const url of SCOPE_ROUTES) inScope.get(url, answer);
      inScope.post('/serving_num', answer);
      inScope.options('/serving_num', answer);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  after(() => app.close());

  it("names the scope's route for exactly the requests Fastify routes to one, however the target is spelt", async () => {
    let inScope = 0;
    for (const method of METHODS) {
      for (const target of TARGETS) {
        const answer = await rawRequest(port, method, target);
        const routed = answer.headers['x-route'] as string | undefined;
        const expected = routed !== undefined && SCOPE_ROUTES.includes(routed) && method !== 'OPTIONS' ? routed : undefined;
        assert.equal(scope.routeOf(method, target), expected, `${method} ${target} (Fastify: ${answer.status}, route ${routed})`);
        if (expected !== undefined) inScope++;
      }
    }
    // Not a list of misses: plain, percent-encoded and absolute forms above do reach the scope's routes.
    assert.ok(inScope >= 25, `only ${inScope} requests in scope`);
  });

  it('counts HEAD, which Fastify adds for every GET route, as a route of the scope', () => {
    assert.equal(scope.routeOf('HEAD', '/serving_num?event_id=Sample'), '/serving_num');
    assert.equal(scope.routeOf('HEAD', '/serving%5Fnum'), '/serving_num');
    assert.equal(scope.routeOf('HEAD', '/serving_num/'), undefined);
  });

  it('leaves out the methods it was told to skip (CORS preflights)', () => {
    assert.equal(scope.routeOf('OPTIONS', '/serving_num'), undefined);
    assert.equal(scope.routeOf('PUT', '/serving_num'), undefined); // no PUT route in this scope
  });

  it('refuses a route with parameters: which route wins would need all of Fastify\'s table', () => {
    assert.throws(() => new RouteScope(ROUTER_OPTIONS).add('GET', '/events/:id'), /fixed paths only/);
    assert.throws(() => new RouteScope(ROUTER_OPTIONS).add('GET', '/static/*'), /fixed paths only/);
  });
});
