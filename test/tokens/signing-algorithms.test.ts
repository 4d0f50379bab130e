// Per-room signing algorithms (issue 15): RS256 stays the default; ES256 and EdDSA keys are derived from the
// room's stored RSA key, so every node (every KeyRing on the same store) signs with the same key; the JWKS lists
// all three; the authorizer library verifies each with its own algorithm and nothing else.

import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { verifyAccessTokenWithKeys } from '../../packages/authorizer/src/verify.ts';
import { newTokenRecord } from '../../src/domain/claims.ts';
import { parseRoomSettings } from '../../src/domain/room-settings.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { KeyRing, type SigningAlgorithm } from '../../src/tokens/keys.ts';
import { derToJoseSignature, TokenSigner } from '../../src/tokens/signer.ts';

const NOW = 1_800_000_000;
const ISSUER = 'https://rooms.example';

describe('signing algorithms', () => {
  const store = new SqliteStore({ path: ':memory:' });
  after(() => store.close());
  const keys = new KeyRing(store, () => NOW);
  const signer = new TokenSigner(keys);

  const tokensOf = async (algorithm: SigningAlgorithm, requestId = 'r-1') => {
    const key = await keys.current('E', algorithm);
    const record = newTokenRecord({ requestId, position: 7, now: NOW, validityPeriod: 60, issuer: ISSUER, kid: key.kid });
    return { key, set: await signer.sign('E', record) };
  };
  const header = (token: string) => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { alg: string; kid: string };
  const jwks = async () => ({ keys: (await keys.all('E')).map((k) => k.publicJwk) });
  const rules = { eventId: 'E', issuer: ISSUER, clock: () => NOW * 1000 };

  it('the setting defaults to RS256 and takes ES256 or EdDSA, nothing else', () => {
    const parsed = parseRoomSettings({ event_id: 'E' });
    assert.ok(parsed.ok && parsed.settings.signing_algorithm === 'RS256');
    for (const algorithm of ['ES256', 'EdDSA']) {
      const chosen = parseRoomSettings({ event_id: 'E', signing_algorithm: algorithm });
      assert.ok(chosen.ok && chosen.settings.signing_algorithm === algorithm);
    }
    for (const wrong of ['HS256', 'none', 'es256', 'RS512']) {
      const refused = parseRoomSettings({ event_id: 'E', signing_algorithm: wrong });
      assert.ok(!refused.ok);
      assert.deepEqual(refused.problem.path, ['signing_algorithm']);
    }
  });

  for (const algorithm of ['RS256', 'ES256', 'EdDSA'] as const) {
    it(`${algorithm}: all three tokens carry alg ${algorithm} and the key's kid; the authorizer verifies the access token from the JWKS`, async () => {
      const { key, set } = await tokensOf(algorithm);
      for (const token of [set.access_token, set.refresh_token, set.id_token]) {
        assert.deepEqual({ ...header(token), typ: undefined }, { alg: algorithm, kid: key.kid, typ: undefined });
      }
      const claims = await verifyAccessTokenWithKeys(set.access_token, await jwks(), rules);
      assert.equal(claims.queue_position, 7);
      // And with the bare JWK /public_key serves for a room of that algorithm.
      await verifyAccessTokenWithKeys(set.access_token, key.publicJwk, rules);
    });
  }

  it('ES256 signatures are JWS r || s (64 bytes), checked with plain node:crypto too', async () => {
    const { key, set } = await tokensOf('ES256', 'r-2');
    const [h, p, s] = set.access_token.split('.') as [string, string, string];
    const signature = Buffer.from(s, 'base64url');
    assert.equal(signature.length, 64);
    const publicKey = createPublicKey({ key: key.publicJwk as never, format: 'jwk' });
    assert.ok(verify('sha256', Buffer.from(`${h}.${p}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature));
  });

  it('the DER → r || s conversion ES256 signing uses: right for every length of r and s, refuses a non-DER', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jose = { key: publicKey, dsaEncoding: 'ieee-p1363' } as const;
    // 2,000 signatures: about 1 in 256 has an r or s of 31 bytes or less (no leading zero byte), half of them 33.
    const lengths = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const data = Buffer.from(`input ${i}`);
      const der = sign('sha256', data, privateKey);
      lengths.add(der[3] as number);
      const converted = derToJoseSignature(der);
      assert.equal(converted.length, 64);
      assert.ok(verify('sha256', data, jose, converted), `signature ${i}`);
    }
    assert.ok(lengths.has(33) && lengths.has(32), `r lengths seen: ${[...lengths].join(', ')}`);
    // Short integers by construction: r = 1, s = 0x80 (a leading zero byte keeps it positive).
    const short = derToJoseSignature(Buffer.from([0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x02, 0x00, 0x80]));
    assert.equal(short.toString('hex'), `${'00'.repeat(31)}01${'00'.repeat(31)}80`);
    for (const bad of [
      Buffer.from([0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]), // not a SEQUENCE
      Buffer.from([0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]), // length disagrees
      Buffer.from([0x30, 0x06, 0x02, 0x01, 0x01, 0x03, 0x01, 0x01]), // s not an INTEGER
      Buffer.from([0x30, 0x25, 0x02, 0x21, 0x01, ...Array<number>(32).fill(1), 0x02, 0x00]), // 33 bytes without the zero
    ]) {
      assert.throws(() => derToJoseSignature(bad), /not a DER ECDSA signature/);
    }
  });

  it('every KeyRing on the same store derives the same ES256 and EdDSA keys; another room has others', async () => {
    const other = new KeyRing(store, () => NOW);
    for (const algorithm of ['ES256', 'EdDSA'] as const) {
      assert.deepEqual((await other.current('E', algorithm)).publicJwk, (await keys.current('E', algorithm)).publicJwk);
      assert.notDeepEqual((await other.current('F', algorithm)).publicJwk, (await keys.current('E', algorithm)).publicJwk);
    }
    const kids = (await keys.all('E')).map((k) => k.kid);
    assert.equal(new Set(kids).size, 3);
    assert.deepEqual((await keys.all('E')).map((k) => k.publicJwk.alg), ['RS256', 'ES256', 'EdDSA']);
  });

  it('a token only verifies with the algorithm of the key its kid names (no algorithm switching)', async () => {
    const es = await tokensOf('ES256', 'r-3');
    const ed = await tokensOf('EdDSA', 'r-3');
    // The ES256 token relabelled with the EdDSA key's kid, and the other way round: refused.
    const relabel = (token: string, kid: string) => {
      const [h, p, s] = token.split('.') as [string, string, string];
      const head = { ...JSON.parse(Buffer.from(h, 'base64url').toString()), kid };
      return `${Buffer.from(JSON.stringify(head)).toString('base64url')}.${p}.${s}`;
    };
    await assert.rejects(verifyAccessTokenWithKeys(relabel(es.set.access_token, ed.key.kid), await jwks(), rules));
    await assert.rejects(verifyAccessTokenWithKeys(relabel(ed.set.access_token, es.key.kid), await jwks(), rules));
    const rsaKid = (await keys.current('E', 'RS256')).kid;
    await assert.rejects(verifyAccessTokenWithKeys(relabel(es.set.access_token, rsaKid), await jwks(), rules));
  });
});
