// The hand-off without a gate (src/domain/handoff.ts), without the service: which `return_to` is allowed, what a
// code holds and reads back, where it is stored, and where the visitor is sent. The exchange itself (once, 410
// the second time): test/domain/waiting-room-service.test.ts.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  allowedReturnUrl,
  HANDOFF_CODE_TTL_SEC,
  HANDOFF_PARAMETER,
  handoffLocation,
  handoffStoreName,
  newHandoffCode,
  readHandoffCode,
} from '../../src/domain/handoff.ts';

const ORIGINS = ['https://shop.example', 'http://localhost:8080'];

describe('allowedReturnUrl', () => {
  it('accepts a URL on an allowed origin, path and query kept', () => {
    const url = allowedReturnUrl('https://shop.example/cart?x=1#top', ORIGINS);
    assert.ok(url instanceof URL);
    assert.equal(url.href, 'https://shop.example/cart?x=1#top');
    assert.equal(allowedReturnUrl('http://localhost:8080/', ORIGINS)?.href, 'http://localhost:8080/');
  });

  it('compares parsed origins: another scheme, host or port is refused; an explicit default port is the same origin', () => {
    assert.equal(allowedReturnUrl('http://shop.example/', ORIGINS), undefined);
    assert.equal(allowedReturnUrl('https://shop.example.evil.example/', ORIGINS), undefined);
    assert.equal(allowedReturnUrl('https://shop.example:8443/', ORIGINS), undefined);
    assert.equal(allowedReturnUrl('http://localhost:8081/', ORIGINS), undefined);
    assert.equal(allowedReturnUrl('https://shop.example:443/a', ORIGINS)?.href, 'https://shop.example/a');
  });

  it('refuses anything but a string of at most 2048 characters', () => {
    assert.equal(allowedReturnUrl(undefined, ORIGINS), undefined);
    assert.equal(allowedReturnUrl(42, ORIGINS), undefined);
    assert.equal(allowedReturnUrl(new URL('https://shop.example/'), ORIGINS), undefined);
    const at = (length: number) => `https://shop.example/${'a'.repeat(length - 'https://shop.example/'.length)}`;
    assert.equal(at(2048).length, 2048);
    assert.equal(allowedReturnUrl(at(2048), ORIGINS)?.href, at(2048));
    assert.equal(allowedReturnUrl(at(2049), ORIGINS), undefined);
  });

  it('refuses everything when the room lists no origin', () => {
    assert.equal(allowedReturnUrl('https://shop.example/', undefined), undefined);
    assert.equal(allowedReturnUrl('https://shop.example/', []), undefined);
  });

  it('refuses what is not a URL, a scheme other than http(s), and credentials in the URL', () => {
    assert.equal(allowedReturnUrl('/cart', ORIGINS), undefined);
    assert.equal(allowedReturnUrl('not a url', ORIGINS), undefined);
    // An allowed "origin" that is no URL matches nothing, and does not stop a later one from matching.
    assert.equal(allowedReturnUrl('https://shop.example/', ['nonsense', 'https://shop.example'])?.href, 'https://shop.example/');
    assert.equal(allowedReturnUrl('https://shop.example/', ['nonsense']), undefined);
    // The origin of a non-http URL is "null", the same as that of another: the scheme is checked first.
    assert.equal(allowedReturnUrl('javascript:alert(1)', ['javascript:x']), undefined);
    assert.equal(allowedReturnUrl('data:text/html,hi', ['data:text/plain,x']), undefined);
    assert.equal(allowedReturnUrl('https://user@shop.example/', ORIGINS), undefined);
    assert.equal(allowedReturnUrl('https://:secret@shop.example/', ORIGINS), undefined);
    assert.equal(allowedReturnUrl('https://user:secret@shop.example/', ORIGINS), undefined);
  });
});

describe('hand-off codes', () => {
  it('a code names its request ID and creation time, with 192 random bits after the dot', () => {
    const { code } = newHandoffCode('E', 'req-1', 1_800_000_000);
    const [payload, random] = code.split('.');
    assert.ok(payload && random);
    assert.deepEqual(JSON.parse(Buffer.from(payload, 'base64url').toString()), ['req-1', 1_800_000_000]);
    assert.match(random, /^[A-Za-z0-9_-]{32}$/, '24 bytes, base64url');
    assert.deepEqual(readHandoffCode(code), { requestId: 'req-1', createdSec: 1_800_000_000 });
    assert.notEqual(newHandoffCode('E', 'req-1', 1_800_000_000).code, code, 'unguessable: never the same twice');
  });

  it("is stored under the SHA-256 of the whole code, in its room's name", () => {
    const made = newHandoffCode('E', 'req-1', 1_800_000_000);
    const hash = createHash('sha256').update(made.code).digest('base64url');
    assert.equal(made.storeName, `handoff:E:${hash}`);
    assert.equal(handoffStoreName('E', made.code), made.storeName);
    assert.equal(handoffStoreName('F', made.code), `handoff:F:${hash}`);
    assert.notEqual(handoffStoreName('E', `${made.code}x`), made.storeName);
  });

  it('a malformed code reads as nothing', () => {
    const payload = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    assert.equal(readHandoffCode(undefined), undefined);
    assert.equal(readHandoffCode(42), undefined);
    assert.equal(readHandoffCode(payload(['r', 1])), undefined, 'no dot');
    assert.equal(readHandoffCode(`${payload(['r', 1])}A`), undefined, 'no dot, a character more (which base64url decoding would drop)');
    assert.equal(readHandoffCode(`.${payload(['r', 1])}`), undefined, 'nothing before the dot');
    assert.equal(readHandoffCode(`${payload(['r', 1]).slice(0, 5)}.x`), undefined, 'not JSON');
    assert.equal(readHandoffCode(`${payload([1, 1])}.x`), undefined, 'the request ID not a string');
    assert.equal(readHandoffCode(`${payload(['r', '1'])}.x`), undefined, 'the time not a number');
    assert.equal(readHandoffCode(`${payload(null)}.x`), undefined, 'not an array');
    assert.deepEqual(readHandoffCode(`${payload(['r', 1])}.x`), { requestId: 'r', createdSec: 1 });
  });

  it('reads a code of up to 512 characters, no longer', () => {
    // A valid payload, the part after the dot padded to the length wanted.
    const base = `${Buffer.from(JSON.stringify(['r', 1])).toString('base64url')}.`;
    const of = (length: number) => base + 'x'.repeat(length - base.length);
    assert.deepEqual(readHandoffCode(of(512)), { requestId: 'r', createdSec: 1 });
    assert.equal(readHandoffCode(of(513)), undefined);
  });
});

describe('handoffLocation', () => {
  it('adds the code as anteroom_handoff, keeping the rest of the URL and leaving the URL given alone', () => {
    assert.equal(HANDOFF_PARAMETER, 'anteroom_handoff');
    const returnTo = new URL('https://shop.example/cart?x=1#top');
    assert.equal(handoffLocation(returnTo, 'abc.def'), 'https://shop.example/cart?x=1&anteroom_handoff=abc.def#top');
    assert.equal(returnTo.href, 'https://shop.example/cart?x=1#top');
  });

  it('replaces a code already in the URL', () => {
    assert.equal(handoffLocation(new URL('https://shop.example/?anteroom_handoff=old'), 'new'), 'https://shop.example/?anteroom_handoff=new');
  });

  it('a code can be exchanged for two minutes (expires_in of POST /handoff_code)', () => {
    assert.equal(HANDOFF_CODE_TTL_SEC, 120);
  });
});
