// The token signer's cache: a token set is signed once and handed out again (RS256 PKCS#1 v1.5 is
// deterministic, so a second signature would be byte-identical work for nothing), the cache is bounded by
// evicting its oldest set, and a failed signing is not kept.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newTokenRecord, type TokenRecord } from '../../src/domain/claims.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { KeyRing } from '../../src/tokens/keys.ts';
import { TokenSigner } from '../../src/tokens/signer.ts';

describe('token signer cache', () => {
  const store = new SqliteStore({ path: ':memory:' });
  const keys = new KeyRing(store, () => 1_000);
  let kid = '';
  before(async () => {
    kid = (await keys.current('E')).kid;
  });
  after(() => store.close());

  const record = (requestId: string): TokenRecord =>
    newTokenRecord({ requestId, position: 1, now: 1_000, validityPeriod: 60, issuer: 'https://i', kid });

  it('hands out the same signing for the same record instead of signing again', async () => {
    const signer = new TokenSigner(keys);
    const first = signer.sign('E', record('a'));
    assert.equal(signer.sign('E', record('a')), first);
    assert.notEqual(signer.sign('E', record('b')), first);
    assert.notEqual(signer.sign('F', record('a')), first, 'the event is part of the key');
    await Promise.allSettled([first]);
  });

  it('keeps at most maxCached sets, evicting the oldest first', async () => {
    const signer = new TokenSigner(keys, 2);
    const a = signer.sign('E', record('a'));
    const b = signer.sign('E', record('b'));
    assert.equal(signer.sign('E', record('a')), a, 'two sets fit');
    const c = signer.sign('E', record('c')); // a third: the oldest (a) goes
    assert.equal(signer.sign('E', record('c')), c);
    assert.equal(signer.sign('E', record('b')), b, 'b is younger than a and stays');
    const again = signer.sign('E', record('a'));
    assert.notEqual(again, a, 'a was evicted and is signed anew');
    assert.deepEqual(await again, await a, 'to the same tokens: the signature is deterministic');
    assert.notEqual(signer.sign('E', record('b')), b, 'signing a again evicted b, now the oldest');
    await Promise.all([c]);
  });

  it('does not keep a failed signing: the next call tries again', async () => {
    const signer = new TokenSigner(keys);
    const orphan = { ...record('a'), kid: 'no-such-key' };
    const failed = signer.sign('E', orphan);
    await assert.rejects(failed, /signing key no-such-key of event E is missing/);
    const retried = signer.sign('E', orphan);
    assert.notEqual(retried, failed);
    await assert.rejects(retried);
  });
});
