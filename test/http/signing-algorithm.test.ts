// A room's signing_algorithm through the public API (issue 15): /public_key serves the key of the room's
// algorithm, the tokens are signed with it, the JWKS lists it, and the authorizer library (fetching keys over
// HTTP, as a protected site does) accepts the access token; an RS256 room next to it is unchanged. A re-claim
// rebuilds the stored set without signing.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createVerifier } from '../../packages/authorizer/src/verify.ts';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';
import { join, read, serveUpTo, type TokenBody } from '../support/api-calls.ts';

describe('signing_algorithm per room', () => {
  let node: TestNode;
  const ISSUER = 'https://rooms.example';
  before(async () => {
    node = await startTestNode({
      events: [
        eventSettings('Classic', { issuer: ISSUER }),
        eventSettings('Fast', { issuer: ISSUER, signing_algorithm: 'ES256' }),
        eventSettings('Edwards', { issuer: ISSUER, signing_algorithm: 'EdDSA' }),
      ],
    });
  });
  after(() => node.stop());

  const header = (token: string) => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { alg: string; kid: string };

  for (const [room, alg, kty] of [['Classic', 'RS256', 'RSA'], ['Fast', 'ES256', 'EC'], ['Edwards', 'EdDSA', 'OKP']] as const) {
    it(`${room}: /public_key is its ${alg} key, the tokens are ${alg}, and the authorizer accepts them by /public_key and by JWKS`, async () => {
      const key = await read<{ kty: string; alg: string; kid: string }>(node.get(`/public_key?event_id=${room}`));
      assert.equal(key.status, 200, key.text);
      assert.deepEqual([key.body.kty, key.body.alg], [kty, alg]);
      const jwks = await read<{ keys: { kid: string; alg: string }[] }>(node.get(`/jwks.json?event_id=${room}`));
      assert.equal(jwks.status, 200, jwks.text);
      assert.ok(jwks.body.keys.some((k) => k.kid === key.body.kid && k.alg === alg));

      const id = await join(node, room);
      await serveUpTo(node, 1, room);
      const tokens = await read<TokenBody>(node.post('/generate_token', { event_id: room, request_id: id }));
      assert.equal(tokens.status, 200, tokens.text);
      assert.deepEqual(header(tokens.body.access_token), { ...header(tokens.body.access_token), alg, kid: key.body.kid });
      const verifier = createVerifier({ publicKeyUrl: `${node.url}/public_key`, eventId: room, issuer: ISSUER, clock: node.clock.now });
      assert.equal((await verifier.verify(tokens.body.access_token)).sub, id);
      const byJwks = createVerifier({ jwksUrl: `${node.url}/jwks.json?event_id=${room}`, eventId: room, issuer: ISSUER, clock: node.clock.now });
      assert.equal((await byJwks.verify(tokens.body.access_token)).sub, id);
    });
  }
});

describe('stored token sets: a re-claim never signs again', () => {
  it('an ES256 set claimed again on a restarted node is byte-identical (ECDSA signing again would differ)', async () => {
    const dir = mkdtempSync(joinPath(tmpdir(), 'anteroom-stored-sets-'));
    const config = {
      store: { kind: 'sqlite' as const, path: joinPath(dir, 'anteroom.db') },
      events: [eventSettings('Fast', { signing_algorithm: 'ES256' })],
    };
    try {
      const first = await startTestNode(config);
      let id: string;
      let tokens: TokenBody;
      try {
        id = await join(first, 'Fast');
        await serveUpTo(first, 1, 'Fast');
        tokens = (await read<TokenBody>(first.post('/generate_token', { event_id: 'Fast', request_id: id }))).body;
      } finally {
        await first.stop();
      }
      const second = await startTestNode(config);
      try {
        const again = await read<TokenBody>(second.post('/generate_token', { event_id: 'Fast', request_id: id }));
        assert.equal(again.status, 200, again.text);
        for (const name of ['access_token', 'refresh_token', 'id_token'] as const) assert.equal(again.body[name], tokens[name]);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
