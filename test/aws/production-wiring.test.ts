// The production wiring of the Lambda functions, which every other handler test replaces with local parts
// (simulated-stack.ts): the exported `handler`s of src/aws, each in a Node process of its own whose environment
// is what the core stack (deploy/aws/stacks/core.ts) gives that function, plus what Lambda itself sets (region,
// credentials). So openAwsParts runs as deployed: the Redis AUTH token read from Secrets Manager, rediss://
// to a redis-server that requires that password over TLS (its certificate signed by a CA of this test, which
// the child trusts through NODE_EXTRA_CA_CERTS, read only at process start), and DynamoDB, EventBridge,
// Secrets Manager and SQS clients made with default config (`new XClient({})`). Those clients reach local
// stand-ins (dynalite and the endpoints of local-aws.ts) only through the AWS SDK's standard endpoint
// variables AWS_ENDPOINT_URL_<SERVICE>; AWS_ENDPOINT_URL (every other service) points at a closed port, so a
// client the wiring made for any other service would fail here rather than reach AWS.

import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyResult, SQSBatchResponse } from 'aws-lambda';
import { Redis } from 'ioredis';
import { decodeProtectedHeader } from 'jose';
import { createVerifier } from '../../packages/authorizer/src/verify.ts';
import { CORE_SETTING_NAMES } from '../../src/aws/environment.ts';
import type { StoredSigningKey } from '../../src/domain/ports/store.ts';
import { freePort, startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { makeCertificates } from '../support/test-ca.ts';
import { apiGatewayEvent, oidcApiEvent, scheduledEvent, sqsEvent } from './events.ts';
import { fakeSecretsManager, fakeSqs, fakeSqsSendMessage, startDynalite, startJsonService, type LocalDynamo, type SqsMessage } from './local-aws.ts';
import { RESULT_PREFIX } from './production-wiring-child.ts';
import type { PublishedEvent } from './simulated-stack.ts';
import { killWithTest } from '../support/children.ts';

const CHILD = fileURLToPath(new URL('./production-wiring-child.ts', import.meta.url));
const ACCOUNT = '123456789012';
const STACK = `wiring-${process.pid}`;
const ISSUER = 'https://pub1234567.execute-api.us-east-1.amazonaws.com/api';
/** What the stack's RedisAuthToken secret holds: {"password": <64 letters and digits>}, as CDK generates it. */
const redisPassword = () => randomBytes(48).toString('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 64);
const PASSWORD = redisPassword();
const WRONG_PASSWORD = redisPassword();
const AUTH_SECRET_ARN = `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:RedisAuthToken-${STACK}-AbCdEf`;
const WRONG_SECRET_ARN = `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:OtherRedisAuthToken-${STACK}-GhIjKl`;
const SIGNING_KEYS_SECRET_PREFIX = `${STACK}/anteroom/signing-keys/`;
const TOKEN_TABLE_NAME = `${STACK}-TokenTable`;
const EVENT_BUS_NAME = `${STACK}-events`;

/** One function's execution environment: the child process and its invocations, one at a time. */
class LambdaProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<unknown>;
  private stdout = '';
  private stderr = '';
  private lines = '';
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  readonly module: string;

  constructor(module: string, env: Record<string, string>) {
    this.module = module;
    // Nothing of this process's environment: only what the function would have.
    this.child = killWithTest(spawn(process.execPath, [CHILD, module], { env, stdio: ['pipe', 'pipe', 'pipe'] }));
    this.child.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk.toString('utf8')));
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.exited = once(this.child, 'exit').then(([code, signal]) => {
      const error = new Error(`${module} exited (${String(code ?? signal)}) during an invocation:\n${this.output()}`);
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
      return code ?? signal;
    });
  }

  private onStdout(text: string): void {
    this.stdout += text;
    this.lines += text;
    let end: number;
    while ((end = this.lines.indexOf('\n')) >= 0) {
      const line = this.lines.slice(0, end);
      this.lines = this.lines.slice(end + 1);
      if (!line.startsWith(RESULT_PREFIX)) continue;
      const answer = JSON.parse(line.slice(RESULT_PREFIX.length)) as { id: number; result?: unknown; error?: string };
      const waiter = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (answer.error !== undefined) waiter?.reject(new Error(`${this.module} handler threw: ${answer.error}\n${this.output()}`));
      else waiter?.resolve(answer.result);
    }
  }

  /** Everything the process printed, for failure messages. */
  output(): string {
    return `--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`;
  }

  errors(): string {
    return this.stderr;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  invoke(handler: string, event: unknown): Promise<unknown> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      if (!this.running) return reject(new Error(`${this.module} is not running:\n${this.output()}`));
      this.pending.set(id, { resolve, reject });
      this.child.stdin.write(`${JSON.stringify({ id, handler, event })}\n`);
    });
  }

  async http(event: ReturnType<typeof apiGatewayEvent>): Promise<APIGatewayProxyResult & { json: Record<string, unknown> }> {
    const result = (await this.invoke('handler', event)) as APIGatewayProxyResult;
    return { ...result, json: JSON.parse(result.body) as Record<string, unknown> };
  }

  async stop(): Promise<void> {
    if (this.running) this.child.kill('SIGKILL');
    await this.exited;
  }
}

const get = (path: string, query: Record<string, string>) => apiGatewayEvent({ method: 'GET', path, query });
const post = (path: string, body: unknown) => apiGatewayEvent({ method: 'POST', path, body });

describe('the Lambda handlers on their production wiring (openAwsParts, default SDK clients, env only)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-wiring-'));
  const processes: LambdaProcess[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  let redis: RedisServer;
  let dynamo: LocalDynamo;
  /** The test's own (authenticated, plain TCP) connection, to look at what the functions keep in Redis. */
  let inspector: Redis;
  const secrets = new Map<string, string>();
  const sqsAccepted: SqsMessage[] = [];
  const published: PublishedEvent[] = [];
  let functionEnv: (extra?: Record<string, string>) => Record<string, string>;
  /** The core's settings document (its CoreSettings secret), as core.ts writes it. */
  let coreDocument: Record<string, string>;
  let intakeQueueUrl: string;
  let purgeQueueUrl: string;

  const start = (module: string, env: Record<string, string>) => {
    const lambda = new LambdaProcess(module, env);
    processes.push(lambda);
    return lambda;
  };

  before(async () => {
    makeCertificates(dir, 'anteroom-wiring-test-ca');
    const tlsPort = await freePort();
    // The TLS port is the only one the functions know; the plain one is for the harness (its PING) and the
    // inspector. AUTH is switched on once the server answers, since startRedisServer's readiness PING has none.
    redis = await startRedisServer({
      appendonly: false,
      args: ['--tls-port', String(tlsPort), '--tls-cert-file', join(dir, 'server.pem'), '--tls-key-file', join(dir, 'server.key'),
        '--tls-ca-cert-file', join(dir, 'ca.pem'), '--tls-auth-clients', 'no'],
    });
    closers.push(() => redis.destroy());
    const setup = new Redis(redis.port, '127.0.0.1');
    await setup.config('SET', 'requirepass', PASSWORD);
    setup.disconnect();
    inspector = new Redis({ port: redis.port, host: '127.0.0.1', password: PASSWORD, lazyConnect: true });
    closers.push(async () => inspector.disconnect());

    dynamo = await startDynalite();
    closers.push(() => dynamo.close());
    // The stack creates its table before any function runs.
    await dynamo.createTokenTable(TOKEN_TABLE_NAME);

    // The stack's RedisAuthToken secret, and another secret with another password (for the 503 case).
    secrets.set(AUTH_SECRET_ARN, JSON.stringify({ password: PASSWORD }));
    secrets.set(WRONG_SECRET_ARN, JSON.stringify({ password: WRONG_PASSWORD }));
    const secretsManager = await startJsonService(fakeSecretsManager(secrets));
    closers.push(() => secretsManager.close());
    const sqs = await startJsonService({ ...fakeSqs(sqsAccepted), ...fakeSqsSendMessage(sqsAccepted) });
    closers.push(() => sqs.close());
    const eventBridge = await startJsonService({
      PutEvents(body) {
        const entries = body.Entries as PublishedEvent[];
        published.push(...entries);
        return { body: { FailedEntryCount: 0, Entries: entries.map(() => ({ EventId: randomUUID() })) } };
      },
    });
    closers.push(() => eventBridge.close());

    // The SQS client sends to the host of the QueueUrl it is given, whatever endpoint it was configured with
    // (useQueueUrlAsEndpoint), so the queue URLs are the stand-in's, as a local SQS (ElasticMQ, LocalStack)
    // names its queues; on AWS they are https://sqs.<region>.amazonaws.com/... and the same rule applies.
    intakeQueueUrl = `${sqs.endpoint}/${ACCOUNT}/${STACK}-WaitingRoomQueue`;
    purgeQueueUrl = `${sqs.endpoint}/${ACCOUNT}/${STACK}-CdnPurgeQueue`;

    // deploy/aws/stacks/core.ts: `environment`, the same for every function of the stack.
    const core: Record<string, string> = {
      EVENT_ID: 'Sample',
      VALIDITY_PERIOD: '3600',
      ENABLE_EVENTS_GENERATION: 'true',
      ENABLE_QUEUE_POSITION_EXPIRY: 'true',
      QUEUE_POSITION_EXPIRY_PERIOD: '900',
      INCR_SVC_ON_QUEUE_POSITION_EXPIRY: 'false',
      ISSUER,
      REDIS_HOST: '127.0.0.1',
      REDIS_PORT: String(tlsPort),
      REDIS_TLS: 'true',
      REDIS_AUTH_SECRET_ARN: AUTH_SECRET_ARN,
      TOKEN_TABLE_NAME,
      EVENT_BUS_NAME,
      SIGNING_KEYS_SECRET_PREFIX,
    };
    // Every variable the stack sets, and only those: a new core setting must show up here too.
    assert.deepEqual(Object.keys(core).sort(), [...CORE_SETTING_NAMES].sort());
    coreDocument = { ...core, PRIVATE_API_URL: 'https://prv1234567.execute-api.us-east-1.amazonaws.com/api' };
    functionEnv = (extra = {}) => ({
      ...core,
      ...extra,
      // What Lambda sets in every execution environment (of what the SDK reads).
      AWS_REGION: 'us-east-1',
      AWS_DEFAULT_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIDLOCALTEST',
      AWS_SECRET_ACCESS_KEY: 'local-test-secret',
      // Only here: where the services are, and trust in the test's CA.
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: eventBridge.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      // No shared config or credentials file of whoever runs the tests.
      AWS_CONFIG_FILE: join(dir, 'no-aws-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-aws-credentials'),
      NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
    });
  });

  after(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    for (const close of closers.reverse()) await close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('join → SQS → intake consumer → private serve → token verified by /public_key; key in Secrets Manager; reset purges the CDN', { timeout: 60_000 }, async () => {
    // One process per function, with its function's extra variables (core.ts: makeFunction, addEnvironment).
    const publicApi = start('public-api', functionEnv({ INTAKE_QUEUE_URL: intakeQueueUrl }));
    const privateApi = start('private-api', functionEnv({ CDN_PURGE_QUEUE_URL: purgeQueueUrl }));
    const intake = start('intake-consumer', functionEnv());
    const jobs = start('jobs', functionEnv());

    // Joins go to the intake queue (sqsIntakeQueue with the default SQSClient), not to Redis.
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const joined = await publicApi.http(post('/assign_queue_num', { event_id: 'Sample' }));
      assert.equal(joined.statusCode, 200, publicApi.output());
      ids.push(joined.json.api_request_id as string);
    }
    const onIntake = sqsAccepted.filter((m) => m.queueUrl === intakeQueueUrl);
    assert.deepEqual(onIntake.map((m) => JSON.parse(m.body).request_id), ids);
    assert.ok(onIntake.every((m) => JSON.parse(m.body).event_id === 'Sample'));
    const early = await publicApi.http(get('/queue_num', { event_id: 'Sample', request_id: ids[0]! }));
    assert.equal(early.statusCode, 202, 'not numbered before the consumer ran');

    // The intake consumer numbers the batch Lambda's event source mapping hands it.
    const batch = sqsEvent(onIntake.map((m) => ({ messageId: m.messageId, body: m.body })), `${STACK}-WaitingRoomQueue`);
    assert.deepEqual((await intake.invoke('handler', batch)) as SQSBatchResponse, { batchItemFailures: [] });
    for (const [i, id] of ids.entries()) {
      const position = await publicApi.http(get('/queue_num', { event_id: 'Sample', request_id: id }));
      assert.equal(position.statusCode, 200);
      assert.equal(position.json.queue_number, i + 1);
    }

    // The private API serves the first two.
    const served = await privateApi.http(post('/increment_serving_counter', { event_id: 'Sample', increment_by: 2 }));
    assert.equal(served.statusCode, 200, privateApi.output());
    assert.deepEqual(served.json, { serving_num: 2 });
    assert.deepEqual((await publicApi.http(get('/serving_num', { event_id: 'Sample' }))).json, { serving_counter: 2 });

    // The public API issues the first visitor's tokens; they verify against its /public_key, with the issuer.
    const issued = await publicApi.http(post('/generate_token', { event_id: 'Sample', request_id: ids[0]! }));
    assert.equal(issued.statusCode, 200, publicApi.output());
    const accessToken = issued.json.access_token as string;
    const publicKey = await publicApi.http(get('/public_key', { event_id: 'Sample' }));
    assert.equal(publicKey.statusCode, 200);
    const verifier = createVerifier({
      publicKeyUrl: 'https://cdn.example/public_key',
      eventId: 'Sample',
      issuer: ISSUER,
      fetch: async () => new Response(publicKey.body, { headers: { 'content-type': 'application/json' } }),
    });
    const claims = await verifier.verify(accessToken);
    assert.equal(claims.sub, ids[0]);
    assert.equal(claims.queue_position, 1);

    // The signing key is the one in Secrets Manager (SecretsManagerKeyStore), not in Redis; the token record
    // is in the DynamoDB table.
    const stored = JSON.parse(secrets.get(`${SIGNING_KEYS_SECRET_PREFIX}Sample`) ?? '[]') as StoredSigningKey[];
    assert.equal(stored.length, 1, 'one signing key secret, created by whichever function started first');
    assert.equal(decodeProtectedHeader(accessToken).kid, stored[0]!.kid);
    assert.ok((JSON.parse(stored[0]!.privateJwk) as { d?: string }).d, 'the secret holds the private JWK');
    await inspector.connect();
    assert.deepEqual(await inspector.keys('*:k'), [], 'no signing key in Redis');
    assert.ok((await inspector.keys('ar:{Sample}:*')).length > 0, 'the queue is in Redis, under the default key prefix');
    const records = await dynamo.client.send(new ScanCommand({ TableName: TOKEN_TABLE_NAME }));
    assert.equal(records.Count, 1, 'the token record is in DynamoDB');

    // The scheduled jobs run on the same store; events reach the stack's bus on EventBridge.
    assert.equal(await jobs.invoke('expiry', scheduledEvent('expiry')), null);
    assert.equal(await jobs.invoke('metrics', scheduledEvent('metrics')), null);
    // The admission job finds no automatic (or off) room and returns at once; the draw job finds no draw due.
    assert.equal(await jobs.invoke('admission', scheduledEvent('admission')), null);
    assert.equal(await jobs.invoke('draw', scheduledEvent('draw')), null);
    const onBus = published.filter((e) => e.EventBusName === EVENT_BUS_NAME);
    assert.deepEqual(onBus.map((e) => e.DetailType), ['token_generated', 'waiting_room_metrics']);
    assert.deepEqual(JSON.parse(onBus[1]!.Detail), {
      event_id: 'Sample', num_active_tokens: 1, total_num_tokens: 1, queue_counter: 3, serving_number: 2, completed_sessions: 0,
      // waiting_num = queue − tokens − expired (docs/architecture.md), not queue − serving.
      abandoned_sessions: 0, expired_queue_positions: 0, waiting_num: 2,
    });

    // A reset through the private API asks the CDN purge function, on its queue, to invalidate CloudFront.
    const reset = await privateApi.http(post('/reset_initial_state', { event_id: 'Sample' }));
    assert.equal(reset.statusCode, 200, privateApi.output());
    const purges = sqsAccepted.filter((m) => m.queueUrl === purgeQueueUrl).map((m) => JSON.parse(m.body) as unknown);
    assert.deepEqual(purges, [{ event_id: 'Sample' }]);
    assert.deepEqual((await publicApi.http(get('/serving_num', { event_id: 'Sample' }))).json, { serving_counter: 0 });

    for (const lambda of [publicApi, privateApi, intake, jobs]) {
      assert.ok(lambda.running, `${lambda.module} still running`);
      assert.ok(!lambda.errors().includes(PASSWORD), `${lambda.module} never prints the Redis password`);
    }
  });

  it('the OpenID function joins through the core\'s intake queue; the consumer numbers the join and binds its authorization request', { timeout: 60_000 }, async () => {
    const redirectUri = 'https://app.example.com/oauth2/idpresponse';
    secrets.set(`${STACK}/core-settings`, JSON.stringify(coreDocument));
    secrets.set(`${STACK}-openid/client_secret`, 'Abcdefghij0123456789Abcdefghij0123456789Abcdefghij');
    secrets.set(`${STACK}-openid/redirect_uris`, JSON.stringify({ redirect_uris: [redirectUri] }));
    // deploy/aws/stacks/openid.ts: the function's own variables; the core's come from the settings document.
    const own = Object.fromEntries(Object.entries(functionEnv()).filter(([name]) => !(CORE_SETTING_NAMES as readonly string[]).includes(name)));
    const oidc = start('oidc', {
      ...own,
      EVENT_ID: 'Sample',
      CORE_SETTINGS_SECRET_ARN: `${STACK}/core-settings`,
      PUBLIC_URL: 'https://oid1234567.execute-api.us-east-1.amazonaws.com',
      PUBLIC_API_URL: 'https://d1234abcd.cloudfront.net',
      PRIVATE_API_ENDPOINT: coreDocument.PRIVATE_API_URL!,
      INTAKE_QUEUE_URL: intakeQueueUrl,
      CLIENT_SECRET_ID: `${STACK}-openid/client_secret`,
      REDIRECT_URIS_SECRET_ID: `${STACK}-openid/redirect_uris`,
    });
    const intake = start('intake-consumer', functionEnv());
    const publicApi = start('public-api', functionEnv({ INTAKE_QUEUE_URL: intakeQueueUrl }));
    const queuedBefore = sqsAccepted.filter((m) => m.queueUrl === intakeQueueUrl).length;

    const authorize = { client_id: 'Sample', redirect_uri: redirectUri, response_type: 'code', scope: 'openid', state: 'st', nonce: 'n' };
    const joined = await oidc.http(oidcApiEvent({ method: 'POST', path: '/oidc/join', body: authorize }));
    assert.equal(joined.statusCode, 200, oidc.output());
    const requestId = joined.json.request_id as string;
    assert.equal(joined.json.queue_number, undefined, 'numbered later, by the intake consumer');
    const mine = sqsAccepted.filter((m) => m.queueUrl === intakeQueueUrl).slice(queuedBefore);
    assert.deepEqual(mine.map((m) => JSON.parse(m.body).request_id), [requestId]);
    assert.equal(JSON.parse(JSON.parse(mine[0]!.body).authorization).redirect_uri, redirectUri);

    const batch = sqsEvent(mine.map((m) => ({ messageId: m.messageId, body: m.body })), `${STACK}-WaitingRoomQueue`);
    assert.deepEqual((await intake.invoke('handler', batch)) as SQSBatchResponse, { batchItemFailures: [] });
    const position = await publicApi.http(get('/queue_num', { event_id: 'Sample', request_id: requestId }));
    assert.equal(position.statusCode, 200);
    // Bound (an unbound request ID is 404 here) and not served yet.
    const early = await oidc.http(oidcApiEvent({ method: 'POST', path: '/oidc/continue', body: { client_id: 'Sample', request_id: requestId } }));
    assert.equal(early.statusCode, 202, early.body + oidc.output());
  });

  it('with a Redis password that is not the server\'s, the public API answers 503 and the function lives on', { timeout: 60_000 }, async () => {
    const publicApi = start('public-api', functionEnv({ INTAKE_QUEUE_URL: intakeQueueUrl, REDIS_AUTH_SECRET_ARN: WRONG_SECRET_ARN }));
    const queued = sqsAccepted.length;
    for (let attempt = 1; attempt <= 2; attempt++) {
      // Each invocation tries the cold start again (once() keeps no failed build) and fails the same way.
      const reply = await publicApi.http(post('/assign_queue_num', { event_id: 'Sample' }));
      assert.equal(reply.statusCode, 503, publicApi.output());
      assert.deepEqual(reply.json, { error: 'Service temporarily unavailable' });
      assert.equal(reply.headers?.['retry-after'], '1');
      assert.ok(publicApi.running, 'the function did not crash');
    }
    assert.equal(sqsAccepted.length, queued, 'no join was queued');
    // Refused for its password (not e.g. for TLS), and neither password is ever printed.
    assert.match(publicApi.errors(), /WRONGPASS|NOAUTH|invalid password/i);
    assert.ok(!publicApi.errors().includes(WRONG_PASSWORD));
    assert.ok(!publicApi.errors().includes(PASSWORD));
  });
});
