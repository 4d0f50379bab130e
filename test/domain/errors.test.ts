// The error catalogue (src/domain/errors.ts): every status and message of the contract, spelled exactly as
// VWR's clients know them (spec/core-api.md). The HTTP tests meet them one endpoint at a time; this states
// the whole catalogue in one place, so that a changed message fails here first.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ContractError, Errors, Pending } from '../../src/domain/errors.ts';

const shown = (error: ContractError) => [error.status, error.message, error.headers];

describe('the error catalogue', () => {
  it('has the contract\'s status and message for every error', () => {
    assert.deepEqual(shown(Errors.invalidRequestBody()), [400, 'Invalid request body', {}]);
    assert.deepEqual(shown(Errors.invalidEventId()), [400, 'Invalid event ID', {}]);
    assert.deepEqual(shown(Errors.invalidEventOrRequestId()), [400, 'Invalid event or request ID', {}]);
    assert.deepEqual(shown(Errors.maxSizeInletNotConfigured()), [400, 'Event has no max_size inlet', {}]);
    assert.deepEqual(shown(Errors.missingParameters(['event_id', 'request_id'])), [400, 'Missing required request parameters: [event_id, request_id]', {}]);
    assert.deepEqual(shown(Errors.forbidden()), [403, 'Forbidden', {}]);
    assert.deepEqual(shown(Errors.missingAuthenticationToken()), [401, 'Missing Authentication Token', {}]);
    assert.deepEqual(shown(Errors.unknownEventKey()), [404, 'Invalid event ID', {}]);
    assert.deepEqual(shown(Errors.invalidRequestId()), [404, 'Invalid request ID', {}]);
    assert.deepEqual(shown(Errors.sessionNotFound()), [404, "Request ID doesn't exist or status already set.", {}]);
    assert.deepEqual(shown(Errors.notFound()), [404, 'Not found', {}]);
    assert.deepEqual(shown(Errors.methodNotAllowed(['GET', 'HEAD'])), [405, 'Method not allowed', { allow: 'GET, HEAD' }]);
    assert.deepEqual(shown(Errors.payloadTooLarge()), [413, 'Request body too large', {}]);
    assert.deepEqual(shown(Errors.unsupportedMediaType()), [415, 'Unsupported media type', {}]);
    assert.deepEqual(shown(Errors.tooManyRequests()), [429, 'Too many requests', {}]);
    assert.deepEqual(shown(Errors.tokenSessionClosed()), [410, 'Token corresponding to request id has expired', {}]);
    assert.deepEqual(shown(Errors.queuePositionExpired()), [410, 'Queue position has expired', {}]);
    assert.deepEqual(shown(Errors.storeUnavailable()), [503, 'Service temporarily unavailable', { 'retry-after': '1' }]);
    assert.deepEqual(shown(Errors.shuttingDown()), [503, 'Server is shutting down', { 'retry-after': '1' }]);
  });

  it('makes a new error each time, named ContractError', () => {
    const error = Errors.forbidden();
    assert.notEqual(Errors.forbidden(), error);
    assert.ok(error instanceof Error);
    assert.equal(error.name, 'ContractError');
  });

  it('answers "not yet" with 202 and an error body, returned rather than thrown', () => {
    assert.deepEqual(Pending.requestIdNotFound, { status: 202, body: { error: 'Request ID not found' } });
    assert.deepEqual(Pending.notServedYet, { status: 202, body: { error: 'Request ID not being served yet' } });
    assert.deepEqual(Pending.expiryNotEnabled, { status: 202, body: { error: 'Queue position expiration not enabled' } });
  });
});
