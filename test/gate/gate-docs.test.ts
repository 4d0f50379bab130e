// docs/gate.md's recipes are the ones the tests run: the nginx configuration is the file the nginx test starts,
// and the room of recipe 1 goes through the events-file reader and protects a real origin as described.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { defaultEventDefaults, readEventsFile } from '../../src/config/config.ts';
import { startGateNode, startOrigin } from './support.ts';
import { docBlock } from '../support/doc-blocks.ts';

/** The `index`-th block of `language` in docs/gate.md. */
const block = (language: string, index = 0) => docBlock('docs/gate.md', '', language, index);

function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('docs/gate.md recipes', () => {
  it('the nginx recipe is deploy/nginx/anteroom-forward-auth.conf, the file the nginx test runs', () => {
    const file = readFileSync(new URL('../../deploy/nginx/anteroom-forward-auth.conf', import.meta.url), 'utf8');
    assert.equal(block('nginx'), file);
  });

  it('the Caddy, Traefik and Envoy recipes are the files in deploy/, and the YAML ones parse', () => {
    const file = (path: string) => readFileSync(new URL(`../../deploy/${path}`, import.meta.url), 'utf8');
    assert.equal(block('caddyfile'), file('caddy/Caddyfile'));
    assert.equal(block('yaml', 0), file('traefik/anteroom-forward-auth.yml'));
    assert.equal(block('yaml', 1), file('envoy/anteroom-forward-auth.yaml'));
    const traefik = parseYaml(block('yaml', 0)) as { http: { middlewares: { anteroom: { forwardAuth: { address: string; authRequestHeaders: string[] } } } } };
    assert.match(traefik.http.middlewares.anteroom.forwardAuth.address, /\/_anteroom\/check$/);
    assert.deepEqual(traefik.http.middlewares.anteroom.forwardAuth.authRequestHeaders, ['Cookie']);
    assert.match(block('yaml', 1), /key: x-original-uri, value: "%REQ\(:PATH\)%"/);
    assert.ok(parseYaml(block('yaml', 1)));
  });

  it('recipe 1: the room protects its host, bypasses the listed paths and headers, queues the rest', async () => {
    const origin = await startOrigin();
    const dir = mkdtempSync(join(tmpdir(), 'anteroom-gate-docs-'));
    try {
      const file = join(dir, 'rooms.json');
      writeFileSync(file, block('json').replace('http://127.0.0.1:3000', origin.url));
      const rooms = readEventsFile(file, defaultEventDefaults());
      const node = await startGateNode(rooms);
      try {
        const host = { host: 'shop.example.com', accept: 'application/json' };
        assert.match((await get(`${node.gateUrl}/`, host)).body, /"status":"queued"/);
        assert.match((await get(`${node.gateUrl}/healthz`, host)).body, /Origin page \/healthz/);
        assert.match((await get(`${node.gateUrl}/cart`, { ...host, 'x-monitor': 'change-me-long-secret' })).body, /Origin page \/cart/);
        assert.equal((await get(`${node.gateUrl}/`, { host: 'other.example.com' })).status, 404, 'another host is not this room\'s');
      } finally {
        await node.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await origin.close();
    }
  });
});
