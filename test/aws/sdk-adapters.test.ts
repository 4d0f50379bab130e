// The adapters that reach AWS through SDK clients the Lambda runtime provides: the SQS intake queue the public
// API sends joins to, the CloudWatch alarm the Periodic inlet pauses on, and the CDN purge after a reset (SQS
// then CloudFront). Each runs with the real SDK client (request signing, the JSON and REST-XML protocols,
// SQS's MD5 check of the bodies) against a local endpoint.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createCdnPurgeHandler, sqsPurgeHook } from '../../src/aws/cloudfront-purge.ts';
import { cloudWatchAlarmPauseCheck, runtimeCloudWatch } from '../../src/aws/inlet.ts';
import { decodeIntakeMessage, encodeIntakeMessage, sqsIntakeQueue, type IntakeMessage } from '../../src/aws/intake-queue.ts';
import { sqsEvent } from './events.ts';
import { fakeCloudWatch, fakeSqs, fakeSqsSendMessage, startCloudFront, startJsonService, TEST_AWS, type SqsMessage } from './local-aws.ts';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/anteroom-intake';

function joins(n: number): IntakeMessage[] {
  return Array.from({ length: n }, (_, i) => ({ event_id: 'Sample', request_id: randomUUID(), entry_time: 1_790_000_000 + i }));
}

describe('SQS intake queue (sqsIntakeQueue over @aws-sdk/client-sqs)', () => {
  const accepted: SqsMessage[] = [];
  /** Entries to refuse, by message body: how many more times each is refused. */
  const refusals = new Map<string, number>();
  const batches: number[] = [];
  const handlers = fakeSqs(accepted, (_id, body) => {
    const left = refusals.get(body) ?? 0;
    if (left > 0) refusals.set(body, left - 1);
    return left > 0;
  });
  const service = startJsonService({
    SendMessageBatch(body) {
      batches.push((body.Entries as unknown[]).length);
      return handlers.SendMessageBatch!(body);
    },
  });
  after(async () => (await service).close());
  const queue = async () => sqsIntakeQueue(QUEUE_URL, new SQSClient({ ...TEST_AWS, endpoint: (await service).endpoint }));
  const reset = () => {
    accepted.length = 0;
    batches.length = 0;
    refusals.clear();
  };

  it('sends 23 joins in batches of at most 10 to the queue URL, each join one message that decodes to it', async () => {
    reset();
    const sent = joins(23);
    await (await queue()).send(sent);
    assert.deepEqual(batches, [10, 10, 3]);
    assert.equal(accepted.length, 23);
    assert.ok(accepted.every((m) => m.queueUrl === QUEUE_URL));
    assert.deepEqual(accepted.map((m) => decodeIntakeMessage(m.body)), sent);
  });

  it('an entry SQS refuses once is sent again, alone, and then accepted', async () => {
    reset();
    const sent = joins(4);
    refusals.set(encodeIntakeMessage(sent[2]!), 1);
    await (await queue()).send(sent);
    assert.deepEqual(batches, [4, 1]);
    assert.deepEqual(
      accepted.map((m) => decodeIntakeMessage(m.body)!.request_id).sort(),
      sent.map((m) => m.request_id).sort(),
    );
  });

  it('an entry refused twice fails the send (the visitor retries the join); the others are on the queue', async () => {
    reset();
    const sent = joins(3);
    refusals.set(encodeIntakeMessage(sent[0]!), 2);
    await assert.rejects((await queue()).send(sent), /SQS refused 1 join\(s\): try again/);
    assert.deepEqual(batches, [3, 1]);
    assert.deepEqual(accepted.map((m) => decodeIntakeMessage(m.body)!.request_id), [sent[1]!.request_id, sent[2]!.request_id]);
  });
});

describe('CloudWatch alarm pause check (runtimeCloudWatch over @aws-sdk/client-cloudwatch)', () => {
  const alarms = new Map<string, string>();
  const calls: Record<string, unknown>[] = [];
  const handlers = fakeCloudWatch(alarms);
  const service = startJsonService({
    DescribeAlarms(body) {
      calls.push(body);
      return handlers.DescribeAlarms!(body);
    },
  });
  const failing = startJsonService({
    DescribeAlarms: () => ({ status: 400, body: { __type: 'AccessDeniedException', message: 'not authorized to DescribeAlarms' } }),
  });
  after(async () => Promise.all([(await service).close(), (await failing).close()]));
  const check = async (name: string, endpoint?: string) =>
    cloudWatchAlarmPauseCheck(name, runtimeCloudWatch(new CloudWatchClient({ ...TEST_AWS, endpoint: endpoint ?? (await service).endpoint })))();

  it('asks for the named alarm and follows its state: ALARM pauses, OK and INSUFFICIENT_DATA do not', async () => {
    alarms.set('site-5xx', 'ALARM');
    alarms.set('site-latency', 'OK');
    alarms.set('site-new', 'INSUFFICIENT_DATA');
    assert.equal((await check('site-5xx')).state, 'ALARM');
    assert.deepEqual(calls.at(-1), { AlarmNames: ['site-5xx'] });
    assert.equal((await check('site-latency')).state, 'OK');
    const fresh = await check('site-new');
    assert.equal(fresh.state, 'OK');
    assert.match(fresh.reason, /INSUFFICIENT_DATA/);
  });

  it('fails safe: an alarm that does not exist, or that cannot be read, pauses', async () => {
    const missing = await check('no-such-alarm');
    assert.equal(missing.state, 'ALARM');
    assert.match(missing.reason, /not found/);
    const denied = await check('site-5xx', (await failing).endpoint);
    assert.equal(denied.state, 'ALARM');
    assert.match(denied.reason, /unreadable: not authorized to DescribeAlarms/);
  });
});

describe('CDN purge after a reset (src/aws/cloudfront-purge.ts, over @aws-sdk/client-sqs and @aws-sdk/client-cloudfront)', () => {
  const PURGE_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/anteroom-cdn-purge';
  const accepted: SqsMessage[] = [];
  const sqs = startJsonService(fakeSqsSendMessage(accepted));
  const cloudFront = startCloudFront();
  after(async () => Promise.all([(await sqs).close(), (await cloudFront).close()]));
  const purgeFunction = async (logs: string[] = []) =>
    createCdnPurgeHandler({
      distributionId: 'E2QWRUHEXAMPLE',
      client: new CloudFrontClient({ ...TEST_AWS, endpoint: (await cloudFront).endpoint }),
      log: (message) => logs.push(message),
    });
  const delivered = () => sqsEvent(accepted.splice(0).map((m) => ({ messageId: m.messageId, body: m.body })), 'anteroom-cdn-purge');

  it('the private API’s hook puts {event_id} on the purge queue; the purge function invalidates what a reset changes', async () => {
    const hook = sqsPurgeHook(PURGE_QUEUE, { client: new SQSClient({ ...TEST_AWS, endpoint: (await sqs).endpoint }) });
    await hook('Sample');
    assert.deepEqual(accepted.map((m) => [m.queueUrl, JSON.parse(m.body)]), [[PURGE_QUEUE, { event_id: 'Sample' }]]);
    const cf = await cloudFront;
    const before = cf.invalidations.length;
    assert.deepEqual(await (await purgeFunction())(delivered()), { batchItemFailures: [] });
    const made = cf.invalidations.slice(before);
    assert.equal(made.length, 1);
    assert.equal(made[0]!.distributionId, 'E2QWRUHEXAMPLE');
    // The keys survive a reset; the four state paths, with any query string, do not.
    assert.deepEqual(made[0]!.paths, ['/queue_num*', '/serving_num*', '/waiting_num*', '/queue_pos_expiry*']);
  });

  it('a batch of purge requests is one invalidation (CloudFront runs few wildcard invalidations at once); two batches are two', async () => {
    const hook = sqsPurgeHook(PURGE_QUEUE, { client: new SQSClient({ ...TEST_AWS, endpoint: (await sqs).endpoint }) });
    const cf = await cloudFront;
    const before = cf.invalidations.length;
    for (let i = 0; i < 5; i++) await hook('Sample');
    await hook('Other');
    assert.deepEqual(await (await purgeFunction())(delivered()), { batchItemFailures: [] });
    await hook('Sample');
    assert.deepEqual(await (await purgeFunction())(delivered()), { batchItemFailures: [] });
    const made = cf.invalidations.slice(before);
    assert.equal(made.length, 2);
    assert.notEqual(made[0]!.callerReference, made[1]!.callerReference, 'a repeated reference would be taken for the same invalidation');
  });

  it('a refused invalidation fails the whole batch (SQS delivers it again); a message that is no purge request is dropped', async () => {
    const cf = await cloudFront;
    const logs: string[] = [];
    accepted.push(
      { queueUrl: PURGE_QUEUE, messageId: 'first', body: JSON.stringify({ event_id: 'Sample' }) },
      { queueUrl: PURGE_QUEUE, messageId: 'junk', body: '{"event_id": "no spaces allowed"}' },
      { queueUrl: PURGE_QUEUE, messageId: 'second', body: JSON.stringify({ event_id: 'Sample' }) },
    );
    cf.refusals = 1;
    const before = cf.invalidations.length;
    assert.deepEqual(await (await purgeFunction(logs))(delivered()), { batchItemFailures: [{ itemIdentifier: 'first' }, { itemIdentifier: 'second' }] });
    assert.equal(cf.invalidations.length, before);
    assert.ok(logs.some((l) => /junk ignored/.test(l)), logs.join('\n'));
    // Delivered again, it goes through.
    accepted.push({ queueUrl: PURGE_QUEUE, messageId: 'first', body: JSON.stringify({ event_id: 'Sample' }) });
    assert.deepEqual(await (await purgeFunction())(delivered()), { batchItemFailures: [] });
    assert.equal(cf.invalidations.length, before + 1);
  });

  it('a purge that cannot be queued is logged and never fails the reset that asked for it', async () => {
    const logs: string[] = [];
    const hook = sqsPurgeHook(PURGE_QUEUE, { client: new SQSClient({ ...TEST_AWS, endpoint: 'http://127.0.0.1:1', maxAttempts: 1 }), log: (m) => logs.push(m) });
    await hook('Sample');
    assert.match(logs.join('\n'), /CDN purge after the reset of Sample could not be requested/);
  });
});
