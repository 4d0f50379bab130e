// The Lambda handlers of the AWS deployment, invoked with realistic API Gateway, SQS, EventBridge-schedule
// and SNS events, against a real redis-server, dynalite (DynamoDB) and local Secrets Manager / EventBridge /
// SQS endpoints driven by the real AWS SDK clients. Nothing here is mocked below the handlers' own inputs.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createVerifier } from '../../packages/authorizer/src/verify.ts';
import { proxyHandler, publicHttpApp } from '../../src/aws/api-gateway.ts';
import { handler as authorizerHandler } from '../../src/aws/authorizer.ts';
import { createIntakeConsumer } from '../../src/aws/intake-consumer.ts';
import { encodeIntakeMessage } from '../../src/aws/intake-queue.ts';
import { createMaxSizeInletHandler, createPeriodicInletHandler, cloudWatchAlarmPauseCheck, privateApiFromEnv } from '../../src/aws/inlet.ts';
import { createRuntime } from '../../src/aws/runtime.ts';
import { once } from '../../src/aws/once.ts';
import { SecretsManagerKeyStore } from '../../src/aws/secrets-key-store.ts';
import { CompositeStore } from '../../src/store/dynamodb/composite-store.ts';
import { TokenTable } from '../../src/store/dynamodb/token-table.ts';
import { RedisStore } from '../../src/store/redis/redis-store.ts';
import { TestClock } from '../support/node.ts';
import { apiGatewayEvent, scheduledEvent, snsEvent, sqsEvent } from './events.ts';
import { serveAsApiGateway, TEST_AWS } from './local-aws.ts';
import { get, ISSUER, json, post, simulatedStack, startLocalAws } from './simulated-stack.ts';

const aws = await startLocalAws();
after(() => aws.close());
const { redis, dynamo, secrets, sqsAccepted } = aws;
const secretsManager = { endpoint: aws.secretsManagerEndpoint };
const deployment = (overrides: Record<string, string> = {}, clock = new TestClock()) => simulatedStack(aws, overrides, clock);

describe('AWS Lambda handlers', () => {
  it('carry a visitor through join → SQS intake → serve → token → update_session', async () => {
    const d = deployment({ ENABLE_EVENTS_GENERATION: 'true' });
    try {
      const joined = await d.publicApi(post('/assign_queue_num', { event_id: 'Sample' }));
      assert.equal(joined.statusCode, 200);
      assert.equal(joined.headers?.['access-control-allow-origin'], '*');
      assert.equal(joined.headers?.['cache-control'], 'no-store');
      const requestId = json(joined).api_request_id as string;
      assert.deepEqual(d.queue.sent.map((m) => m.request_id), [requestId]);

      // Before the consumer ran: the asynchronous-intake answer of the contract.
      const early = await d.publicApi(get('/queue_num', { event_id: 'Sample', request_id: requestId }));
      assert.equal(early.statusCode, 202);
      assert.deepEqual(json(early), { error: 'Request ID not found' });
      assert.equal(early.headers?.['cache-control'], 'no-store');

      assert.deepEqual(await d.intake(d.queue.deliver()), { batchItemFailures: [] });
      const position = await d.publicApi(get('/queue_num', { event_id: 'Sample', request_id: requestId }));
      assert.equal(position.statusCode, 200);
      assert.equal(position.headers?.['cache-control'], 'public, max-age=60');
      assert.deepEqual(json(position), { queue_number: 1, entry_time: Math.floor(d.clock.now() / 1000), event_id: 'Sample', status: 1, people_ahead: 0 });

      const waiting = await d.publicApi(get('/waiting_num', { event_id: 'Sample' }));
      assert.deepEqual(json(waiting), { waiting_num: 1 });
      assert.equal(waiting.headers?.['cache-control'], 'public, max-age=1');

      const notYet = await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: requestId }));
      assert.equal(notYet.statusCode, 202);

      const served = await d.privateApi(post('/increment_serving_counter', { event_id: 'Sample', increment_by: 1 }));
      assert.equal(served.statusCode, 200);
      assert.deepEqual(json(served), { serving_num: 1 });
      assert.deepEqual(json(await d.publicApi(get('/serving_num', { event_id: 'Sample' }))), { serving_counter: 1 });

      const token = await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: requestId }));
      assert.equal(token.statusCode, 200);
      const tokens = json(token);
      assert.equal(tokens.token_type, 'Bearer');
      assert.equal(tokens.expires_in, 3600);
      // A second claim answers the same tokens (the DynamoDB record, re-signed byte for byte).
      const again = json(await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: requestId })));
      assert.equal(again.access_token, tokens.access_token);

      // The token verifies against the public key the public API serves, with the stack's issuer.
      const keyReply = await d.publicApi(get('/public_key', { event_id: 'Sample' }));
      assert.equal(keyReply.headers?.['cache-control'], 'public, max-age=300');
      const verifier = createVerifier({
        publicKeyUrl: 'https://cdn.example/public_key',
        eventId: 'Sample',
        issuer: ISSUER,
        clock: d.clock.now,
        fetch: async () => new Response(keyReply.body, { headers: { 'content-type': 'application/json' } }),
      });
      const claims = await verifier.verify(tokens.access_token as string);
      assert.equal(claims.sub, requestId);
      assert.equal(claims.queue_position, 1);

      assert.deepEqual(json(await d.privateApi(get('/num_active_tokens', { event_id: 'Sample' }))), { active_tokens: 1 });
      const closed = await d.privateApi(post('/update_session', { event_id: 'Sample', request_id: requestId, status: 1 }));
      assert.equal(closed.statusCode, 200);
      const twice = await d.privateApi(post('/update_session', { event_id: 'Sample', request_id: requestId, status: 1 }));
      assert.equal(twice.statusCode, 404);
      assert.deepEqual(json(await d.privateApi(get('/num_active_tokens', { event_id: 'Sample' }))), { active_tokens: 0 });
      const gone = await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: requestId }));
      assert.equal(gone.statusCode, 410);

      // The metrics job reads the same state; every event went to EventBridge with VWR's envelope.
      await d.jobs.metrics(scheduledEvent('metrics'));
      const events = d.events();
      assert.deepEqual(events.map((e) => e.DetailType), ['token_generated', 'session_updated', 'waiting_room_metrics']);
      assert.ok(events.every((e) => e.Source === 'custom.waitingroom'));
      assert.deepEqual(JSON.parse(events[1]!.Detail), { event_id: 'Sample', request_id: requestId, status: 'completed' });
      assert.deepEqual(JSON.parse(events[2]!.Detail), {
        event_id: 'Sample', num_active_tokens: 0, total_num_tokens: 1, queue_counter: 1, serving_number: 1,
        completed_sessions: 1, abandoned_sessions: 0, expired_queue_positions: 0, waiting_num: 0,
      });
    } finally {
      await d.close();
    }
  });

  it('SQS redelivery of an already numbered join never renumbers the visitor', async () => {
    const d = deployment();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(json(await d.publicApi(post('/assign_queue_num', { event_id: 'Sample' }))).api_request_id as string);
      const batch = d.queue.deliver();
      assert.deepEqual(await d.intake(batch), { batchItemFailures: [] });
      const positions = async () =>
        Promise.all(ids.map(async (id) => json(await d.publicApi(get('/queue_num', { event_id: 'Sample', request_id: id }))).queue_number));
      const before = await positions();
      assert.deepEqual([...before].sort(), [1, 2, 3]);

      // The same batch again (its visibility timed out, or a partial failure made SQS redeliver it), with one
      // message duplicated inside it and one new join.
      ids.push(json(await d.publicApi(post('/assign_queue_num', { event_id: 'Sample' }))).api_request_id as string);
      const fresh = d.queue.deliver();
      const redelivered = sqsEvent([
        ...batch.Records.map((r) => ({ body: r.body, messageId: r.messageId, receiveCount: 2 })),
        { body: batch.Records[0]!.body, receiveCount: 2 },
        ...fresh.Records.map((r) => ({ body: r.body, messageId: r.messageId })),
      ]);
      assert.deepEqual(await d.intake(redelivered), { batchItemFailures: [] });
      const afterwards = await positions();
      assert.deepEqual(afterwards.slice(0, 3), before);
      assert.equal(afterwards[3], 4);
      assert.deepEqual(json(await d.publicApi(get('/waiting_num', { event_id: 'Sample' }))), { waiting_num: 4 });
    } finally {
      await d.close();
    }
  });

  it('reports messages it cannot number as batch item failures and numbers the rest', async () => {
    const d = deployment();
    try {
      await d.publicApi(post('/assign_queue_num', { event_id: 'Sample' }));
      const good = d.queue.deliver().Records[0]!;
      const event = sqsEvent([
        { body: good.body, messageId: 'good' },
        { body: 'not json', messageId: 'garbage' },
        { body: encodeIntakeMessage({ event_id: 'Other', request_id: randomUUID(), entry_time: 1 }), messageId: 'other-event' },
      ]);
      const result = await d.intake(event);
      assert.deepEqual(result.batchItemFailures.map((f) => f.itemIdentifier).sort(), ['garbage', 'other-event']);
      assert.deepEqual(json(await d.publicApi(get('/waiting_num', { event_id: 'Sample' }))), { waiting_num: 1 });
    } finally {
      await d.close();
    }
  });

  it('a whole batch is reported failed while the store cannot be reached, so SQS tries it again', async () => {
    const d = deployment({ REDIS_PORT: '1' });
    const redisDown = new RedisStore({ url: 'redis://127.0.0.1:1', readyTimeoutMs: 100, connectTimeoutMs: 100 });
    try {
      const consumer = createIntakeConsumer(
        once(() => createRuntime(d.config, { store: redisDown, log: () => {} })),
        () => {},
      );
      const event = sqsEvent([{ body: encodeIntakeMessage({ event_id: 'Sample', request_id: randomUUID(), entry_time: 1 }), messageId: 'm1' }]);
      assert.deepEqual(await consumer(event), { batchItemFailures: [{ itemIdentifier: 'm1' }] });
    } finally {
      await redisDown.close();
    }
  });

  it('a cold start that fails closes the store it opened, so no client lingers reconnecting beside the next attempt', async () => {
    const d = deployment({ REDIS_PORT: '1' });
    const opened: RedisStore[] = [];
    const closed = new Set<RedisStore>();
    const runtime = once(async () => {
      const store = new RedisStore({ url: 'redis://127.0.0.1:1', readyTimeoutMs: 100, connectTimeoutMs: 100 });
      const close = store.close.bind(store);
      store.close = async () => {
        closed.add(store);
        await close();
      };
      opened.push(store);
      return createRuntime(d.config, { store, log: () => {} });
    });
    const consumer = createIntakeConsumer(runtime, () => {});
    const event = () => sqsEvent([{ body: encodeIntakeMessage({ event_id: 'Sample', request_id: randomUUID(), entry_time: 1 }), messageId: 'm1' }]);
    assert.deepEqual(await consumer(event()), { batchItemFailures: [{ itemIdentifier: 'm1' }] });
    assert.deepEqual(await consumer(event()), { batchItemFailures: [{ itemIdentifier: 'm1' }] });
    assert.equal(opened.length, 2, 'each invocation tried a cold start of its own');
    assert.deepEqual(opened.map((store) => closed.has(store)), [true, true]);
  });

  it('the public API validates before enqueueing, answers CORS preflights and never opens a private route', async () => {
    const d = deployment();
    try {
      const unknown = await d.publicApi(post('/assign_queue_num', { event_id: 'Nope' }));
      assert.equal(unknown.statusCode, 400);
      assert.deepEqual(json(unknown), { error: 'Invalid event ID' });
      const malformed = await d.publicApi(apiGatewayEvent({ method: 'POST', path: '/assign_queue_num', rawBody: '{"event_id":' }));
      assert.deepEqual(json(malformed), { error: 'Invalid request body' });
      // The control panel's text/plain JSON, base64-encoded by API Gateway (binary media types).
      const base64 = await d.publicApi(
        apiGatewayEvent({ method: 'POST', path: '/assign_queue_num', body: { event_id: 'Sample' }, base64: true, headers: { 'Content-Type': 'text/plain;charset=UTF-8' } }),
      );
      assert.equal(base64.statusCode, 200);
      assert.equal(d.queue.sent.length, 1, 'only the valid join was enqueued');

      const missing = await d.publicApi(get('/serving_num', {}));
      assert.deepEqual(json(missing), { error: 'Missing required request parameters: [event_id]' });
      const repeated = await d.publicApi(get('/serving_num', { event_id: ['Sample', 'Sample'] }));
      assert.deepEqual(json(repeated), { error: 'Invalid event ID' });

      const preflight = await d.publicApi(apiGatewayEvent({ method: 'OPTIONS', path: '/generate_token', headers: { Origin: 'https://shop.example' } }));
      assert.equal(preflight.statusCode, 204);
      assert.match(String(preflight.headers?.['access-control-allow-methods']), /POST/);

      const sneaky = await d.publicApi(apiGatewayEvent({ method: 'POST', path: '/private/increment_serving_counter', body: { event_id: 'Sample', increment_by: 5 } }));
      assert.equal(sneaky.statusCode, 401);
      assert.deepEqual(json(await d.publicApi(get('/serving_num', { event_id: 'Sample' }))), { serving_counter: 0 });
    } finally {
      await d.close();
    }
  });

  it('the public API honours Idempotency-Key like a node (same routes, same keyed join): a retry gets the same place, another address another join', async () => {
    const d = deployment();
    try {
      const key = 'b5f3c2a8-7d41-4e0a-9c6b-2f8e1d0a3b47';
      const keyed = (sourceIp: string, path = '/assign_queue_num', body: unknown = { event_id: 'Sample' }, value = `"${key}"`) => {
        const event = apiGatewayEvent({ method: 'POST', path, body, headers: { 'Idempotency-Key': value, Origin: 'https://shop.example' } });
        event.requestContext.identity.sourceIp = sourceIp;
        return d.publicApi(event);
      };
      // The waiting page sends the header cross-origin: the preflight (answered by the function) lets it.
      const preflight = await d.publicApi(
        apiGatewayEvent({ method: 'OPTIONS', path: '/assign_queue_num', headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,idempotency-key' } }),
      );
      assert.equal(preflight.statusCode, 204);
      assert.ok(String(preflight.headers?.['access-control-allow-headers']).split(',').map((h) => h.trim().toLowerCase()).includes('idempotency-key'));

      const first = await keyed('198.51.100.20');
      assert.equal(first.statusCode, 200, first.body);
      const id = json(first).api_request_id as string;
      // Numbered at once by the keyed join (the key is its record), not through the SQS intake.
      assert.deepEqual(d.queue.sent, []);
      const place = json(await d.publicApi(get('/queue_num', { event_id: 'Sample', request_id: id })));
      assert.equal(place.queue_number, 1);
      // The retry (after a 5xx, a timeout, a lost reply): the same request ID, the same place, nothing more.
      const retry = await keyed('198.51.100.20');
      assert.equal(json(retry).api_request_id, id);
      assert.equal(json(await d.publicApi(get('/queue_num', { event_id: 'Sample', request_id: id }))).queue_number, 1);
      // The same key from another client address (API Gateway's sourceIp) is another visitor's join.
      const other = json(await keyed('203.0.113.99')).api_request_id as string;
      assert.notEqual(other, id);
      assert.equal(json(await d.publicApi(get('/queue_num', { event_id: 'Sample', request_id: other }))).queue_number, 2);
      assert.deepEqual(json(await d.publicApi(get('/waiting_num', { event_id: 'Sample' }))), { waiting_num: 2 });
      // A malformed key is a 400 that changes nothing.
      const bad = await keyed('198.51.100.20', '/assign_queue_num', { event_id: 'Sample' }, 'short');
      assert.equal(bad.statusCode, 400);
      assert.deepEqual(json(bad), { error: 'Invalid Idempotency-Key header' });
      assert.deepEqual(json(await d.publicApi(get('/waiting_num', { event_id: 'Sample' }))), { waiting_num: 2 });
      // leave_queue with the key: a leave retried after it took effect answers 200, as on a node.
      const leave = () => keyed('198.51.100.20', '/leave_queue', { event_id: 'Sample', request_id: id });
      assert.equal((await leave()).statusCode, 200);
      const leftAgain = await leave();
      assert.equal(leftAgain.statusCode, 200, leftAgain.body);
      assert.equal((await d.publicApi(post('/leave_queue', { event_id: 'Sample', request_id: id }))).statusCode, 410, 'without the key: 410');
    } finally {
      await d.close();
    }
  });

  it('the private API serves VWR routes at its root; the caller’s own Authorization never reaches the routes', async () => {
    const d = deployment();
    try {
      const reply = await d.privateApi(
        apiGatewayEvent({
          method: 'POST',
          path: '/increment_serving_counter',
          body: { event_id: 'Sample', increment_by: 3 },
          headers: { Authorization: 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=00' },
        }),
      );
      assert.equal(reply.statusCode, 200);
      assert.deepEqual(json(reply), { serving_num: 3 });
      const reset = await d.privateApi(post('/reset_initial_state', { event_id: 'Sample' }));
      assert.deepEqual(json(reset), { message: 'Counters reset. DynamoDB table recreated.' });
      // The reset asked the CDN purge function, through its queue, to invalidate CloudFront (before answering).
      const purgeRequests = sqsAccepted.filter((m) => m.queueUrl === d.config.cdnPurgeQueueUrl).map((m) => JSON.parse(m.body));
      assert.deepEqual(purgeRequests, [{ event_id: 'Sample' }]);
      assert.deepEqual(json(await d.privateApi(get('/expired_tokens', { event_id: 'Sample' }))), [] as unknown as Record<string, unknown>);
    } finally {
      await d.close();
    }
  });

  it('the expiry schedule expires unclaimed positions and, when asked, gives their places to the next visitors', async () => {
    const d = deployment({ INCR_SVC_ON_QUEUE_POSITION_EXPIRY: 'true', QUEUE_POSITION_EXPIRY_PERIOD: '60' });
    try {
      // Four in line: the expiry job never moves the counter past the last position handed out.
      for (let i = 0; i < 4; i++) await d.publicApi(post('/assign_queue_num', { event_id: 'Sample' }));
      await d.intake(d.queue.deliver());
      await d.privateApi(post('/increment_serving_counter', { event_id: 'Sample', increment_by: 2 }));
      d.clock.advance(61);
      await d.jobs.expiry(scheduledEvent('expiry'));
      d.clock.advance(1);
      await d.jobs.expiry(scheduledEvent('expiry'));
      assert.deepEqual(json(await d.publicApi(get('/serving_num', { event_id: 'Sample' }))), { serving_counter: 4 });
      const incr = d.events().filter((e) => e.DetailType === 'automatic_serving_counter_incr');
      assert.equal(incr.length, 1);
      assert.deepEqual(JSON.parse(incr[0]!.Detail), {
        event_id: 'Sample', previous_serving_counter_position: 2, increment_by: 2, current_serving_counter_position: 4,
      });
    } finally {
      await d.close();
    }
  });

  it('after-event report on Lambda: the history job samples the room, the public function adds the waits it let in, the private API reports them', async () => {
    const d = deployment({}, new TestClock(Date.UTC(2026, 10, 24, 12, 0, 0)));
    try {
      const start = Math.floor(d.clock.now() / 1000);
      const [first] = await d.join(2);
      d.clock.advance(20);
      assert.equal((await d.privateApi(post('/increment_serving_counter', { event_id: 'Sample', increment_by: 1 }))).statusCode, 200);
      // The public function's invocation adds the wait to the store before it returns (no timer on Lambda).
      assert.equal((await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: first! }))).statusCode, 200);
      await d.jobs.history(scheduledEvent('history'));
      const report = await d.privateApi(get('/rooms/Sample/report', { from: String(start), to: String(start + 60) }));
      assert.equal(report.statusCode, 200, report.body);
      const minutes = json(report).minutes as Record<string, number>[];
      assert.deepEqual(minutes.map((m) => [m.minute! - start, m.arrivals, m.admissions, m.claims, m.waiting, m.waits_measured]), [[0, 2, 1, 1, 1, 1]]);
      assert.ok(minutes[0]!.wait_p50_s! > 15 && minutes[0]!.wait_p50_s! <= 20, `${minutes[0]!.wait_p50_s}`);
    } finally {
      await d.close();
    }
  });

  it('rooms at runtime: each function serves its stack\'s room and follows the rooms API, looking at most once a second', async () => {
    const d = deployment();
    try {
      // The private API function's cold start wrote the stack's room (EVENT_ID) to the store.
      const listed = await d.privateApi(get('/rooms', {}));
      assert.equal(listed.statusCode, 200, listed.body);
      assert.deepEqual((json(listed).rooms as { event_id: string }[]).map((room) => room.event_id), ['Sample']);
      const joinDrop = () => d.publicApi(post('/assign_queue_num', { event_id: 'Drop' }));
      assert.equal((await joinDrop()).statusCode, 400, 'the public function is warm and knows no room "Drop"');

      const created = await d.privateApi(apiGatewayEvent({ method: 'PUT', path: '/rooms/Drop', body: { validity_period: 60 } }));
      assert.equal(created.statusCode, 201, created.body);
      assert.equal((await joinDrop()).statusCode, 400, 'less than a second since its last look: not yet');
      d.clock.advance(1);
      const joined = await joinDrop();
      assert.equal(joined.statusCode, 200, 'a second later it looks, and serves the new room');
      // The intake consumer (its own execution environment) numbers the join of the new room.
      assert.deepEqual(await d.intake(d.queue.deliver()), { batchItemFailures: [] });
      const position = await d.publicApi(get('/queue_num', { event_id: 'Drop', request_id: json(joined).api_request_id as string }));
      assert.equal(json(position).queue_number, 1);

      const deleted = await d.privateApi(apiGatewayEvent({ method: 'DELETE', path: '/rooms/Drop' }));
      assert.equal(deleted.statusCode, 200, deleted.body);
      d.clock.advance(1);
      assert.equal((await joinDrop()).statusCode, 400, 'deleted: no longer served');
      assert.equal((await d.publicApi(post('/assign_queue_num', { event_id: 'Sample' }))).statusCode, 200, 'the stack\'s room still is');
    } finally {
      await d.close();
    }
  });

  it('a refused room setting on Lambda: the 400 lists every problem, each naming its field, as the HTTP server\'s does; nothing stored', async () => {
    const d = deployment();
    try {
      for (const [method, path, body] of [
        ['PUT', '/rooms/Bad', { validity_period: 0, queue_position_expiry_period: 'soon', validity_periodd: 5 }],
        // The schema accepts each field; the rule across them does not hold: that one listed.
        ['PATCH', '/rooms/Sample', { event_start_time: '2026-12-01T10:00:00Z', event_end_time: '2026-12-01T09:00:00Z' }],
      ] as const) {
        const refused = await d.privateApi(apiGatewayEvent({ method, path, body }));
        assert.equal(refused.statusCode, 400, refused.body);
        assert.match(String(refused.headers?.['content-type'] ?? ''), /^application\/json/);
        const answer = json(refused) as { error: string; problems: { field: string; rule: string }[] };
        assert.match(answer.error, /^Invalid room settings: /);
        assert.ok(Array.isArray(answer.problems), refused.body);
        for (const problem of answer.problems) assert.deepEqual(Object.keys(problem).sort(), ['field', 'rule']);
        if (method === 'PUT') {
          assert.deepEqual(answer.problems.map((p) => p.field).sort(), ['queue_position_expiry_period', 'validity_period', 'validity_periodd']);
          assert.deepEqual(answer.problems.find((p) => p.field === 'validity_periodd'), { field: 'validity_periodd', rule: 'unknown setting' });
        } else {
          assert.deepEqual(answer.problems, [{ field: 'event_end_time', rule: 'must be after event_start_time' }]);
        }
      }
      assert.equal((await d.privateApi(apiGatewayEvent({ method: 'GET', path: '/rooms/Bad' }))).statusCode, 404, 'nothing created');
      const sample = json(await d.privateApi(apiGatewayEvent({ method: 'GET', path: '/rooms/Sample' })));
      assert.equal(sample.event_end_time, undefined, 'nothing changed');
    } finally {
      await d.close();
    }
  });

  it('rooms on Lambda: a room made through the rooms API, its pre-queue, the draw job at the start, GET /draw in pages, leave_queue', async () => {
    const d = deployment();
    try {
      const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
      // The jobs function is warm before the room exists: it must still learn of it.
      await d.jobs.draw(scheduledEvent('draw'));
      const start = d.clock.now() + 3_600_000;
      const created = await d.privateApi(apiGatewayEvent({
        method: 'PUT',
        path: '/rooms/Draw',
        body: { prequeue_start_time: iso(d.clock.now() - 60_000), event_start_time: iso(start), shuffle_at_event_start: true },
      }));
      assert.equal(created.statusCode, 201, created.body);
      d.clock.advance(1);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const joined = await d.publicApi(post('/assign_queue_num', { event_id: 'Draw' }));
        assert.equal(joined.statusCode, 200, joined.body);
        ids.push(json(joined).api_request_id as string);
      }
      assert.deepEqual(await d.intake(d.queue.deliver()), { batchItemFailures: [] });
      assert.equal((await d.publicApi(get('/queue_num', { event_id: 'Draw', request_id: ids[0]! }))).statusCode, 202, 'waiting for the draw');
      const before = json(await d.publicApi(get('/draw', { event_id: 'Draw' })));
      assert.deepEqual(Object.keys(before).sort(), ['algorithm', 'commitment', 'committed_at']);

      // The start: the scheduled draw job draws the four.
      d.clock.advance(3600);
      await d.jobs.draw(scheduledEvent('draw'));
      const whole = json(await d.publicApi(get('/draw', { event_id: 'Draw' })));
      const page = await d.publicApi(get('/draw', { event_id: 'Draw', page: '1' }));
      assert.equal(page.statusCode, 200, page.body);
      assert.deepEqual(json(page), { ...whole, total_entries: 4, page: 1, pages: 1 });
      assert.equal((await d.publicApi(get('/draw', { event_id: 'Draw', page: '2' }))).statusCode, 404);
      const positions = await Promise.all(ids.map((id) => d.publicApi(get('/queue_num', { event_id: 'Draw', request_id: id }))));
      assert.deepEqual(positions.map((p) => json(p).queue_number).sort(), [1, 2, 3, 4]);
      // A visitor gives up their drawn place; a second time is refused.
      const left = await d.publicApi(post('/leave_queue', { event_id: 'Draw', request_id: ids[3]! }));
      assert.equal(left.statusCode, 200, left.body);
      const again = await d.publicApi(post('/leave_queue', { event_id: 'Draw', request_id: ids[3]! }));
      assert.ok(again.statusCode >= 400 && again.statusCode < 500, again.body);
    } finally {
      await d.close();
    }
  });

  it('every function of a stack signs with the one key kept in Secrets Manager', async () => {
    const d = deployment();
    try {
      const a = await d.publicApi(get('/public_key', { event_id: 'Sample' }));
      // Another function of the stack (its own execution environment) cold-starts and finds the key.
      const other = await createRuntime(d.config, {
        store: new CompositeStore({
          redis: new RedisStore({ url: redis.url, keyPrefix: d.config.redis.keyPrefix }),
          tokens: new TokenTable({ client: dynamo.client, tableName: d.config.tokenTableName! }),
          keys: new SecretsManagerKeyStore({
            client: new SecretsManagerClient({ ...TEST_AWS, endpoint: secretsManager.endpoint }),
            prefix: d.config.signingKeysSecretPrefix!,
          }),
        }),
        log: () => {},
      });
      const b = await proxyHandler(async () => other, publicHttpApp)(get('/public_key', { event_id: 'Sample' }));
      await other.close();
      assert.equal(a.body, b.body);
      const stored = JSON.parse(secrets.get(`${d.config.signingKeysSecretPrefix}Sample`)!) as { kid: string }[];
      assert.equal(stored.length, 1);
      assert.equal(stored[0]!.kid, json(a).kid);
      assert.ok(!('d' in json(a)), 'never a private member');
    } finally {
      await d.close();
    }
  });

  it('answers 503 with Retry-After when the store cannot be reached at cold start', async () => {
    const quiet = console.error;
    console.error = () => {};
    try {
      const handler = proxyHandler(() => Promise.reject(new Error('ECONNREFUSED')), publicHttpApp);
      const reply = await handler(get('/serving_num', { event_id: 'Sample' }));
      assert.equal(reply.statusCode, 503);
      assert.equal(reply.headers?.['retry-after'], '1');
      assert.equal(reply.headers?.['access-control-allow-origin'], '*');
    } finally {
      console.error = quiet;
    }
  });

  it('the authorizer function admits the access token of its event, fetched key and all', async () => {
    // The authorizer checks exp and nbf against the real time.
    const d = deployment({}, new TestClock(Math.floor(Date.now() / 1000) * 1000));
    const gateway = await serveAsApiGateway(d.publicApi);
    try {
      const id = json(await d.publicApi(post('/assign_queue_num', { event_id: 'Sample' }))).api_request_id as string;
      await d.intake(d.queue.deliver());
      await d.privateApi(post('/increment_serving_counter', { event_id: 'Sample', increment_by: 1 }));
      const tokens = json(await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: id })));
      Object.assign(process.env, { PUBLIC_API_ENDPOINT: gateway.url, WAITING_ROOM_EVENT_ID: 'Sample', ISSUER });
      const methodArn = 'arn:aws:execute-api:us-east-1:123456789012:sample123/api/GET/store/search';
      const allowed = await authorizerHandler({ type: 'TOKEN', authorizationToken: tokens.access_token as string, methodArn });
      assert.equal(allowed.principalId, id);
      assert.equal(allowed.policyDocument.Statement[0]?.Effect, 'Allow');
      assert.equal(allowed.policyDocument.Statement[0]?.Resource, 'arn:aws:execute-api:us-east-1:123456789012:sample123/*/*/*');
      const denied = await authorizerHandler({ type: 'TOKEN', authorizationToken: tokens.refresh_token as string, methodArn });
      assert.equal(denied.policyDocument.Statement[0]?.Effect, 'Deny');
    } finally {
      await gateway.close();
      await d.close();
    }
  });

  describe('inlet strategy functions (through the private API, SigV4-signed with the role credentials)', () => {
    const inletEnvironment = (url: string) =>
      privateApiFromEnv({
        CORE_API_ENDPOINT: url,
        CORE_API_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'ASIAEXAMPLEROLEKEY',
        AWS_SECRET_ACCESS_KEY: 'role-secret',
        AWS_SESSION_TOKEN: 'role-session-token',
      });

    it('MaxSize: an SNS report closes the sessions it names and admits as many as there is room for', async () => {
      const d = deployment();
      const gateway = await serveAsApiGateway(d.privateApi);
      try {
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) ids.push(json(await d.publicApi(post('/assign_queue_num', { event_id: 'Sample' }))).api_request_id as string);
        await d.intake(d.queue.deliver());
        await d.privateApi(post('/increment_serving_counter', { event_id: 'Sample', increment_by: 2 }));
        // Positions 1 and 2 are served (SQS does not keep order, so which IDs hold them is not known).
        const holders = [] as string[];
        for (const id of ids) {
          const ctx = await d.publicApi(post('/generate_token', { event_id: 'Sample', request_id: id }));
          if (ctx.statusCode === 200) holders.push(id);
        }
        assert.equal(holders.length, 2);
        const logs: string[] = [];
        const inlet = createMaxSizeInletHandler({ api: inletEnvironment(gateway.url), eventId: 'Sample', maxSize: 2, log: (m) => logs.push(m) });
        await inlet(snsEvent(JSON.stringify({ exited: 0, completed: [holders[0]], abandoned: [] })));
        assert.deepEqual(json(await d.publicApi(get('/serving_num', { event_id: 'Sample' }))), { serving_counter: 3 });
        await inlet(snsEvent('not a report'));
        assert.match(logs.at(-1)!, /ignored: message is not JSON/);
        assert.deepEqual(json(await d.publicApi(get('/serving_num', { event_id: 'Sample' }))), { serving_counter: 3 });
      } finally {
        await gateway.close();
        await d.close();
      }
    });

    it('Periodic: each scheduled tick adds IncrementBy, except while the CloudWatch alarm is in ALARM', async () => {
      const d = deployment();
      const gateway = await serveAsApiGateway(d.privateApi);
      try {
        let alarmState: string | undefined = 'OK';
        const tick = createPeriodicInletHandler({
          api: inletEnvironment(gateway.url),
          inlet: {
            eventId: 'Sample',
            incrementBy: 10,
            startTime: 1,
            endTime: 0,
            pauseCheck: cloudWatchAlarmPauseCheck('site-5xx', { describeAlarmState: async () => alarmState }),
          },
          clock: d.clock.now,
          log: () => {},
        });
        assert.deepEqual(await tick(scheduledEvent('periodic-inlet')), { kind: 'moved', by: 10, servingNum: 10 });
        alarmState = 'ALARM';
        assert.equal((await tick(scheduledEvent('periodic-inlet'))).kind, 'paused');
        alarmState = undefined; // the alarm was deleted: fail safe
        assert.equal((await tick(scheduledEvent('periodic-inlet'))).kind, 'paused');
        assert.deepEqual(json(await d.publicApi(get('/serving_num', { event_id: 'Sample' }))), { serving_counter: 10 });
      } finally {
        await gateway.close();
        await d.close();
      }
    });
  });
});
