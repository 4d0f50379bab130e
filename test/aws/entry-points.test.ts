// Entry points of the AWS deployment that handlers.test.ts does not run: the key and expiry routes of the
// public API through the Lambda proxy adapter, the private generate_token (with its overrides) and a non-empty
// expired_tokens, the inlet functions' exported handlers configured only through process.env, the authorizer's
// REQUEST-type event, and the scheduled jobs with their feature switched off. Same simulated stack as
// handlers.test.ts (simulated-stack.ts).

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { Redis } from 'ioredis';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createVerifier } from '../../packages/authorizer/src/verify.ts';
import { handler as authorizerHandler } from '../../src/aws/authorizer.ts';
import { maxSizeHandler, periodicHandler } from '../../src/aws/inlet.ts';
import { verifySigV4, type SigV4Verdict } from '../../src/http/auth/sigv4.ts';
import { TestClock } from '../support/node.ts';
import { apiGatewayEvent, scheduledEvent, snsEvent } from './events.ts';
import { serveAsApiGateway } from './local-aws.ts';
import { get, ISSUER, json, post, simulatedStack, startLocalAws, type SimulatedStack } from './simulated-stack.ts';

const aws = await startLocalAws();
const { redis } = aws;
/** A plain connection to the test's redis-server, to look at what a stack keeps there. */
const inspector = new Redis(redis.url, { lazyConnect: true });
after(async () => {
  inspector.disconnect();
  await aws.close();
});
const deployment = (overrides: Record<string, string> = {}, clock = new TestClock()) => simulatedStack(aws, overrides, clock);
type Deployment = SimulatedStack;

const nowSeconds = (d: Deployment) => Math.floor(d.clock.now() / 1000);

/**
 * Sets (or, for undefined, removes) variables of process.env for the duration of `run`, then puts back what
 * was there.
 */
async function withEnv<T>(vars: Record<string, string | undefined>, run: () => Promise<T>): Promise<T> {
  const saved = new Map(Object.keys(vars).map((name) => [name, process.env[name]]));
  for (const [name, value] of Object.entries(vars)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  try {
    return await run();
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/**
 * Captures console.log while `run` runs (the inlet functions log one line per invocation). The functions keep
 * the console.log they found at cold start, so every capture installs the same function, and a capture returns
 * the lines written while it ran.
 */
const lambdaLog: string[] = [];
const logToLambdaLog = (...args: unknown[]) => {
  lambdaLog.push(args.map(String).join(' '));
};
async function capturingLog<T>(run: () => Promise<T>): Promise<{ value: T; lines: string[] }> {
  const start = lambdaLog.length;
  const original = console.log;
  console.log = logToLambdaLog;
  try {
    const value = await run();
    return { value, lines: lambdaLog.slice(start) };
  } finally {
    console.log = original;
  }
}

/** Every key a stack keeps in Redis, with its serialized value (DUMP): equal snapshots = nothing changed. */
async function redisSnapshot(prefix: string): Promise<Map<string, string>> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await inspector.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  const snapshot = new Map<string, string>();
  for (const key of keys.sort()) snapshot.set(key, (await inspector.dumpBuffer(key))?.toString('hex') ?? '');
  return snapshot;
}

/**
 * The private API as its stack deploys it: API Gateway with IAM authorization on stage "api". Each request
 * must carry a valid SigV4 signature (service execute-api) of `credentials` over the full path (stage
 * included), else 403 as IAM answers; the function then sees the path without the stage, as API Gateway
 * passes it.
 */
async function iamPrivateGateway(
  handler: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>,
  credentials: { accessKeyId: string; secretAccessKey: string; region: string },
) {
  const stage = '/api';
  const calls: { method: string; path: string; verdict: SigV4Verdict; securityToken: string | undefined }[] = [];
  const gateway = await serveAsApiGateway(async (event) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(event.headers)) if (value !== undefined) headers[name.toLowerCase()] = value;
    const query = new URLSearchParams();
    for (const [key, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) for (const v of values ?? []) query.append(key, v);
    const verdict = await verifySigV4(
      { method: event.httpMethod, path: event.path, query: query.toString(), headers, body: Buffer.from(event.body ?? '', 'utf8') },
      credentials,
      Date.now(),
    );
    calls.push({ method: event.httpMethod, path: event.path, verdict, securityToken: headers['x-amz-security-token'] });
    if (!verdict.ok || !event.path.startsWith(`${stage}/`)) {
      return { statusCode: 403, headers: { 'content-type': 'application/json' }, body: '{"message":"Forbidden"}' };
    }
    const path = event.path.slice(stage.length);
    return handler({ ...event, path, resource: path });
  });
  return { url: `${gateway.url}${stage}`, calls, close: gateway.close };
}

const INLET_ROLE = { AWS_ACCESS_KEY_ID: 'ASIAINLETROLEKEY', AWS_SECRET_ACCESS_KEY: 'inlet-role-secret', AWS_SESSION_TOKEN: 'inlet-role-session' };

describe('AWS entry points', () => {
  describe('public API function: key and expiry routes', () => {
    it('GET /queue_pos_expiry answers each case of the contract, cacheable only when it is a 200', async () => {
      const d = deployment();
      try {
        const [first, second] = await d.join(2);
        await d.serve(1);
        const ask = (query: Record<string, string>) => d.publicApi(get('/queue_pos_expiry', query));

        const malformed = await ask({ event_id: 'Sample', request_id: 'not-a-uuid' });
        assert.equal(malformed.statusCode, 400);
        assert.deepEqual(json(malformed), { error: 'Invalid event or request ID' });
        assert.equal(malformed.headers?.['cache-control'], 'no-store');
        const otherEvent = await ask({ event_id: 'Nope', request_id: first! });
        assert.equal(otherEvent.statusCode, 400);
        assert.deepEqual(json(otherEvent), { error: 'Invalid event or request ID' });
        const missing = await ask({ event_id: 'Sample' });
        assert.equal(missing.statusCode, 400);
        assert.deepEqual(json(missing), { error: 'Missing required request parameters: [request_id]' });

        const stranger = await ask({ event_id: 'Sample', request_id: randomUUID() });
        assert.equal(stranger.statusCode, 404);
        assert.deepEqual(json(stranger), { error: 'Invalid request ID' });
        assert.equal(stranger.headers?.['cache-control'], 'no-store');

        const waiting = await ask({ event_id: 'Sample', request_id: second! });
        assert.equal(waiting.statusCode, 202);
        assert.deepEqual(json(waiting), { error: 'Request ID not being served yet' });
        assert.equal(waiting.headers?.['cache-control'], 'no-store');

        const served = await ask({ event_id: 'Sample', request_id: first! });
        assert.equal(served.statusCode, 200);
        assert.deepEqual(json(served), { expires_in: 900 });
        assert.equal(served.headers?.['cache-control'], 'public, max-age=1');
        assert.equal(served.headers?.['access-control-allow-origin'], '*');
        // Request IDs are case-insensitive UUIDs.
        assert.deepEqual(json(await ask({ event_id: 'Sample', request_id: first!.toUpperCase() })), { expires_in: 900 });

        d.clock.advance(300);
        assert.deepEqual(json(await ask({ event_id: 'Sample', request_id: first! })), { expires_in: 600 });
        // One boundary rule: at exactly the period the position has not expired yet (now − T > period expires).
        d.clock.advance(600);
        const last = await ask({ event_id: 'Sample', request_id: first! });
        assert.equal(last.statusCode, 200);
        assert.deepEqual(json(last), { expires_in: 0 });
        d.clock.advance(1);
        const expired = await ask({ event_id: 'Sample', request_id: first! });
        assert.equal(expired.statusCode, 410);
        assert.deepEqual(json(expired), { error: 'Queue position has expired' });
        assert.equal(expired.headers?.['cache-control'], 'no-store');
        // generate_token agrees with it.
        const claim = await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: first! }));
        assert.equal(claim.statusCode, 410);
        assert.deepEqual(json(claim), { error: 'Queue position has expired' });

        // Once a token is issued the position never expires: the answer stays the time left at the claim.
        await d.serve(1);
        d.clock.advance(100);
        const token = await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: second! }));
        assert.equal(token.statusCode, 200);
        d.clock.advance(5000);
        const claimed = await ask({ event_id: 'Sample', request_id: second! });
        assert.equal(claimed.statusCode, 200);
        assert.deepEqual(json(claimed), { expires_in: 800 });
      } finally {
        await d.close();
      }
    });

    it('GET /queue_pos_expiry answers 202 "not enabled" on a stack with queue position expiry switched off', async () => {
      const d = deployment({ ENABLE_QUEUE_POSITION_EXPIRY: 'false' });
      try {
        const [first] = await d.join(1);
        await d.serve(1);
        const reply = await d.publicApi(get('/queue_pos_expiry', { event_id: 'Sample', request_id: first! }));
        assert.equal(reply.statusCode, 202);
        assert.deepEqual(json(reply), { error: 'Queue position expiration not enabled' });
        assert.equal(reply.headers?.['cache-control'], 'no-store');
        // Still 404 for a request ID without a position (that check comes first).
        const stranger = await d.publicApi(get('/queue_pos_expiry', { event_id: 'Sample', request_id: randomUUID() }));
        assert.equal(stranger.statusCode, 404);
      } finally {
        await d.close();
      }
    });

    it('GET /public_key and GET /jwks.json publish the public key (the JWKS with its derived keys), cacheable for 300 s, and tokens verify with the JWKS', async () => {
      const d = deployment();
      try {
        const keyReply = await d.publicApi(get('/public_key', { event_id: 'Sample' }));
        assert.equal(keyReply.statusCode, 200);
        assert.equal(keyReply.headers?.['cache-control'], 'public, max-age=300');
        assert.equal(keyReply.headers?.['access-control-allow-origin'], '*');
        const jwk = json(keyReply);
        assert.deepEqual(Object.keys(jwk).sort(), ['alg', 'e', 'kid', 'kty', 'n'], 'a bare public JWK, never a private member');
        assert.equal(jwk.kty, 'RSA');
        assert.equal(jwk.alg, 'RS256');
        assert.equal(jwk.e, 'AQAB');
        assert.match(jwk.kid as string, /^[0-9a-f]{32}$/);
        // RSA 2048: the modulus is 256 bytes.
        assert.equal(Buffer.from(jwk.n as string, 'base64url').length, 256);

        const jwksReply = await d.publicApi(get('/jwks.json', { event_id: 'Sample' }));
        assert.equal(jwksReply.statusCode, 200);
        assert.equal(jwksReply.headers?.['cache-control'], 'public, max-age=300');
        assert.equal(jwksReply.headers?.['access-control-allow-origin'], '*');
        // The RS256 key first, then the ES256 and EdDSA keys derived from it (a room's signing_algorithm).
        const keys = (json(jwksReply) as unknown as { keys: Record<string, unknown>[] }).keys;
        assert.deepEqual(keys[0], jwk);
        assert.deepEqual(keys.map((k) => k.kid), [jwk.kid, `${jwk.kid as string}-es256`, `${jwk.kid as string}-eddsa`]);

        // A token of the stack verifies against the JWKS, with the stack's issuer, and names its kid.
        const [id] = await d.join(1);
        await d.serve(1);
        const tokens = json(await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: id! })));
        assert.equal(decodeProtectedHeader(tokens.access_token as string).kid, jwk.kid);
        const verifier = createVerifier({
          jwksUrl: 'https://cdn.example/jwks.json?event_id=Sample',
          eventId: 'Sample',
          issuer: ISSUER,
          clock: d.clock.now,
          fetch: async () => new Response(jwksReply.body, { headers: { 'content-type': 'application/json' } }),
        });
        assert.equal((await verifier.verify(tokens.access_token as string)).sub, id);

        for (const path of ['/public_key', '/jwks.json']) {
          const unknown = await d.publicApi(get(path, { event_id: 'Nope' }));
          assert.equal(unknown.statusCode, 404, path);
          assert.deepEqual(json(unknown), { error: 'Invalid event ID' }, path);
          assert.equal(unknown.headers?.['cache-control'], 'no-store', path);
          const missing = await d.publicApi(get(path, {}));
          assert.equal(missing.statusCode, 400, path);
          assert.deepEqual(json(missing), { error: 'Missing required request parameters: [event_id]' }, path);
          assert.equal(missing.headers?.['cache-control'], 'no-store', path);
        }
      } finally {
        await d.close();
      }
    });
  });

  describe('private API function: generate_token and expired_tokens', () => {
    it('POST /generate_token applies issuer and validity_period overrides to the token it issues, and only then', async () => {
      const d = deployment();
      try {
        const [first, second, third] = await d.join(3);
        const notYet = await d.privateApi(post('/generate_token', { event_id: 'Sample', request_id: first!, validity_period: 60 }));
        assert.equal(notYet.statusCode, 202);
        assert.deepEqual(json(notYet), { error: 'Request ID not being served yet' });
        await d.serve(3);

        const issuedAt = nowSeconds(d);
        const reply = await d.privateApi(
          post('/generate_token', { event_id: 'Sample', request_id: first!, issuer: 'https://admin.example/issuer', validity_period: 120 }),
        );
        assert.equal(reply.statusCode, 200);
        assert.equal(reply.headers?.['cache-control'], 'no-store', 'every private response is no-store');
        const tokens = json(reply);
        assert.equal(tokens.token_type, 'Bearer');
        assert.equal(tokens.expires_in, 120);
        for (const use of ['access', 'refresh', 'id'] as const) {
          const claims = decodeJwt(tokens[`${use}_token`] as string);
          assert.equal(claims.iss, 'https://admin.example/issuer', use);
          assert.equal(claims.iat, issuedAt, use);
          assert.equal(claims.nbf, issuedAt, use);
          assert.equal(claims.exp, issuedAt + 120, use);
          assert.equal(claims.sub, first, use);
          assert.equal(claims.aud, 'Sample', use);
          assert.equal(claims.queue_position, 1, use);
          assert.equal(claims.token_use, use, use);
        }

        // Overrides apply only when a new token is issued: a second call gets the same tokens, seconds left.
        d.clock.advance(20);
        const again = json(
          await d.privateApi(post('/generate_token', { event_id: 'Sample', request_id: first!, issuer: 'https://else.example', validity_period: 9999 })),
        );
        assert.equal(again.access_token, tokens.access_token);
        assert.equal(again.id_token, tokens.id_token);
        assert.equal(again.expires_in, 100);

        // … and to that request only: the next visitor, through the private API without overrides, gets the
        // stack's settings.
        const plain = json(await d.privateApi(post('/generate_token', { event_id: 'Sample', request_id: second! })));
        assert.equal(plain.expires_in, 3600);
        assert.equal(decodeJwt(plain.access_token as string).iss, ISSUER);

        // The public endpoint ignores both fields.
        const viaPublic = await d.publicApi(
          post('/generate_token', { event_id: 'Sample', request_id: third!, issuer: 'https://evil.example', validity_period: 31_536_000 }),
        );
        assert.equal(viaPublic.statusCode, 200);
        assert.equal(json(viaPublic).expires_in, 3600);
        assert.equal(decodeJwt(json(viaPublic).access_token as string).iss, ISSUER);

        // The private endpoint validates the overrides (and changes nothing when they are bad).
        const [fourth] = await d.join(1);
        await d.serve(1);
        for (const bad of [{ validity_period: 0 }, { validity_period: 1.5 }, { validity_period: '60' }, { issuer: '' }]) {
          const refused = await d.privateApi(post('/generate_token', { event_id: 'Sample', request_id: fourth!, ...bad }));
          assert.equal(refused.statusCode, 400, JSON.stringify(bad));
          assert.deepEqual(json(refused), { error: 'Invalid request body' }, JSON.stringify(bad));
        }
        assert.deepEqual(json(await d.privateApi(get('/num_active_tokens', { event_id: 'Sample' }))), { active_tokens: 3 });
        // Same decision order as the public endpoint.
        const stranger = await d.privateApi(post('/generate_token', { event_id: 'Sample', request_id: randomUUID(), validity_period: 60 }));
        assert.equal(stranger.statusCode, 404);
        assert.deepEqual(json(stranger), { error: 'Invalid request ID' });
        // One token_generated per token set issued (events generation only gates the metrics event); none for
        // the repeated claim or the refused ones.
        assert.deepEqual(
          d.events().map((e) => [e.DetailType, (JSON.parse(e.Detail) as { request_id: string }).request_id]),
          [['token_generated', first], ['token_generated', second], ['token_generated', third]],
        );
      } finally {
        await d.close();
      }
    });

    it('GET /expired_tokens lists, oldest first, the request IDs whose token exp has passed, whatever their session', async () => {
      const d = deployment();
      try {
        const [first, second, third] = await d.join(3);
        await d.serve(3);
        const issue = async (id: string, validity: number) => {
          const reply = await d.privateApi(post('/generate_token', { event_id: 'Sample', request_id: id, validity_period: validity }));
          assert.equal(reply.statusCode, 200);
        };
        const expired = async () => {
          const reply = await d.privateApi(get('/expired_tokens', { event_id: 'Sample' }));
          assert.equal(reply.statusCode, 200);
          assert.equal(reply.headers?.['cache-control'], 'no-store');
          return JSON.parse(reply.body) as unknown;
        };
        await issue(first!, 60);
        d.clock.advance(10);
        await issue(second!, 60);
        await issue(third!, 3600);
        // The site closes the second visitor's session: it still counts once its token has expired.
        assert.equal((await d.privateApi(post('/update_session', { event_id: 'Sample', request_id: second!, status: -1 }))).statusCode, 200);
        assert.deepEqual(await expired(), []);

        d.clock.advance(50); // exactly the first token's exp: not yet expired (exp < now)
        assert.deepEqual(await expired(), []);
        d.clock.advance(1);
        assert.deepEqual(await expired(), [first]);
        assert.deepEqual(json(await d.privateApi(get('/num_active_tokens', { event_id: 'Sample' }))), { active_tokens: 1 });
        d.clock.advance(10);
        assert.deepEqual(await expired(), [first, second]);

        const unknown = await d.privateApi(get('/expired_tokens', { event_id: 'Nope' }));
        assert.equal(unknown.statusCode, 400);
        assert.deepEqual(json(unknown), { error: 'Invalid event ID' });
      } finally {
        await d.close();
      }
    });
  });

  describe('inlet functions, configured by their environment only (deploy/aws/stacks/inlet.ts)', () => {
    it('periodicHandler adds INCREMENT_BY per tick through the SigV4-signed private API and keeps its configuration while warm', async () => {
      const d = deployment();
      const gateway = await iamPrivateGateway(d.privateApi, {
        accessKeyId: INLET_ROLE.AWS_ACCESS_KEY_ID,
        secretAccessKey: INLET_ROLE.AWS_SECRET_ACCESS_KEY,
        region: 'eu-west-1',
      });
      try {
        const environment = {
          EVENT_ID: 'Sample',
          CORE_API_ENDPOINT: gateway.url,
          CORE_API_REGION: 'eu-west-1',
          INCREMENT_BY: '7',
          START_TIME: '1626336061', // the stack's default, long past
          END_TIME: '0',
          CLOUDWATCH_ALARM: '', // the stack's default: no alarm, never paused
          ...INLET_ROLE,
        };
        const first = await withEnv(environment, () => capturingLog(() => periodicHandler(scheduledEvent('periodic-inlet'))));
        assert.deepEqual(first.value, { kind: 'moved', by: 7, servingNum: 7 });
        assert.deepEqual(first.lines, ['Sample periodic: serving counter +7 -> 7']);
        assert.deepEqual(json(await d.publicApi(get('/serving_num', { event_id: 'Sample' }))), { serving_counter: 7 });

        // A warm function keeps the configuration of its cold start: a changed (or absent) environment does
        // not reconfigure it.
        const second = await withEnv({ INCREMENT_BY: '100' }, () => capturingLog(() => periodicHandler(scheduledEvent('periodic-inlet'))));
        assert.deepEqual(second.value, { kind: 'moved', by: 7, servingNum: 14 });
        const unset = Object.fromEntries(Object.keys(environment).map((name) => [name, undefined]));
        const third = await withEnv(unset, () => capturingLog(() => periodicHandler(scheduledEvent('periodic-inlet'))));
        assert.deepEqual(third.value, { kind: 'moved', by: 7, servingNum: 21 });
        assert.deepEqual(json(await d.publicApi(get('/serving_num', { event_id: 'Sample' }))), { serving_counter: 21 });

        // Every call was signed with the role's credentials and region, over the full path (stage included).
        assert.equal(gateway.calls.length, 3);
        for (const call of gateway.calls) {
          assert.deepEqual(call.verdict, { ok: true });
          assert.deepEqual([call.method, call.path], ['POST', '/api/increment_serving_counter']);
          assert.equal(call.securityToken, INLET_ROLE.AWS_SESSION_TOKEN);
        }
      } finally {
        await gateway.close();
        await d.close();
      }
    });

    it('maxSizeHandler closes the sessions an SNS report names and admits up to MAX_SIZE active visitors', async () => {
      const d = deployment();
      const gateway = await iamPrivateGateway(d.privateApi, {
        accessKeyId: INLET_ROLE.AWS_ACCESS_KEY_ID,
        secretAccessKey: INLET_ROLE.AWS_SECRET_ACCESS_KEY,
        region: 'us-east-1',
      });
      try {
        const ids = await d.join(5);
        await d.serve(2);
        for (const id of ids.slice(0, 2)) assert.equal((await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: id }))).statusCode, 200);
        const environment = { EVENT_ID: 'Sample', CORE_API_ENDPOINT: gateway.url, CORE_API_REGION: 'us-east-1', MAX_SIZE: '2', ...INLET_ROLE };

        // Position 1 completed: 1 active of 2, room for one more.
        const first = await withEnv(environment, () =>
          capturingLog(() => maxSizeHandler(snsEvent(JSON.stringify({ exited: 0, completed: [ids[0]], abandoned: [] })))),
        );
        assert.equal(first.value, undefined);
        assert.match(first.lines.at(-1)!, /^Sample max-size: closed 1 session\(s\), 1 active of 2 \(capacity 1\), serving counter \+1 -> 3$/);
        assert.deepEqual(json(await d.publicApi(get('/serving_num', { event_id: 'Sample' }))), { serving_counter: 3 });
        const closed = await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: ids[0]! }));
        assert.equal(closed.statusCode, 410, 'the completed session is closed');

        // The site reports many exits while two sessions are active (positions 2 and 3): no room, no move.
        assert.equal((await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: ids[2]! }))).statusCode, 200);
        const full = await capturingLog(() => maxSizeHandler(snsEvent(JSON.stringify({ exited: 10, completed: [], abandoned: [] }))));
        assert.match(full.lines.at(-1)!, /2 active of 2 \(capacity 0\), serving counter unchanged at 3$/);
        // An abandoned session makes room for exactly one.
        await capturingLog(() => maxSizeHandler(snsEvent(JSON.stringify({ exited: 10, completed: [], abandoned: [ids[1]] }))));
        assert.deepEqual(json(await d.publicApi(get('/serving_num', { event_id: 'Sample' }))), { serving_counter: 4 });

        assert.ok(gateway.calls.length > 0);
        assert.ok(gateway.calls.every((c) => c.verdict.ok), 'every private call was SigV4-signed with the role credentials');
        assert.deepEqual(
          [...new Set(gateway.calls.map((c) => `${c.method} ${c.path}`))].sort(),
          ['GET /api/num_active_tokens', 'POST /api/increment_serving_counter', 'POST /api/update_session'],
          'only the three routes the inlet role may invoke',
        );
      } finally {
        await gateway.close();
        await d.close();
      }
    });
  });

  it('the authorizer function, given a REQUEST-type event, allows the visitor’s access token in a header and denies anything else', async () => {
    // The authorizer checks exp and nbf against the real time.
    const realNow = Math.floor(Date.now() / 1000) * 1000;
    const d = deployment({}, new TestClock(realNow));
    const other = deployment({}, new TestClock(realNow));
    const gateway = await serveAsApiGateway(d.publicApi);
    try {
      const [id, late] = await d.join(2);
      await d.serve(2);
      const tokens = json(await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: id! })));
      // A token of the same event and issuer, but signed by another stack's key.
      const [stranger] = await other.join(1);
      await other.serve(1);
      const foreign = json(await other.publicApi(post('/generate_token', { event_id: 'Sample', request_id: stranger! })));
      // A token that expired a minute ago (issued, with a 1 s validity, 61 s in the past).
      d.clock.ms = realNow - 61_000;
      const stale = json(await d.privateApi(post('/generate_token', { event_id: 'Sample', request_id: late!, validity_period: 1 })));

      const methodArn = 'arn:aws:execute-api:us-east-1:123456789012:sample123/api/GET/store/search';
      const request = (headers: Record<string, string>) => ({
        ...apiGatewayEvent({ method: 'GET', path: '/store/search', headers, apiId: 'sample123' }),
        type: 'REQUEST' as const,
        methodArn,
      });
      await withEnv({ PUBLIC_API_ENDPOINT: gateway.url, WAITING_ROOM_EVENT_ID: 'Sample', ISSUER }, async () => {
        // VWR's sample site sends the raw JWT as Authorization; standard clients send "Bearer <jwt>".
        for (const value of [tokens.access_token as string, `Bearer ${tokens.access_token as string}`]) {
          const allowed = await authorizerHandler(request({ Authorization: value }));
          assert.equal(allowed.principalId, id);
          assert.deepEqual(allowed.policyDocument.Statement, [
            { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:us-east-1:123456789012:sample123/*/*/*' },
          ]);
          assert.deepEqual(allowed.context, { event_id: 'Sample', request_id: id, queue_position: 1 });
        }
        // Header names keep the client's case in a REQUEST event.
        const lower = await authorizerHandler(request({ authorization: tokens.access_token as string }));
        assert.equal(lower.policyDocument.Statement[0]?.Effect, 'Allow');

        const denials: [string, string][] = [
          [tokens.refresh_token as string, 'wrong_token_use'],
          [tokens.id_token as string, 'wrong_token_use'],
          [foreign.access_token as string, 'unknown_key'],
          [stale.access_token as string, 'expired'],
          ['not.a.jwt', 'malformed_token'],
        ];
        for (const [token, reason] of denials) {
          const denied = await authorizerHandler(request({ Authorization: token }));
          assert.equal(denied.principalId, 'denied', reason);
          assert.equal(denied.policyDocument.Statement[0]?.Effect, 'Deny', reason);
          assert.deepEqual(denied.context, { reason }, reason);
        }
        // No token at all: API Gateway's 401 (the authorizer throws "Unauthorized").
        await assert.rejects(authorizerHandler(request({})), { message: 'Unauthorized' });
      });
    } finally {
      await gateway.close();
      await Promise.all([d.close(), other.close()]);
    }
  });

  describe('scheduled jobs with their feature switched off', () => {
    it('the expiry job changes nothing when queue position expiry is off, even with incr-on-expiry on', async () => {
      const d = deployment({ ENABLE_QUEUE_POSITION_EXPIRY: 'false', INCR_SVC_ON_QUEUE_POSITION_EXPIRY: 'true', QUEUE_POSITION_EXPIRY_PERIOD: '60' });
      try {
        const ids = await d.join(3);
        await d.serve(2);
        d.clock.advance(3600); // far past the 60 s period: with expiry on, positions 1 and 2 would expire
        const before = await redisSnapshot(d.config.redis.keyPrefix!);
        assert.ok(before.size > 0, 'the snapshot sees the stack’s keys');
        const sentBefore = d.events().length;
        await d.jobs.expiry(scheduledEvent('expiry'));
        await d.jobs.expiry(scheduledEvent('expiry'));
        assert.deepEqual(await redisSnapshot(d.config.redis.keyPrefix!), before, 'no key of the stack changed');

        assert.deepEqual(json(await d.publicApi(get('/serving_num', { event_id: 'Sample' }))), { serving_counter: 2 });
        assert.deepEqual(json(await d.publicApi(get('/waiting_num', { event_id: 'Sample' }))), { waiting_num: 3 });
        const claims = await Promise.all(ids.map((id) => d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: id }))));
        assert.deepEqual(claims.map((c) => c.statusCode), [200, 200, 202], 'no served position was expired');
        assert.deepEqual(d.events().slice(sentBefore).map((e) => e.DetailType), ['token_generated', 'token_generated'], 'no automatic_serving_counter_incr');
      } finally {
        await d.close();
      }
    });

    it('the metrics job emits nothing and changes nothing when events generation is off', async () => {
      const off = deployment({ ENABLE_EVENTS_GENERATION: 'false' });
      const on = deployment({ ENABLE_EVENTS_GENERATION: 'true' });
      try {
        for (const d of [off, on]) {
          const [id] = await d.join(2);
          await d.serve(1);
          assert.equal((await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: id! }))).statusCode, 200);
        }
        const before = await redisSnapshot(off.config.redis.keyPrefix!);
        const offSentBefore = off.events().length;
        await off.jobs.metrics(scheduledEvent('metrics'));
        assert.deepEqual(off.events().slice(offSentBefore), [], 'nothing sent to the stack’s event bus');
        assert.deepEqual(await redisSnapshot(off.config.redis.keyPrefix!), before);

        // The same job on a stack with the feature on does emit (so the silence above is the switch).
        const sentBefore = on.events().length;
        await on.jobs.metrics(scheduledEvent('metrics'));
        assert.deepEqual(on.events().slice(sentBefore).map((e) => e.DetailType), ['waiting_room_metrics']);
      } finally {
        await Promise.all([off.close(), on.close()]);
      }
    });
  });
});
