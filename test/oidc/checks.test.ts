// The named steps and helpers of the adapter, alone (no HTTP).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RoomRegistry } from '../../src/domain/room-registry.ts';
import { eventSettings } from '../support/node.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import {
  checkAuthorizationRequest,
  errorRedirect,
  loginPageQuery,
  redirectWith,
} from '../../src/oidc/authorize-checks.ts';
import { ClientSecrets, generateClientSecret } from '../../src/oidc/client-secrets.ts';
import { OidcClients, type OidcClient } from '../../src/oidc/clients.ts';
import { OAuthErrors } from '../../src/domain/errors.ts';
import { rawParameters } from '../../src/oidc/parameters.ts';
import { basicCredentials } from '../../src/oidc/token-checks.ts';

const clients = new OidcClients(
  new RoomRegistry([
    eventSettings('E', { oidc: { redirect_uris: ['https://rp.example/cb', 'https://rp.example/cb?x=1'] } }),
    eventSettings('NoOidc'),
  ]),
);

const check = (params: Record<string, string> | string) =>
  checkAuthorizationRequest(rawParameters(new URLSearchParams(params)), clients);
const valid = { client_id: 'E', redirect_uri: 'https://rp.example/cb', response_type: 'code', scope: 'openid', state: 's' };
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('authorize checks, in spec order', () => {
  it('a valid request keeps state, nonce and the S256 challenge', () => {
    const outcome = check({ ...valid, nonce: 'n', code_challenge: CHALLENGE, code_challenge_method: 'S256' });
    assert.equal(outcome.kind, 'valid');
    if (outcome.kind !== 'valid') return;
    assert.equal(outcome.request.client.clientId, 'E');
    assert.deepEqual(
      [outcome.request.state, outcome.request.nonce, outcome.request.codeChallenge, outcome.request.codeChallengeMethod],
      ['s', 'n', CHALLENGE, 'S256'],
    );
  });

  it('client_id first: unknown, missing or an event without OIDC is refused without a redirect', () => {
    const refusedWith = (params: Record<string, string>) => {
      const outcome = check(params);
      assert.equal(outcome.kind, 'refused', JSON.stringify(params));
      return outcome.kind === 'refused' ? `${outcome.error.oauthError}: ${outcome.error.message}` : '';
    };
    for (const clientId of ['Nope', 'NoOidc']) {
      assert.equal(refusedWith({ ...valid, client_id: clientId, response_type: 'token' }), 'invalid_request: client_id is not a client of this server');
    }
    assert.equal(refusedWith({ ...valid, client_id: '', response_type: 'token' }), 'invalid_request: client_id is required');
    const { client_id: _clientId, ...withoutClient } = valid;
    assert.equal(refusedWith(withoutClient), 'invalid_request: client_id is required');
    const { redirect_uri: _redirect, ...withoutRedirect } = valid;
    assert.equal(refusedWith({ ...withoutRedirect, response_type: 'token' }), 'invalid_request: redirect_uri is required');
    assert.equal(refusedWith({ ...valid, redirect_uri: 'https://rp.example/other' }), 'invalid_request: redirect_uri is not registered for this client');
  });

  it('a parameter longer than 2048 characters is refused before anything is stored; 2048 is accepted', () => {
    const outcome = check({ ...valid, state: 's'.repeat(2049) });
    assert.equal(outcome.kind, 'refused');
    assert.equal(outcome.kind === 'refused' && outcome.error.message, 'state is longer than 2048 characters');
    assert.equal(check({ ...valid, state: 's'.repeat(2048) }).kind, 'valid');
    assert.equal(check({ ...valid, nonce: '' }).kind, 'valid', 'an empty parameter counts as absent');
  });

  it('redirect_uri second: only an exact match of the allow-list passes', () => {
    for (const uri of [
      'https://rp.example/cb/',
      'https://rp.example/cb?x=2',
      'https://rp.example/cbx',
      'https://RP.example/cb',
      'https://rp.example/cb#frag',
      'http://rp.example/cb',
      'https://rp.example.evil/cb',
      '',
    ]) {
      const outcome = check({ ...valid, redirect_uri: uri, response_type: 'token' });
      assert.equal(outcome.kind, 'refused', uri);
    }
    assert.equal(check({ ...valid, redirect_uri: 'https://rp.example/cb?x=1' }).kind, 'valid');
  });

  it('a repeated parameter is refused before anything could be redirected', () => {
    const outcome = check(`${new URLSearchParams(valid)}&redirect_uri=${encodeURIComponent('https://rp.example/cb')}`);
    assert.equal(outcome.kind, 'refused');
    assert.equal(outcome.kind === 'refused' && outcome.error.message, 'redirect_uri must not be repeated');
    assert.equal(check(`${new URLSearchParams(valid)}&state=again`).kind, 'refused');
  });

  it('later errors go back to the (checked) redirect URI with the state', () => {
    const cases: [Record<string, string>, string][] = [
      [{ response_type: 'token' }, 'unsupported_response_type: response_type must be code'],
      [{ response_type: '' }, 'invalid_request: response_type is required'],
      [{ scope: 'email profile' }, 'invalid_scope: scope must contain openid'],
      // openid must be a whole scope token (space-separated, RFC 6749 §3.3), not a substring of one.
      [{ scope: 'openidx' }, 'invalid_scope: scope must contain openid'],
      [{ scope: 'profile notopenid' }, 'invalid_scope: scope must contain openid'],
      [{ scope: 'OpenID' }, 'invalid_scope: scope must contain openid'],
      [{ scope: '' }, 'invalid_request: scope is required and must contain openid'],
      [{ code_challenge: CHALLENGE, code_challenge_method: 'plain' }, 'invalid_request: code_challenge_method must be S256'],
      [{ code_challenge: CHALLENGE }, 'invalid_request: code_challenge_method must be S256'],
      [{ code_challenge_method: 'S256' }, 'invalid_request: code_challenge_method needs a code_challenge'],
      [{ code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request: code_challenge is malformed'],
      [{ code_challenge: `${CHALLENGE}!`, code_challenge_method: 'S256' }, 'invalid_request: code_challenge is malformed'],
      [{ code_challenge: `!${CHALLENGE}`, code_challenge_method: 'S256' }, 'invalid_request: code_challenge is malformed'],
      [{ code_challenge: 'a'.repeat(129), code_challenge_method: 'S256' }, 'invalid_request: code_challenge is malformed'],
      [{ prompt: 'none' }, 'login_required: the visitor must wait in the waiting room'],
      [{ prompt: 'login none' }, 'login_required: the visitor must wait in the waiting room'],
    ];
    for (const [overrides, expected] of cases) {
      const outcome = check({ ...valid, ...overrides });
      assert.equal(outcome.kind, 'redirect-error', JSON.stringify(overrides));
      if (outcome.kind !== 'redirect-error') continue;
      assert.equal(`${outcome.error.oauthError}: ${outcome.error.message}`, expected, JSON.stringify(overrides));
      assert.equal(outcome.redirectUri, 'https://rp.example/cb');
      assert.equal(outcome.state, 's');
    }
  });

  it('scopes other than openid are ignored, not refused (VWR refused them)', () => {
    assert.equal(check({ ...valid, scope: 'profile openid email offline_access' }).kind, 'valid');
    assert.equal(check({ ...valid, prompt: 'login' }).kind, 'valid', 'a prompt other than none is no refusal');
    assert.equal(check({ ...valid, code_challenge: 'a'.repeat(128), code_challenge_method: 'S256' }).kind, 'valid');
  });

  it('the login page query leaves out what the request did not carry, and names S256 with a challenge', () => {
    const plain = check(valid);
    assert.equal(plain.kind, 'valid');
    if (plain.kind !== 'valid') return;
    const bare = loginPageQuery({ ...plain.request, state: undefined });
    assert.equal(bare.has('state'), false);
    assert.equal(bare.has('nonce'), false);
    assert.equal(bare.has('code_challenge_method'), false);
    const full = check({ ...valid, nonce: 'n', code_challenge: CHALLENGE, code_challenge_method: 'S256' });
    if (full.kind !== 'valid') return assert.fail('valid');
    const query = loginPageQuery(full.request);
    assert.deepEqual([query.get('nonce'), query.get('code_challenge'), query.get('code_challenge_method')], ['n', CHALLENGE, 'S256']);
  });

  it('the login page query carries exactly the validated parameters', () => {
    const outcome = check({ ...valid, state: 'a&b=c d/é', extra: 'dropped' });
    assert.equal(outcome.kind, 'valid');
    if (outcome.kind !== 'valid') return;
    const query = loginPageQuery(outcome.request);
    assert.equal(query.get('state'), 'a&b=c d/é');
    assert.equal(query.has('extra'), false);
    assert.equal(query.toString(), 'client_id=E&redirect_uri=https%3A%2F%2Frp.example%2Fcb&response_type=code&scope=openid&state=a%26b%3Dc+d%2F%C3%A9');
  });
});

describe('redirects to the relying party', () => {
  it('append the parameters, keeping an existing query as it is', () => {
    assert.equal(redirectWith('https://rp/cb', { code: 'c', state: 's' }), 'https://rp/cb?code=c&state=s');
    assert.equal(redirectWith('https://rp/cb?a=%20b', { code: 'c' }), 'https://rp/cb?a=%20b&code=c');
    assert.equal(redirectWith('https://rp/cb?', { code: 'c' }), 'https://rp/cb?code=c');
    assert.equal(redirectWith('https://rp/cb?a=1&', { code: 'c' }), 'https://rp/cb?a=1&code=c');
  });

  it('encode the state so that it cannot add parameters', () => {
    const url = new URL(redirectWith('https://rp/cb', { code: 'c', state: 'x&code=evil#frag' }));
    assert.deepEqual(url.searchParams.getAll('code'), ['c']);
    assert.equal(url.searchParams.get('state'), 'x&code=evil#frag');
    assert.equal(url.hash, '');
  });

  it('leave out an absent state; errors carry error and error_description', () => {
    const url = new URL(errorRedirect('https://rp/cb', OAuthErrors.accessDenied('Queue position has expired'), undefined));
    assert.equal(url.searchParams.get('error'), 'access_denied');
    assert.equal(url.searchParams.get('error_description'), 'Queue position has expired');
    assert.equal(url.searchParams.has('state'), false);
  });
});

describe('HTTP Basic client credentials (RFC 6749 §2.3.1)', () => {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  it('are form-decoded after base64', () => {
    assert.deepEqual(basicCredentials(`Basic ${b64('my%20client:p%2Bss%3Aw+rd')}`), { id: 'my client', secret: 'p+ss:w rd' });
    assert.deepEqual(basicCredentials(`basic   ${b64('E:s:with:colons')}`), { id: 'E', secret: 's:with:colons' });
  });
  it('another scheme is no Basic credential; a broken one is malformed', () => {
    assert.equal(basicCredentials(undefined), undefined);
    assert.equal(basicCredentials('Bearer abc'), undefined);
    assert.equal(basicCredentials('Basic'), 'malformed');
    assert.equal(basicCredentials('Basic !!!'), 'malformed');
    assert.equal(basicCredentials(`Basic ${b64('no-colon')}`), 'malformed');
    assert.equal(basicCredentials(`Basic ${b64('E:%E0%A4%A')}`), 'malformed');
    // Only the base64 alphabet, padded at the end: Buffer.from would silently skip anything else.
    assert.equal(basicCredentials(`Basic !${b64('E:s')}`), 'malformed');
    assert.equal(basicCredentials(`Basic ${b64('E:s')}*`), 'malformed');
  });
  it('blanks around the scheme and the credentials are allowed; anything else around them is another scheme', () => {
    assert.deepEqual(basicCredentials(`  Basic ${b64('E:s')}  `), { id: 'E', secret: 's' });
    assert.equal(basicCredentials(`xBasic ${b64('E:s')}`), undefined);
    assert.equal(basicCredentials(`Basic ${b64('E:s')} trailing`), undefined);
  });
  it('an empty client ID or secret is still a credential (authentication then fails)', () => {
    assert.deepEqual(basicCredentials(`Basic ${b64(':s')}`), { id: '', secret: 's' });
    assert.deepEqual(basicCredentials(`Basic ${b64('E:')}`), { id: 'E', secret: '' });
  });
});

describe('client secrets', () => {
  let clients = 0;
  const client = (configuredSecret?: string): OidcClient => ({ clientId: `c-${++clients}`, redirectUris: [], configuredSecret, signingAlgorithm: 'RS256' });

  it('are generated as 50 alphanumerics, all characters in use', () => {
    const secrets = Array.from({ length: 200 }, generateClientSecret);
    for (const secret of secrets) assert.match(secret, /^[A-Za-z0-9]{50}$/);
    assert.equal(new Set(secrets).size, secrets.length);
    assert.equal(new Set(secrets.join('')).size, 62);
  });

  it('a generated secret is made once and kept; a rotation replaces it', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    const secrets = new ClientSecrets(store);
    const c = client();
    const first = await secrets.current(c);
    assert.equal(await secrets.current(c), first);
    assert.equal(await new ClientSecrets(store).current(c), first, 'another node sees the same secret');
    const rotated = await secrets.rotate(c);
    assert.notEqual(rotated, first);
    assert.equal(await secrets.current(c), rotated);
    assert.equal(await secrets.verify(c, first), false);
    assert.equal(await secrets.verify(c, rotated), true);
    await store.close();
  });

  it('a configured secret is used until rotated; changing it in the file wins over an earlier rotation', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    const secrets = new ClientSecrets(store);
    const c = client('configured-0123456789');
    assert.equal(await secrets.current(c), 'configured-0123456789');
    const rotated = await secrets.rotate(c);
    assert.match(rotated, /^[A-Za-z0-9]{50}$/);
    assert.equal(await secrets.current(c), rotated, 'the rotation outlives a restart with the same file');
    const edited = { ...c, configuredSecret: 'edited-in-the-file-0123' };
    assert.equal(await secrets.current(edited), 'edited-in-the-file-0123');
    const removed = { ...c, configuredSecret: undefined };
    assert.match(await secrets.current(removed), /^[A-Za-z0-9]{50}$/);
    await store.close();
  });

  it('concurrent rotations agree on one new secret', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    const c = client();
    await new ClientSecrets(store).current(c);
    const results = await Promise.all(Array.from({ length: 5 }, () => new ClientSecrets(store).rotate(c)));
    assert.equal(new Set(results).size, 1);
    assert.equal(await new ClientSecrets(store).current(c), results[0]);
    await store.close();
  });
});
