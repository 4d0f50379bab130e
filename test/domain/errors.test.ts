// The error catalogue: every entry has a unique stable code, a status and a message; every factory raises
// the entry it is listed with; nothing outside the catalogue makes errors of its own; docs/api.md lists them.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  AnteroomError,
  CATALOGUE,
  ConfigErrors,
  ContractError,
  Errors,
  OAuthError,
  OAuthErrors,
  OidcErrors,
  type CatalogueEntry,
} from '../../src/domain/errors.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every factory of `factories` called: with the sample arguments given for it, or with none. */
function raiseAll(factories: object, samples: Record<string, () => AnteroomError> = {}): AnteroomError[] {
  return Object.entries(factories).map(([name, factory]) => samples[name]?.() ?? (factory as () => AnteroomError)());
}

/** One raise of every entry (OAuthErrors.invalidClient raises two, with Basic and without). */
function raiseEveryEntry(): AnteroomError[] {
  return [
    ...raiseAll(Errors, {
      missingParameters: () => Errors.missingParameters(['event_id', 'request_id']),
      methodNotAllowed: () => Errors.methodNotAllowed(['GET', 'OPTIONS']),
      frameworkClientError: () => Errors.frameworkClientError(414),
      invalidRoomSettings: () => Errors.invalidRoomSettings('validity_periodd: unknown setting'),
    }),
    ...raiseAll(OidcErrors, {
      invalidAuthorizationRequest: () => OidcErrors.invalidAuthorizationRequest('redirect_uri is not registered for this client'),
    }),
    ...raiseAll(OAuthErrors, {
      invalidRequest: () => OAuthErrors.invalidRequest('client_id is required'),
      invalidGrant: () => OAuthErrors.invalidGrant('code_verifier is required'),
      unsupportedGrantType: () => OAuthErrors.unsupportedGrantType('grant_type must be authorization_code'),
      unsupportedResponseType: () => OAuthErrors.unsupportedResponseType('response_type must be code'),
      invalidScope: () => OAuthErrors.invalidScope('scope must contain openid'),
      loginRequired: () => OAuthErrors.loginRequired('the visitor must wait in the waiting room'),
      accessDenied: () => OAuthErrors.accessDenied('Queue position has expired'),
      invalidClient: () => OAuthErrors.invalidClient('client authentication failed', true),
      invalidBearerToken: () => OAuthErrors.invalidBearerToken('The access token has expired'),
      tooManyRequests: () => OAuthErrors.tooManyRequests('too many token requests for this client, retry later'),
    }),
    OAuthErrors.invalidClient('client authentication failed', false),
    ...Object.values(ConfigErrors).map((factory) => factory('--port must be a whole number from 0 to 65535.')),
  ];
}

/** The message of an entry as a pattern: its <placeholders> match any text. */
function messagePattern(template: string): RegExp {
  const escaped = template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/<[a-z]+>/g, '.+')}$`);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file));
}

describe('the error catalogue', () => {
  it('every entry has a unique ANTEROOM_ERR_ code, a status (HTTP errors) and a message', () => {
    assert.ok(CATALOGUE.length > 30, `only ${CATALOGUE.length} entries`);
    const seen = new Set<string>();
    for (const entry of CATALOGUE) {
      assert.match(entry.code, /^ANTEROOM_ERR_[A-Z0-9_]+$/);
      assert.ok(!seen.has(entry.code), `${entry.code} is defined twice`);
      seen.add(entry.code);
      assert.ok(entry.message.trim().length > 0, `${entry.code} has no message`);
      if (entry.kind === 'config') continue;
      const status = entry.status;
      assert.ok(status === '4xx' || (Number.isInteger(status) && status >= 400 && status <= 599), `${entry.code}: ${status}`);
    }
  });

  it('one message answered with two statuses has two codes ("Invalid event ID": 400 and 404)', () => {
    const invalidEventId = CATALOGUE.filter((entry) => entry.message === 'Invalid event ID');
    assert.deepEqual(
      invalidEventId.map((entry) => [entry.code, entry.kind === 'config' ? null : entry.status]),
      [
        ['ANTEROOM_ERR_INVALID_EVENT_ID', 400],
        ['ANTEROOM_ERR_UNKNOWN_EVENT', 404],
      ],
    );
  });

  it('every factory raises an entry of the catalogue, with its status and message, and every entry is raised', () => {
    const byCode = new Map(CATALOGUE.map((entry) => [entry.code, entry]));
    const raised = new Set<string>();
    for (const error of raiseEveryEntry()) {
      const entry = byCode.get(error.code) as CatalogueEntry;
      assert.ok(entry, `${error.code} is not in the catalogue`);
      raised.add(error.code);
      assert.match(error.message, messagePattern(entry.message), error.code);
      if (entry.kind === 'contract') {
        assert.ok(error instanceof ContractError, error.code);
        if (entry.status === '4xx') assert.equal(error.status, 414);
        else assert.equal(error.status, entry.status, error.code);
      } else if (entry.kind === 'oauth') {
        assert.ok(error instanceof OAuthError, error.code);
        assert.equal(error.status, entry.status, error.code);
        assert.deepEqual(error.body, { error: entry.oauthError, error_description: error.message });
      }
    }
    assert.deepEqual([...byCode.keys()].filter((code) => !raised.has(code)), []);
  });

  it('placeholders are filled with the call\'s values, headers come with the error', () => {
    assert.equal(Errors.missingParameters(['event_id', 'request_id']).message, 'Missing required request parameters: [event_id, request_id]');
    assert.deepEqual(Errors.methodNotAllowed(['GET', 'OPTIONS']).headers, { allow: 'GET, OPTIONS' });
    assert.deepEqual(Errors.storeUnavailable().headers, { 'retry-after': '1' });
    const basic = OAuthErrors.invalidClient('client authentication failed', true);
    assert.deepEqual([basic.status, basic.headers], [401, { 'www-authenticate': 'Basic realm="anteroom", charset="UTF-8"' }]);
    assert.deepEqual(OAuthErrors.invalidBearerToken('The access token has expired').headers, {
      'www-authenticate': 'Bearer realm="anteroom", error="invalid_token", error_description="The access token has expired"',
    });
  });

  it('each kind of error says its kind: the entry, the class name (logs), the OAuth value and challenge', () => {
    const kinds = new Set(CATALOGUE.map((entry) => entry.kind));
    assert.deepEqual([...kinds].sort(), ['config', 'contract', 'oauth']);
    const kindOf = (code: string) => CATALOGUE.find((entry) => entry.code === code)?.kind;
    assert.equal(kindOf('ANTEROOM_ERR_INVALID_EVENT_ID'), 'contract');
    assert.equal(kindOf('ANTEROOM_ERR_MISSING_PARAMETERS'), 'contract');
    assert.equal(kindOf('ANTEROOM_ERR_OAUTH_INVALID_REQUEST'), 'oauth');
    assert.equal(kindOf('ANTEROOM_ERR_OAUTH_MISSING_BEARER_TOKEN'), 'oauth');
    assert.equal(CATALOGUE.filter((entry) => entry.kind === 'contract' && entry.status === '4xx').length, 1);
    assert.equal(Errors.invalidEventId().name, 'ContractError');
    assert.equal(OAuthErrors.invalidRequest('x').name, 'OAuthError');
    assert.equal(ConfigErrors.option('x').name, 'ConfigError');
    assert.equal(new AnteroomError('ANTEROOM_ERR_X', 'x').name, 'AnteroomError');
    assert.deepEqual(OAuthErrors.invalidRequest('x').headers, {});
    for (const usedBasic of [true, false]) assert.equal(OAuthErrors.invalidClient('x', usedBasic).body.error, 'invalid_client');
    assert.equal(OAuthErrors.invalidClient('x', false).status, 400);
    const missing = OAuthErrors.missingBearerToken();
    assert.deepEqual([missing.status, missing.body.error, missing.headers], [401, 'invalid_token', { 'www-authenticate': 'Bearer realm="anteroom"' }]);
  });

  it('no module outside the catalogue constructs a catalogue error itself', () => {
    const catalogue = join(ROOT, 'src/domain/errors.ts');
    const offenders = sourceFiles(join(ROOT, 'src'))
      .filter((file) => file !== catalogue)
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, index) => ({ line, where: `${file.slice(ROOT.length)}:${index + 1}` }))
          .filter(({ line }) => /new (ContractError|OAuthError|ConfigError|AnteroomError)\(/.test(line))
          .map(({ where }) => where),
      );
    assert.deepEqual(offenders, []);
  });

  it('docs/api.md lists every code with its status', () => {
    const rows = readFileSync(join(ROOT, 'docs/api.md'), 'utf8').split('\n');
    for (const entry of CATALOGUE) {
      const row = rows.find((line) => line.includes(`\`${entry.code}\``));
      assert.ok(row, `${entry.code} is not in docs/api.md`);
      const status = entry.kind === 'config' ? '—' : String(entry.status);
      assert.ok(row.split('|').map((cell) => cell.trim()).includes(status), `${entry.code}: ${row}`);
    }
  });
});
