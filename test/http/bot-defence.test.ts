// Keeping bots out of the line (docs/bots.md), against a real node over HTTP: proof of work at join (GET
// /challenge, ALTCHA), verified before anything is stored and used once; per-client join limits (429 with
// Retry-After) keyed by the client address behind --trust-proxy; the server-wide limit of public writes; one
// place per enqueue key. VWR's clients (no bot_defence) join as before.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signEnqueueKey } from '../../src/domain/bot-defence.ts';
import type { BotDefenceSettings } from '../../src/domain/room-settings.ts';
import { read } from '../support/api-calls.ts';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';
import { fetchChallenge, solve, solvedProof } from '../support/proof-of-work.ts';

const SECRET = 'enqueue-key-secret-0123456789abcdef-XYZ';

function defence(settings: Partial<BotDefenceSettings>): BotDefenceSettings {
  return {
    challenge: 'off',
    difficulty: 1000,
    max_difficulty: 1_000_000,
    room_threshold_per_minute: 600,
    client_threshold_per_minute: 5,
    challenge_ttl: 120,
    require_enqueue_key: false,
    infinite_queue: false,
    ...settings,
  };
}

describe('bot defence at join', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({
      events: [
        eventSettings('Sample'),
        eventSettings('Always', { bot_defence: defence({ challenge: 'always' }) }),
        eventSettings('Other', { bot_defence: defence({ challenge: 'always' }) }),
        eventSettings('Auto', { bot_defence: defence({ challenge: 'auto', client_threshold_per_minute: 2 }) }),
        eventSettings('Limited', { bot_defence: defence({ joins_per_client_per_minute: 3 }) }),
        eventSettings('Keyed', { bot_defence: defence({ enqueue_key_secret: SECRET, require_enqueue_key: true }) }),
        eventSettings('Parked', { bot_defence: defence({ challenge: 'always', infinite_queue: true, joins_per_client_per_minute: 3 }) }),
      ],
    });
  });
  after(() => node.stop());

  const joinWith = (eventId: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    read<{ api_request_id?: string; error?: string }>(node.post('/assign_queue_num', { event_id: eventId, ...extra }, headers));
  const queued = async (eventId: string) => (await node.room.reports.counters(eventId)).queue;

  describe('VWR clients with the defaults (no bot_defence)', () => {
    it('a join without anything else is answered 200, as before', async () => {
      const res = await joinWith('Sample');
      assert.equal(res.status, 200);
      assert.match(String(res.body.api_request_id), /^[0-9a-f-]{36}$/);
    });

    it('GET /challenge of a room without a challenge answers 404 in the one error shape', async () => {
      const res = await read(node.get('/challenge?event_id=Sample'));
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { error: 'This waiting room asks no proof of work' });
    });

    it('GET /challenge of an unknown room answers 400 Invalid event ID', async () => {
      const res = await read(node.get('/challenge?event_id=Nope'));
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { error: 'Invalid event ID' });
    });
  });

  describe('challenge "always"', () => {
    it('a join without a solution is 403 and stores nothing', async () => {
      const before = await queued('Always');
      const res = await joinWith('Always');
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, { error: 'Proof of work required' });
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal(await queued('Always'), before);
    });

    it('the challenge is never cacheable, and a solved one lets the join in', async () => {
      const challengeRes = await node.get('/challenge?event_id=Always');
      assert.equal(challengeRes.status, 200);
      assert.equal(challengeRes.headers.get('cache-control'), 'no-store');
      const before = await queued('Always');
      const res = await joinWith('Always', { proof_of_work: await solvedProof(node.url, 'Always') });
      assert.equal(res.status, 200);
      assert.equal(await queued('Always'), before + 1);
    });

    it('a solution counts once: replayed, it is 403 and stores nothing', async () => {
      const proof = await solvedProof(node.url, 'Always');
      assert.equal((await joinWith('Always', { proof_of_work: proof })).status, 200);
      const before = await queued('Always');
      const replay = await joinWith('Always', { proof_of_work: proof });
      assert.equal(replay.status, 403);
      assert.deepEqual(replay.body, { error: 'Proof of work already used' });
      assert.equal(await queued('Always'), before);
    });

    it('a solution past the challenge ttl is refused', async () => {
      const proof = await solvedProof(node.url, 'Always');
      node.clock.advance(121);
      const res = await joinWith('Always', { proof_of_work: proof });
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, { error: 'Invalid proof of work' });
    });

    it("another room's solution, a tampered one and garbage are refused", async () => {
      const other = await solvedProof(node.url, 'Other');
      assert.deepEqual((await joinWith('Always', { proof_of_work: other })).body, { error: 'Invalid proof of work' });
      const challenge = await fetchChallenge(node.url, 'Always');
      const payload = JSON.parse(Buffer.from(await solve(challenge), 'base64').toString()) as { solution: { counter: number; derivedKey: string } };
      payload.solution.derivedKey = payload.solution.derivedKey.replace(/^./, (c) => (c === '0' ? '1' : '0'));
      const tampered = Buffer.from(JSON.stringify(payload)).toString('base64');
      assert.deepEqual((await joinWith('Always', { proof_of_work: tampered })).body, { error: 'Invalid proof of work' });
      for (const garbage of ['', 'not base64 json', Buffer.from('[1,2]').toString('base64')]) {
        const res = await joinWith('Always', { proof_of_work: garbage });
        assert.equal(res.status, 403, garbage);
      }
      assert.equal((await joinWith('Always', { proof_of_work: 42 })).status, 400);
    });
  });

  describe('challenge "auto"', () => {
    it('lets a client in without work until its join rate passes the threshold, then asks it', async () => {
      const client = { 'x-forwarded-for': '203.0.113.7' }; // not trusted here: the client is 127.0.0.1
      assert.equal((await joinWith('Auto', {}, client)).status, 200);
      assert.equal((await joinWith('Auto')).status, 200);
      const third = await joinWith('Auto');
      assert.equal(third.status, 403);
      assert.deepEqual(third.body, { error: 'Proof of work required' });
      assert.equal((await joinWith('Auto', { proof_of_work: await solvedProof(node.url, 'Auto') })).status, 200);
    });
  });

  describe('joins_per_client_per_minute', () => {
    it('the join over the limit is 429 with Retry-After in the one error shape, stores nothing, and passes once the minute has gone', async () => {
      for (let i = 0; i < 3; i++) assert.equal((await joinWith('Limited')).status, 200);
      const before = await queued('Limited');
      const res = await joinWith('Limited');
      assert.equal(res.status, 429);
      assert.deepEqual(res.body, { error: 'Too many requests' });
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 120, String(retryAfter));
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.equal(await queued('Limited'), before);
      node.clock.advance(retryAfter);
      assert.equal((await joinWith('Limited')).status, 200);
    });
  });

  describe('enqueue keys (one place per identity)', () => {
    const key = (identity: string, overrides: Record<string, unknown> = {}) =>
      signEnqueueKey(SECRET, { event_id: 'Keyed', key: identity, exp: Math.floor(node.clock.ms / 1000) + 600, ...overrides });

    it('a second join with the same key returns the same request ID and takes no second place', async () => {
      const first = await joinWith('Keyed', { enqueue_key: key('user-1') });
      assert.equal(first.status, 200);
      const before = await queued('Keyed');
      const second = await joinWith('Keyed', { enqueue_key: key('user-1') });
      assert.equal(second.status, 200);
      assert.equal(second.body.api_request_id, first.body.api_request_id);
      assert.equal(await queued('Keyed'), before);
      const queueNum = await read<{ queue_number: number }>(node.get(`/queue_num?event_id=Keyed&request_id=${first.body.api_request_id}`));
      assert.equal(queueNum.status, 200);
      const other = await joinWith('Keyed', { enqueue_key: key('user-2') });
      assert.notEqual(other.body.api_request_id, first.body.api_request_id);
    });

    it('without a key, with a wrong signature, expired or for another room: 403 and nothing stored', async () => {
      const before = await queued('Keyed');
      assert.deepEqual((await joinWith('Keyed')).body, { error: 'Enqueue key required' });
      const forged = signEnqueueKey('another-secret-0123456789abcdef-0123', { event_id: 'Keyed', key: 'u', exp: 4_000_000_000 });
      for (const bad of [forged, key('u', { exp: Math.floor(node.clock.ms / 1000) - 1 }), key('u', { event_id: 'Sample' }), 'x.y', '']) {
        const res = await joinWith('Keyed', { enqueue_key: bad });
        assert.equal(res.status, 403, bad);
        assert.deepEqual(res.body, { error: 'Invalid enqueue key' });
      }
      assert.equal(await queued('Keyed'), before);
    });

    it('a key sent to a room without enqueue keys is refused', async () => {
      const res = await joinWith('Sample', { enqueue_key: key('u') });
      assert.deepEqual(res.body, { error: 'Invalid enqueue key' });
    });

    it('the rooms API never answers the secret, and keeps it on a PUT that leaves it out', async () => {
      const got = await read<{ bot_defence: Record<string, unknown> }>(node.admin('GET', '/rooms/Keyed'));
      assert.equal(got.status, 200);
      assert.equal(got.body.bot_defence.enqueue_key_secret, '[redacted]');
      assert.ok(!JSON.stringify(got.body).includes(SECRET));
      const put = await node.admin('PUT', '/rooms/Keyed', got.body);
      assert.equal(put.status, 200);
      assert.equal((await joinWith('Keyed', { enqueue_key: key('user-9') })).status, 200);
    });
  });

  describe('infinite_queue', () => {
    it('a join with an invalid or replayed proof gets a place that is stored nowhere and never served', async () => {
      const before = await queued('Parked');
      const proof = await solvedProof(node.url, 'Parked');
      assert.equal((await joinWith('Parked', { proof_of_work: proof })).status, 200);
      for (const bad of ['garbage', proof]) {
        const res = await joinWith('Parked', { proof_of_work: bad });
        assert.equal(res.status, 200, bad);
        const id = String(res.body.api_request_id);
        assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        const place = await read<{ queue_number: number; status: number }>(node.get(`/queue_num?event_id=Parked&request_id=${id}`));
        assert.equal(place.status, 200);
        assert.equal(place.body.queue_number, before + 2);
        assert.equal(place.body.status, 1);
        await node.admin('POST', '/increment_serving_counter', { event_id: 'Parked', increment_by: 1000 });
        assert.deepEqual((await read(node.post('/generate_token', { event_id: 'Parked', request_id: id }))).body, { error: 'Request ID not being served yet' });
        assert.equal((await node.get(`/queue_pos_expiry?event_id=Parked&request_id=${id}`)).status, 202);
        assert.equal((await node.post('/leave_queue', { event_id: 'Parked', request_id: id })).status, 200);
      }
      assert.equal(await queued('Parked'), before + 1);
    });

    it('a join without a proof is still asked for one, a join over the client limit is parked, and other IDs stay unknown', async () => {
      assert.deepEqual((await joinWith('Parked')).body, { error: 'Proof of work required' });
      const over = await joinWith('Parked', { proof_of_work: await solvedProof(node.url, 'Parked') });
      assert.equal(over.status, 200);
      assert.equal((await node.post('/generate_token', { event_id: 'Parked', request_id: over.body.api_request_id })).status, 202);
      const unknown = await read(node.get('/queue_num?event_id=Parked&request_id=00000000-0000-4000-8000-000000000000'));
      assert.deepEqual(unknown.body, { error: 'Request ID not found' });
    });
  });

  describe('metrics', () => {
    it('/metrics counts challenges issued, solved and failed, and joins refused by limits', async () => {
      const text = await (await node.get('/metrics')).text();
      for (const outcome of ['challenge_issued', 'challenge_solved', 'challenge_missing', 'challenge_invalid', 'challenge_replayed', 'join_limited', 'enqueue_key_refused', 'parked']) {
        assert.match(text, new RegExp(`anteroom_bot_defence_total\\{outcome="${outcome}"`), outcome);
      }
    });
  });
});

describe('per-client limits behind --trust-proxy', () => {
  let trusting: TestNode;
  let direct: TestNode;
  const limited = [eventSettings('Limited', { bot_defence: defence({ joins_per_client_per_minute: 1 }) })];
  before(async () => {
    trusting = await startTestNode({ events: limited, trustProxy: ['loopback'] });
    direct = await startTestNode({ events: limited });
  });
  after(async () => {
    await trusting.stop();
    await direct.stop();
  });

  const joinAs = (node: TestNode, ip: string) => node.post('/assign_queue_num', { event_id: 'Limited' }, { 'x-forwarded-for': ip });

  it('behind a trusted proxy each forwarded client has its own limit', async () => {
    assert.equal((await joinAs(trusting, '198.51.100.1')).status, 200);
    assert.equal((await joinAs(trusting, '198.51.100.2')).status, 200);
    assert.equal((await joinAs(trusting, '198.51.100.1')).status, 429);
  });

  it('without --trust-proxy X-Forwarded-For is ignored: the peer is the client', async () => {
    assert.equal((await joinAs(direct, '198.51.100.1')).status, 200);
    assert.equal((await joinAs(direct, '198.51.100.2')).status, 429);
  });
});

describe('challenge "auto" under a flood of first joins from many addresses', () => {
  let node: TestNode;
  before(async () => {
    // 60 a minute: the flood detector's window is 10 s (the time the threshold allows 10 joins in), long enough
    // for a burst of concurrent requests on a busy machine to land in it.
    const flood = defence({ challenge: 'auto', room_threshold_per_minute: 60, client_threshold_per_minute: 1 });
    node = await startTestNode({ events: [eventSettings('Flood', { bot_defence: flood })], trustProxy: ['loopback'] });
  });
  after(() => node.stop());

  const joinAs = (ip: string) => node.post('/assign_queue_num', { event_id: 'Flood' }, { 'x-forwarded-for': ip });

  it('lets about the threshold\'s 10 joins through, then asks everyone, a newcomer too, and counts the trip once', async () => {
    const statuses = await Promise.all(Array.from({ length: 100 }, (_, i) => joinAs(`198.51.100.${i + 1}`).then((res) => res.status)));
    const passed = statuses.filter((status) => status === 200).length;
    assert.ok(passed >= 10 && passed <= 12, `${passed} let in without work`);
    assert.equal(statuses.filter((status) => status === 403).length, 100 - passed);
    const newcomer = await read(joinAs('203.0.113.9'));
    assert.equal(newcomer.status, 403);
    assert.deepEqual(newcomer.body, { error: 'Proof of work required' });
    const metrics = await (await node.get('/metrics')).text();
    assert.match(metrics, /anteroom_bot_defence_total\{outcome="flood_detected",event_id="Flood"\} 1\n/);
    // The control panel's figures count the same (this node).
    const figures = (await (await node.admin('GET', '/rooms/Flood/figures')).json()) as { bot_defence: Record<string, number> };
    assert.equal(figures.bot_defence.flood_detected, 1);
    assert.equal(figures.bot_defence.challenge_missing, 100 - passed + 1);
    assert.equal(figures.bot_defence.challenge_solved, 0);
  });
});

describe('--writes-per-client-per-minute', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ writesPerClientPerMinute: 2 });
  });
  after(() => node.stop());

  it('limits every public write of a client, joins and token claims alike, and never the polls', async () => {
    const joined = await read<{ api_request_id: string }>(node.post('/assign_queue_num', { event_id: 'Sample' }));
    assert.equal(joined.status, 200);
    const claim = await node.post('/generate_token', { event_id: 'Sample', request_id: joined.body.api_request_id });
    assert.equal(claim.status, 202);
    const before = (await node.room.reports.counters('Sample')).queue;
    const refused = await read(node.post('/leave_queue', { event_id: 'Sample', request_id: joined.body.api_request_id }));
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.body, { error: 'Too many requests' });
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal((await node.post('/assign_queue_num', { event_id: 'Sample' })).status, 429);
    assert.equal((await node.room.reports.counters('Sample')).queue, before);
    assert.equal((await node.get('/serving_num?event_id=Sample')).status, 200);
    assert.equal((await node.get(`/queue_num?event_id=Sample&request_id=${joined.body.api_request_id}`)).status, 200);
  });
});
