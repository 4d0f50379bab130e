// Concurrency rules of spec/core-api.md over real HTTP: positions are gap-free and unique under a join
// storm, concurrent first claims of one request ID yield one token set, and a reset that straddles a storm
// leaves no state from before it.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Agent, fetch as undiciFetch } from 'undici';
import type { Envelope } from '../../src/events/envelope.ts';
import { startTestNode, TEST_CREDENTIALS, type TestNode } from '../support/node.ts';
import { resetEvents } from '../support/api-calls.ts';

const agent = new Agent({ connections: 100, pipelining: 1 });
after(() => agent.close());

interface Answer {
  status: number;
  text: string;
}

async function call(url: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const res = await undiciFetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { 'content-type': 'application/json', ...init.headers },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    dispatcher: agent,
  });
  return { status: res.status, text: await res.text() };
}

const admin = { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` };

async function join(node: TestNode): Promise<string> {
  const res = await call(`${node.url}/assign_queue_num`, { body: { event_id: 'Sample' } });
  assert.equal(res.status, 200, res.text);
  return (JSON.parse(res.text) as { api_request_id: string }).api_request_id;
}

/** The position /queue_num reports, or null on its 202 (unknown request ID). */
async function positionOf(node: TestNode, requestId: string): Promise<number | null> {
  const res = await call(`${node.url}/queue_num?event_id=Sample&request_id=${requestId}`);
  if (res.status === 202) return null;
  assert.equal(res.status, 200, res.text);
  return (JSON.parse(res.text) as { queue_number: number }).queue_number;
}

async function increment(node: TestNode, by: number): Promise<void> {
  const res = await call(`${node.privateUrl}/increment_serving_counter`, { body: { event_id: 'Sample', increment_by: by }, headers: admin });
  assert.equal(res.status, 200, res.text);
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
const ascending = (a: number, b: number) => a - b;

describe('a join storm', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  it('1,000 parallel joins get positions exactly 1..1000: unique, gap-free, each readable at once', async () => {
    const N = 1000;
    const ids = await Promise.all(Array.from({ length: N }, () => join(node)));
    assert.equal(new Set(ids).size, N, 'every join is a new request ID');
    const positions = await Promise.all(ids.map((id) => positionOf(node, id)));
    assert.ok(positions.every((p) => p !== null), 'every acknowledged join has its position');
    assert.deepEqual((positions as number[]).sort(ascending), range(N));
    const counters = await node.room.reports.counters('Sample');
    assert.equal(counters.queue, N);
    const waiting = await call(`${node.url}/waiting_num?event_id=Sample`);
    assert.deepEqual(JSON.parse(waiting.text), { waiting_num: N });
  });
});

describe('concurrent first claims of one request ID', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  it('50 parallel first claims yield one token set: identical 200 bodies, tokens counter 1, one token_generated', async () => {
    const id = await join(node);
    await increment(node, 1);
    const events: Envelope[] = [];
    const unsubscribe = node.bus.subscribe({ name: 'claims', deliver: (e) => events.push(e) });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        // Mix the public and the private endpoint: both race for the same first issue.
        i % 5 === 0
          ? call(`${node.privateUrl}/generate_token`, { body: { event_id: 'Sample', request_id: id }, headers: admin })
          : call(`${node.url}/generate_token`, { body: { event_id: 'Sample', request_id: id } }),
      ),
    );
    unsubscribe();
    for (const answer of answers) assert.equal(answer.status, 200, answer.text);
    assert.equal(new Set(answers.map((a) => a.text)).size, 1, 'every caller gets the same tokens, byte for byte');
    assert.equal((await node.room.reports.counters('Sample')).tokens, 1);
    assert.deepEqual(
      events.map((e) => [e['detail-type'], e.detail]),
      [['token_generated', { event_id: 'Sample', request_id: id }]],
    );
  });

  it('parallel first claims of many request IDs count each token set once', async () => {
    const before = (await node.room.reports.counters('Sample')).tokens;
    const ids = await Promise.all(Array.from({ length: 40 }, () => join(node)));
    await increment(node, 40);
    const answers = await Promise.all(
      ids.flatMap((id) => [1, 2, 3].map(() => call(`${node.url}/generate_token`, { body: { event_id: 'Sample', request_id: id } }))),
    );
    for (const answer of answers) assert.equal(answer.status, 200, answer.text);
    assert.equal((await node.room.reports.counters('Sample')).tokens, before + 40);
  });
});

describe('a reset during a join storm', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  it('leaves no state from before the reset: remaining positions are exactly 1..queue, no old token survives', async () => {
    // State from before: 100 visitors, 60 served, 30 of them with tokens.
    const old = await Promise.all(Array.from({ length: 100 }, () => join(node)));
    await increment(node, 60);
    const servedOld: string[] = [];
    for (const id of old) if ((await positionOf(node, id))! <= 60) servedOld.push(id);
    await Promise.all(
      servedOld.slice(0, 30).map((id) => call(`${node.url}/generate_token`, { body: { event_id: 'Sample', request_id: id } })),
    );
    assert.equal((await node.room.reports.counters('Sample')).tokens, 30);

    // The storm: 50 clients joining back to back, and old visitors claiming their first token, while a reset
    // is fired once 300 joins were answered; each client goes on for 5 more joins after the reset answered.
    let answered = 0;
    let resetDone = false;
    let resetAnswer: Promise<Answer> | undefined;
    const stormIds: string[] = [];
    const answeredBeforeResetSent: string[] = [];
    const sentAfterResetAnswered: string[] = [];
    const client = async () => {
      for (let extra = 0; extra < 5; ) {
        const sentAfterReset = resetDone;
        const id = await join(node);
        stormIds.push(id);
        if (resetAnswer === undefined) answeredBeforeResetSent.push(id);
        if (sentAfterReset) {
          sentAfterResetAnswered.push(id);
          extra += 1;
        }
        answered += 1;
        if (answered === 300) {
          resetAnswer = call(`${node.privateUrl}/reset_initial_state`, { body: { event_id: 'Sample' }, headers: admin });
          void resetAnswer.then(() => (resetDone = true));
        }
      }
    };
    const claimer = async () => {
      const statuses: number[] = [];
      for (const id of servedOld.slice(30)) {
        statuses.push((await call(`${node.url}/generate_token`, { body: { event_id: 'Sample', request_id: id } })).status);
      }
      return statuses;
    };
    const [claims] = await Promise.all([claimer(), ...Array.from({ length: 50 }, client)]);
    const reset = await resetAnswer!;
    assert.equal(reset.status, 200, reset.text);
    for (const status of claims) assert.ok([200, 404].includes(status), `a straddling claim answered ${status}`);

    const counters = await node.room.reports.counters('Sample');
    const known = new Map<string, number>();
    for (const id of [...old, ...stormIds]) {
      const position = await positionOf(node, id);
      if (position !== null) known.set(id, position);
    }
    assert.deepEqual([...known.values()].sort(ascending), range(counters.queue), 'known positions are exactly 1..queue, unique');
    for (const id of [...old, ...answeredBeforeResetSent]) {
      assert.ok(!known.has(id), 'a position acknowledged before the reset was sent is gone');
    }
    assert.ok(answeredBeforeResetSent.length >= 300);
    assert.ok(sentAfterResetAnswered.length >= 250);
    for (const id of sentAfterResetAnswered) assert.ok(known.has(id), 'a join sent after the reset answered keeps its position');
    assert.equal(counters.tokens, 0, 'no token was issued after the reset');
    assert.equal(counters.serving, 0);

    // No token record survives for an old request ID: none is ever listed, however late.
    node.clock.advance(3600 * 24);
    const expired = await call(`${node.privateUrl}/expired_tokens?event_id=Sample`, { headers: admin });
    assert.equal(expired.text, '[]');
    await increment(node, 10_000);
    for (const id of servedOld) {
      const res = await call(`${node.url}/generate_token`, { body: { event_id: 'Sample', request_id: id } });
      assert.equal(res.status, 404, `old request ID ${id}`);
    }
    assert.equal((await node.room.reports.counters('Sample')).tokens, 0);
  });

  it('a request ID from before a reset is never answered with a position of after it', async () => {
    const before = await join(node);
    await call(`${node.privateUrl}/reset_initial_state`, { body: { event_id: 'Sample' }, headers: admin });
    await Promise.all(Array.from({ length: 20 }, () => join(node)));
    assert.equal(await positionOf(node, before), null);
    assert.equal(await positionOf(node, randomUUID()), null);
  });
});
