// A real relying-party library (openid-client 6) against the running server: discovery, the authorization
// code flow with PKCE and nonce (the login page driven by the HTTP calls it makes), the code exchange with
// client_secret_basic and with client_secret_post, userinfo, and the id token's validation.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import type { TestNode } from '../support/node.ts';
import {
  CONFIGURED,
  CONFIGURED_SECRET,
  REDIRECT_URI,
  REDIRECT_URI_WITH_QUERY,
  SHOP,
  basic,
  clientSecretOf,
  continueLogin,
  enterWaitingRoom,
  issuerOf,
  serveUpTo,
  startOidcNode,
  tokenRequest,
} from './support.ts';

describe('OpenID Connect with openid-client', () => {
  let node: TestNode;
  before(async () => {
    node = await startOidcNode();
  });
  after(() => node.stop());

  // openid-client refuses http:// issuers unless told otherwise; real deployments use https.
  const discover = (clientId: string, secret: string, auth: client.ClientAuth) =>
    client.discovery(new URL(issuerOf(node)), clientId, secret, auth, { execute: [client.allowInsecureRequests] });

  /** One whole login: authorization URL → login page → queue → served → callback URL → tokens → userinfo. */
  async function login(config: client.Configuration, clientId: string, redirectUri: string) {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const { joined } = await enterWaitingRoom(authorizationUrl);
    assert.equal(joined.event_id, clientId);

    const early = await continueLogin(node, clientId, joined.request_id);
    assert.equal(early.status, 202);
    assert.deepEqual(early.body, { error: 'Request ID not being served yet' });

    await serveUpTo(node, clientId, joined.queue_number);
    const served = await continueLogin(node, clientId, joined.request_id);
    assert.equal(served.status, 200);
    const callback = new URL(String(served.body.redirect_to));

    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    const claims = tokens.claims();
    assert.ok(claims, 'an id token was returned and validated');
    assert.equal(claims.iss, issuerOf(node));
    assert.equal(claims.aud, clientId);
    assert.equal(claims.sub, joined.request_id);
    assert.equal(claims.nonce, nonce);
    assert.equal(claims.token_use, 'id');
    assert.equal(claims.queue_position, joined.queue_number);
    assert.equal(tokens.token_type, 'bearer');
    assert.ok(typeof tokens.expires_in === 'number' && tokens.expires_in > 3500);

    const userInfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    assert.equal(userInfo.sub, joined.request_id);
    assert.equal(userInfo.aud, clientId);
    assert.equal(userInfo.queue_position, joined.queue_number);
    assert.equal(userInfo.token_use, 'access');
    assert.equal(userInfo.iss, issuerOf(node));
    return { callback, claims, tokens, joined };
  }

  it('discovers the issuer at <public url>/oidc', async () => {
    const config = await discover(SHOP, 'unused', client.ClientSecretBasic('unused'));
    const metadata = config.serverMetadata();
    assert.equal(metadata.issuer, issuerOf(node));
    assert.equal(metadata.token_endpoint, `${issuerOf(node)}/token`);
    assert.equal(metadata.userinfo_endpoint, `${issuerOf(node)}/userInfo`);
  });

  it('logs in with PKCE and nonce, exchanging the code with client_secret_basic', async () => {
    const secret = await clientSecretOf(node, SHOP);
    const config = await discover(SHOP, secret, client.ClientSecretBasic(secret));
    const { callback } = await login(config, SHOP, REDIRECT_URI);
    assert.equal(`${callback.origin}${callback.pathname}`, REDIRECT_URI);
  });

  it('logs in exchanging the code with client_secret_post', async () => {
    const secret = await clientSecretOf(node, SHOP);
    const config = await discover(SHOP, secret, client.ClientSecretPost(secret));
    await login(config, SHOP, REDIRECT_URI);
  });

  it('keeps the query of a redirect URI that has one, appending code and state to it', async () => {
    const secret = await clientSecretOf(node, SHOP);
    const config = await discover(SHOP, secret, client.ClientSecretBasic(secret));
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI_WITH_QUERY,
      scope: 'openid',
      state: 'a&b=c d',
    });
    const { joined } = await enterWaitingRoom(url);
    await serveUpTo(node, SHOP, joined.queue_number);
    const callback = String((await continueLogin(node, SHOP, joined.request_id)).body.redirect_to);
    assert.equal(callback, `${REDIRECT_URI_WITH_QUERY}&code=${joined.request_id}&state=a%26b%3Dc+d`);
    // openid-client sends the callback URL without its whole query as redirect_uri, so the exchange is made
    // by hand here with the registered URI (what ALB and most relying parties send).
    const exchange = await tokenRequest(
      node,
      { grant_type: 'authorization_code', code: joined.request_id, redirect_uri: REDIRECT_URI_WITH_QUERY },
      { authorization: basic(SHOP, secret) },
    );
    assert.equal(exchange.status, 200, JSON.stringify(exchange.body));
  });

  it('authenticates a client whose secret is set in the configuration file', async () => {
    assert.equal(await clientSecretOf(node, CONFIGURED), CONFIGURED_SECRET);
    const config = await discover(CONFIGURED, CONFIGURED_SECRET, client.ClientSecretBasic(CONFIGURED_SECRET));
    await login(config, CONFIGURED, REDIRECT_URI);
  });

  it('answers a second exchange of the same code with the same token set', async () => {
    const secret = await clientSecretOf(node, SHOP);
    const config = await discover(SHOP, secret, client.ClientSecretBasic(secret));
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
      state: 's',
    });
    const { joined } = await enterWaitingRoom(url);
    await serveUpTo(node, SHOP, joined.queue_number);
    const callback = new URL(String((await continueLogin(node, SHOP, joined.request_id)).body.redirect_to));
    const checks = { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: 's' };
    const first = await client.authorizationCodeGrant(config, callback, checks);
    const second = await client.authorizationCodeGrant(config, callback, checks);
    assert.equal(second.id_token, first.id_token);
    assert.equal(second.access_token, first.access_token);
  });

  it('surfaces a wrong client secret to the library as invalid_client', async () => {
    const config = await discover(SHOP, 'not-the-secret', client.ClientSecretBasic('not-the-secret'));
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 's',
    });
    const { joined } = await enterWaitingRoom(url);
    await serveUpTo(node, SHOP, joined.queue_number);
    const callback = new URL(String((await continueLogin(node, SHOP, joined.request_id)).body.redirect_to));
    // A 401 with a Basic challenge, which oauth4webapi reports as a WWW-Authenticate challenge error.
    await assert.rejects(
      client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's' }),
      (error: unknown) => {
        const e = error as { status?: number; cause?: { scheme: string }[] };
        assert.equal(e.status, 401);
        assert.equal(e.cause?.[0]?.scheme, 'basic');
        return true;
      },
    );
  });
});
