// The OpenID stack's Lambda function (src/aws/oidc.ts), invoked with realistic API Gateway proxy events of its
// REST API (/oidc/{proxy+}), against a real redis-server, dynalite, a local SQS endpoint (the core stack's
// intake queue, reached through the real SQS client) and a local Secrets Manager holding the core stack's
// settings document and the OpenID stack's client secret and redirect-URI allow-list. The login page's polling
// goes to the core stack's public API function, and the joins are numbered by the core's intake consumer, over
// the same store.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyResult, SQSEvent } from 'aws-lambda';
import { decodeJwt } from 'jose';
import { privateHttpApp, proxyHandler, publicHttpApp } from '../../src/aws/api-gateway.ts';
import { awsConfigFromEnv, type AwsConfig } from '../../src/aws/environment.ts';
import { createIntakeConsumer } from '../../src/aws/intake-consumer.ts';
import { decodeIntakeMessage, intakeQueueOf, sqsIntakeQueue, type IntakeQueue } from '../../src/aws/intake-queue.ts';
import { createOidcHandler, oidcAwsConfig, oidcConfigFromEnv, readOidcClientSettings } from '../../src/aws/oidc.ts';
import { createRuntime, type AwsRuntime } from '../../src/aws/runtime.ts';
import { once } from '../../src/aws/once.ts';
import { ROOM_CHECK_INTERVAL_MS } from '../../src/domain/room-sync.ts';
import { SecretsManagerKeyStore } from '../../src/aws/secrets-key-store.ts';
import { CompositeStore } from '../../src/store/dynamodb/composite-store.ts';
import { TokenTable } from '../../src/store/dynamodb/token-table.ts';
import { RedisStore } from '../../src/store/redis/redis-store.ts';
import { TestClock } from '../support/node.ts';
import { startRedisServer } from '../support/redis-server.ts';
import { apiGatewayEvent, oidcApiEvent, sqsEvent } from './events.ts';
import { fakeSecretsManager, fakeSqs, startDynalite, startJsonService, TEST_AWS, type SqsMessage } from './local-aws.ts';

const [redis, dynamo] = await Promise.all([startRedisServer(), startDynalite()]);
const tableName = await dynamo.createTokenTable();
const secrets = new Map<string, string>();
const secretsManager = await startJsonService(fakeSecretsManager(secrets));
const secretsClient = new SecretsManagerClient({ ...TEST_AWS, endpoint: secretsManager.endpoint });
const sqsAccepted: SqsMessage[] = [];
const sqs = await startJsonService(fakeSqs(sqsAccepted));
after(() => Promise.all([redis.destroy(), dynamo.close(), secretsManager.close(), sqs.close()]));
/** The core stack's intake queue (its IntakeQueueUrl export). */
const INTAKE_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/core-stack-WaitingRoomQueue';

const API = 'oid1234567';
// The API's host (PUBLIC_URL); its stage is named oidc, as VWR's was, so the issuer is the stage URL.
const HOST_URL = `https://${API}.execute-api.us-east-1.amazonaws.com`;
const ISSUER = `${HOST_URL}/oidc`;
const PUBLIC_API_URL = 'https://d1234abcd.cloudfront.net';
const REDIRECT_URI = 'https://app.example.com/oauth2/idpresponse';
const CLIENT_SECRET = 'Abcdefghij0123456789Abcdefghij0123456789Abcdefghij';

secrets.set('openid-stack/client_secret', CLIENT_SECRET);
secrets.set('openid-stack/redirect_uris', JSON.stringify({ redirect_uris: [REDIRECT_URI], unused: 'x1y2z3w4' }));

/** The core stack's settings document (its CoreSettings secret): what its own functions run with. */
const coreSettings: Record<string, string> = {
  EVENT_ID: 'Sample',
  VALIDITY_PERIOD: '3600',
  ENABLE_EVENTS_GENERATION: 'false',
  ENABLE_QUEUE_POSITION_EXPIRY: 'true',
  QUEUE_POSITION_EXPIRY_PERIOD: '900',
  INCR_SVC_ON_QUEUE_POSITION_EXPIRY: 'false',
  ISSUER: 'https://pub1234567.execute-api.us-east-1.amazonaws.com/api',
  REDIS_HOST: '127.0.0.1',
  REDIS_PORT: String(redis.port),
  REDIS_TLS: 'false',
  // Present and empty (= none): the local Redis has no AUTH, and events go nowhere.
  REDIS_AUTH_SECRET_ARN: '',
  TOKEN_TABLE_NAME: tableName,
  EVENT_BUS_NAME: '',
  SIGNING_KEYS_SECRET_PREFIX: 'stack-oidc/anteroom/signing-keys/',
  // Not a setting of its functions: the core's private API, which PrivateAPIEndpoint must name.
  PRIVATE_API_URL: 'https://prv1234567.execute-api.us-east-1.amazonaws.com/api',
};
secrets.set('core-stack/settings', JSON.stringify(coreSettings));
const KEY_PREFIX = `ar-aws-oidc-${process.pid}:`;

/** The environment of the OpenID function, as deploy/aws/stacks/openid.ts sets it. */
const env: Record<string, string> = {
  EVENT_ID: 'Sample',
  CORE_SETTINGS_SECRET_ARN: 'core-stack/settings',
  PUBLIC_URL: HOST_URL,
  PUBLIC_API_URL,
  PRIVATE_API_ENDPOINT: 'https://prv1234567.execute-api.us-east-1.amazonaws.com/api',
  INTAKE_QUEUE_URL,
  CLIENT_SECRET_ID: 'openid-stack/client_secret',
  REDIRECT_URIS_SECRET_ID: 'openid-stack/redirect_uris',
  // Test-only: a key prefix of this process's own, and no logging.
  REDIS_KEY_PREFIX: KEY_PREFIX,
  LOG_LEVEL: 'silent',
};
/** The core stack's functions run with the settings themselves (its public API also with the intake queue). */
const coreEnv = { ...coreSettings, INTAKE_QUEUE_URL, REDIS_KEY_PREFIX: KEY_PREFIX, LOG_LEVEL: 'silent' };

const clock = new TestClock();
const runtimes: AwsRuntime[] = [];
after(() => Promise.all(runtimes.map((r) => r.close())));

/** The intake queue at INTAKE_QUEUE_URL, through the real SQS client to the local endpoint. */
const localIntake = (url: string): IntakeQueue => sqsIntakeQueue(url, new SQSClient({ ...TEST_AWS, endpoint: sqs.endpoint }));

/** What Lambda's event source mapping hands the intake consumer: every message the queue holds, taken off it. */
function deliver(): SQSEvent {
  const mine = sqsAccepted.filter((m) => m.queueUrl === INTAKE_QUEUE_URL);
  sqsAccepted.splice(0, sqsAccepted.length, ...sqsAccepted.filter((m) => m.queueUrl !== INTAKE_QUEUE_URL));
  return sqsEvent(mine.map((m) => ({ messageId: m.messageId, body: m.body })));
}

/**
 * One execution environment over the shared Redis, DynamoDB table and signing keys; joins go to the intake
 * queue its configuration names (INTAKE_QUEUE_URL), as src/aws/oidc.ts and public-api.ts wire it.
 */
function environment(config: () => Promise<AwsConfig>, withIntake = false) {
  return once(async () => {
    const c = await config();
    const store = new CompositeStore({
      redis: new RedisStore({ url: redis.url, keyPrefix: c.redis.keyPrefix, readyTimeoutMs: 5000 }),
      tokens: new TokenTable({ client: dynamo.client, tableName }),
      keys: new SecretsManagerKeyStore({ client: secretsClient, prefix: c.signingKeysSecretPrefix! }),
    });
    const intake = withIntake ? localIntake(c.intakeQueueUrl!) : undefined;
    const runtime = await createRuntime(c, { store, intake, clock: clock.now, log: () => {} });
    runtimes.push(runtime);
    return runtime;
  });
}

// What src/aws/oidc.ts's handler does at cold start, with the local Secrets Manager.
const oidcFunction = createOidcHandler(
  environment(() => oidcAwsConfig(secretsClient, env), true),
  () => oidcConfigFromEnv(env),
);
const coreConfig = async () => awsConfigFromEnv(coreEnv);
const publicApi = proxyHandler(environment(coreConfig, true), (runtime) => publicHttpApp(runtime));
const privateApi = proxyHandler(environment(coreConfig), privateHttpApp);
const intakeConsumer = createIntakeConsumer(environment(coreConfig), () => {});

/** An event of the OpenID API (its host: API). */
const oidcEvent = (input: Parameters<typeof apiGatewayEvent>[0]) => oidcApiEvent({ ...input, apiId: API });

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
    assert.deepEqual(oidcConfigFromEnv({ ...env, PUBLIC_URL: `${HOST_URL}/` }).publicUrl, HOST_URL);
    assert.throws(() => oidcConfigFromEnv({ ...env, PUBLIC_URL: '' }), /PUBLIC_URL is required/);
    assert.throws(() => oidcConfigFromEnv({ ...env, PUBLIC_API_URL: '' }), /PUBLIC_API_URL is required/);
    for (const bad of ['https://d1.cloudfront.net/?x=1', 'https://d1.cloudfront.net/?', 'https://d1.cloudfront.net#', 'http://d1.cloudfront.net', 'https://u:p@d1.cloudfront.net']) {
      assert.throws(() => oidcConfigFromEnv({ ...env, PUBLIC_API_URL: bad }), /PUBLIC_API_URL must be an https URL without credentials, query or fragment/, bad);
    }
    assert.equal(oidcConfigFromEnv({ ...env, PUBLIC_API_URL: 'https://d1.cloudfront.net/prefix//' }).publicApiUrl, 'https://d1.cloudfront.net/prefix');
    assert.deepEqual(await readOidcClientSettings(secretsClient, oidcConfigFromEnv(env)), {
      redirect_uris: [REDIRECT_URI],
      client_secret: CLIENT_SECRET,
    });
    secrets.set('bad/redirect_uris', JSON.stringify({ redirect_uris: ['javascript:alert(1)'] }));
    await assert.rejects(readOidcClientSettings(secretsClient, { redirectUrisSecretId: 'bad/redirect_uris' }), /redirect_uris must be/);
  });

  it('runs over the core stack’s waiting room: its settings document, refused when absent, malformed or of another event', async () => {
    const config = await oidcAwsConfig(secretsClient, env);
    assert.equal(config.event.event_id, 'Sample');
    assert.equal(config.redis.port, redis.port);
    assert.equal(config.tokenTableName, tableName);
    assert.equal(config.signingKeysSecretPrefix, coreSettings.SIGNING_KEYS_SECRET_PREFIX);
    assert.equal(config.event.issuer, coreSettings.ISSUER);
    // Its joins go to the core's intake queue, which it must be given.
    assert.equal(config.intakeQueueUrl, INTAKE_QUEUE_URL);
    const withoutQueue = await oidcAwsConfig(secretsClient, { ...env, INTAKE_QUEUE_URL: '' });
    assert.throws(() => intakeQueueOf(withoutQueue), /INTAKE_QUEUE_URL is required/);
    assert.deepEqual(config.event.oidc?.redirect_uris, [REDIRECT_URI]);
    // The core's settings in effect, whatever the function's own environment says of them.
    assert.equal((await oidcAwsConfig(secretsClient, { ...env, VALIDITY_PERIOD: '60' })).event.validity_period, 3600);

    await assert.rejects(oidcAwsConfig(secretsClient, { ...env, EVENT_ID: 'Other' }), /EventID "Other" is not the event of its core stack \("Sample"\)/);
    // VWR's PrivateAPIEndpoint must name this core's private API (a trailing slash or the host's case aside).
    assert.equal((await oidcAwsConfig(secretsClient, { ...env, PRIVATE_API_ENDPOINT: 'https://PRV1234567.execute-api.us-east-1.amazonaws.com/api/' })).event.event_id, 'Sample');
    await assert.rejects(
      oidcAwsConfig(secretsClient, { ...env, PRIVATE_API_ENDPOINT: 'https://other12345.execute-api.us-east-1.amazonaws.com/api' }),
      /PrivateAPIEndpoint "https:\/\/other12345\.execute-api\.us-east-1\.amazonaws\.com\/api" is not the private API of the core stack of EventID "Sample"/,
    );
    await assert.rejects(oidcAwsConfig(secretsClient, { ...env, CORE_SETTINGS_SECRET_ARN: '' }), /CORE_SETTINGS_SECRET_ARN is required/);
    secrets.set('core-stack/not-json', 'redis://nope');
    await assert.rejects(oidcAwsConfig(secretsClient, { ...env, CORE_SETTINGS_SECRET_ARN: 'core-stack/not-json' }), /as a JSON object/);
    secrets.set('core-stack/other-secret', JSON.stringify({ password: 'x' }));
    await assert.rejects(oidcAwsConfig(secretsClient, { ...env, CORE_SETTINGS_SECRET_ARN: 'core-stack/other-secret' }), /names no EVENT_ID/);
    // Every setting, always: without TOKEN_TABLE_NAME it would quietly keep tokens in Redis, beside the core.
    const { TOKEN_TABLE_NAME: _, ...partial } = coreSettings;
    secrets.set('core-stack/partial', JSON.stringify(partial));
    await assert.rejects(oidcAwsConfig(secretsClient, { ...env, CORE_SETTINGS_SECRET_ARN: 'core-stack/partial' }), /names no TOKEN_TABLE_NAME/);
    await assert.rejects(oidcAwsConfig(secretsClient, { ...env, EVENT_ID: '' }), /EventID "" is not the event of its core stack/);
    secrets.set('core-stack/number', JSON.stringify({ ...coreSettings, REDIS_PORT: 6379 }));
    await assert.rejects(oidcAwsConfig(secretsClient, { ...env, CORE_SETTINGS_SECRET_ARN: 'core-stack/number' }), /REDIS_PORT must be a string/);
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
    // Relative: the browser resolves it against /oidc/authorize, keeping the stage.
    assert.match(location, /^login\?/);
    const loginUrl = new URL(location, `${ISSUER}/authorize`);
    assert.equal(loginUrl.pathname, '/oidc/login');

    const login = await oidcFunction(
      oidcEvent({ method: 'GET', path: '/oidc/login', query: Object.fromEntries(loginUrl.searchParams), headers: { Accept: 'text/html' } }),
    );
    assert.equal(login.statusCode, 200);
    assert.match(String(login.headers?.['content-type']), /text\/html/);
    // The page polls the core's public API through CloudFront, and its CSP lets it.
    assert.match(login.body, new RegExp(`data-public-api="${PUBLIC_API_URL}/"`));
    assert.match(String(login.headers?.['content-security-policy']), new RegExp(`connect-src 'self' ${PUBLIC_API_URL};`));

    // The join is buffered like the public API's: it answers once the join is on the core's intake queue,
    // before any position exists; the message carries the authorization request to bind.
    const joined = await oidcFunction(oidcEvent({ method: 'POST', path: '/oidc/join', body: authorizeQuery }));
    assert.equal(joined.statusCode, 200, joined.body);
    const { request_id: requestId, event_id: joinedEvent, queue_number: noNumberYet } = json(joined) as { request_id: string; event_id: string; queue_number?: number };
    assert.equal(joinedEvent, 'Sample');
    assert.equal(noNumberYet, undefined);
    const [message, ...others] = sqsAccepted.filter((m) => m.queueUrl === INTAKE_QUEUE_URL).map((m) => decodeIntakeMessage(m.body)!);
    assert.deepEqual(others, []);
    assert.equal(message!.request_id, requestId);
    assert.equal(message!.event_id, 'Sample');
    assert.equal(JSON.parse(message!.authorization!).redirect_uri, REDIRECT_URI);
    // Nothing is numbered or bound before the consumer runs: the page's /queue_num asks again (202).
    const pending = await publicApi(apiGatewayEvent({ method: 'GET', path: '/queue_num', query: { event_id: 'Sample', request_id: requestId } }));
    assert.equal(pending.statusCode, 202);
    const unbound = await oidcFunction(oidcEvent({ method: 'POST', path: '/oidc/continue', body: { client_id: 'Sample', request_id: requestId } }));
    assert.equal(unbound.statusCode, 404);

    // The core's intake consumer numbers the join and binds its authorization request; a redelivery of the same
    // message (SQS delivers at least once) changes neither.
    const batch = deliver();
    assert.deepEqual(await intakeConsumer(batch), { batchItemFailures: [] });
    assert.deepEqual(await intakeConsumer(batch), { batchItemFailures: [] });

    // What the page polls: the core stack's public API sees the visitor the consumer numbered.
    const position = await publicApi(apiGatewayEvent({ method: 'GET', path: '/queue_num', query: { event_id: 'Sample', request_id: requestId } }));
    assert.equal(position.statusCode, 200);
    assert.equal(json(position).queue_number, 1);
    const waiting = await publicApi(apiGatewayEvent({ method: 'GET', path: '/waiting_num', query: { event_id: 'Sample' } }));
    assert.deepEqual(json(waiting), { waiting_num: 1 });
    const before = await publicApi(apiGatewayEvent({ method: 'GET', path: '/serving_num', query: { event_id: 'Sample' } }));
    assert.deepEqual(json(before), { serving_counter: 0 });

    const early = await oidcFunction(oidcEvent({ method: 'POST', path: '/oidc/continue', body: { client_id: 'Sample', request_id: requestId } }));
    assert.equal(early.statusCode, 202);

    // The core stack's private API moves the counter (the same store).
    const served = await privateApi(apiGatewayEvent({ method: 'POST', path: '/increment_serving_counter', body: { event_id: 'Sample', increment_by: 1 } }));
    assert.equal(served.statusCode, 200);
    const after = await publicApi(apiGatewayEvent({ method: 'GET', path: '/serving_num', query: { event_id: 'Sample' } }));
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

  it('stays a client when a core function starts after it: its client settings never reach the store', async () => {
    // Warm: the OpenID function's execution environment serves the client.
    const authorize = () => oidcFunction(oidcEvent({ method: 'GET', path: '/oidc/authorize', query: authorizeQuery }));
    assert.equal((await authorize()).statusCode, 302);
    // A core function's cold start writes the stack's room, as the core knows it (no client), to the store...
    const freshCore = proxyHandler(environment(coreConfig), (runtime) => publicHttpApp(runtime));
    assert.equal((await freshCore(apiGatewayEvent({ method: 'GET', path: '/serving_num', query: { event_id: 'Sample' } }))).statusCode, 200);
    // ... and the OpenID function follows the store's rooms a second later: it is still a client.
    clock.advance(ROOM_CHECK_INTERVAL_MS / 1000);
    const again = await authorize();
    assert.equal(again.statusCode, 302, again.body);
    assert.equal((await oidcFunction(oidcEvent({ method: 'GET', path: '/oidc/.well-known/openid-configuration' }))).statusCode, 200);
    // An OpenID cold start writes the room as the core does: no redirect URIs, no client secret in Redis.
    const freshOidc = createOidcHandler(environment(() => oidcAwsConfig(secretsClient, env), true), () => oidcConfigFromEnv(env));
    assert.equal((await freshOidc(oidcEvent({ method: 'GET', path: '/oidc/authorize', query: authorizeQuery }))).statusCode, 302);
    const stored = await runtimes.at(-1)!.store.getRoom('Sample');
    assert.ok(stored);
    assert.equal((JSON.parse(stored.settings) as { oidc?: unknown }).oidc, undefined);
    assert.doesNotMatch(stored.settings, new RegExp(CLIENT_SECRET));
  });

  it('answers 503 when the store cannot be reached at cold start', async () => {
    const broken = createOidcHandler(async () => {
      throw new Error('redis down');
    }, () => oidcConfigFromEnv(env));
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
