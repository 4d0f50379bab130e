// --trust-proxy (ANTEROOM_TRUST_PROXY): read as Fastify's trustProxy takes it; a typo stops the start.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTrustProxy } from '../../src/config/config.ts';

describe('--trust-proxy', () => {
  it('takes true/false, a hop count, or comma-separated IPs, CIDRs and range names', () => {
    assert.equal(parseTrustProxy('true'), true);
    assert.equal(parseTrustProxy('false'), false);
    assert.equal(parseTrustProxy('2'), 2);
    assert.deepEqual(parseTrustProxy('10.0.0.0/8, 192.168.1.7,loopback'), ['10.0.0.0/8', '192.168.1.7', 'loopback']);
    assert.deepEqual(parseTrustProxy('fd00::/8,::1'), ['fd00::/8', '::1']);
  });

  it('refuses anything else', () => {
    for (const bad of ['yes', '10.0.0/8', '10.0.0.0/8/1', 'proxy.example.com', '', '1.2.3.4,']) {
      assert.throws(() => parseTrustProxy(bad), /--trust-proxy: .* is not allowed/, bad);
    }
  });
});
