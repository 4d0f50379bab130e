import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideClaim, decideExpiry } from '../../src/domain/claim-decision.ts';
import type { TokenRecord } from '../../src/domain/claims.ts';
import type { ClaimContext } from '../../src/domain/ports/store.ts';

const rule = { enabled: true, period: 900 };
const base: ClaimContext = {
  position: 5,
  entryTime: 1000,
  serving: 10,
  servedAt: 2000,
  expiryEnabledSince: 0,
  maxExpired: 0,
  token: null,
  left: false,
};
const token: TokenRecord = {
  requestId: 'r', position: 5, iat: 2100, nbf: 2100, exp: 5700, iss: 'i', kid: 'k', status: 0,
};

describe('generate_token decision order', () => {
  it('a position given up answers 410 (position-left), served or not', () => {
    assert.deepEqual(decideClaim({ ...base, left: true }, rule, 2000), { kind: 'position-left' });
    assert.deepEqual(decideClaim({ ...base, left: true, serving: 1 }, rule, 2000), { kind: 'position-left' });
  });
  it('in a room that serves everyone (off) a position beyond the counter is issued at once', () => {
    assert.deepEqual(decideClaim({ ...base, serving: 0, servedAt: null }, rule, 2000, { servesEveryone: true }), {
      kind: 'issue', position: 5,
    });
    assert.deepEqual(decideClaim({ ...base, serving: 0, servedAt: null }, rule, 2000, { servesEveryone: false }), {
      kind: 'not-served-yet',
    });
  });
  it('no position → 404 decision', () => {
    assert.deepEqual(decideClaim(null, rule, 0), { kind: 'no-position' });
  });
  it('a position beyond the serving counter is not served yet, even with a token', () => {
    assert.equal(decideClaim({ ...base, serving: 4, token }, rule, 2000).kind, 'not-served-yet');
  });
  it('the position the serving counter points at is being served (position == serving)', () => {
    assert.deepEqual(decideClaim({ ...base, serving: 5 }, rule, 2000), { kind: 'issue', position: 5 });
    assert.equal(decideClaim({ ...base, serving: 4 }, rule, 2000).kind, 'not-served-yet');
  });
  it('an existing open token set is issued again', () => {
    assert.deepEqual(decideClaim({ ...base, token }, rule, 99_999), { kind: 'reissue', record: token });
  });
  it('a closed session answers closed before any expiry check', () => {
    assert.equal(decideClaim({ ...base, token: { ...token, status: 1 } }, rule, 99_999).kind, 'session-closed');
    assert.equal(decideClaim({ ...base, token: { ...token, status: -1 } }, rule, 99_999).kind, 'session-closed');
  });
  it('exactly `period` seconds after eligibility the position is still claimable; one more second and it expired', () => {
    assert.equal(decideClaim(base, rule, 2000 + 900).kind, 'issue');
    assert.equal(decideClaim(base, rule, 2000 + 901).kind, 'position-expired');
  });
  it('eligibility is the later of entry time and the time the counter reached the position', () => {
    assert.equal(decideClaim({ ...base, entryTime: 3000 }, rule, 3900).kind, 'issue');
    assert.equal(decideClaim({ ...base, entryTime: 3000 }, rule, 3901).kind, 'position-expired');
  });
  it('eligibility never starts before expiry was switched on', () => {
    assert.equal(decideClaim({ ...base, expiryEnabledSince: 5000 }, rule, 5900).kind, 'issue');
    assert.equal(decideClaim({ ...base, expiryEnabledSince: 5000 }, rule, 5901).kind, 'position-expired');
  });
  it('a position the expiry job recorded as expired is expired', () => {
    assert.equal(decideClaim({ ...base, maxExpired: 5 }, rule, 2001).kind, 'position-expired');
  });
  it('with expiry off nothing expires', () => {
    assert.equal(decideClaim(base, { enabled: false, period: 900 }, 1e9).kind, 'issue');
    assert.equal(decideClaim({ ...base, expiryEnabledSince: null }, rule, 1e9).kind, 'issue');
  });
});

describe('queue_pos_expiry decision order', () => {
  it('a position given up answers 410 before anything else', () => {
    assert.equal(decideExpiry({ ...base, left: true }, { enabled: false, period: 900 }, 0).kind, 'position-left');
  });
  it('reports 404, not enabled, not served, expired, and seconds left in that order', () => {
    assert.equal(decideExpiry(null, rule, 0).kind, 'no-position');
    assert.equal(decideExpiry(base, { enabled: false, period: 900 }, 0).kind, 'expiry-not-enabled');
    assert.equal(decideExpiry({ ...base, expiryEnabledSince: null }, rule, 0).kind, 'expiry-not-enabled', 'switched on in the settings, not yet in the store');
    assert.equal(decideExpiry({ ...base, serving: 1 }, rule, 0).kind, 'not-served-yet');
    assert.equal(decideExpiry(base, rule, 2901).kind, 'position-expired');
    assert.deepEqual(decideExpiry(base, rule, 2100), { kind: 'expires-in', seconds: 800 });
    assert.deepEqual(decideExpiry(base, rule, 2900), { kind: 'expires-in', seconds: 0 });
  });
  it('the position the serving counter points at is served and counts down (position == serving)', () => {
    assert.deepEqual(decideExpiry({ ...base, serving: 5 }, rule, 2100), { kind: 'expires-in', seconds: 800 });
    assert.equal(decideExpiry({ ...base, serving: 4 }, rule, 2100).kind, 'not-served-yet');
  });
  it('once a token is issued the position never reports expired; seconds left are frozen at issue time', () => {
    assert.deepEqual(decideExpiry({ ...base, token }, rule, 99_999), { kind: 'expires-in', seconds: 800 });
  });
});
