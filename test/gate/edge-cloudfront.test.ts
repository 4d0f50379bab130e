// The CloudFront Function of docs/edge.md (deploy/aws/edge/), built with the shared rules and run in Node under
// a shim of cloudfront-js-2.0's `cloudfront` module (a KeyValueStore in memory). Not run on AWS.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { buildEdgeFunction } from '../../deploy/aws/edge/build-function.ts';
import type { SecretStore } from '../../src/domain/ports/store.ts';
import { EdgeKeys, signEdgeCookie, type EdgeKey } from '../../src/gate/edge-keys.ts';
import { HOSTILE_PATHS } from './hostile-paths.ts';

interface CfRequest {
  uri: string;
  headers: Record<string, { value: string }>;
  cookies: Record<string, { value: string }>;
  querystring: Record<string, { value: string; multiValue?: { value: string }[] }>;
}
interface CfResponse {
  statusCode: number;
  headers: Record<string, { value: string }>;
  body?: { data: string };
}
type Handler = (event: { request: CfRequest }) => Promise<CfRequest | CfResponse>;

/** The KeyValueStore of the shim: what the stacks would write. */
const kvs = new Map<string, string>();
(globalThis as Record<string, unknown>).__anteroomKvs = kvs;

function memorySecrets(): SecretStore {
  const values = new Map<string, string>();
  return {
    claimSecret: async (name, candidate) => {
      if (!values.has(name)) values.set(name, candidate);
      return values.get(name) as string;
    },
    replaceSecret: async (name, expected, next) => {
      if (values.get(name) === expected) values.set(name, next);
      return values.get(name) ?? null;
    },
  };
}

describe('the CloudFront Function (under a shim of cloudfront-js-2.0)', () => {
  let dir: string;
  let handler: Handler;
  let key: EdgeKey;
  const nowSec = () => Math.floor(Date.now() / 1000);
  const cookieFor = (claims: Partial<{ aud: string; exp: number }> = {}, signer: EdgeKey = key) =>
    signEdgeCookie(signer, { aud: 'Shop', sub: 'r1', iat: nowSec(), exp: nowSec() + 60, ...claims });
  const request = (uri: string, cookies: Record<string, string> = {}, host = 'shop.test', query: CfRequest['querystring'] = {}): { request: CfRequest } => ({
    request: {
      uri,
      headers: { host: { value: host } },
      cookies: Object.fromEntries(Object.entries(cookies).map(([name, value]) => [name, { value }])),
      querystring: query,
    },
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'anteroom-cf-'));
    const shim = join(dir, 'cloudfront-shim.mjs');
    writeFileSync(
      shim,
      `export default { kvs: () => ({ get: async (name) => { const v = globalThis.__anteroomKvs.get(name); if (v === undefined) throw new Error('key not found'); return v; } }) };\n`,
    );
    const code = buildEdgeFunction([
      { host: 'shop.test', path: '/admin', event_id: 'Admin', bypass_paths: [] },
      { host: 'shop.test', path: '/', event_id: 'Shop', bypass_paths: ['/health'] },
    ]);
    const file = join(dir, 'function.mjs');
    writeFileSync(file, `${code.replace("import cf from 'cloudfront';", `import cf from ${JSON.stringify(pathToFileURL(shim).href)};`)}\nexport { handler };\n`);
    handler = ((await import(pathToFileURL(file).href)) as { handler: Handler }).handler;
    key = await new EdgeKeys(memorySecrets(), Date.now).current();
    kvs.set(`edge-hmac-${key.kid}`, key.hmac);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lets an admitted visitor through with the normalised path; refuses forged, other-room, unknown-key cookies', async () => {
    const passed = (await handler(request('/public/../product/%7e1', { anteroom_edge: cookieFor() }))) as CfRequest;
    assert.equal(passed.uri, '/product/~1');
    assert.equal('statusCode' in passed, false);
    const [header, payload, signature] = cookieFor().split('.');
    const other = await new EdgeKeys(memorySecrets(), Date.now).current();
    for (const [name, cookie] of [
      ['bad HMAC', `${header}.${payload}.${signature}.${'A'.repeat(43)}`],
      ['other room', cookieFor({ aud: 'Admin' })],
      ['unknown key', cookieFor({}, other)],
      ['past its renewal time', cookieFor({ exp: nowSec() - 1 })],
    ] as const) {
      const refused = (await handler(request('/product/1', { anteroom_edge: cookie }, 'shop.test', { q: { value: '1' } }))) as CfResponse;
      assert.equal(refused.statusCode, 302, name);
      assert.equal(refused.headers.location?.value, '/_anteroom/wait?to=%2Fproduct%2F1%3Fq%3D1', name);
    }
  });

  it('sends a visitor with an admission cookie past the renewal time to Anteroom\'s renewal, which sends them back', async () => {
    const renew = (await handler(request('/product/1', { anteroom_edge: cookieFor({ exp: nowSec() - 1 }), anteroom_token: 'x.y.z' }))) as CfResponse;
    assert.equal(renew.statusCode, 302);
    assert.equal(renew.headers.location?.value, '/_anteroom/renew?event_id=Shop&mac_only=1&to=%2Fproduct%2F1');
    assert.equal(renew.headers['cache-control']?.value, 'no-store');
  });

  it('a bypass path goes through, a host no room protects is refused, a Shop cookie does not admit to Admin', async () => {
    assert.equal(((await handler(request('/health/live'))) as CfRequest).uri, '/health/live');
    const elsewhere = (await handler(request('/product/1', { anteroom_edge: cookieFor() }, 'evil.test'))) as CfResponse;
    assert.equal(elsewhere.statusCode, 404);
    assert.deepEqual(JSON.parse(elsewhere.body?.data ?? ''), { error: 'No waiting room protects this URL' });
    for (const uri of ['/admin', '/ADMIN/x', '/x/../admin', '/%61dmin', '//admin']) {
      assert.equal(((await handler(request(uri, { anteroom_edge: cookieFor() }))) as CfResponse).statusCode, 302, uri);
    }
  });

  it('normalises the hostile paths table as nginx and the gate do (400 where refused)', async () => {
    for (const [raw, normalised] of HOSTILE_PATHS) {
      const result = await handler(request(raw, { anteroom_edge: cookieFor() }));
      if (normalised === null) {
        assert.equal((result as CfResponse).statusCode, 400, raw);
        continue;
      }
      if (normalised.startsWith('/admin')) assert.equal((result as CfResponse).statusCode, 302, raw);
      else assert.equal((result as CfRequest).uri, normalised, raw);
    }
  });
});
