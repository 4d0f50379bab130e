// The place cookie (src/gate/cookies.ts): opaque — the request ID, a capability (leave_queue takes it), shows
// in no decoding of the value — and tamper-proof (AES-256-GCM: any flipped bit is refused). The old readable,
// HMAC-signed format is still read (an upgrade costs nobody their place) and marked to be sent again encrypted.

import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { PlaceCookies, type Place } from '../../src/gate/cookies.ts';

const secret = randomBytes(32);
const place: Place = { eventId: 'Shop', requestId: '5b0e8a4e-7d1c-4f0b-9a57-3c2e8f1d6a90', position: 42, returnTo: '/product/42?color=red' };

/** Every way a reader might try to make sense of a cookie value. */
function decodings(value: string): string[] {
  const out = [value, decodeURIComponent(value)];
  for (const part of [value, ...value.split(/[.~_-]/)]) {
    for (let offset = 0; offset < 4; offset++) {
      const slice = part.slice(offset);
      for (const encoding of ['base64url', 'base64'] as const) {
        const bytes = Buffer.from(slice, encoding);
        out.push(bytes.toString('utf8'), bytes.toString('latin1'), bytes.toString('hex'), bytes.toString('utf16le'));
      }
    }
  }
  return out;
}

/** The old format: base64url JSON, '.', HMAC-SHA256 under the raw secret. */
function legacyCookie(key: Buffer, of: Place): string {
  const body = Buffer.from(JSON.stringify([of.eventId, of.requestId, of.position ?? null, of.returnTo])).toString('base64url');
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}

describe('the place cookie', () => {
  it('reads back what it was given, on any node sharing the secret', () => {
    const value = new PlaceCookies(secret).encode(place);
    assert.deepEqual(new PlaceCookies(secret).decode(value), place);
    const noPosition = { eventId: 'Shop', requestId: 'r-1', returnTo: '/' };
    assert.deepEqual(new PlaceCookies(secret).decode(new PlaceCookies(secret).encode(noPosition)), noPosition);
  });

  it('never shows the request ID (nor the event or the URL) in any decoding', () => {
    const cookies = new PlaceCookies(secret);
    const idBytes = Buffer.from(place.requestId.replaceAll('-', ''), 'hex').toString('latin1');
    for (let i = 0; i < 20; i++) {
      const value = cookies.encode(place);
      for (const text of decodings(value)) {
        for (const hidden of [place.requestId, place.requestId.slice(0, 8), idBytes, 'product/42', '"Shop"']) {
          assert.ok(!text.includes(hidden), `${JSON.stringify(hidden)} readable in ${value}`);
        }
      }
    }
  });

  it('is different every time (a random IV): two cookies of one place cannot be linked by their value', () => {
    const cookies = new PlaceCookies(secret);
    assert.notEqual(cookies.encode(place), cookies.encode(place));
  });

  it('refuses a cookie with any bit flipped, cut short, or made under another secret', () => {
    const cookies = new PlaceCookies(secret);
    const bytes = Buffer.from(cookies.encode(place), 'base64url');
    for (let index = 0; index < bytes.length; index++) {
      for (let bit = 0; bit < 8; bit++) {
        const flipped = Buffer.from(bytes);
        flipped[index] = (flipped[index] as number) ^ (1 << bit);
        assert.equal(cookies.decode(flipped.toString('base64url')), undefined, `byte ${index} bit ${bit}`);
      }
    }
    assert.equal(cookies.decode(bytes.subarray(0, bytes.length - 1).toString('base64url')), undefined);
    assert.equal(cookies.decode(bytes.subarray(0, 28).toString('base64url')), undefined);
    assert.equal(cookies.decode(''), undefined);
    assert.equal(cookies.decode('not a cookie'), undefined);
    assert.equal(new PlaceCookies(randomBytes(32)).decode(cookies.encode(place)), undefined);
  });

  it('still reads the old signed format (an upgrade keeps every place) and marks it to be sent again encrypted', () => {
    const cookies = new PlaceCookies(secret);
    const old = cookies.decode(legacyCookie(secret, place));
    assert.deepEqual(old, place);
    assert.equal(cookies.isLegacy(old as Place), true);
    assert.equal(cookies.isLegacy(cookies.decode(cookies.encode(place)) as Place), false);
    // The old format's signature still decides: another key's, or a changed body, is refused.
    assert.equal(cookies.decode(legacyCookie(randomBytes(32), place)), undefined);
    const [body, signature] = legacyCookie(secret, place).split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify(['Shop', 'someone-else', 1, '/'])).toString('base64url');
    assert.equal(cookies.decode(`${forged}.${signature}`), undefined);
    assert.equal(cookies.decode(`${body}.`), undefined);
  });
});
