// Realistic AWS event payloads, shaped like those API Gateway (REST API v1 proxy), SQS, EventBridge
// Scheduler rules and SNS send to Lambda functions.

import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, ScheduledEvent, SNSEvent, SQSEvent } from 'aws-lambda';

export const ACCOUNT = '123456789012';
export const REGION = 'us-east-1';

export function apiGatewayEvent(input: {
  method: string;
  /** The resource path, e.g. '/queue_num'. */
  path: string;
  query?: Record<string, string | string[]>;
  body?: unknown;
  /** Raw body text (wins over body). */
  rawBody?: string;
  headers?: Record<string, string>;
  base64?: boolean;
  apiId?: string;
}): APIGatewayProxyEvent {
  const text = input.rawBody ?? (input.body === undefined ? null : JSON.stringify(input.body));
  const headers: Record<string, string> = {
    Host: `${input.apiId ?? 'abc123defg'}.execute-api.${REGION}.amazonaws.com`,
    'User-Agent': 'Mozilla/5.0',
    'X-Forwarded-For': '203.0.113.7',
    'X-Forwarded-Proto': 'https',
    ...(text === null ? {} : { 'Content-Type': 'application/json' }),
    ...input.headers,
  };
  const single: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(input.query ?? {})) {
    const values = Array.isArray(value) ? value : [value];
    single[key] = values[values.length - 1] as string;
    multi[key] = values;
  }
  const hasQuery = Object.keys(single).length > 0;
  const requestId = randomUUID();
  return {
    resource: input.path,
    path: input.path,
    httpMethod: input.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: hasQuery ? single : null,
    multiValueQueryStringParameters: hasQuery ? multi : null,
    pathParameters: null,
    stageVariables: null,
    body: text === null ? null : input.base64 ? Buffer.from(text).toString('base64') : text,
    isBase64Encoded: Boolean(input.base64),
    requestContext: {
      accountId: ACCOUNT,
      apiId: input.apiId ?? 'abc123defg',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: input.method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '203.0.113.7',
        user: null,
        userAgent: 'Mozilla/5.0',
        userArn: null,
      },
      path: `/api${input.path}`,
      stage: 'api',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'a1b2c3',
      resourcePath: input.path,
    },
  };
}

/**
 * An event of the OpenID stack's REST API: its /{proxy+} resource in the stage `oidc`, for the URL path
 * `input.path` (/oidc/authorize): API Gateway gives the function the path inside the stage (/authorize).
 */
export function oidcApiEvent(input: Parameters<typeof apiGatewayEvent>[0]): APIGatewayProxyEvent {
  if (!input.path.startsWith('/oidc/')) throw new Error(`not a path of the stage oidc: ${input.path}`);
  const inStage = input.path.slice('/oidc'.length);
  const event = apiGatewayEvent({ ...input, path: inStage });
  return {
    ...event,
    resource: '/{proxy+}',
    pathParameters: { proxy: inStage.slice(1) },
    requestContext: { ...event.requestContext, stage: 'oidc', path: input.path, resourcePath: '/{proxy+}' },
  };
}

export interface SqsMessageInput {
  body: string;
  messageId?: string;
  receiveCount?: number;
}

export function sqsEvent(messages: readonly SqsMessageInput[], queueName = 'anteroom-intake'): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.messageId ?? randomUUID(),
      receiptHandle: `AQEB${randomUUID().replaceAll('-', '')}`,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount ?? 1),
        SentTimestamp: String(Date.now()),
        SenderId: 'AROAEXAMPLE:public-api',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '0'.repeat(32),
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:${REGION}:${ACCOUNT}:${queueName}`,
      awsRegion: REGION,
    })),
  };
}

export function scheduledEvent(ruleName = 'anteroom-expiry'): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: ACCOUNT,
    time: new Date().toISOString(),
    region: REGION,
    resources: [`arn:aws:events:${REGION}:${ACCOUNT}:rule/${ruleName}`],
    detail: {},
  };
}

export function snsEvent(message: string, topic = 'anteroom-inlet'): SNSEvent {
  return {
    Records: [
      {
        EventSource: 'aws:sns',
        EventVersion: '1.0',
        EventSubscriptionArn: `arn:aws:sns:${REGION}:${ACCOUNT}:${topic}:${randomUUID()}`,
        Sns: {
          Type: 'Notification',
          MessageId: randomUUID(),
          TopicArn: `arn:aws:sns:${REGION}:${ACCOUNT}:${topic}`,
          Subject: '',
          Message: message,
          Timestamp: new Date().toISOString(),
          SignatureVersion: '1',
          Signature: 'EXAMPLE',
          SigningCertUrl: 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0000000000000000000000.pem',
          UnsubscribeUrl: `https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe`,
          MessageAttributes: {},
        },
      },
    ],
  };
}
