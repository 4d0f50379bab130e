// The OpenID stack's Lambda function (src/aws/oidc.ts), invoked with realistic API Gateway proxy events of its
// REST API (/oidc/{proxy+} and the login page's polling paths), against a real redis-server, dynalite and a
// local Secrets Manager holding the stack's client secret and redirect-URI allow-list.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { decodeJwt } from 'jose';
import { privateHttpApp, proxyHandler } from '../../src/aws/api-gateway.ts';
import { awsConfigFromEnv, type AwsConfig } from '../../src/aws/environment.ts';
import { createOidcHandler, oidcConfigFromEnv, readOidcClientSettings, withOidcClient } from '../../src/aws/oidc.ts';
import { createRuntime, once, type AwsRuntime } from '../../src/aws/runtime.ts';
import { SecretsManagerKeyStore } from '../../src/aws/secrets-key-store.ts';
import { CompositeStore } from '../../src/store/dynamodb/composite-store.ts';
import { TokenTable } from '../../src/store/dynamodb/token-table.ts';
import { RedisStore } from '../../src/store/redis/redis-store.ts';
import { TestClock } from '../support/node.ts';
import { startRedisServer } from '../support/redis-server.ts';
import { apiGatewayEvent } from './events.ts';
import { fakeSecretsManager, startDynalite, startJsonService, TEST_AWS } from './local-aws.ts';

const [redis, dynamo] = await Promise.all([startRedisServer(), startDynalite()]);
const tableName = await dynamo.createTokenTable();
const secrets = new Map<string, string>();
const secretsManager = await startJsonService(fakeSecretsManager(secrets));
const secretsClient = new SecretsManagerClient({ ...TEST_AWS, endpoint: secretsManager.endpoint });
after(() => Promise.all([redis.destroy(), dynamo.close(), secretsManager.close()]));

const API = 'oid1234567';
const STAGE_URL = `https://${API}.execute-api.us-east-1.amazonaws.com/api`;
const ISSUER = `${STAGE_URL}/oidc`;
const REDIRECT_URI = 'https://app.example.com/oauth2/idpresponse';
const CLIENT_SECRET = 'Abcdefghij0123456789Abcdefghij0123456789Abcdefghij';

secrets.set('openid-stack/client_secret', CLIENT_SECRET);
secrets.set('openid-stack/redirect_uris', JSON.stringify({ redirect_uris: [REDIRECT_URI], unused: 'x1y2z3w4' }));

/** The environment of the OpenID function: the core stack's store settings plus the OpenID stack's own. */
const env: Record<string, string> = {
  EVENT_ID: 'Sample',
  VALIDITY_PERIOD: '3600',
  ENABLE_QUEUE_POSITION_EXPIRY: 'true',
  QUEUE_POSITION_EXPIRY_PERIOD: '900',
  ISSUER: 'https://pub1234567.execute-api.us-east-1.amazonaws.com/api',
  REDIS_HOST: '127.0.0.1',
  REDIS_PORT: String(redis.port),
  REDIS_TLS: 'false',
  REDIS_KEY_PREFIX: `ar-aws-oidc-${process.pid}:`,
  TOKEN_TABLE_NAME: tableName,
  SIGNING_KEYS_SECRET_PREFIX: 'stack-oidc/anteroom/signing-keys/',
  LOG_LEVEL: 'silent',
  PUBLIC_URL: STAGE_URL,
  CLIENT_SECRET_ID: 'openid-stack/client_secret',
  REDIRECT_URIS_SECRET_ID: 'openid-stack/redirect_uris',
};

const clock = new TestClock();
const runtimes: AwsRuntime[] = [];
after(() => Promise.all(runtimes.map((r) => r.close())));

/** One execution environment over the shared Redis, DynamoDB table and signing keys. */
function environment(config: () => Promise<AwsConfig>) {
  return once(async () => {
    const c = await config();
    const store = new CompositeStore({
      redis: new RedisStore({ url: redis.url, keyPrefix: c.redis.keyPrefix, readyTimeoutMs: 5000 }),
      tokens: new TokenTable({ client: dynamo.client, tableName }),
      keys: new SecretsManagerKeyStore({ client: secretsClient, prefix: c.signingKeysSecretPrefix! }),
    });
    const runtime = await createRuntime(c, { store, clock: clock.now, log: () => {} });
    runtimes.push(runtime);
    return runtime;
  });
}

// What src/aws/oidc.ts's handler does at cold start, with the local Secrets Manager.
const oidcFunction = createOidcHandler(
  environment(async () => withOidcClient(awsConfigFromEnv(env), await readOidcClientSettings(secretsClient, oidcConfigFromEnv(env)))),
  () => oidcConfigFromEnv(env).publicUrl,
);
const privateApi = proxyHandler(environment(async () => awsConfigFromEnv(env)), privateHttpApp);

/** An event of the OpenID API's /oidc/{proxy+} resource. */
function oidcEvent(input: Parameters<typeof apiGatewayEvent>[0]): APIGatewayProxyEvent {
  const event = apiGatewayEvent({ ...input, apiId: API });
  return { ...event, resource: '/oidc/{proxy+}', pathParameters: { proxy: input.path.slice('/oidc/'.length) } };
}

const json = (result: APIGatewayProxyResult) => JSON.parse(result.body) as Record<string, unknown>;
const authorizeQuery = {
  client_id: 'Sample',
  redirect_uri: REDIRECT_URI,
  response_type: 'code',
  scope: 'openid',
  state: 'st-123',
  nonce: 'n-456',
};

describe('AWS OpenID function', () => {
  it('reads its environment and secrets, and refuses a missing PUBLIC_URL or a malformed allow-list', async () => {
    assert.deepEqual(oidcConfigFromEnv({ ...env, PUBLIC_URL: `${STAGE_URL}/` }).publicUrl, STAGE_URL);
    assert.throws(() => oidcConfigFromEnv({ ...env, PUBLIC_URL: '' }), /PUBLIC_URL is required/);
    assert.deepEqual(await readOidcClientSettings(secretsClient, oidcConfigFromEnv(env)), {
      redirect_uris: [REDIRECT_URI],
      client_secret: CLIENT_SECRET,
    });
    secrets.set('bad/redirect_uris', JSON.stringify({ redirect_uris: ['javascript:alert(1)'] }));
    await assert.rejects(readOidcClientSettings(secretsClient, { redirectUrisSecretId: 'bad/redirect_uris' }), /redirect_uris must be/);
  });

  it('carries a relying party through discovery → authorize → login → join → serve → token → userInfo', async () => {
    const discovery = await oidcFunction(oidcEvent({ method: 'GET', path: '/oidc/.well-known/openid-configuration' }));
    assert.equal(discovery.statusCode, 200);
    const document = json(discovery);
    assert.equal(document.issuer, ISSUER);
    assert.equal(document.token_endpoint, `${ISSUER}/token`);

    const jwks = await oidcFunction(oidcEvent({ method: 'GET', path: '/oidc/.well-known/jwks.json' }));
    assert.equal(jwks.statusCode, 200);
    assert.ok((json(jwks).keys as unknown[]).length > 0);

    const authorize = await oidcFunction(oidcEvent({ method: 'GET', path: '/oidc/authorize', query: authorizeQuery }));
    assert.equal(authorize.statusCode, 302);
    const location = String(authorize.headers?.location);
    // Relative: the browser resolves it against /api/oidc/authorize, keeping the stage.
    assert.match(location, /^login\?/);
    const loginUrl = new URL(location, `${ISSUER}/authorize`);
    assert.equal(loginUrl.pathname, '/api/oidc/login');

    const login = await oidcFunction(
      oidcEvent({ method: 'GET', path: '/oidc/login', query: Object.fromEntries(loginUrl.searchParams), headers: { Accept: 'text/html' } }),
    );
    assert.equal(login.statusCode, 200);
    assert.match(String(login.headers?.['content-type']), /text\/html/);
    // The page polls the public API relative to itself: /api/oidc/login → /api/serving_num.
    assert.match(login.body, /data-public-api="\.\.\/"/);
    assert.equal(new URL('../serving_num', loginUrl).pathname, '/api/serving_num');

    // The join numbers the visitor at once (no SQS intake) and answers the position.
    const joined = await oidcFunction(oidcEvent({ method: 'POST', path: '/oidc/join', body: authorizeQuery }));
    assert.equal(joined.statusCode, 200);
    const { request_id: requestId, queue_number: queueNumber } = json(joined) as { request_id: string; queue_number: number };
    assert.equal(queueNumber, 1);

    // The polling paths the page calls, served by the same function (resources /serving_num, ...).
    const position = await oidcFunction(apiGatewayEvent({ method: 'GET', path: '/queue_num', query: { event_id: 'Sample', request_id: requestId }, apiId: API }));
    assert.equal(position.statusCode, 200);
    assert.equal(json(position).queue_number, 1);
    const waiting = await oidcFunction(apiGatewayEvent({ method: 'GET', path: '/waiting_num', query: { event_id: 'Sample' }, apiId: API }));
    assert.deepEqual(json(waiting), { waiting_num: 1 });
    const before = await oidcFunction(apiGatewayEvent({ method: 'GET', path: '/serving_num', query: { event_id: 'Sample' }, apiId: API }));
    assert.deepEqual(json(before), { serving_counter: 0 });

    const early = await oidcFunction(oidcEvent({ method: 'POST', path: '/oidc/continue', body: { client_id: 'Sample', request_id: requestId } }));
    assert.equal(early.statusCode, 202);

    // The core stack's private API moves the counter (the same store).
    const served = await privateApi(apiGatewayEvent({ method: 'POST', path: '/increment_serving_counter', body: { event_id: 'Sample', increment_by: 1 } }));
    assert.equal(served.statusCode, 200);
    const after = await oidcFunction(apiGatewayEvent({ method: 'GET', path: '/serving_num', query: { event_id: 'Sample' }, apiId: API }));
    assert.deepEqual(json(after), { serving_counter: 1 });

    const proceed = await oidcFunction(oidcEvent({ method: 'POST', path: '/oidc/continue', body: { client_id: 'Sample', request_id: requestId } }));
    assert.equal(proceed.statusCode, 200);
    const back = new URL(String(json(proceed).redirect_to));
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
    assert.equal(back.searchParams.get('state'), 'st-123');
    const code = back.searchParams.get('code');
    assert.equal(code, requestId);

    const basic = `Basic ${Buffer.from(`Sample:${CLIENT_SECRET}`).toString('base64')}`;
    const tokenEvent = (authorization: string) =>
      oidcEvent({
        method: 'POST',
        path: '/oidc/token',
        rawBody: new URLSearchParams({ grant_type: 'authorization_code', code: code!, redirect_uri: REDIRECT_URI }).toString(),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: authorization },
      });
    const wrongSecret = await oidcFunction(tokenEvent(`Basic ${Buffer.from('Sample:not-the-secret-at-all-0000').toString('base64')}`));
    assert.equal(wrongSecret.statusCode, 401);
    assert.equal(json(wrongSecret).error, 'invalid_client');

    const token = await oidcFunction(tokenEvent(basic));
    assert.equal(token.statusCode, 200, token.body);
    assert.equal(token.headers?.['cache-control'], 'no-store');
    const tokens = json(token) as { access_token: string; id_token: string; token_type: string };
    assert.equal(tokens.token_type, 'Bearer');
    const idClaims = decodeJwt(tokens.id_token);
    assert.equal(idClaims.iss, ISSUER);
    assert.equal(idClaims.aud, 'Sample');
    assert.equal(idClaims.sub, requestId);
    assert.equal(idClaims.nonce, 'n-456');
    assert.equal(decodeJwt(tokens.access_token).iss, ISSUER);

    const userInfo = await oidcFunction(oidcEvent({ method: 'GET', path: '/oidc/userInfo', headers: { Authorization: `Bearer ${tokens.access_token}` } }));
    assert.equal(userInfo.statusCode, 200, userInfo.body);
    assert.equal(json(userInfo).sub, requestId);
  });

  it('answers 503 when the store cannot be reached at cold start', async () => {
    const broken = createOidcHandler(async () => {
      throw new Error('redis down');
    }, () => STAGE_URL);
    const original = console.error;
    console.error = () => {};
    try {
      const reply = await broken(oidcEvent({ method: 'GET', path: '/oidc/.well-known/openid-configuration' }));
      assert.equal(reply.statusCode, 503);
    } finally {
      console.error = original;
    }
  });
});
