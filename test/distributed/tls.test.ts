// rediss://: a node talks to Redis over TLS. The test makes its own CA and server certificate with openssl,
// starts redis-server with a TLS port, and trusts the CA in the node through NODE_EXTRA_CA_CERTS.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startChildNode } from '../support/child-node.ts';
import { freePort, startRedisServer } from '../support/redis-server.ts';
import { makeCertificates } from '../support/test-ca.ts';
import { ADMIN, ADMIN_TOKEN, freshPrefix, json, stopNode } from './fleet.ts';

describe('Redis over TLS (rediss://)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-tls-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a node on rediss:// serves the visitor journey, and refuses to start on an untrusted certificate', async () => {
    makeCertificates(dir);
    const tlsPort = await freePort();
    const redis = await startRedisServer({
      args: ['--tls-port', String(tlsPort), '--tls-cert-file', join(dir, 'server.pem'), '--tls-key-file', join(dir, 'server.key'),
        '--tls-ca-cert-file', join(dir, 'ca.pem'), '--tls-auth-clients', 'no'],
    });
    const store = `rediss://127.0.0.1:${tlsPort}`;
    try {
      const node = await startChildNode(['--store', store, '--redis-key-prefix', freshPrefix(), '--admin-token', ADMIN_TOKEN], {
        NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
      });
      try {
        const joined = await json<{ api_request_id: string }>(`${node.url}/assign_queue_num`, { method: 'POST', body: '{"event_id":"Sample"}' });
        assert.equal(joined.status, 200);
        const moved = await json(`${node.url}/private/increment_serving_counter`, {
          method: 'POST', headers: ADMIN, body: '{"event_id":"Sample","increment_by":1}',
        });
        assert.equal(moved.status, 200);
        const token = await json<{ access_token?: string }>(`${node.url}/generate_token`, {
          method: 'POST', body: JSON.stringify({ event_id: 'Sample', request_id: joined.body.api_request_id }),
        });
        assert.equal(token.status, 200);
        assert.ok(token.body.access_token);
      } finally {
        await stopNode(node);
      }
      // Without the CA the certificate cannot be verified: the node must not start on an unverified connection.
      await assert.rejects(
        startChildNode(['--store', store, '--redis-key-prefix', freshPrefix()], { NODE_EXTRA_CA_CERTS: '' }),
        /exited/,
      );
    } finally {
      await redis.destroy();
    }
  });
});
