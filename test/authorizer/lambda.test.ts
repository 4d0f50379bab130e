import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { apiArnBase, createLambdaAuthorizer } from '../../packages/authorizer/src/index.ts';
import type { AuthorizerEvent, AuthorizerResult } from '../../packages/authorizer/src/index.ts';
import { startKeyServer } from './key-server.ts';
import type { KeyServer } from './key-server.ts';
import { EVENT_ID, ISSUER, NOW, accessClaims, generateEventKey, sign, signHs256WithPublicKey } from './tokens.ts';
import type { EventKey } from './tokens.ts';

const API = 'arn:aws:execute-api:us-east-1:123456789012:abc123';

/** A REST API TOKEN authorizer event, as API Gateway sends it (identity source: the Authorization header). */
function tokenEvent(authorizationToken: string | undefined): AuthorizerEvent {
  return { type: 'TOKEN', authorizationToken, methodArn: `${API}/prod/GET/store/search` };
}

/** A REST API REQUEST authorizer event, as API Gateway sends it, with the headers the client sent. */
function requestEvent(headers: Record<string, string>): AuthorizerEvent {
  const allHeaders = {
    Accept: '*/*',
    Host: 'abc123.execute-api.us-east-1.amazonaws.com',
    'User-Agent': 'Mozilla/5.0',
    'X-Amzn-Trace-Id': 'Root=1-6761e0c2-2b7e4e7b0b4f0e1c5a9d3f21',
    'X-Forwarded-For': '203.0.113.7',
    'X-Forwarded-Port': '443',
    'X-Forwarded-Proto': 'https',
    ...headers,
  };
  return {
    type: 'REQUEST',
    methodArn: `${API}/prod/POST/store/checkout`,
    resource: '/store/checkout',
    path: '/store/checkout',
    httpMethod: 'POST',
    headers: allHeaders,
    multiValueHeaders: Object.fromEntries(Object.entries(allHeaders).map(([name, value]) => [name, [value]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: {
      resourceId: 'x1y2z3',
      resourcePath: '/store/checkout',
      httpMethod: 'POST',
      extendedRequestId: 'Bx7QeFjKoAMFdDg=',
      requestTime: '01/Jan/2026:00:00:00 +0000',
      path: '/prod/store/checkout',
      accountId: '123456789012',
      protocol: 'HTTP/1.1',
      stage: 'prod',
      domainPrefix: 'abc123',
      requestTimeEpoch: NOW * 1000,
      requestId: '3f0c5b0e-7a43-4c1e-9a50-1c2b3d4e5f60',
      identity: { sourceIp: '203.0.113.7', userAgent: 'Mozilla/5.0' },
      domainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      apiId: 'abc123',
    },
  };
}

function expectPolicy(result: AuthorizerResult, effect: 'Allow' | 'Deny'): void {
  assert.deepEqual(result.policyDocument, {
    Version: '2012-10-17',
    Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: `${API}/*/*/*` }],
  });
}

describe('API Gateway Lambda authorizer', () => {
  let keys: KeyServer;
  let key: EventKey;
  let authorize: (event: AuthorizerEvent) => Promise<AuthorizerResult>;

  before(async () => {
    key = await generateEventKey();
    keys = await startKeyServer(EVENT_ID, [key.publicJwk]);
    authorize = createLambdaAuthorizer({
      publicKeyUrl: keys.publicKeyUrl,
      eventId: EVENT_ID,
      issuer: ISSUER,
      cookieName: 'anteroom_token',
      clock: () => NOW * 1000,
    });
  });
  after(() => keys.close());

  describe('TOKEN events', () => {
    it('allows the whole API for a valid token, with principalId = sub and the visitor in context', async () => {
      const claims = accessClaims({ queue_position: 7 });
      const result = await authorize(tokenEvent(`Bearer ${await sign(key, claims)}`));
      assert.equal(result.principalId, claims.sub);
      expectPolicy(result, 'Allow');
      assert.deepEqual(result.context, { event_id: EVENT_ID, request_id: claims.sub, queue_position: 7 });
    });

    it('accepts the raw token without "Bearer"', async () => {
      expectPolicy(await authorize(tokenEvent(await sign(key))), 'Allow');
    });

    it('throws "Unauthorized" (API Gateway answers 401) when no token is presented', async () => {
      await assert.rejects(authorize(tokenEvent(undefined)), (error: Error) => {
        assert.equal(error.message, 'Unauthorized');
        assert.ok(error.cause instanceof Error, 'the refusal behind it is kept as the cause');
        return true;
      });
      await assert.rejects(authorize(tokenEvent('')), { message: 'Unauthorized' });
      await assert.rejects(authorize(tokenEvent('Bearer ')), { message: 'Unauthorized' });
    });

    it('denies (API Gateway answers 403) an invalid token, with principalId "denied" and the reason', async () => {
      const result = await authorize(tokenEvent(`Bearer ${await signHs256WithPublicKey(key)}`));
      assert.equal(result.principalId, 'denied');
      expectPolicy(result, 'Deny');
      assert.deepEqual(result.context, { reason: 'algorithm_not_allowed' });
      const expired = await authorize(tokenEvent(await sign(key, accessClaims({}, NOW - 3600))));
      expectPolicy(expired, 'Deny');
      assert.deepEqual(expired.context, { reason: 'expired' });
    });
  });

  describe('REQUEST events', () => {
    it('allows a valid token from the Authorization header', async () => {
      const claims = accessClaims();
      const result = await authorize(requestEvent({ Authorization: `Bearer ${await sign(key, claims)}` }));
      assert.equal(result.principalId, claims.sub);
      expectPolicy(result, 'Allow');
      assert.deepEqual(result.context, { event_id: EVENT_ID, request_id: claims.sub, queue_position: 42 });
    });

    it('allows a valid token from the configured cookie', async () => {
      const result = await authorize(requestEvent({ Cookie: `lang=en; anteroom_token=${await sign(key)}` }));
      expectPolicy(result, 'Allow');
    });

    it('throws "Unauthorized" when neither header nor cookie carries a token', async () => {
      await assert.rejects(authorize(requestEvent({})), { message: 'Unauthorized' });
    });

    it('denies a refresh token', async () => {
      const result = await authorize(
        requestEvent({ Authorization: await sign(key, accessClaims({ token_use: 'refresh' })) }),
      );
      expectPolicy(result, 'Deny');
      assert.deepEqual(result.context, { reason: 'wrong_token_use' });
    });
  });

  it('throws an ordinary error (API Gateway answers 500, uncached) when the keys cannot be fetched', async () => {
    const unreachable = createLambdaAuthorizer({
      publicKeyUrl: 'http://127.0.0.1:1/public_key',
      eventId: EVENT_ID,
      issuer: ISSUER,
      clock: () => NOW * 1000,
    });
    await assert.rejects(unreachable(tokenEvent(await sign(key))), (error: Error) => {
      assert.notEqual(error.message, 'Unauthorized');
      return true;
    });
  });

  it('takes the ARN base from methodArn, and refuses a methodArn that is not one', async () => {
    assert.equal(apiArnBase(`${API}/prod/GET/store/search`), API);
    assert.equal(
      apiArnBase('arn:aws-cn:execute-api:cn-north-1:123456789012:q1w2e3/$default/ANY/'),
      'arn:aws-cn:execute-api:cn-north-1:123456789012:q1w2e3',
    );
    assert.throws(() => apiArnBase('arn:aws:lambda:us-east-1:123456789012:function:f'), { message: 'methodArn is not an API Gateway method ARN' });
    assert.throws(() => apiArnBase(`x${API}/prod/GET/store/search`), { message: 'methodArn is not an API Gateway method ARN' });
    await assert.rejects(authorize({ type: 'TOKEN', authorizationToken: 'x', methodArn: 'nonsense' }));
  });
});
