// The OIDC part of the private API: read a client's settings and secret, rotate the secret.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestNode } from '../support/node.ts';
import {
  CONFIGURED,
  CONFIGURED_SECRET,
  PLAIN,
  REDIRECT_URI,
  REDIRECT_URI_WITH_QUERY,
  SHOP,
  basic,
  issuerOf,
  servedCode,
  startOidcNode,
  tokenRequest,
} from './support.ts';

describe('OIDC private API', () => {
  let node: TestNode;
  before(async () => {
    node = await startOidcNode();
  });
  after(() => node.stop());

  const client = async (eventId: string) => {
    const response = await node.admin('GET', `/oidc/client?event_id=${eventId}`);
    return { status: response.status, cache: response.headers.get('cache-control'), body: (await response.json()) as Record<string, unknown> };
  };
  const rotate = async (eventId: unknown) => {
    const response = await node.admin('POST', '/oidc/rotate_client_secret', { event_id: eventId });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const exchangeWith = async (secret: string) => {
    const code = await servedCode(node);
    return tokenRequest(node, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(SHOP, secret) });
  };

  it('needs the private API credentials', async () => {
    const missing = await fetch(`${node.privateUrl}/oidc/client?event_id=${SHOP}`);
    assert.deepEqual([missing.status, await missing.json()], [401, { error: 'Missing Authentication Token' }]);
    const wrong = await fetch(`${node.privateUrl}/oidc/rotate_client_secret`, {
      method: 'POST',
      headers: { authorization: 'Bearer wrong-token-wrong-token' },
      body: JSON.stringify({ event_id: SHOP }),
    });
    assert.deepEqual([wrong.status, await wrong.json()], [403, { error: 'Forbidden' }]);
    // Not reachable on the public listener's root either.
    assert.equal((await fetch(`${node.url}/oidc/client?event_id=${SHOP}`)).status, 404);
  });

  it('shows client_id, the generated 50-alphanumeric secret (the same every time) and the redirect URIs', async () => {
    const first = await client(SHOP);
    assert.equal(first.status, 200);
    assert.equal(first.cache, 'no-store');
    assert.match(String(first.body.client_secret), /^[A-Za-z0-9]{50}$/);
    assert.deepEqual(first.body, {
      client_id: SHOP,
      client_secret: first.body.client_secret,
      redirect_uris: [REDIRECT_URI, REDIRECT_URI_WITH_QUERY],
    });
    assert.deepEqual((await client(SHOP)).body, first.body);
    assert.equal((await client(CONFIGURED)).body.client_secret, CONFIGURED_SECRET);
  });

  it('unknown events and events without OIDC are errors', async () => {
    assert.deepEqual(await client('Nope'), { status: 400, cache: 'no-store', body: { error: 'Invalid event ID' } });
    assert.deepEqual((await client(PLAIN)).body, { error: 'OpenID Connect is not enabled for this event' });
    assert.equal((await client(PLAIN)).status, 404);
    const missing = await node.admin('GET', '/oidc/client');
    assert.deepEqual(await missing.json(), { error: 'Missing required request parameters: [event_id]' });
    assert.deepEqual(await rotate(7), { status: 400, body: { error: 'Invalid request body' } });
    assert.deepEqual(await rotate(PLAIN), { status: 404, body: { error: 'OpenID Connect is not enabled for this event' } });
  });

  it('rotation: a new secret works at once and the old one stops working', async () => {
    const old = String((await client(SHOP)).body.client_secret);
    assert.equal((await exchangeWith(old)).status, 200);
    const rotated = await rotate(SHOP);
    assert.equal(rotated.status, 200);
    const fresh = String(rotated.body.client_secret);
    assert.match(fresh, /^[A-Za-z0-9]{50}$/);
    assert.notEqual(fresh, old);
    assert.equal((await client(SHOP)).body.client_secret, fresh);
    const refused = await exchangeWith(old);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'invalid_client');
    assert.equal((await exchangeWith(fresh)).status, 200);
  });

  it('rotation also replaces a secret set in the configuration file', async () => {
    // On a node of its own: the other tests here read the configured secret.
    const own = await startOidcNode();
    try {
      const rotation = await own.admin('POST', '/oidc/rotate_client_secret', { event_id: CONFIGURED });
      const rotated = String(((await rotation.json()) as Record<string, unknown>).client_secret);
      assert.notEqual(rotated, CONFIGURED_SECRET);
      const shown = (await (await own.admin('GET', `/oidc/client?event_id=${CONFIGURED}`)).json()) as Record<string, unknown>;
      assert.equal(shown.client_secret, rotated);
      const response = await fetch(`${issuerOf(own)}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CONFIGURED, CONFIGURED_SECRET) },
        body: 'grant_type=authorization_code&code=x&redirect_uri=y',
      });
      assert.equal(response.status, 401);
    } finally {
      await own.stop();
    }
  });
});
