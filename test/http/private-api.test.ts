// Contract tests of the private API (spec/core-api.md "Private API") and of the expiry job ("Queue position
// expiry"), against a real node over HTTP with the admin bearer token. Authentication itself is tested in
// auth.test.ts.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { importJWK, jwtVerify, type JWK } from 'jose';
import type { Envelope } from '../../src/events/envelope.ts';
import { eventSettings, startTestNode, TestClock, type TestNode } from '../support/node.ts';
import { type Body, read, type TokenBody, join, positionOf, resetEvents, serveUpTo, servedVisitor } from '../support/api-calls.ts';

function increment(node: TestNode, by: unknown, eventId: unknown = 'Sample') {
  return read<{ serving_num?: number; error?: string }>(
    node.admin('POST', '/increment_serving_counter', { event_id: eventId, increment_by: by }),
  );
}

function claim(node: TestNode, requestId: string, eventId = 'Sample') {
  return read<TokenBody>(node.post('/generate_token', { event_id: eventId, request_id: requestId }));
}

function adminClaim(node: TestNode, requestId: string, extra: Body = {}, eventId = 'Sample') {
  return read<TokenBody>(node.admin('POST', '/generate_token', { event_id: eventId, request_id: requestId, ...extra }));
}

function updateSession(node: TestNode, requestId: string, status: unknown, eventId: unknown = 'Sample') {
  return read(node.admin('POST', '/update_session', { event_id: eventId, request_id: requestId, status }));
}

async function activeTokens(node: TestNode, eventId = 'Sample'): Promise<number> {
  const res = await read<{ active_tokens: number }>(node.admin('GET', `/num_active_tokens?event_id=${eventId}`));
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body), ['active_tokens']);
  assert.equal(typeof res.body.active_tokens, 'number');
  return res.body.active_tokens;
}

async function expiredTokens(node: TestNode, eventId = 'Sample'): Promise<string[]> {
  const res = await read<string[]>(node.admin('GET', `/expired_tokens?event_id=${eventId}`));
  assert.equal(res.status, 200, res.text);
  assert.ok(Array.isArray(res.body), 'expired_tokens is a JSON array');
  return res.body;
}

async function claimsOf(node: TestNode, token: string, eventId = 'Sample') {
  const jwk = (await read<JWK>(node.get(`/public_key?event_id=${eventId}`))).body;
  const { payload } = await jwtVerify(token, await importJWK(jwk, 'RS256'), { currentDate: new Date(node.clock.now()) });
  return payload;
}

function collectEvents(node: TestNode): { events: Envelope[]; stop: () => void } {
  const events: Envelope[] = [];
  const stop = node.bus.subscribe({ name: `test-${randomUUID()}`, deliver: (e) => events.push(e) });
  return { events, stop };
}

const nowSeconds = (node: TestNode) => Math.floor(node.clock.now() / 1000);

describe('POST /private/generate_token', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  it('applies issuer and validity_period overrides to a newly issued token set', async () => {
    const id = await servedVisitor(node);
    const res = await adminClaim(node, id, { issuer: 'https://inlet.example', validity_period: 120 });
    assert.equal(res.status, 200);
    assert.equal(res.body.expires_in, 120);
    const claims = await claimsOf(node, res.body.access_token);
    assert.equal(claims.iss, 'https://inlet.example');
    assert.equal(claims.exp, nowSeconds(node) + 120);
  });

  it('overrides do not apply when the token set already exists: the same tokens come back', async () => {
    const id = await servedVisitor(node);
    const first = await adminClaim(node, id, { issuer: 'https://first.example', validity_period: 600 });
    node.clock.advance(10);
    const second = await adminClaim(node, id, { issuer: 'https://second.example', validity_period: 30 });
    assert.equal(second.status, 200);
    assert.equal(second.body.access_token, first.body.access_token);
    assert.equal(second.body.expires_in, 590);
    const viaPublic = await claim(node, id);
    assert.equal(viaPublic.body.id_token, first.body.id_token);
    assert.equal((await claimsOf(node, second.body.refresh_token)).iss, 'https://first.example');
  });

  it('overrides apply to that request only: the next visitor gets the event defaults', async () => {
    await adminClaim(node, await servedVisitor(node), { issuer: 'https://once.example', validity_period: 45 });
    const res = await adminClaim(node, await servedVisitor(node));
    assert.equal(res.body.expires_in, 3600);
    assert.equal((await claimsOf(node, res.body.access_token)).iss, node.url);
  });

  it('a public claim after a private issue with overrides gets the overridden tokens', async () => {
    const id = await servedVisitor(node);
    const priv = await adminClaim(node, id, { validity_period: 300 });
    const pub = await claim(node, id);
    assert.equal(pub.body.access_token, priv.body.access_token);
    assert.equal(pub.body.expires_in, 300);
  });

  it('follows the public decision order: 400, 404, 202, 410', async () => {
    const waiting = await join(node);
    const cases: [string, Body, number, string][] = [
      ['unknown event', { event_id: 'Nope', request_id: waiting }, 400, 'Invalid event or request ID'],
      ['malformed request ID', { event_id: 'Sample', request_id: `${waiting}z` }, 400, 'Invalid event or request ID'],
      ['no position', { event_id: 'Sample', request_id: randomUUID() }, 404, 'Invalid request ID'],
      ['not served yet', { event_id: 'Sample', request_id: waiting }, 202, 'Request ID not being served yet'],
    ];
    for (const [label, body, status, error] of cases) {
      const res = await read(node.admin('POST', '/generate_token', body));
      assert.equal(res.status, status, label);
      assert.deepEqual(res.body, { error }, label);
    }
    const closed = await servedVisitor(node);
    await adminClaim(node, closed);
    await updateSession(node, closed, 1);
    const res = await adminClaim(node, closed);
    assert.equal(res.status, 410);
    assert.deepEqual(res.body, { error: 'Token corresponding to request id has expired' });
  });

  it('an invalid validity_period or issuer answers 400 "Invalid request body" and issues nothing', async () => {
    const id = await servedVisitor(node);
    const before = await node.room.reports.counters('Sample');
    for (const extra of [{ validity_period: 0 }, { validity_period: 1.5 }, { validity_period: '60' }, { issuer: 5 }, { issuer: '' }]) {
      const res = await adminClaim(node, id, extra);
      assert.equal(res.status, 400, JSON.stringify(extra));
      assert.deepEqual(res.body, { error: 'Invalid request body' });
    }
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });
});

describe('POST /private/increment_serving_counter', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  // Every test starts from an empty event: no test sees the counter values or history another one left.
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  it('answers 200 {"serving_num": N} with the new value', async () => {
    const res = await increment(node, 5);
    assert.equal(res.status, 200);
    assert.equal(res.text, '{"serving_num":5}');
    assert.deepEqual((await increment(node, 3)).body, { serving_num: 8 });
  });

  it('accepts a negative increment and moves the counter backwards', async () => {
    await increment(node, 8);
    const res = await increment(node, -3);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { serving_num: 5 });
    assert.deepEqual((await read(node.get('/serving_num?event_id=Sample'))).body, { serving_counter: 5 });
  });

  it('a non-integer increment_by answers 400 "Invalid request body" and changes nothing', async () => {
    const before = await node.room.reports.counters('Sample');
    for (const by of [1.5, '5', null, true, [1], { n: 1 }]) {
      const res = await increment(node, by);
      assert.equal(res.status, 400, JSON.stringify(by));
      assert.deepEqual(res.body, { error: 'Invalid request body' });
    }
    const missing = await read(node.admin('POST', '/increment_serving_counter', { event_id: 'Sample' }));
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { error: 'Invalid request body' });
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });

  it('an unknown event answers 400 "Invalid event ID"', async () => {
    const res = await increment(node, 1, 'Nope');
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'Invalid event ID' });
  });

  it('records when each new value was reached: a position becomes eligible for expiry when first reached', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await join(node));
    const id = ids[9]!;
    const position = await positionOf(node, id);
    assert.equal(position, 10, 'beyond any value the counter reached before');
    await serveUpTo(node, position - 1);
    node.clock.advance(400);
    await serveUpTo(node, position);
    node.clock.advance(100);
    assert.deepEqual((await read(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${id}`))).body, {
      expires_in: 800,
    });
  });

  it('moving the counter back and forward again does not restart the clock of a position already reached', async () => {
    const id = await join(node);
    const position = await positionOf(node, id);
    await serveUpTo(node, position);
    node.clock.advance(100);
    await increment(node, -1);
    node.clock.advance(100);
    await increment(node, 1);
    assert.deepEqual((await read(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${id}`))).body, {
      expires_in: 700,
    });
  });
});

describe('GET /private/num_active_tokens', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  it('counts tokens with exp ≥ now whose session is still open', async () => {
    assert.equal(await activeTokens(node), 0);
    const open = await servedVisitor(node);
    await claim(node, open);
    const completed = await servedVisitor(node);
    await claim(node, completed);
    const abandoned = await servedVisitor(node);
    await claim(node, abandoned);
    const short = await servedVisitor(node);
    await adminClaim(node, short, { validity_period: 10 });
    assert.equal(await activeTokens(node), 4);
    await updateSession(node, completed, 1);
    await updateSession(node, abandoned, -1);
    assert.equal(await activeTokens(node), 2);
    node.clock.advance(10);
    assert.equal(await activeTokens(node), 2, 'exp = now is still active');
    node.clock.advance(1);
    assert.equal(await activeTokens(node), 1, 'exp < now is no longer active');
  });

  it('a visitor who joined or is served without a token is not counted', async () => {
    const before = await activeTokens(node);
    await servedVisitor(node);
    await join(node);
    assert.equal(await activeTokens(node), before);
  });

  it('an unknown event answers 404 "Invalid event ID"', async () => {
    const res = await read(node.admin('GET', '/num_active_tokens?event_id=Nope'));
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'Invalid event ID' });
  });
});

describe('GET /private/expired_tokens', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  it('is an empty JSON array while no token expired', async () => {
    const res = await read(node.admin('GET', '/expired_tokens?event_id=Sample'));
    assert.equal(res.status, 200);
    assert.equal(res.text, '[]');
  });

  it('lists the request IDs whose token exp < now, oldest first, whatever their session status', async () => {
    const first = await servedVisitor(node);
    await claim(node, first);
    node.clock.advance(10);
    const second = await servedVisitor(node);
    await claim(node, second);
    node.clock.advance(10);
    const third = await servedVisitor(node);
    await claim(node, third);
    await updateSession(node, first, 1);
    await updateSession(node, second, -1);
    node.clock.advance(3600 - 20);
    assert.deepEqual(await expiredTokens(node), [], 'exp = now has not expired yet');
    node.clock.advance(1);
    assert.deepEqual(await expiredTokens(node), [first]);
    node.clock.advance(20);
    assert.deepEqual(await expiredTokens(node), [first, second, third]);
  });

  it('a visitor without a token is never listed', async () => {
    const id = await servedVisitor(node);
    node.clock.advance(10_000);
    assert.ok(!(await expiredTokens(node)).includes(id));
  });

  it('an unknown event answers 400 "Invalid event ID"', async () => {
    const res = await read(node.admin('GET', '/expired_tokens?event_id=Nope'));
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'Invalid event ID' });
  });
});

describe('POST /private/update_session', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ events: [eventSettings('Sample', { enable_events_generation: true })] });
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  async function claimed(): Promise<string> {
    const id = await servedVisitor(node);
    assert.equal((await claim(node, id)).status, 200);
    return id;
  }

  it('status 1 closes the session as completed: 200 {}, completed += 1, one session_updated event', async () => {
    const id = await claimed();
    const before = await node.room.reports.counters('Sample');
    const { events, stop } = collectEvents(node);
    const res = await updateSession(node, id, 1);
    stop();
    assert.equal(res.status, 200);
    assert.equal(res.text, '{}');
    const after = await node.room.reports.counters('Sample');
    assert.equal(after.completed, before.completed + 1);
    assert.equal(after.abandoned, before.abandoned);
    assert.deepEqual(
      events.map((e) => [e['detail-type'], e.detail]),
      [['session_updated', { event_id: 'Sample', request_id: id, status: 'completed' }]],
    );
  });

  it('status −1 closes the session as abandoned: abandoned += 1', async () => {
    const id = await claimed();
    const before = await node.room.reports.counters('Sample');
    const { events, stop } = collectEvents(node);
    assert.equal((await updateSession(node, id, -1)).status, 200);
    stop();
    const after = await node.room.reports.counters('Sample');
    assert.equal(after.abandoned, before.abandoned + 1);
    assert.equal(after.completed, before.completed);
    assert.deepEqual(events[0]?.detail, { event_id: 'Sample', request_id: id, status: 'abandoned' });
  });

  it('the completed and abandoned counts show in the waiting_room_metrics event', async () => {
    await updateSession(node, await claimed(), 1);
    await updateSession(node, await claimed(), -1);
    const { completed, abandoned } = await node.room.reports.counters('Sample');
    const { events, stop } = collectEvents(node);
    await node.room.reports.emitMetrics('Sample');
    stop();
    assert.equal(events.length, 1);
    const detail = events[0]!.detail as { completed_sessions: number; abandoned_sessions: number };
    assert.ok(completed >= 1 && abandoned >= 1);
    assert.equal(detail.completed_sessions, completed);
    assert.equal(detail.abandoned_sessions, abandoned);
  });

  it('a closed session no longer counts as an active token', async () => {
    const id = await claimed();
    const before = await activeTokens(node);
    await updateSession(node, id, 1);
    assert.equal(await activeTokens(node), before - 1);
  });

  it('a second update_session answers 404 and changes nothing', async () => {
    const id = await claimed();
    assert.equal((await updateSession(node, id, 1)).status, 200);
    const before = await node.room.reports.counters('Sample');
    const { events, stop } = collectEvents(node);
    for (const status of [1, -1]) {
      const res = await updateSession(node, id, status);
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { error: "Request ID doesn't exist or status already set." });
    }
    stop();
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
    assert.deepEqual(events, []);
  });

  it('a request ID without a token set answers 404 "Request ID doesn\'t exist or status already set."', async () => {
    for (const id of [randomUUID(), await servedVisitor(node)]) {
      const res = await updateSession(node, id, 1);
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { error: "Request ID doesn't exist or status already set." });
    }
  });

  it('any other status answers 400 "Invalid event or request ID" and leaves the session open', async () => {
    const id = await claimed();
    const before = await node.room.reports.counters('Sample');
    for (const status of [0, 2, -2, 100]) {
      const res = await updateSession(node, id, status);
      assert.equal(res.status, 400, `status ${status}`);
      assert.deepEqual(res.body, { error: 'Invalid event or request ID' });
    }
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
    assert.equal((await claim(node, id)).status, 200, 'the session is still open');
  });

  it('a status that is not an integer answers 400 "Invalid request body"', async () => {
    const id = await claimed();
    for (const status of ['1', 1.5, null]) {
      const res = await updateSession(node, id, status);
      assert.equal(res.status, 400, JSON.stringify(status));
      assert.deepEqual(res.body, { error: 'Invalid request body' });
    }
  });

  it('an unknown event or a malformed request ID answers 400 "Invalid event or request ID"', async () => {
    const id = await claimed();
    for (const res of [await updateSession(node, id, 1, 'Nope'), await updateSession(node, `${id}0`, 1)]) {
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { error: 'Invalid event or request ID' });
    }
    assert.equal((await updateSession(node, id, 1)).status, 200, 'the refused calls left the session open');
  });
});

describe('POST /private/reset_initial_state', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ events: [eventSettings('Sample'), eventSettings('Other')] });
  });
  after(() => node.stop());

  it('answers 200 with the message VWR clients know, zeroes every counter and deletes every position and token', async () => {
    const kept = await servedVisitor(node, 'Other');
    const ids = [await servedVisitor(node), await servedVisitor(node), await servedVisitor(node)];
    await claim(node, ids[0]!);
    await claim(node, ids[1]!);
    await updateSession(node, ids[0]!, 1);
    await updateSession(node, ids[1]!, -1);
    node.clock.advance(901);
    await node.room.admission.advanceExpiry('Sample');
    const dirty = await node.room.reports.counters('Sample');
    assert.ok(dirty.queue > 0 && dirty.serving > 0 && dirty.tokens > 0 && dirty.expired > 0);
    assert.ok(dirty.completed > 0 && dirty.abandoned > 0 && dirty.maxExpired > 0);

    const res = await read(node.admin('POST', '/reset_initial_state', { event_id: 'Sample' }));
    assert.equal(res.status, 200);
    assert.equal(res.text, '{"message":"Counters reset. DynamoDB table recreated."}');
    assert.deepEqual(await node.room.reports.counters('Sample'), {
      queue: 0, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0, generation: 1, waiting: 0, activeTokens: 0,
    });
    assert.deepEqual((await read(node.get('/serving_num?event_id=Sample'))).body, { serving_counter: 0 });
    assert.deepEqual((await read(node.get('/waiting_num?event_id=Sample'))).body, { waiting_num: 0 });
    assert.deepEqual(await expiredTokens(node), []);
    for (const id of ids) {
      const position = await read(node.get(`/queue_num?event_id=Sample&request_id=${id}`));
      assert.equal(position.status, 202, 'a position from before the reset is gone');
      assert.deepEqual(position.body, { error: 'Request ID not found' });
      await increment(node, 10);
      assert.equal((await claim(node, id)).status, 404, 'a token set from before the reset is gone');
      await increment(node, -10);
    }
    // Other events are untouched.
    assert.equal(await positionOf(node, kept, 'Other'), 1);
    assert.equal((await node.room.reports.counters('Other')).serving, 1);
  });

  it('numbering starts again at 1 after a reset', async () => {
    await join(node);
    await node.admin('POST', '/reset_initial_state', { event_id: 'Sample' });
    assert.equal(await positionOf(node, await join(node)), 1);
  });

  it('keeps the signing keys: the same public_key before and after', async () => {
    const before = (await read(node.get('/public_key?event_id=Sample'))).text;
    await node.admin('POST', '/reset_initial_state', { event_id: 'Sample' });
    assert.equal((await read(node.get('/public_key?event_id=Sample'))).text, before);
  });

  it('an unknown event answers 400 "Invalid event ID"', async () => {
    const res = await read(node.admin('POST', '/reset_initial_state', { event_id: 'Nope' }));
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'Invalid event ID' });
  });
});

describe('expiry job without incr_serving_on_expiry', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  it('counts the positions that expired unclaimed; waiting_num drops; the serving counter does not move', async () => {
    const ids = [await join(node), await join(node), await join(node), await join(node)];
    await serveUpTo(node, 3);
    await claim(node, ids[0]!);
    const { events, stop } = collectEvents(node);
    node.clock.advance(901);
    await node.room.admission.advanceExpiry('Sample');
    stop();
    const counters = await node.room.reports.counters('Sample');
    assert.equal(counters.expired, 2, 'positions 2 and 3 expired unclaimed; 1 claimed, 4 never served');
    assert.equal(counters.maxExpired, 3);
    assert.equal(counters.serving, 3);
    assert.deepEqual((await read(node.get('/waiting_num?event_id=Sample'))).body, { waiting_num: 1 });
    assert.deepEqual(events, [], 'no automatic_serving_counter_incr without incr_serving_on_expiry');
  });

  it('a position recorded as expired by the job answers 410 to generate_token', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    node.clock.advance(901);
    await node.room.admission.advanceExpiry('Sample');
    const res = await claim(node, id);
    assert.equal(res.status, 410);
    assert.deepEqual(res.body, { error: 'Queue position has expired' });
  });

  it('running the job again changes nothing', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    node.clock.advance(901);
    await node.room.admission.advanceExpiry('Sample');
    const before = await node.room.reports.counters('Sample');
    assert.equal(before.expired, 1);
    await node.room.admission.advanceExpiry('Sample');
    await node.room.admission.advanceExpiry('Sample');
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });
});

describe('expiry job with incr_serving_on_expiry', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ events: [eventSettings('Sample', { incr_serving_on_expiry: true })] });
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  /** Six visitors, 1–3 served, 2 claimed; 901 s later one tick of the job (its events are returned). */
  async function firstTick(): Promise<{ ids: string[]; events: Envelope[] }> {
    const ids = [await join(node), await join(node), await join(node), await join(node), await join(node), await join(node)];
    await serveUpTo(node, 3);
    await claim(node, ids[1]!);
    const { events, stop } = collectEvents(node);
    node.clock.advance(901);
    await node.room.admission.advanceExpiry('Sample');
    stop();
    return { ids, events };
  }

  it('moves the serving counter by the number of unclaimed expired positions and emits automatic_serving_counter_incr', async () => {
    const { ids, events } = await firstTick();
    const counters = await node.room.reports.counters('Sample');
    assert.equal(counters.serving, 5, '3 + positions 1 and 3, which never claimed');
    assert.equal(counters.expired, 2);
    assert.deepEqual((await read(node.get('/serving_num?event_id=Sample'))).body, { serving_counter: 5 });
    assert.equal(events.length, 1);
    assert.equal(events[0]!['detail-type'], 'automatic_serving_counter_incr');
    assert.deepEqual(events[0]!.detail, {
      event_id: 'Sample',
      previous_serving_counter_position: 3,
      increment_by: 2,
      current_serving_counter_position: 5,
    });
    // The positions the job admitted can claim now.
    assert.equal((await claim(node, ids[4]!)).status, 200);
  });

  it('positions admitted by the job become eligible when the job admitted them', async () => {
    // The first tick admits positions 4 and 5 (now); 5 claims. Position 4 expires one period later, not at once.
    const { ids } = await firstTick();
    assert.equal((await claim(node, ids[4]!)).status, 200);
    const { events, stop } = collectEvents(node);
    await node.room.admission.advanceExpiry('Sample');
    assert.equal((await node.room.reports.counters('Sample')).serving, 5);
    node.clock.advance(900);
    await node.room.admission.advanceExpiry('Sample');
    assert.equal((await node.room.reports.counters('Sample')).serving, 5, 'not yet past the period');
    node.clock.advance(1);
    await node.room.admission.advanceExpiry('Sample');
    stop();
    // Position 4 expired unclaimed (5 claimed): one more admitted.
    const counters = await node.room.reports.counters('Sample');
    assert.equal(counters.serving, 6);
    assert.equal(counters.expired, 3);
    assert.deepEqual(
      events.map((e) => e.detail),
      [{ event_id: 'Sample', previous_serving_counter_position: 5, increment_by: 1, current_serving_counter_position: 6 }],
    );
  });

  it('a tick where nothing expired emits nothing and moves nothing', async () => {
    await firstTick();
    const before = await node.room.reports.counters('Sample');
    const { events, stop } = collectEvents(node);
    await node.room.admission.advanceExpiry('Sample');
    stop();
    assert.deepEqual(events, []);
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });
});

describe('expiry boundary: one rule for the API and the job', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  it('exactly period seconds after eligibility a position has not expired; period + 1 it has, for both', async () => {
    const first = await join(node);
    const second = await join(node);
    await serveUpTo(node, 2);
    node.clock.advance(900);
    const atBoundary = await read(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${second}`));
    assert.deepEqual(atBoundary.body, { expires_in: 0 });
    await node.room.admission.advanceExpiry('Sample');
    assert.equal((await node.room.reports.counters('Sample')).expired, 0, 'the job agrees: not expired at now − T = period');
    assert.equal((await claim(node, first)).status, 200, 'a claim at the boundary succeeds');

    node.clock.advance(1);
    const past = await claim(node, second);
    assert.equal(past.status, 410, 'the API: expired at now − T = period + 1');
    await node.room.admission.advanceExpiry('Sample');
    const counters = await node.room.reports.counters('Sample');
    assert.equal(counters.expired, 1, 'the job agrees: position 2 expired, position 1 was claimed');
    assert.equal(counters.maxExpired, 2);
  });
});

describe('a token issued makes expiry no longer apply', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ events: [eventSettings('Sample', { incr_serving_on_expiry: true })] });
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  it('a claimed position is never counted expired, and its re-claim answers 200 long after the period', async () => {
    const id = await join(node);
    await serveUpTo(node, 1);
    node.clock.advance(800);
    const first = await claim(node, id);
    assert.equal(first.status, 200);
    node.clock.advance(5000);
    await node.room.admission.advanceExpiry('Sample');
    const counters = await node.room.reports.counters('Sample');
    assert.equal(counters.expired, 0);
    assert.equal(counters.serving, 1, 'a claimed position gives no capacity back');
    const again = await claim(node, id);
    assert.equal(again.status, 200);
    assert.equal(again.body.access_token, first.body.access_token);
    assert.equal((await read(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${id}`))).status, 200);
  });
});

describe('expiry switched on after a position became eligible', () => {
  // Both nodes share one clock. (startTestNode's option type intersects StartOptions' Clock with TestClock;
  // at run time it only uses the TestClock.)
  const clock = new TestClock() as TestClock & (() => number);
  const dir = mkdtempSync(joinPath(tmpdir(), 'anteroom-expiry-switch-'));
  const store = { kind: 'sqlite', path: joinPath(dir, 'anteroom.db') } as const;
  let node: TestNode | undefined;
  after(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('eligibility counts from the time expiry was switched on, and nothing is a 5xx', async () => {
    node = await startTestNode(
      { store, events: [eventSettings('Sample', { enable_queue_position_expiry: false })] },
      { clock },
    );
    const id = await join(node);
    await serveUpTo(node, 1);
    const off = await read(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${id}`));
    assert.equal(off.status, 202);
    assert.deepEqual(off.body, { error: 'Queue position expiration not enabled' });
    clock.advance(5000);
    await node.room.admission.advanceExpiry('Sample');
    assert.equal((await node.room.reports.counters('Sample')).expired, 0, 'the job does nothing while expiry is off');
    await node.stop();

    node = await startTestNode({ store, events: [eventSettings('Sample', { enable_queue_position_expiry: true })] }, { clock });
    assert.equal(await positionOf(node, id), 1, 'the same data directory');
    const on = await read(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${id}`));
    assert.equal(on.status, 200);
    assert.deepEqual(on.body, { expires_in: 900 }, 'eligible from the switch, not from when it was served');
    await node.room.admission.advanceExpiry('Sample');
    assert.equal((await node.room.reports.counters('Sample')).expired, 0);
    clock.advance(900);
    await node.room.admission.advanceExpiry('Sample');
    assert.equal((await node.room.reports.counters('Sample')).expired, 0, 'period seconds after the switch: not expired');
    assert.deepEqual((await read(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${id}`))).body, {
      expires_in: 0,
    });
    clock.advance(1);
    assert.equal((await read(node.get(`/queue_pos_expiry?event_id=Sample&request_id=${id}`))).status, 410);
    assert.equal((await claim(node, id)).status, 410);
    await node.room.admission.advanceExpiry('Sample');
    assert.equal((await node.room.reports.counters('Sample')).expired, 1);
  });
});
