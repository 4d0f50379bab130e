// Emitted events (spec/core-api.md "Events"): the EventBridge envelope and the detail of each detail-type,
// emitted once per state change and only after it is durable; delivered on the authenticated SSE stream and
// to signed webhooks that retry and never slow the API down.

import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Envelope } from '../../src/events/envelope.ts';
import { WebhookSink } from '../../src/events/webhook-sink.ts';
import { eventSettings, startTestNode, TEST_CREDENTIALS, type TestNode } from '../support/node.ts';
import { type Body, collectEvents, join, servedVisitor } from '../support/api-calls.ts';
import { startReceiver } from '../support/webhook-receiver.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

async function claim(node: TestNode, requestId: string, eventId = 'Sample'): Promise<number> {
  const res = await node.post('/generate_token', { event_id: eventId, request_id: requestId });
  await res.body?.cancel();
  return res.status;
}

function assertEnvelope(event: Envelope, type: string, node: TestNode): void {
  assert.deepEqual(Object.keys(event).sort(), ['detail', 'detail-type', 'id', 'source', 'time', 'version']);
  assert.equal(event.version, '0');
  assert.match(event.id, UUID);
  assert.equal(event.source, 'custom.waitingroom');
  assert.equal(event['detail-type'], type);
  assert.match(event.time, ISO_8601);
  assert.equal(event.time, new Date(node.clock.now()).toISOString());
}

describe('event envelopes and details', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({
      events: [
        eventSettings('Sample', { enable_events_generation: true, incr_serving_on_expiry: true }),
        eventSettings('Quiet', { enable_events_generation: false }),
      ],
    });
  });
  after(() => node.stop());

  it('token_generated: the EventBridge envelope with detail {event_id, request_id}', async () => {
    const id = await servedVisitor(node);
    const { events, stop } = collectEvents(node);
    assert.equal(await claim(node, id), 200);
    stop();
    assert.equal(events.length, 1);
    assertEnvelope(events[0]!, 'token_generated', node);
    assert.deepEqual(events[0]!.detail, { event_id: 'Sample', request_id: id });
  });

  it('token_generated is emitted exactly once per request ID, however many times it claims', async () => {
    const id = await servedVisitor(node);
    const { events, stop } = collectEvents(node);
    for (let i = 0; i < 4; i++) assert.equal(await claim(node, id), 200);
    const res = await node.admin('POST', '/generate_token', { event_id: 'Sample', request_id: id, validity_period: 60 });
    assert.equal(res.status, 200);
    stop();
    assert.equal(events.filter((e) => e['detail-type'] === 'token_generated').length, 1);
  });

  it('a refused claim (400, 404, 202, 410) emits nothing', async () => {
    const waiting = await join(node);
    const { events, stop } = collectEvents(node);
    await claim(node, 'not-a-uuid');
    await claim(node, randomUUID());
    assert.equal(await claim(node, waiting), 202);
    stop();
    assert.deepEqual(events, []);
  });

  it('an event describes state that is already durable: at delivery the token is already counted and stored', async () => {
    const id = await servedVisitor(node);
    const before = (await node.room.reports.counters('Sample')).tokens;
    let seen: Promise<[number, number]> | undefined;
    const stop = node.bus.subscribe({
      name: 'durability-probe',
      deliver: (e) => {
        if (e['detail-type'] !== 'token_generated') return;
        seen = Promise.all([
          node.room.reports.counters('Sample').then((c) => c.tokens),
          node.store.getClaimContext('Sample', id).then((ctx) => (ctx?.token ? 1 : 0)),
        ]);
      },
    });
    await claim(node, id);
    stop();
    assert.ok(seen, 'token_generated was delivered');
    assert.deepEqual(await seen, [before + 1, 1]);
  });

  it('session_updated carries status "completed" for 1 and "abandoned" for −1', async () => {
    const done = await servedVisitor(node);
    const left = await servedVisitor(node);
    await claim(node, done);
    await claim(node, left);
    const { events, stop } = collectEvents(node);
    for (const [id, status] of [[done, 1], [left, -1]] as const) {
      const res = await node.admin('POST', '/update_session', { event_id: 'Sample', request_id: id, status });
      assert.equal(res.status, 200);
    }
    // A second close changes nothing and emits nothing.
    assert.equal((await node.admin('POST', '/update_session', { event_id: 'Sample', request_id: done, status: 1 })).status, 404);
    stop();
    assert.equal(events.length, 2);
    for (const event of events) assertEnvelope(event, 'session_updated', node);
    assert.deepEqual(events.map((e) => e.detail), [
      { event_id: 'Sample', request_id: done, status: 'completed' },
      { event_id: 'Sample', request_id: left, status: 'abandoned' },
    ]);
  });

  it('automatic_serving_counter_incr carries the previous position, the increment and the current position', async () => {
    await node.admin('POST', '/reset_initial_state', { event_id: 'Sample' });
    // Four in line: the expiry job never moves the counter past the last position handed out.
    for (let i = 0; i < 4; i++) await join(node);
    await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 2 });
    node.clock.advance(901);
    const { events, stop } = collectEvents(node);
    await node.room.admission.advanceExpiry('Sample');
    stop();
    assert.equal(events.length, 1);
    assertEnvelope(events[0]!, 'automatic_serving_counter_incr', node);
    assert.deepEqual(events[0]!.detail, {
      event_id: 'Sample',
      previous_serving_counter_position: 2,
      increment_by: 2,
      current_serving_counter_position: 4,
    });
  });

  it('waiting_room_metrics carries every counter as a number when enable_events_generation is on', async () => {
    await node.admin('POST', '/reset_initial_state', { event_id: 'Sample' });
    const ids = [await join(node), await join(node), await join(node), await join(node), await join(node)];
    await node.admin('POST', '/increment_serving_counter', { event_id: 'Sample', increment_by: 4 });
    for (const id of ids.slice(0, 3)) await claim(node, id);
    await node.admin('POST', '/update_session', { event_id: 'Sample', request_id: ids[0], status: 1 });
    await node.admin('POST', '/update_session', { event_id: 'Sample', request_id: ids[1], status: -1 });
    const { events, stop } = collectEvents(node);
    await node.room.reports.emitMetrics('Sample');
    stop();
    assert.equal(events.length, 1);
    assertEnvelope(events[0]!, 'waiting_room_metrics', node);
    assert.deepEqual(events[0]!.detail, {
      event_id: 'Sample',
      num_active_tokens: 1,
      total_num_tokens: 3,
      queue_counter: 5,
      serving_number: 4,
      completed_sessions: 1,
      abandoned_sessions: 1,
      expired_queue_positions: 0,
      waiting_num: 2,
    });
  });

  it('waiting_room_metrics is not emitted when enable_events_generation is off', async () => {
    const { events, stop } = collectEvents(node);
    await node.room.reports.emitMetrics('Quiet');
    stop();
    assert.deepEqual(events, []);
  });

  it('events name their own event: a token of another event carries that event_id', async () => {
    const id = await servedVisitor(node, 'Quiet');
    const { events, stop } = collectEvents(node);
    await claim(node, id, 'Quiet');
    stop();
    assert.deepEqual(events.map((e) => e.detail), [{ event_id: 'Quiet', request_id: id }]);
  });
});

/** Reads an SSE response until a frame of `type` arrives, then stops reading. */
async function nextFrame(reader: ReadableStreamDefaultReader<Uint8Array>, type: string, buffer: { text: string }) {
  const decoder = new TextDecoder();
  for (;;) {
    const frames = buffer.text.split('\n\n');
    buffer.text = frames.pop() ?? '';
    for (let i = 0; i < frames.length; i++) {
      const lines = frames[i]!.split('\n');
      const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
      if (field('event') === type) {
        buffer.text = [...frames.slice(i + 1), buffer.text].join('\n\n');
        return { id: field('id'), data: JSON.parse(field('data') ?? 'null') as Envelope, raw: frames[i]! };
      }
    }
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before a ${type} frame`);
    buffer.text += decoder.decode(value, { stream: true });
  }
}

describe('GET /private/events (Server-Sent Events)', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ events: [eventSettings('Sample'), eventSettings('Other')] });
  });
  after(() => node.stop());

  it('without credentials answers 401 {"error": "Missing Authentication Token"}', async () => {
    const res = await fetch(`${node.privateUrl}/events?event_id=Sample`);
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { error: 'Missing Authentication Token' });
  });

  it('with a wrong bearer token answers 403', async () => {
    const res = await fetch(`${node.privateUrl}/events?event_id=Sample`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(res.status, 403);
    await res.body?.cancel();
  });

  it('an unknown event answers 400 "Invalid event ID"', async () => {
    const res = await node.admin('GET', '/events?event_id=Nope');
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), { error: 'Invalid event ID' });
  });

  it('streams "event: token_generated" frames of its own event, the envelope as data and its id as the frame id', async () => {
    const abort = new AbortController();
    const res = await fetch(`${node.privateUrl}/events?event_id=Sample`, {
      headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` },
      signal: abort.signal,
    });
    try {
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const reader = res.body!.getReader();
      const buffer = { text: '' };
      // The server is subscribed once its first bytes arrive.
      const decoder = new TextDecoder();
      while (!buffer.text.includes('\n\n')) buffer.text += decoder.decode((await reader.read()).value, { stream: true });

      const other = await servedVisitor(node, 'Other');
      assert.equal(await claim(node, other, 'Other'), 200);
      const mine = await servedVisitor(node, 'Sample');
      assert.equal(await claim(node, mine, 'Sample'), 200);

      const frame = await nextFrame(reader, 'token_generated', buffer);
      assert.deepEqual(frame.data.detail, { event_id: 'Sample', request_id: mine }, "another event's envelope is not streamed");
      assert.equal(frame.data.source, 'custom.waitingroom');
      assert.equal(frame.data.version, '0');
      assert.equal(frame.id, frame.data.id);
      await reader.cancel();
    } finally {
      abort.abort();
    }
  });
});

describe('shutting down with an open event stream', () => {
  it('stopping the node ends the stream instead of waiting for the subscriber forever', async () => {
    const node = await startTestNode();
    const abort = new AbortController();
    let stopped: Promise<void> | undefined;
    try {
      const res = await fetch(`${node.privateUrl}/events?event_id=Sample`, {
        headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` },
        signal: abort.signal,
      });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      await reader.read(); // subscribed
      // The subscriber never goes away by itself: a stop that waited for it would never resolve.
      stopped = node.stop();
      await stopped;
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
    } finally {
      abort.abort();
      await (stopped ?? node.stop());
    }
  });
});

const hmac = (body: string, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('webhooks', () => {
  const secret = 'webhook-secret-0123456789abcdef';
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let node: TestNode;
  before(async () => {
    receiver = await startReceiver();
    node = await startTestNode({
      events: [eventSettings('Sample', { webhooks: [{ url: receiver.url, secret }] }), eventSettings('Other')],
    });
  });
  after(async () => {
    await node.stop();
    await receiver.close();
  });

  it('POSTs the envelope as JSON with X-Anteroom-Signature: sha256=<HMAC-SHA256 of the exact body>', async () => {
    // An envelope of another event is not sent to this event's webhook: only Sample's arrives next.
    const earlier = receiver.received.length;
    assert.equal(await claim(node, await servedVisitor(node, 'Other'), 'Other'), 200);
    const id = await servedVisitor(node);
    assert.equal(await claim(node, id), 200);
    await receiver.until(earlier + 1);
    const request = receiver.received[earlier];
    assert.match(String(request!.headers['content-type']), /^application\/json/);
    assert.equal(request!.headers['x-anteroom-signature'], hmac(request!.body, secret));
    const envelope = JSON.parse(request!.body) as Envelope;
    assert.equal(envelope['detail-type'], 'token_generated');
    assert.deepEqual(envelope.detail, { event_id: 'Sample', request_id: id });
    assert.notEqual(request!.headers['x-anteroom-signature'], hmac(request!.body, 'another-secret-0123456789'));
  });

  it('a receiver answering 500 twice then 200 gets the event on the third attempt, same body and signature', async () => {
    const flaky = await startReceiver((n) => (n <= 2 ? 500 : 200));
    let delivered: (attempts: number | undefined) => void = () => {};
    const outcome = new Promise<number | undefined>((resolve) => (delivered = resolve));
    const sink = new WebhookSink({
      eventId: 'Sample',
      url: flaky.url,
      secret,
      retryBaseMs: 5,
      retryMaxMs: 20,
      onOutcome: (result, detail) => {
        if (result === 'delivered') delivered(detail.attempts);
      },
    });
    const unsubscribe = node.bus.subscribe(sink);
    try {
      const id = await servedVisitor(node);
      assert.equal(await claim(node, id), 200);
      assert.equal(await outcome, 3);
      assert.equal(flaky.received.length, 3);
      const bodies = new Set(flaky.received.map((r) => r.body));
      assert.equal(bodies.size, 1, 'the same envelope is retried');
      for (const r of flaky.received) assert.equal(r.headers['x-anteroom-signature'], hmac(r.body, secret));
      assert.deepEqual((JSON.parse(flaky.received[2]!.body) as Envelope).detail, { event_id: 'Sample', request_id: id });
    } finally {
      unsubscribe();
      await sink.close();
      await flaky.close();
    }
  });
});

describe('a dead webhook does not slow the API', () => {
  const secret = 'webhook-secret-0123456789abcdef';
  let hanging: Awaited<ReturnType<typeof startReceiver>>;
  let refusedUrl: string;
  let node: TestNode;
  let hangingSink: WebhookSink;
  let unsubscribe: () => void;
  before(async () => {
    hanging = await startReceiver(() => 'hang');
    // A port that was just free: connections to it are refused.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    refusedUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/hook`;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    node = await startTestNode({ events: [eventSettings('Sample', { webhooks: [{ url: refusedUrl, secret }] })] });
    // The dead receiver gets a sink of its own, whose delivery timeout no test run can reach: while it
    // holds a delivery open, that delivery is provably still in progress.
    hangingSink = new WebhookSink({ eventId: 'Sample', url: hanging.url, secret, timeoutMs: 3_600_000 });
    unsubscribe = node.bus.subscribe(hangingSink);
  });
  after(async () => {
    unsubscribe();
    await hangingSink.close();
    await node.stop();
    await hanging.close();
  });

  it('claims and joins are answered while the receiver never answers and another refuses connections', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await servedVisitor(node));
    assert.equal(await claim(node, ids[0]!), 200);
    await hanging.until(1); // the hanging receiver now holds a delivery open, and never ends it
    for (const id of ids.slice(1)) assert.equal(await claim(node, id), 200);
    const joined = await join(node);
    assert.match(joined, UUID);
    // Answered while the first delivery is still open (the sink has not given up on it): no call waited for
    // a delivery to end, since the dead receiver never ends one. Nothing here depends on how fast it went.
    assert.equal(hanging.open(), 1, 'the first delivery is still held open by the dead receiver');
    assert.equal(hanging.received.length, 1, 'the next deliveries wait behind it in the sink, not in the API');
    const body = (await (await node.get('/waiting_num?event_id=Sample')).json()) as Body;
    assert.deepEqual(body, { waiting_num: 1 });
  });
});
