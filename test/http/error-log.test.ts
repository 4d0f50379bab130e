// A 5xx is logged with the catalogue's code of its answer, the code an operator searches the logs for; the
// body stays the contract's {"error": message}, without the code or the failure's details.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Errors, OidcErrors } from '../../src/domain/errors.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

type LogLine = { msg: string; code?: string; err?: { message?: string; code?: string }; status?: number };

/** Routes that fail the ways the error handler knows: a bug of ours, a catalogue 5xx, a catalogue 4xx. */
function failingRoutes(app: FastifyInstance): void {
  app.get('/test/bug', async () => {
    throw new Error('the disk is on fire');
  });
  app.get('/test/join-interrupted', async () => {
    throw OidcErrors.joinInterrupted();
  });
  app.get('/test/forbidden', async () => {
    throw Errors.forbidden();
  });
}

describe('the log line of a 5xx carries the code', () => {
  let node: TestNode;
  const lines: LogLine[] = [];
  // The error handler logs before it answers, so a line is written by the time its response arrives.
  const failures = () => lines.filter((line) => line.msg === 'request failed');

  before(async () => {
    node = await startTestNode(
      { logLevel: 'info' },
      { plugins: [failingRoutes], logStream: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) } },
    );
  });
  after(() => node.stop());

  it('an unexpected failure: 500 "Internal server error", logged with ANTEROOM_ERR_INTERNAL and the error', async () => {
    const response = await node.get('/test/bug');
    assert.equal(response.status, 500);
    assert.equal(await response.text(), '{"error":"Internal server error"}');
    const logged = failures().at(-1);
    assert.equal(logged?.code, 'ANTEROOM_ERR_INTERNAL');
    assert.equal(logged?.err?.message, 'the disk is on fire');
  });

  it('a catalogue 5xx is logged with its own code', async () => {
    const response = await node.get('/test/join-interrupted');
    assert.equal(response.status, 503);
    assert.deepEqual(await response.json(), { error: 'The waiting room was reset while joining; please try again' });
    const logged = failures().at(-1);
    assert.equal(logged?.code, 'ANTEROOM_ERR_OIDC_JOIN_INTERRUPTED');
    assert.equal(logged?.err?.code, 'ANTEROOM_ERR_OIDC_JOIN_INTERRUPTED');
  });

  it('a 4xx is not a failure of ours: no error line', async () => {
    const before = failures().length;
    const response = await node.get('/test/forbidden');
    assert.equal(response.status, 403);
    assert.equal(await response.text(), '{"error":"Forbidden"}');
    assert.equal(failures().length, before);
  });
});
