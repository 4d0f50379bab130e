// Local stand-ins for the AWS services the Lambda handlers use, so that everything runs on this machine:
// - DynamoDB: dynalite (DynamoDB's API on local disk), talked to by the real @aws-sdk/client-dynamodb;
// - Secrets Manager, EventBridge, SQS and CloudWatch: a tiny HTTP endpoint speaking the AWS JSON protocol of
//   the few operations used (CreateSecret, GetSecretValue, PutEvents, SendMessageBatch, SendMessage,
//   DescribeAlarms), talked to by the real SDK clients;
// - CloudFront: CreateInvalidation in its REST-XML protocol (startCloudFront).

import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tokenTableDefinition } from '../../src/store/dynamodb/token-table.ts';

const require = createRequire(import.meta.url);

export const TEST_AWS = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: 'local-test-secret' },
} as const;

export interface LocalDynamo {
  endpoint: string;
  client: DynamoDBClient;
  /** Creates a token table (the layout of tokenTableDefinition), named `name` or a fresh name, and returns its name. */
  createTokenTable(name?: string): Promise<string>;
  close(): Promise<void>;
}

let tables = 0;

export async function startDynalite(): Promise<LocalDynamo> {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-dynalite-'));
  const dynalite = require('dynalite') as (options: object) => Server;
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, path: dir });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({ ...TEST_AWS, endpoint });
  return {
    endpoint,
    client,
    async createTokenTable(name = `tokens-${process.pid}-${++tables}`) {
      await client.send(new CreateTableCommand(tokenTableDefinition(name)));
      return name;
    },
    async close() {
      client.destroy();
      (server as unknown as { closeAllConnections(): void }).closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

type JsonHandler = (body: Record<string, unknown>) => { status?: number; body: unknown };

/** An HTTP endpoint answering AWS JSON-protocol calls by their X-Amz-Target operation name. */
export async function startJsonService(operations: Record<string, JsonHandler>): Promise<{ endpoint: string; calls: string[]; close(): Promise<void> }> {
  const calls: string[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const target = String(request.headers['x-amz-target'] ?? '');
      const operation = target.slice(target.lastIndexOf('.') + 1);
      calls.push(operation);
      const handler = operations[operation];
      const text = Buffer.concat(chunks).toString('utf8');
      const { status = 200, body } = handler
        ? handler(text ? (JSON.parse(text) as Record<string, unknown>) : {})
        : { status: 400, body: { __type: 'UnknownOperationException', message: operation } };
      response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => {
      // SDK clients keep their connections alive; a test's end is not a reason to wait for them.
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Secrets Manager's CreateSecret / GetSecretValue, in memory, with its error types. */
export function fakeSecretsManager(secrets = new Map<string, string>()): Record<string, JsonHandler> {
  return {
    CreateSecret(body) {
      const name = String(body.Name);
      if (secrets.has(name)) return { status: 400, body: { __type: 'ResourceExistsException', message: `${name} exists` } };
      secrets.set(name, String(body.SecretString));
      return { body: { ARN: `arn:aws:secretsmanager:us-east-1:123456789012:secret:${name}-AbCdEf`, Name: name } };
    },
    GetSecretValue(body) {
      const id = String(body.SecretId);
      const value = secrets.get(id);
      if (value === undefined) return { status: 400, body: { __type: 'ResourceNotFoundException', message: `${id} not found` } };
      return { body: { Name: id, SecretString: value } };
    },
  };
}

/** A message SQS accepted: its queue, ID and body. */
export interface SqsMessage {
  queueUrl: string;
  messageId: string;
  body: string;
}

/**
 * SQS's SendMessageBatch, keeping what it accepts in `accepted`. `refuse(id, body)` may turn an entry down, as
 * SQS does with an entry it cannot take (the batch still succeeds; the entry is listed under Failed). The
 * answer carries each body's MD5, which the SDK checks.
 */
export function fakeSqs(accepted: SqsMessage[], refuse: (entryId: string, body: string) => boolean = () => false): Record<string, JsonHandler> {
  return {
    SendMessageBatch(body) {
      const queueUrl = String(body.QueueUrl);
      const entries = body.Entries as { Id: string; MessageBody: string }[];
      const Successful: { Id: string; MessageId: string; MD5OfMessageBody: string }[] = [];
      const Failed: { Id: string; SenderFault: boolean; Code: string; Message: string }[] = [];
      for (const entry of entries) {
        if (refuse(entry.Id, entry.MessageBody)) {
          Failed.push({ Id: entry.Id, SenderFault: false, Code: 'InternalError', Message: 'try again' });
          continue;
        }
        const messageId = randomUUID();
        accepted.push({ queueUrl, messageId, body: entry.MessageBody });
        Successful.push({ Id: entry.Id, MessageId: messageId, MD5OfMessageBody: createHash('md5').update(entry.MessageBody).digest('hex') });
      }
      return { body: { Successful, Failed } };
    },
  };
}

/** SQS's SendMessage (one message), into the same `accepted` list as fakeSqs. */
export function fakeSqsSendMessage(accepted: SqsMessage[]): Record<string, JsonHandler> {
  return {
    SendMessage(body) {
      const messageId = randomUUID();
      const text = String(body.MessageBody);
      accepted.push({ queueUrl: String(body.QueueUrl), messageId, body: text });
      return { body: { MessageId: messageId, MD5OfMessageBody: createHash('md5').update(text).digest('hex') } };
    },
  };
}

/** An invalidation CloudFront accepted. */
export interface Invalidation {
  distributionId: string;
  callerReference: string;
  paths: string[];
}

/**
 * CloudFront's CreateInvalidation (REST-XML: POST /2020-05-31/distribution/{Id}/invalidation), keeping what it
 * accepts; while `refusals` is above 0 it answers 403 AccessDenied instead, counting down.
 */
export async function startCloudFront(): Promise<{ endpoint: string; invalidations: Invalidation[]; refusals: number; close(): Promise<void> }> {
  const state = { invalidations: [] as Invalidation[], refusals: 0 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const xml = Buffer.concat(chunks).toString('utf8');
      const match = /^\/2020-05-31\/distribution\/([^/]+)\/invalidation$/.exec(request.url ?? '');
      if (request.method !== 'POST' || !match) {
        response.writeHead(404, { 'content-type': 'text/xml' }).end('<ErrorResponse><Error><Type>Sender</Type><Code>NoSuchResource</Code><Message>not here</Message></Error></ErrorResponse>');
        return;
      }
      if (state.refusals > 0) {
        state.refusals--;
        response.writeHead(403, { 'content-type': 'text/xml' }).end('<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>not allowed</Message></Error><RequestId>r1</RequestId></ErrorResponse>');
        return;
      }
      const paths = [...xml.matchAll(/<Path>([^<]*)<\/Path>/g)].map((m) => m[1]!);
      const callerReference = /<CallerReference>([^<]*)<\/CallerReference>/.exec(xml)?.[1] ?? '';
      state.invalidations.push({ distributionId: decodeURIComponent(match[1]!), callerReference, paths });
      const id = `I${state.invalidations.length}`;
      response.writeHead(201, { 'content-type': 'text/xml', location: `https://cloudfront.amazonaws.com${request.url}/${id}` });
      response.end(
        `<?xml version="1.0" encoding="UTF-8"?><Invalidation xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Id>${id}</Id><Status>InProgress</Status>` +
          `<CreateTime>2026-11-24T00:00:00Z</CreateTime><InvalidationBatch><Paths><Quantity>${paths.length}</Quantity><Items>${paths.map((p) => `<Path>${p}</Path>`).join('')}</Items></Paths>` +
          `<CallerReference>${callerReference}</CallerReference></InvalidationBatch></Invalidation>`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get invalidations() {
      return state.invalidations;
    },
    get refusals() {
      return state.refusals;
    },
    set refusals(n: number) {
      state.refusals = n;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** CloudWatch's DescribeAlarms for metric alarms, from a map of alarm name → state. */
export function fakeCloudWatch(alarms: Map<string, string>): Record<string, JsonHandler> {
  return {
    DescribeAlarms(body) {
      const names = (body.AlarmNames as string[] | undefined) ?? [...alarms.keys()];
      const found = names.filter((name) => alarms.has(name));
      return { body: { MetricAlarms: found.map((name) => ({ AlarmName: name, StateValue: alarms.get(name) })), CompositeAlarms: [] } };
    },
  };
}

/**
 * A local stand-in for API Gateway's Lambda proxy integration: an HTTP server that turns each request into a
 * REST API v1 proxy event for `handler` and writes back its result. No IAM check happens here.
 */
export async function serveAsApiGateway(
  handler: (event: import('aws-lambda').APIGatewayProxyEvent) => Promise<import('aws-lambda').APIGatewayProxyResult>,
): Promise<{ url: string; close(): Promise<void> }> {
  const { apiGatewayEvent } = await import('./events.ts');
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://local');
      const query: Record<string, string[]> = {};
      for (const [key, value] of url.searchParams) (query[key] ??= []).push(value);
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[key] = value;
      const body = Buffer.concat(chunks).toString('utf8');
      void handler(
        apiGatewayEvent({ method: request.method ?? 'GET', path: url.pathname, query, headers, ...(body ? { rawBody: body } : {}) }),
      ).then(
        (result) => {
          response.writeHead(result.statusCode, { ...result.headers, ...result.multiValueHeaders } as Record<string, string>);
          response.end(result.body);
        },
        () => {
          response.writeHead(502, { 'content-type': 'application/json' });
          response.end('{"message": "Internal server error"}');
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
