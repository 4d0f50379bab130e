// Which JWKs the authorizer takes as verification keys, and for which algorithm (packages/authorizer/src/keys.ts
// verificationKey), and the canonical spelling of a token (verify.ts isCanonicalCompactJws): the ES256 and
// EdDSA keys beside RS256, each key bound to its own algorithm, everything else skipped. In the mutation scope
// `authorizer`.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { importVerificationKeys } from '../../packages/authorizer/src/keys.ts';
import { isCanonicalCompactJws } from '../../packages/authorizer/src/verify.ts';

async function publicJwk(alg: 'RS256' | 'ES256' | 'EdDSA' | 'ES384'): Promise<JWK> {
  const { publicKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  return exportJWK(publicKey);
}

/** The imported keys of a document, as kid → "<algorithm name> <curve>". */
async function imported(document: unknown): Promise<Record<string, string>> {
  const keys = await importVerificationKeys(document);
  const out: Record<string, string> = {};
  for (const [kid, key] of keys) {
    const algorithm = key.algorithm as { name: string; namedCurve?: string };
    out[typeof kid === 'string' ? kid : '(no kid)'] = `${algorithm.name}${algorithm.namedCurve ? ` ${algorithm.namedCurve}` : ''}`;
  }
  return out;
}

describe('verification keys by algorithm', () => {
  it('takes RS256, ES256 (P-256) and EdDSA (Ed25519) public keys, with or without alg, each for its own algorithm', async () => {
    const [rsa, ec, ed] = await Promise.all([publicJwk('RS256'), publicJwk('ES256'), publicJwk('EdDSA')]);
    const document = {
      keys: [
        { ...rsa, kid: 'r' }, { ...ec, kid: 'e' }, { ...ed, kid: 'd' },
        { ...rsa, kid: 'r2', alg: 'RS256', use: 'sig' }, { ...ec, kid: 'e2', alg: 'ES256', use: 'sig' }, { ...ed, kid: 'd2', alg: 'EdDSA', use: 'sig' },
      ],
    };
    assert.deepEqual(await imported(document), {
      r: 'RSASSA-PKCS1-v1_5', e: 'ECDSA P-256', d: 'Ed25519', r2: 'RSASSA-PKCS1-v1_5', e2: 'ECDSA P-256', d2: 'Ed25519',
    });
    // A bare JWK (what /public_key serves) of each kind, too.
    assert.deepEqual(await imported({ ...ec, kid: 'bare' }), { bare: 'ECDSA P-256' });
    assert.deepEqual(await imported(ed), { '(no kid)': 'Ed25519' });
    // Private members are not imported: the key stays public.
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const withPrivate = await importVerificationKeys({ ...(await exportJWK(privateKey)), kid: 'p' });
    assert.equal(withPrivate.get('p')?.type, 'public');
  });

  it('skips an EC or OKP key of another curve, without its coordinates, named for another algorithm, or of another use', async () => {
    const [ec, ed, p384] = await Promise.all([publicJwk('ES256'), publicJwk('EdDSA'), publicJwk('ES384')]);
    const skipped: Record<string, unknown>[] = [
      { ...p384, kid: 'P-384' },
      { ...ec, crv: 'P-384', kid: 'EC named P-384' },
      { ...ec, kty: 'OKP', kid: 'EC as OKP' },
      { ...ed, kty: 'EC', kid: 'OKP as EC' },
      { ...ed, crv: 'X25519', kid: 'X25519' },
      { ...ec, x: undefined, kid: 'EC without x' },
      { ...ec, y: undefined, kid: 'EC without y' },
      { ...ec, y: 7, kid: 'EC y a number' },
      { ...ed, x: undefined, kid: 'OKP without x' },
      { ...ec, alg: 'RS256', kid: 'EC for RS256' },
      { ...ec, alg: 'EdDSA', kid: 'EC for EdDSA' },
      { ...ed, alg: 'ES256', kid: 'OKP for ES256' },
      { ...ed, alg: 'RS256', kid: 'OKP for RS256' },
      { ...ec, use: 'enc', kid: 'EC for encryption' },
    ];
    for (const jwk of skipped) assert.deepEqual(await imported({ keys: [jwk] }), {}, String(jwk.kid));
    // Skipped entries do not hide the valid ones beside them.
    assert.deepEqual(await imported({ keys: [...skipped, { ...ec, kid: 'good' }] }), { good: 'ECDSA P-256' });
  });
});

describe('a token only in its canonical spelling', () => {
  it('three segments, no more, no fewer', () => {
    assert.equal(isCanonicalCompactJws('AAAA.AAAA.AAAA'), true);
    assert.equal(isCanonicalCompactJws('AAAA.AAAA'), false);
    assert.equal(isCanonicalCompactJws('AAAA.AAAA.AAAA.AAAA'), false);
    assert.equal(isCanonicalCompactJws('AAAA'), false);
  });

  it('a segment never leaves one character over (6 bits cannot end a byte)', () => {
    assert.equal(isCanonicalCompactJws('AAAAA.AAAA.AAAA'), false);
    assert.equal(isCanonicalCompactJws('AAAA.A.AAAA'), false);
  });

  it('the spare bits of the last character are 0: four after two characters, two after three', () => {
    // 'E' is 000100: its low two bits are 0, its low four are not.
    assert.equal(isCanonicalCompactJws('AA.AA.AA'), true);
    assert.equal(isCanonicalCompactJws('AE.AA.AA'), false);
    assert.equal(isCanonicalCompactJws('AQ.AA.AA'), true); // 'Q' is 010000
    assert.equal(isCanonicalCompactJws('AAE.AA.AA'), true);
    assert.equal(isCanonicalCompactJws('AAB.AA.AA'), false);
    assert.equal(isCanonicalCompactJws('AA=.AA.AA'), false);
  });
});
