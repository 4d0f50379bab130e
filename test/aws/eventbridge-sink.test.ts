// The EventBridge sink against a local endpoint speaking PutEvents, through the real SDK client.

import assert from 'node:assert/strict';
import { after, beforeEach, describe, it } from 'node:test';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { envelope } from '../../src/events/envelope.ts';
import { EventBridgeSink } from '../../src/events/eventbridge-sink.ts';
import { startJsonService, TEST_AWS } from './local-aws.ts';

interface Entry {
  Source: string;
  DetailType: string;
  Detail: string;
  EventBusName: string;
  Time: number;
}
const calls: Entry[][] = [];
/** Entries whose request_id is listed here fail this many more times. */
const failures = new Map<string, number>();
let outage = 0;

const service = await startJsonService({
  PutEvents(body) {
    if (outage > 0) {
      outage--;
      return { status: 500, body: { __type: 'InternalException', message: 'try again' } };
    }
    const entries = body.Entries as Entry[];
    calls.push(entries);
    let failed = 0;
    const results = entries.map((entry) => {
      const id = (JSON.parse(entry.Detail) as { request_id?: string }).request_id ?? '';
      const left = failures.get(id) ?? 0;
      if (left > 0) {
        failures.set(id, left - 1);
        failed++;
        return { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' };
      }
      return { EventId: `ev-${id}` };
    });
    return { body: { FailedEntryCount: failed, Entries: results } };
  },
});
after(() => service.close());

const client = () => new EventBridgeClient({ ...TEST_AWS, endpoint: service.endpoint, maxAttempts: 1 });
const tokenEvent = (i: number) => envelope('token_generated', { event_id: 'Sample', request_id: `r${i}` }, Date.UTC(2026, 0, 1, 0, 0, i));
const delivered = () => calls.flat().map((e) => (JSON.parse(e.Detail) as { request_id: string }).request_id);

describe('EventBridge sink', () => {
  // The endpoint's script starts empty for each test: no failures left over from another test, whatever the order.
  beforeEach(() => {
    calls.length = 0;
    failures.clear();
    outage = 0;
  });

  it('sends the envelope as Source, DetailType and Detail, in batches of at most 10', async () => {
    const sink = new EventBridgeSink({ client: client(), eventBusName: 'waiting-room-bus' });
    for (let i = 0; i < 23; i++) sink.deliver(tokenEvent(i));
    await sink.flush();
    assert.ok(calls.every((batch) => batch.length <= 10), calls.map((b) => b.length).join());
    assert.deepEqual(delivered(), Array.from({ length: 23 }, (_, i) => `r${i}`));
    const first = calls[0]![0]!;
    assert.equal(first.Source, 'custom.waitingroom');
    assert.equal(first.DetailType, 'token_generated');
    assert.equal(first.EventBusName, 'waiting-room-bus');
    assert.deepEqual(JSON.parse(first.Detail), { event_id: 'Sample', request_id: 'r0' });
    assert.equal(first.Time, Date.UTC(2026, 0, 1) / 1000);
  });

  it('retries only the entries EventBridge reports as failed, and whole calls that failed', async () => {
    failures.set('r1', 2);
    outage = 1;
    const outcomes: string[] = [];
    const sink = new EventBridgeSink({ client: client(), eventBusName: 'b', retryBaseMs: 1, onOutcome: (o, n) => outcomes.push(`${o}:${n}`) });
    for (let i = 0; i < 3; i++) sink.deliver(tokenEvent(i));
    await sink.flush();
    assert.deepEqual(delivered().filter((id) => id === 'r0' || id === 'r2'), ['r0', 'r2'], 'delivered once each');
    assert.equal(delivered().filter((id) => id === 'r1').length, 3, 'r1 sent until it succeeded');
    assert.ok(!outcomes.some((o) => o.startsWith('failed')));
  });

  it('gives up an entry after maxAttempts, and drops the oldest when its queue is full', async () => {
    failures.set('r9', 100);
    const outcomes: string[] = [];
    const sink = new EventBridgeSink({ client: client(), eventBusName: 'b', retryBaseMs: 1, maxAttempts: 2, maxQueue: 2, onOutcome: (o, n) => outcomes.push(`${o}:${n}`) });
    sink.deliver(tokenEvent(9));
    sink.deliver(tokenEvent(10));
    sink.deliver(tokenEvent(11));
    sink.deliver(tokenEvent(12)); // the queue holds 2 while the first call is in flight: r10 is dropped
    await sink.flush();
    assert.ok(outcomes.includes('failed:1'), outcomes.join());
    assert.ok(outcomes.includes('dropped:1'), outcomes.join());
    assert.ok(!delivered().includes('r10'));
    assert.ok(delivered().includes('r12'));
  });
});
