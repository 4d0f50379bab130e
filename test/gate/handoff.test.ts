// The hand-off without a gate (spec rooms.md §5): the page's return_to only to allowed origins (never an open
// redirect), the one-time anteroom_handoff code, POST /handoff, and the authorizer's Express and Fastify
// middleware doing the exchange and setting the cookie.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { expressAuthorizer, expressHandoff, fastifyAuthorizer, fastifyHandoff, type WaitingRoomRequest } from '../../packages/authorizer/src/index.ts';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';
import { CookieJar } from './support.ts';

const SITE = 'https://shop.example';

describe('the hand-off', () => {
  let node: TestNode;

  before(async () => {
    node = await startTestNode({ events: [eventSettings('Shop', { allowed_return_origins: [SITE, 'http://127.0.0.1:1'] })] });
  });
  after(() => node.stop());

  async function servedVisitor(): Promise<string> {
    const { api_request_id: id } = (await (await node.post('/assign_queue_num', { event_id: 'Shop' })).json()) as { api_request_id: string };
    const { queue_number: position } = (await (await node.get(`/queue_num?event_id=Shop&request_id=${id}`)).json()) as { queue_number: number };
    const { serving_counter: serving } = (await (await node.get('/serving_num?event_id=Shop')).json()) as { serving_counter: number };
    if (position > serving) assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Shop', increment_by: position - serving })).status, 200);
    return id;
  }

  async function code(requestId: string, returnTo: string): Promise<Response> {
    return node.post('/handoff_code', { event_id: 'Shop', request_id: requestId, return_to: returnTo });
  }

  it('return_to outside allowed_return_origins is refused: no open redirect', async () => {
    const id = await servedVisitor();
    for (const evil of [
      'https://evil.example/',
      'https://shop.example.evil.example/',
      'https://shop.example@evil.example/',
      'http://shop.example/',
      'https://shop.example:8443/',
      'javascript:alert(1)',
      '//evil.example/',
      '/relative',
    ]) {
      const res = await code(id, evil);
      assert.equal(res.status, 400, evil);
      assert.deepEqual(await res.json(), { error: 'return_to is not an allowed origin of this room' });
    }
  });

  it('a served visitor gets a one-time code on return_to; the site exchanges it once', async () => {
    const id = await servedVisitor();
    const res = await code(id, `${SITE}/checkout?step=2`);
    assert.equal(res.status, 200);
    const { location } = (await res.json()) as { location: string };
    const url = new URL(location);
    assert.equal(`${url.origin}${url.pathname}`, `${SITE}/checkout`);
    assert.equal(url.searchParams.get('step'), '2');
    const handoff = url.searchParams.get('anteroom_handoff') ?? '';
    assert.ok(handoff.length > 40);
    const first = await node.post('/handoff', { event_id: 'Shop', code: handoff });
    assert.equal(first.status, 200);
    const tokens = (await first.json()) as { access_token: string; token_type: string };
    assert.equal(tokens.token_type, 'Bearer');
    assert.equal(JSON.parse(Buffer.from(tokens.access_token.split('.')[1] ?? '', 'base64url').toString()).sub, id);
    const second = await node.post('/handoff', { event_id: 'Shop', code: handoff });
    assert.equal(second.status, 410);
    const forged = await node.post('/handoff', { event_id: 'Shop', code: `${handoff.slice(0, -4)}AAAA` });
    assert.equal(forged.status, 404);
    assert.equal((await node.post('/handoff', { event_id: 'Shop', code: 'nonsense' })).status, 404);
  });

  it('a visitor not served yet gets 202, and a stale code is refused', async () => {
    const { api_request_id: waiting } = (await (await node.post('/assign_queue_num', { event_id: 'Shop' })).json()) as { api_request_id: string };
    assert.equal((await code(waiting, `${SITE}/`)).status, 202);
    const id = await servedVisitor();
    const { location } = (await (await code(id, `${SITE}/`)).json()) as { location: string };
    node.clock.advance(121);
    const stale = await node.post('/handoff', { event_id: 'Shop', code: new URL(location).searchParams.get('anteroom_handoff') });
    assert.equal(stale.status, 404);
  });

  describe('the authorizer middleware exchanges the code and sets the cookie', () => {
    async function freshCode(path: string): Promise<string> {
      const id = await servedVisitor();
      const { location } = (await (await code(id, `${SITE}${path}`)).json()) as { location: string };
      const url = new URL(location);
      return `${url.pathname}${url.search}`;
    }

    const options = () => ({ eventId: 'Shop', issuer: node.url, publicKeyUrl: `${node.url}/public_key`, clock: node.clock.now, cookieName: 'anteroom_token' });

    it('Express', async () => {
      const app = express();
      app.use(expressHandoff({ publicApiUrl: node.url, eventId: 'Shop' }));
      app.use(expressAuthorizer(options()));
      app.get('/checkout', (req, res) => {
        res.json({ in: (req as unknown as WaitingRoomRequest).waitingRoom?.sub });
      });
      const server = app.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        await checkSite(base, await freshCode('/checkout?x=1'));
      } finally {
        server.close();
      }
    });

    it('Fastify', async () => {
      const app: FastifyInstance = Fastify();
      app.addHook('onRequest', fastifyHandoff({ publicApiUrl: node.url, eventId: 'Shop' }));
      app.addHook('onRequest', fastifyAuthorizer(options()));
      app.get('/checkout', async (request) => ({ in: request.waitingRoom?.sub }));
      await app.listen({ port: 0, host: '127.0.0.1' });
      try {
        await checkSite(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, await freshCode('/checkout?x=1'));
      } finally {
        await app.close();
      }
    });

    async function checkSite(base: string, pathWithCode: string): Promise<void> {
      const jar = new CookieJar();
      const arrival = await jar.fetch(`${base}${pathWithCode}`);
      assert.equal(arrival.status, 303);
      assert.equal(arrival.headers.get('location'), '/checkout?x=1', 'the code leaves the URL');
      assert.ok(jar.cookies.has('anteroom_token'));
      assert.match(jar.attributes.get('anteroom_token') ?? '', /HttpOnly/);
      const page = await jar.fetch(`${base}/checkout?x=1`);
      assert.equal(page.status, 200);
      assert.ok(((await page.json()) as { in?: string }).in);
      // The same code again: no cookie (good once); the guard refuses the visitor.
      const replay = new CookieJar();
      assert.equal((await replay.fetch(`${base}${pathWithCode}`)).status, 303);
      assert.ok(!replay.cookies.has('anteroom_token'));
      assert.equal((await replay.fetch(`${base}/checkout?x=1`)).status, 401);
    }
  });
});
