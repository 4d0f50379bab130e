// A core stack of the AWS deployment, simulated on this machine for the handler tests: a real redis-server,
// dynalite (DynamoDB), and local Secrets Manager / EventBridge / SQS endpoints driven by the real AWS SDK
// clients. Each simulated stack has what a deployed one has of its own — token table, Redis key prefix, event
// bus, signing-key prefix, queues — so tests never see each other's state; its functions each get their own
// execution environment (own connections), built on first use like a Lambda cold start.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyResult, SQSEvent } from 'aws-lambda';
import { privateHttpApp, proxyHandler, publicHttpApp } from '../../src/aws/api-gateway.ts';
import { awsConfigFromEnv } from '../../src/aws/environment.ts';
import { createIntakeConsumer } from '../../src/aws/intake-consumer.ts';
import { decodeIntakeMessage, sqsIntakeQueue, type IntakeMessage, type IntakeQueue } from '../../src/aws/intake-queue.ts';
import { createJobHandlers } from '../../src/aws/jobs.ts';
import { withCdnPurge } from '../../src/aws/private-api.ts';
import { createRuntime, type AwsRuntime } from '../../src/aws/runtime.ts';
import { once } from '../../src/aws/once.ts';
import { SecretsManagerKeyStore } from '../../src/aws/secrets-key-store.ts';
import { EventBridgeSink } from '../../src/events/eventbridge-sink.ts';
import { CompositeStore } from '../../src/store/dynamodb/composite-store.ts';
import { TokenTable } from '../../src/store/dynamodb/token-table.ts';
import { RedisStore } from '../../src/store/redis/redis-store.ts';
import { TestClock } from '../support/node.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { apiGatewayEvent, sqsEvent } from './events.ts';
import { fakeSecretsManager, fakeSqs, fakeSqsSendMessage, startDynalite, startJsonService, TEST_AWS, type LocalDynamo, type SqsMessage } from './local-aws.ts';

export const ISSUER = 'https://pub1234567.execute-api.us-east-1.amazonaws.com/api';

export interface PublishedEvent {
  Source: string;
  DetailType: string;
  Detail: string;
  EventBusName: string;
}

/** The local stand-ins every simulated stack of a test file shares. */
export interface LocalAws {
  redis: RedisServer;
  dynamo: LocalDynamo;
  /** Secrets Manager's secrets, by name. */
  secrets: Map<string, string>;
  secretsManagerEndpoint: string;
  sqsEndpoint: string;
  eventBridgeEndpoint: string;
  /** Every message SQS accepted and nobody took yet, of every queue. */
  sqsAccepted: SqsMessage[];
  /** Every event put on any bus. */
  published: PublishedEvent[];
  close(): Promise<void>;
}

export async function startLocalAws(): Promise<LocalAws> {
  const [redis, dynamo] = await Promise.all([startRedisServer(), startDynalite()]);
  const secrets = new Map<string, string>();
  const secretsManager = await startJsonService(fakeSecretsManager(secrets));
  const sqsAccepted: SqsMessage[] = [];
  const sqs = await startJsonService({ ...fakeSqs(sqsAccepted), ...fakeSqsSendMessage(sqsAccepted) });
  const published: PublishedEvent[] = [];
  const eventBridge = await startJsonService({
    PutEvents(body) {
      const entries = body.Entries as PublishedEvent[];
      published.push(...entries);
      return { body: { FailedEntryCount: 0, Entries: entries.map(() => ({ EventId: randomUUID() })) } };
    },
  });
  return {
    redis,
    dynamo,
    secrets,
    secretsManagerEndpoint: secretsManager.endpoint,
    sqsEndpoint: sqs.endpoint,
    eventBridgeEndpoint: eventBridge.endpoint,
    sqsAccepted,
    published,
    close: async () => {
      await Promise.all([redis.destroy(), dynamo.close(), secretsManager.close(), eventBridge.close(), sqs.close()]);
    },
  };
}

let stacks = 0;

/** The environment the core stack gives its functions (see deploy/aws/stacks/core.ts), unique per stack. */
function stackEnvironment(aws: LocalAws, overrides: Record<string, string>): Record<string, string> {
  const n = ++stacks;
  const name = `${process.pid}-${n}`;
  return {
    EVENT_ID: 'Sample',
    VALIDITY_PERIOD: '3600',
    ENABLE_QUEUE_POSITION_EXPIRY: 'true',
    QUEUE_POSITION_EXPIRY_PERIOD: '900',
    INCR_SVC_ON_QUEUE_POSITION_EXPIRY: 'false',
    ENABLE_EVENTS_GENERATION: 'false',
    ISSUER,
    REDIS_HOST: '127.0.0.1',
    REDIS_PORT: String(aws.redis.port),
    REDIS_TLS: 'false',
    REDIS_KEY_PREFIX: `ar-aws-${name}:`,
    // Each stack has its own token table, as on AWS: records of one test's 'Sample' must not count in another's.
    TOKEN_TABLE_NAME: `tokens-stack-${name}`,
    EVENT_BUS_NAME: `bus-${name}`,
    SIGNING_KEYS_SECRET_PREFIX: `stack-${name}/anteroom/signing-keys/`,
    INTAKE_QUEUE_URL: `https://sqs.us-east-1.amazonaws.com/123456789012/intake-${name}`,
    CDN_PURGE_QUEUE_URL: `https://sqs.us-east-1.amazonaws.com/123456789012/cdn-purge-${name}`,
    LOG_LEVEL: 'silent',
    ...overrides,
  };
}

/**
 * The stack's intake queue: the public API sends joins through the real SQS client (sqsIntakeQueue) to the
 * local SQS endpoint; deliver() hands what the queue accepted since the last call to the consumer as one SQS
 * event (what Lambda's event source mapping does).
 */
class LocalSqsQueue implements IntakeQueue {
  private readonly queue: IntakeQueue;
  private readonly url: string;
  private readonly aws: LocalAws;
  constructor(aws: LocalAws, url: string) {
    this.aws = aws;
    this.url = url;
    this.queue = sqsIntakeQueue(url, new SQSClient({ ...TEST_AWS, endpoint: aws.sqsEndpoint }));
  }
  send(messages: readonly IntakeMessage[]): Promise<void> {
    return this.queue.send(messages);
  }
  /** Accepted, not yet delivered. */
  get sent(): IntakeMessage[] {
    return this.aws.sqsAccepted.filter((m) => m.queueUrl === this.url).map((m) => decodeIntakeMessage(m.body)!);
  }
  deliver(): SQSEvent {
    const accepted = this.aws.sqsAccepted;
    const mine = accepted.filter((m) => m.queueUrl === this.url);
    accepted.splice(0, accepted.length, ...accepted.filter((m) => m.queueUrl !== this.url));
    return sqsEvent(mine.map((m) => ({ messageId: m.messageId, body: m.body })));
  }
}

export const json = (result: APIGatewayProxyResult) => JSON.parse(result.body) as Record<string, unknown>;
export const get = (path: string, query: Record<string, string | string[]>) => apiGatewayEvent({ method: 'GET', path, query });
export const post = (path: string, body: unknown) => apiGatewayEvent({ method: 'POST', path, body });

/** One deployed core stack: its public and private API functions, intake consumer and scheduled jobs. */
export function simulatedStack(aws: LocalAws, overrides: Record<string, string> = {}, clock = new TestClock()) {
  const env = stackEnvironment(aws, overrides);
  const config = awsConfigFromEnv(env);
  const queue = new LocalSqsQueue(aws, config.intakeQueueUrl!);
  const runtimes: AwsRuntime[] = [];
  const table = once(() => aws.dynamo.createTokenTable(config.tokenTableName!));
  const environment = (intake?: IntakeQueue, role: 'private' | 'other' = 'other') =>
    once(async () => {
      await table();
      const store = new CompositeStore({
        redis: new RedisStore({ url: aws.redis.url, keyPrefix: config.redis.keyPrefix, readyTimeoutMs: 5000 }),
        tokens: new TokenTable({ client: aws.dynamo.client, tableName: config.tokenTableName! }),
        keys: new SecretsManagerKeyStore({
          client: new SecretsManagerClient({ ...TEST_AWS, endpoint: aws.secretsManagerEndpoint }),
          prefix: config.signingKeysSecretPrefix!,
        }),
      });
      const events = new EventBridgeSink({
        client: new EventBridgeClient({ ...TEST_AWS, endpoint: aws.eventBridgeEndpoint }),
        eventBusName: config.eventBusName!,
      });
      const parts = { store, events, intake, clock: clock.now, log: () => {} };
      // The private API's own wiring (src/aws/private-api.ts): a reset asks for a CDN purge through SQS.
      const runtime = await createRuntime(
        config,
        role === 'private' ? withCdnPurge(config, parts, new SQSClient({ ...TEST_AWS, endpoint: aws.sqsEndpoint })) : parts,
      );
      runtimes.push(runtime);
      return runtime;
    });
  const publicApi = proxyHandler(environment(queue), publicHttpApp);
  const privateApi = proxyHandler(environment(undefined, 'private'), privateHttpApp);
  const intake = createIntakeConsumer(environment(), () => {});
  const jobs = createJobHandlers(environment());
  return {
    env,
    config,
    clock,
    queue,
    publicApi,
    privateApi,
    intake,
    jobs,
    events: () => aws.published.filter((e) => e.EventBusName === config.eventBusName),
    /** n visitors join and are numbered; returns their request IDs by position (index 0 holds position 1). */
    async join(n: number): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push(json(await publicApi(post('/assign_queue_num', { event_id: 'Sample' }))).api_request_id as string);
      assert.deepEqual(await intake(queue.deliver()), { batchItemFailures: [] });
      const byPosition: string[] = [];
      for (const id of ids) {
        const reply = json(await publicApi(get('/queue_num', { event_id: 'Sample', request_id: id })));
        byPosition[(reply.queue_number as number) - 1] = id;
      }
      return byPosition;
    },
    async serve(by: number): Promise<void> {
      const reply = await privateApi(post('/increment_serving_counter', { event_id: 'Sample', increment_by: by }));
      assert.equal(reply.statusCode, 200);
    },
    close: () => Promise.all(runtimes.map((r) => r.close())),
  };
}

export type SimulatedStack = ReturnType<typeof simulatedStack>;
