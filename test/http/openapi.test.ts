// GET /openapi.json: a valid OpenAPI 3.1 document (checked by @seriousme/openapi-schema-validator, which
// validates against the OpenAPI Initiative's 3.1 schema), listing every operation the server registered, whose
// request schemas are the very ones Fastify validates with, and the error answers of each.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { registeredOperations } from '../../src/http/openapi.ts';
import { IncrementBody } from '../../src/http/schemas.ts';
import { startTestNode, TEST_CREDENTIALS, type TestNode } from '../support/node.ts';

interface Operation {
  requestBody?: { content: Record<string, { schema: unknown }> };
  parameters?: { name: string; in: string }[];
  responses: Record<string, unknown>;
  security?: Record<string, string[]>[];
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
}

describe('GET /openapi.json', () => {
  let node: TestNode;
  let doc: Document;
  before(async () => {
    node = await startTestNode();
    const response = await fetch(`${node.publicUrl}/openapi.json`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    doc = (await response.json()) as Document;
  });
  after(() => node.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    assert.match(doc.openapi, /^3\.1\./);
    const result = await new Validator().validate(structuredClone(doc) as unknown as Parameters<Validator['validate']>[0]);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
  });

  it('lists every operation the server registered (preflights and 405 guards aside)', () => {
    const operations = registeredOperations(node.http);
    assert.ok(operations.length > 20);
    const missing = operations.filter(({ method, path }) => !doc.paths[path]?.[method]).map(({ method, path }) => `${method} ${path}`);
    assert.deepEqual(missing, []);
    // and nothing else: no OPTIONS, no 405 guard.
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`));
    assert.deepEqual(listed.sort(), operations.map(({ method, path }) => `${method} ${path}`).sort());
  });

  it('covers the public, private, rooms, OpenID Connect and operations APIs', () => {
    for (const [path, method] of [
      ['/assign_queue_num', 'post'], ['/queue_num', 'get'], ['/serving_num', 'get'], ['/generate_token', 'post'],
      ['/leave_queue', 'post'], ['/public_key', 'get'],
      ['/private/increment_serving_counter', 'post'], ['/private/reset_initial_state', 'post'], ['/private/update_session', 'post'],
      ['/private/rooms', 'get'], ['/private/rooms/{event_id}', 'put'], ['/private/rooms/{event_id}', 'patch'], ['/private/rooms/{event_id}', 'delete'],
      ['/oidc/token', 'post'], ['/oidc/authorize', 'get'], ['/readyz', 'get'], ['/metrics', 'get'],
    ] as const) {
      assert.ok(doc.paths[path]?.[method], `${method} ${path}`);
    }
  });

  it('request schemas are the ones requests are validated with', async () => {
    const operation = doc.paths['/private/increment_serving_counter']!.post!;
    assert.deepEqual(operation.requestBody!.content['application/json']!.schema, JSON.parse(JSON.stringify(IncrementBody)));
    // The validation that document describes: increment_by must be an integer.
    const refused = await fetch(`${node.privateUrl}/increment_serving_counter`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ event_id: 'Sample', increment_by: 1.5 }),
    });
    assert.equal(refused.status, 400);
    const query = doc.paths['/queue_num']!.get!.parameters!.map((p) => `${p.in}:${p.name}`).sort();
    assert.deepEqual(query, ['query:beat', 'query:event_id', 'query:request_id'], 'beat: a presence beat (issue 34)');
  });

  it('every operation documents its error answers; private ones their credentials and 401/403', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(ops)) {
        assert.ok(operation.responses['4XX'] && operation.responses['5XX'], `${method} ${path}`);
        if (path.startsWith('/private/')) {
          assert.ok(operation.responses['401'] && operation.responses['403'], `${method} ${path}`);
          assert.deepEqual(operation.security, [{ adminToken: [] }, { sigv4: [] }]);
        }
      }
    }
  });
});
