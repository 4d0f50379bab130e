// The claims of a token set (src/domain/claims.ts): the three tokens share every claim but token_use, in a
// fixed order (re-signing the same record gives byte-identical tokens), and only the id token carries the
// OpenID Connect nonce. And the room settings' defaults, VWR's core-stack values.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildClaims, newTokenRecord, signaturesOf, TOKEN_USES } from '../../src/domain/claims.ts';
import { DEFAULT_EVENT_ID, defaultSettings, EVENT_ID_PATTERN } from '../../src/domain/room-settings.ts';

const record = newTokenRecord({ requestId: 'r-1', position: 7, now: 1000, validityPeriod: 60, issuer: 'https://i', kid: 'k', nonce: 'n' });

describe('token claims', () => {
  it('a new record runs from now for the validity period, open', () => {
    assert.deepEqual(record, { requestId: 'r-1', position: 7, iat: 1000, nbf: 1000, exp: 1060, iss: 'https://i', kid: 'k', status: 0, nonce: 'n' });
  });

  it('access, refresh and id tokens share the claims, in a fixed order; only the id token has the nonce', () => {
    assert.deepEqual(TOKEN_USES, ['access', 'refresh', 'id']);
    const shared = { aud: 'E', sub: 'r-1', queue_position: 7 };
    const times = { iat: 1000, nbf: 1000, exp: 1060, iss: 'https://i' };
    assert.equal(JSON.stringify(buildClaims('E', record, 'access')), JSON.stringify({ ...shared, token_use: 'access', ...times }));
    assert.equal(JSON.stringify(buildClaims('E', record, 'refresh')), JSON.stringify({ ...shared, token_use: 'refresh', ...times }));
    assert.equal(JSON.stringify(buildClaims('E', record, 'id')), JSON.stringify({ ...shared, token_use: 'id', ...times, nonce: 'n' }));
    assert.equal('nonce' in buildClaims('E', { ...record, nonce: undefined }, 'id'), false, 'no nonce, no claim');
  });
});

describe('room settings', () => {
  it('default to VWR\'s core stack: tokens valid an hour, expiry on after 15 minutes, no automatic increment, no events', () => {
    assert.equal(DEFAULT_EVENT_ID, 'Sample');
    assert.deepEqual(defaultSettings(), {
      event_id: 'Sample',
      validity_period: 3600,
      enable_queue_position_expiry: true,
      queue_position_expiry_period: 900,
      incr_serving_on_expiry: false,
      enable_events_generation: false,
      admission: 'manual',
      // Issue 34: an admitted visitor counts against capacity for at most this long before claiming (automatic rooms).
      arrival_window: 120,
      session_duration: 300,
      session_renewal: true,
      state: 'open',
      signing_algorithm: 'RS256',
      webhooks: [],
    });
  });

  it('event IDs are 1–128 URL-safe characters', () => {
    const pattern = new RegExp(EVENT_ID_PATTERN);
    for (const id of ['Sample', 'a', 'x'.repeat(128), 'shop-2026.spring_sale~1']) assert.ok(pattern.test(id), id);
    for (const id of ['', 'x'.repeat(129), 'a b', 'a/b', 'é']) assert.equal(pattern.test(id), false, id);
  });
});

describe('signaturesOf', () => {
  it('keeps the signature segment of each JWT (access, refresh, id), joined by "."', () => {
    assert.equal(signaturesOf({ access_token: 'h.p.sigA', refresh_token: 'h.p.sigR', id_token: 'h.p.sig-I_' }), 'sigA.sigR.sig-I_');
  });
});
