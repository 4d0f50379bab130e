// Idempotency keys expire (issue 35): a key names one request ID per day-long window on the epoch, and in the first
// hour of a window a call also finds the place its key made in the window before — so a retry within an hour of the
// first call always finds that call's place (across midnight UTC too), and a key sent again a day later is a new
// join. The node's clock is a test clock, moved by hand.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { KEY_WINDOW_SEC } from '../../src/domain/idempotency-key.ts';
import { TestClock, startTestNode, type TestNode } from '../support/node.ts';

describe('the lifetime of an Idempotency-Key', () => {
  let node: TestNode;
  const clock = new TestClock();
  /** Sets the clock `seconds` into the key window `day` windows after 2026-11-22 (the test clock's day). */
  const at = (day: number, seconds: number) => {
    clock.ms = (20_414 + day) * KEY_WINDOW_SEC * 1000 + seconds * 1000;
  };
  const join = async (key: string) => {
    const reply = await node.post('/assign_queue_num', { event_id: 'Sample' }, { 'idempotency-key': key });
    assert.equal(reply.status, 200, await reply.clone().text());
    return ((await reply.json()) as { api_request_id: string }).api_request_id;
  };
  const position = async (id: string) => {
    const reply = await node.get(`/queue_num?event_id=Sample&request_id=${id}`);
    assert.equal(reply.status, 200);
    return ((await reply.json()) as { queue_number: number }).queue_number;
  };

  before(async () => {
    at(0, 12 * 3600);
    node = await startTestNode({}, { clock });
  });
  after(() => node?.stop());

  it('a retry within the hour finds the first call\'s place, even across midnight UTC', async () => {
    const key = randomUUID();
    at(0, KEY_WINDOW_SEC - 30); // 23:59:30
    const first = await join(key);
    at(1, 30); // 00:00:30, the next window
    assert.equal(await join(key), first, 'the retry across the window boundary finds the place');
    at(1, 3599); // 00:59:59
    assert.equal(await join(key), first);
  });

  it('a key sent again a day later is a new join, with a new place', async () => {
    const key = randomUUID();
    at(2, 10 * 3600);
    const first = await join(key);
    at(2, 20 * 3600);
    assert.equal(await join(key), first, 'the same window: the same join');
    at(3, 2 * 3600); // 16 h later, past the next window's first hour
    const later = await join(key);
    assert.notEqual(later, first, 'an expired key is a new request');
    assert.ok((await position(later)) > (await position(first)), 'with a new place behind the first');
  });
});
