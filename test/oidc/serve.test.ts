// `anteroom serve` with OIDC clients in its configuration file: two processes on one Redis share the
// generated client secret and its rotation, a code joined on one is exchanged on the other, and no client
// secret ever reaches the logs (debug level, one line per request).

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { startChildNode, type ChildNode } from '../support/child-node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { REDIRECT_URI, authorizeParams, basic, enterWaitingRoom } from './support.ts';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/anteroom.js', import.meta.url));
const ADMIN_TOKEN = 'oidc-serve-admin-token-0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

describe('anteroom serve with OpenID Connect clients', () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-oidc-'));
  const config = join(dir, 'events.json');
  let redis: RedisServer;
  let nodes: ChildNode[];

  before(async () => {
    writeFileSync(config, JSON.stringify({ events: [{ event_id: 'Shop', oidc: { redirect_uris: [REDIRECT_URI] } }] }));
    redis = await startRedisServer();
    const args = [
      '--store', redis.url, '--redis-key-prefix', `oidc-${process.pid}:`, '--config', config,
      '--admin-token', ADMIN_TOKEN, '--log-level', 'debug', '--log-requests', '--data-dir', dir,
    ];
    nodes = await Promise.all([startChildNode(args), startChildNode(args)]);
  });
  after(async () => {
    for (const node of nodes ?? []) node.process.kill('SIGTERM');
    await Promise.all((nodes ?? []).map((node) => node.exited));
    await redis?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const secretAt = async (node: ChildNode) => {
    const response = await fetch(`${node.url}/private/oidc/client?event_id=Shop`, { headers: admin });
    assert.equal(response.status, 200);
    return ((await response.json()) as { client_secret: string }).client_secret;
  };

  it('serves discovery under /oidc with that base URL as issuer', async () => {
    const [a] = nodes as [ChildNode];
    const response = await fetch(`${a.url}/oidc/.well-known/openid-configuration`);
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { issuer: string }).issuer, `${a.url}/oidc`);
  });

  it('shares the generated secret and its rotation between nodes; no secret is ever logged', async () => {
    const [a, b] = nodes as [ChildNode, ChildNode];
    const secret = await secretAt(a);
    assert.match(secret, /^[A-Za-z0-9]{50}$/);
    assert.equal(await secretAt(b), secret);

    // Joined through node A, exchanged at node B.
    const url = `${a.url}/oidc/authorize?${new URLSearchParams(authorizeParams())}`;
    const { joined } = await enterWaitingRoom(url);
    await fetch(`${a.url}/private/increment_serving_counter`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ event_id: 'Shop', increment_by: joined.queue_number }),
    });
    const form = new URLSearchParams({ grant_type: 'authorization_code', code: joined.request_id, redirect_uri: REDIRECT_URI });
    const exchange = (node: ChildNode, clientSecret: string) =>
      fetch(`${node.url}/oidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('Shop', clientSecret) },
        body: form.toString(),
      });
    const issued = await exchange(b, secret);
    assert.equal(issued.status, 200, await issued.clone().text());
    const { id_token: idToken } = (await issued.json()) as { id_token: string };
    assert.equal(decodeJwt(idToken).sub, joined.request_id);

    const rotated = await fetch(`${a.url}/private/oidc/rotate_client_secret`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ event_id: 'Shop' }),
    });
    const fresh = ((await rotated.json()) as { client_secret: string }).client_secret;
    assert.equal(await secretAt(b), fresh);
    assert.equal((await exchange(b, secret)).status, 401, 'the old secret stops working on every node');
    assert.equal((await exchange(b, fresh)).status, 200);
    // Form authentication too, so the secret travels in a body the server could have logged. (At node B: each
    // node here has its own URL, so its own issuer; a fleet behind one --public-url shares one.)
    const post = await fetch(`${b.url}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `${form}&client_id=Shop&client_secret=${fresh}`,
    });
    assert.equal(post.status, 200);

    const output = nodes.map((node) => node.output()).join('\n');
    assert.match(output, /OIDC client secret rotated/);
    assert.doesNotMatch(output, new RegExp(secret));
    assert.doesNotMatch(output, new RegExp(fresh));
  });

  it('a redirect URI that is not an absolute http(s) URL stops the start with a message naming it', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ events: [{ event_id: 'Shop', oidc: { redirect_uris: ['https://rp.example/cb#frag'] } }] }));
    await assert.rejects(
      run(process.execPath, [BIN, 'serve', '--port', '0', '--store', 'memory', '--data-dir', dir, '--config', bad], { timeout: 20_000 }),
      (error: { stderr: string }) => {
        assert.match(error.stderr, /\/events\/0\/oidc\/redirect_uris\/0/);
        return true;
      },
    );
  });
});
