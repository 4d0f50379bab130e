// What an Idempotency-Key names (src/domain/idempotency-key.ts): one request ID per room, client address, key
// window and key — so the same key in another room, from another address or a day later is another join — and
// which windows a call looks in.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEY_RETRY_SEC, KEY_WINDOW_SEC, keyWindows, readIdempotencyKey, requestIdForIdempotencyKey } from '../../src/domain/idempotency-key.ts';

describe('Idempotency-Key', () => {
  const key = '8e03978e-40d5-43e8-bc93-6894a57f9324';

  it('names one request ID per room, client, window and key; any of them changed, another', () => {
    const base = requestIdForIdempotencyKey('Shop', key, '203.0.113.7', 20_414);
    assert.equal(requestIdForIdempotencyKey('Shop', key, '203.0.113.7', 20_414), base);
    assert.match(base, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const others = [
      requestIdForIdempotencyKey('Other', key, '203.0.113.7', 20_414),
      requestIdForIdempotencyKey('Shop', key, '198.51.100.9', 20_414),
      requestIdForIdempotencyKey('Shop', key, '203.0.113.7', 20_415),
      requestIdForIdempotencyKey('Shop', `${key}x`, '203.0.113.7', 20_414),
      // The fields are separated: moving characters from one to the next is not the same input.
      requestIdForIdempotencyKey('Shop\u0000203.0.113.7', key, '', 20_414),
    ];
    assert.equal(new Set([base, ...others]).size, others.length + 1);
  });

  it('looks back one window during the first hour of a window only', () => {
    const day = 20_414 * KEY_WINDOW_SEC;
    assert.deepEqual(keyWindows(day), { current: 20_414, previous: 20_413 });
    assert.deepEqual(keyWindows(day + KEY_RETRY_SEC - 1), { current: 20_414, previous: 20_413 });
    assert.deepEqual(keyWindows(day + KEY_RETRY_SEC), { current: 20_414, previous: null });
    assert.deepEqual(keyWindows(day + KEY_WINDOW_SEC - 1), { current: 20_414, previous: null });
  });

  it('reads the header strictly: a structured-field string or a bare token of 16–64 safe characters', () => {
    assert.equal(readIdempotencyKey(undefined), undefined);
    assert.equal(readIdempotencyKey(`"${key}"`), key);
    assert.equal(readIdempotencyKey(key), key);
    for (const bad of ['', '""', '"', 'short', 'x'.repeat(65), `"${key}`, `${key}"`, 'a b c d e f g h i j k', 'ключ-ключ-ключ-ключ', `${key}, ${key}`]) {
      assert.throws(() => readIdempotencyKey(bad), /Idempotency-Key/, bad);
    }
    assert.throws(() => readIdempotencyKey(['a', 'b']), /Idempotency-Key/, 'an array (the header twice, as some servers give it)');
  });
});
