// --forward-auth-uri-header (ANTEROOM_FORWARD_AUTH_URI_HEADER): the one header /_anteroom/check reads the original
// URI from; a name that is not a header, or one that carries something else, stops the start.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serveCommand } from '../../src/cli/serve-command.ts';
import { parseForwardAuthUriHeader } from '../../src/config/config.ts';

describe('--forward-auth-uri-header', () => {
  it('defaults to X-Original-URI (the shipped nginx and Caddy recipes) and is an ANTEROOM_ variable', () => {
    const option = serveCommand().options.find((o) => o.long === '--forward-auth-uri-header');
    assert.ok(option);
    assert.equal(option.defaultValue, 'X-Original-URI');
    assert.equal(option.envVar, 'ANTEROOM_FORWARD_AUTH_URI_HEADER');
  });

  it('takes a header name, and refuses one that is not, or that carries the host, cookies or client', () => {
    assert.equal(parseForwardAuthUriHeader('X-Forwarded-Uri'), 'X-Forwarded-Uri');
    assert.equal(parseForwardAuthUriHeader(' x-original-uri '), 'x-original-uri');
    for (const bad of ['', 'X Original', 'X-Original-URI:', 'é', 'Host', 'cookie', 'X-Forwarded-Host', 'x-forwarded-for', 'Forwarded']) {
      assert.throws(() => parseForwardAuthUriHeader(bad), /--forward-auth-uri-header/, bad);
    }
  });
});
