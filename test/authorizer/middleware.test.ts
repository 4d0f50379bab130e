import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { REFUSALS, expressAuthorizer, fastifyAuthorizer } from '../../packages/authorizer/src/index.ts';
import type { AuthorizerOptions, RefusalReason, WaitingRoomRequest } from '../../packages/authorizer/src/index.ts';
import { startKeyServer } from './key-server.ts';
import type { KeyServer } from './key-server.ts';
import { EVENT_ID, ISSUER, NOW, accessClaims, generateEventKey, sign, unsigned } from './tokens.ts';
import type { EventKey } from './tokens.ts';

const COOKIE = 'anteroom_token';

/** The same requests, sent over real HTTP to each framework's protected `/store/search`. */
interface Site {
  url: string;
  close: () => Promise<void>;
}

function guardBehaviour(name: string, start: (options: AuthorizerOptions) => Promise<Site>) {
  describe(name, () => {
    let keys: KeyServer;
    let key: EventKey;
    let site: Site;

    before(async () => {
      key = await generateEventKey();
      keys = await startKeyServer(EVENT_ID, [key.publicJwk]);
      site = await start({
        publicKeyUrl: keys.publicKeyUrl,
        eventId: EVENT_ID,
        issuer: ISSUER,
        cookieName: COOKIE,
        clock: () => NOW * 1000,
      });
    });
    after(async () => {
      await site.close();
      await keys.close();
    });

    const get = (headers: Record<string, string> = {}) => fetch(`${site.url}/store/search`, { headers });

    it('lets a valid Bearer token through and hands the claims to the route', async () => {
      const claims = accessClaims();
      const response = await get({ authorization: `Bearer ${await sign(key, claims)}` });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { result: 'Success', request_id: claims.sub, queue_position: 42 });
    });

    it('accepts the raw Authorization header and the configured cookie', async () => {
      assert.equal((await get({ authorization: await sign(key) })).status, 200);
      assert.equal((await get({ cookie: `a=b; ${COOKIE}=${await sign(key)}` })).status, 200);
    });

    it('answers 401 with a JSON error and WWW-Authenticate when no token is presented', async () => {
      const response = await get();
      assert.equal(response.status, 401);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.deepEqual(await response.json(), { error: 'Missing token', reason: 'missing_token' });
    });

    it('answers 403 with a JSON error for an invalid token, and the route does not run', async () => {
      const cases: [string, RefusalReason][] = [
        [`Bearer garbage`, 'malformed_token'],
        [`Bearer ${unsigned(key)}`, 'algorithm_not_allowed'],
        [`Bearer ${await sign(key, accessClaims({ token_use: 'refresh' }))}`, 'wrong_token_use'],
        [`Bearer ${await sign(key, accessClaims({}, NOW - 3600))}`, 'expired'],
      ];
      for (const [authorization, reason] of cases) {
        const response = await get({ authorization });
        assert.equal(response.status, 403, reason);
        assert.equal(response.headers.get('www-authenticate'), null, 'only a 401 names the scheme');
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual(await response.json(), { error: REFUSALS[reason].message, reason });
      }
    });

    it('answers 503 when the signing keys cannot be fetched, so clients retry rather than drop the token', async () => {
      const unreachable = await start({ publicKeyUrl: 'http://127.0.0.1:1/public_key', eventId: EVENT_ID, issuer: ISSUER });
      try {
        const response = await fetch(`${unreachable.url}/store/search`, {
          headers: { authorization: `Bearer ${await sign(key)}` },
        });
        assert.equal(response.status, 503);
        assert.deepEqual(await response.json(), { error: REFUSALS.keys_unavailable.message, reason: 'keys_unavailable' });
      } finally {
        await unreachable.close();
      }
    });
  });
}

guardBehaviour('Fastify onRequest hook', async (options) => {
  const app: FastifyInstance = Fastify();
  await app.register(async (store) => {
    store.addHook('onRequest', fastifyAuthorizer(options));
    store.get('/store/search', async (request) => ({
      result: 'Success',
      request_id: request.waitingRoom?.sub,
      queue_position: request.waitingRoom?.queue_position,
    }));
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, close: () => app.close() };
});

guardBehaviour('Express middleware', async (options) => {
  const app = express();
  app.use('/store', expressAuthorizer(options));
  app.get('/store/search', (req, res) => {
    const { waitingRoom } = req as WaitingRoomRequest;
    res.json({ result: 'Success', request_id: waitingRoom?.sub, queue_position: waitingRoom?.queue_position });
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
});

describe('Fastify onRequest hook: errors that are not refusals', () => {
  it('go to Fastify\'s error handling unchanged (a 500), never answered as a refusal', async () => {
    // The only way a hook meets an error that is not a refusal: reading the options throws (here a getter;
    // the verifier turns every failure of its own into an AuthorizerError).
    const broken = new Error('options broke');
    const options = {
      publicKeyUrl: 'http://127.0.0.1:1/public_key',
      eventId: EVENT_ID,
      issuer: ISSUER,
      get cookieName(): string {
        throw broken;
      },
    };
    const app = Fastify();
    const handled: unknown[] = [];
    app.setErrorHandler((error, _request, reply) => {
      handled.push(error);
      void reply.code(500).send({ error: 'internal' });
    });
    app.addHook('onRequest', fastifyAuthorizer(options));
    app.get('/store/search', async () => ({ result: 'Success' }));
    try {
      const response = await app.inject({ method: 'GET', url: '/store/search' });
      assert.equal(response.statusCode, 500);
      assert.deepEqual(handled, [broken]);
    } finally {
      await app.close();
    }
  });
});
