// The bot defence's rules (src/domain/bot-defence.ts), without HTTP: the sliding rate and Retry-After, difficulty
// under a flood, when a challenge is needed, enqueue keys, and the order of the checks of a join (with the
// in-memory counters of the embedded store and a proof of work that records what it is asked).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BotDefence,
  challengeNeeded,
  clientKey,
  FLOOD_HOLD_MS,
  floodRate,
  floodWindowMs,
  parkedRequestId,
  readParkedRequestId,
  floodDifficulty,
  ratePerMinute,
  readEnqueueKey,
  requestIdForKey,
  secondsUntilUnder,
  signEnqueueKey,
} from '../../src/domain/bot-defence.ts';
import type { ProofOfWork } from '../../src/domain/ports/proof-of-work.ts';
import { defaultSettings, type BotDefenceSettings, type RoomSettings } from '../../src/domain/room-settings.ts';
import { InMemoryBotDefence } from '../../src/store/bot-defence-memory.ts';

const defence = (settings: Partial<BotDefenceSettings> = {}): BotDefenceSettings => ({
  challenge: 'auto',
  difficulty: 10_000,
  max_difficulty: 100_000,
  room_threshold_per_minute: 100,
  client_threshold_per_minute: 5,
  challenge_ttl: 120,
  require_enqueue_key: false,
    infinite_queue: false,
  ...settings,
});

describe('rates over the last minute', () => {
  it('the previous window counts for the part of it still within the last minute', () => {
    assert.equal(ratePerMinute({ current: 10, previous: 60, endsAtMs: 60_000 }, 0), 70); // at a window's start: all of the previous is within the minute
    assert.equal(ratePerMinute({ current: 10, previous: 60, endsAtMs: 60_000 }, 30_000), 40);
    assert.equal(ratePerMinute({ current: 10, previous: 60, endsAtMs: 60_000 }, 45_000), 25);
  });

  it('Retry-After is when the estimate is back under the limit, at least one second', () => {
    // 5 in the current window, limit 3: wait for the window's end, then until 5·(1−e) ≤ 3 (e = 0.4: 24 s).
    assert.equal(secondsUntilUnder({ current: 5, previous: 0, endsAtMs: 60_000 }, 3, 50_000), 10 + 24);
    // Current within the limit, the previous window pushes it over: until its weight has fallen enough.
    assert.equal(secondsUntilUnder({ current: 2, previous: 10, endsAtMs: 60_000 }, 3, 30_000), 24);
    assert.equal(secondsUntilUnder({ current: 3, previous: 10, endsAtMs: 60_000 }, 3, 59_999), 1);
    // A limit of 0 (the retry of a client with a limit of 1): both windows must be empty.
    assert.equal(secondsUntilUnder({ current: 1, previous: 0, endsAtMs: 60_000 }, 0, 0), 120);
  });
});

describe('difficulty under a flood', () => {
  it('is the base at or under the threshold, doubles at each doubling of the rate over it, and stops at the ceiling', () => {
    const d = defence();
    assert.equal(floodDifficulty(d, 0), 10_000);
    assert.equal(floodDifficulty(d, 100), 10_000);
    assert.equal(floodDifficulty(d, 101), 20_000);
    assert.equal(floodDifficulty(d, 200), 20_000);
    assert.equal(floodDifficulty(d, 201), 40_000);
    assert.equal(floodDifficulty(d, 1_000_000), 100_000);
  });
});

describe('the flood detector', () => {
  it("measures the room's rate over the time its threshold allows 10 joins in, between a second and a minute", () => {
    assert.equal(floodWindowMs(defence({ room_threshold_per_minute: 600 })), 1_000);
    assert.equal(floodWindowMs(defence({ room_threshold_per_minute: 100 })), 6_000);
    assert.equal(floodWindowMs(defence({ room_threshold_per_minute: 60_000 })), 1_000);
    assert.equal(floodWindowMs(defence({ room_threshold_per_minute: 1 })), 60_000);
    // 11 joins in the current second at 600 a minute: 660 a minute.
    assert.equal(floodRate(defence({ room_threshold_per_minute: 600 }), { current: 11, previous: 0, endsAtMs: 2_000 }, 1_500), 660);
  });
});

describe('when a challenge is needed', () => {
  it('off never, always always, auto when the room or the client passes its threshold', () => {
    assert.equal(challengeNeeded(defence({ challenge: 'off' }), 1e9, 1e9), false);
    assert.equal(challengeNeeded(defence({ challenge: 'always' }), 0, 0), true);
    assert.equal(challengeNeeded(defence(), 100, 5), false);
    assert.equal(challengeNeeded(defence(), 101, 1), true);
    assert.equal(challengeNeeded(defence(), 1, 6), true);
    assert.equal(challengeNeeded(defence(), 1, undefined), false);
    assert.equal(challengeNeeded(defence(), 1, 1, true), true); // the flood hold
  });
});

describe('the infinite queue', () => {
  const secret = 'parking-secret-0123456789abcdef';
  it('a parked request ID is a UUID v4 that carries its place and time, for its room and secret only', () => {
    const id = parkedRequestId(secret, 'Sale', { position: 123_456, entryTime: 1_795_000_000 });
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual(readParkedRequestId(secret, 'Sale', id), { position: 123_456, entryTime: 1_795_000_000 });
    assert.equal(readParkedRequestId(secret, 'Other', id), undefined);
    assert.equal(readParkedRequestId(`${secret}x`, 'Sale', id), undefined);
    assert.notEqual(parkedRequestId(secret, 'Sale', { position: 123_456, entryTime: 1_795_000_000 }), id);
  });

  it('random request IDs are not parked ones', () => {
    let parked = 0;
    for (let i = 0; i < 2000; i++) if (readParkedRequestId(secret, 'Sale', crypto.randomUUID())) parked++;
    assert.equal(parked, 0);
  });
});

describe('client keys', () => {
  it('an IP address names its counters as it is; other text by its hash, short and without braces', () => {
    assert.equal(clientKey('198.51.100.7'), '198.51.100.7');
    assert.equal(clientKey('2001:db8::1'), '2001:db8::1');
    assert.match(clientKey('{evil}'.repeat(1000)), /^[0-9a-f]{64}$/);
  });
});

describe('enqueue keys', () => {
  const secret = 'site-secret-0123456789abcdef-0123456789';
  const claims = { event_id: 'Sale', key: 'user-42', exp: 2_000 };

  it('a key signed with the room secret reads back its identity until it expires', () => {
    const token = signEnqueueKey(secret, claims);
    assert.equal(readEnqueueKey(secret, token, 'Sale', 1_999), 'user-42');
    assert.equal(readEnqueueKey(secret, token, 'Sale', 2_000), undefined);
  });

  it('another secret, another room, a changed payload or a malformed key reads nothing', () => {
    const token = signEnqueueKey(secret, claims);
    assert.equal(readEnqueueKey(`${secret}x`, token, 'Sale', 0), undefined);
    assert.equal(readEnqueueKey(secret, token, 'Other', 0), undefined);
    const [, signature] = token.split('.');
    const forged = `${Buffer.from(JSON.stringify({ ...claims, key: 'user-43' })).toString('base64url')}.${signature}`;
    assert.equal(readEnqueueKey(secret, forged, 'Sale', 0), undefined);
    for (const bad of ['', '.', 'a.b.c', token.slice(0, -2), `${token}.x`, 'x'.repeat(5000)]) assert.equal(readEnqueueKey(secret, bad, 'Sale', 0), undefined, bad);
    const noKey = signEnqueueKey(secret, { ...claims, key: '' });
    assert.equal(readEnqueueKey(secret, noKey, 'Sale', 0), undefined);
  });

  it("an identity's request ID is a UUID v4, the same every time, and another in another room or under another secret", () => {
    const id = requestIdForKey(secret, 'Sale', 'user-42');
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(requestIdForKey(secret, 'Sale', 'user-42'), id);
    assert.notEqual(requestIdForKey(secret, 'Other', 'user-42'), id);
    assert.notEqual(requestIdForKey(`${secret}x`, 'Sale', 'user-42'), id);
    assert.notEqual(requestIdForKey(secret, 'Sale', 'user-43'), id);
  });
});

describe('BotDefence', () => {
  function setUp(settings: Partial<BotDefenceSettings>, store = new InMemoryBotDefence()) {
    const difficulties: number[] = [];
    let verified = 0;
    const proofOfWork: ProofOfWork = {
      issue: async (_eventId, difficulty) => (difficulties.push(difficulty), { difficulty }),
      verify: async (_eventId, payload) => (verified++, payload.startsWith('good') ? { ok: true, challengeId: payload, expiresAtMs: 10_000_000 } : { ok: false, reason: 'invalid' }),
    };
    const clock = { ms: 1_000_000 };
    const outcomes: string[] = [];
    const bots = new BotDefence({ store, proofOfWork, clock: () => clock.ms, onOutcome: (outcome) => outcomes.push(outcome) });
    const room: RoomSettings = { ...defaultSettings('Sale'), bot_defence: defence(settings) };
    return { bots, room, difficulties, clock, outcomes, verifiedCount: () => verified };
  }

  /** Joins without a proof, each from its own client; true for each let in without work. */
  const burst = (bots: BotDefence, room: RoomSettings, clients: string[]) =>
    Promise.all(clients.map((client) => bots.checkJoin(room, { client }).then(() => true, (error: Error) => (assert.equal(error.message, 'Proof of work required'), false))));
  const addresses = (from: number, count: number) => Array.from({ length: count }, (_, i) => `198.51.${Math.floor((from + i) / 250)}.${((from + i) % 250) + 1}`);

  it('auto: a burst of first joins from many addresses trips the room-wide challenge after a second of the threshold, and it holds', async () => {
    const { bots, room, clock, outcomes } = setUp({ room_threshold_per_minute: 600, client_threshold_per_minute: 1 });
    clock.ms = 1_000_000 + 200; // 0.2 s into a second
    // 200 first joins, each from its own address, within one second: 600 a minute allows 10 a second.
    const passed = await burst(bots, room, addresses(0, 200));
    assert.equal(passed.filter(Boolean).length, 10);
    assert.deepEqual(passed.slice(0, 10), Array(10).fill(true));
    assert.equal(outcomes.filter((o) => o === 'flood_detected').length, 1);
    // Quiet since: a person arriving 30 s later, and one just before the hold ends, still solve…
    clock.ms += 30_000;
    assert.deepEqual(await burst(bots, room, addresses(1000, 1)), [false]);
    clock.ms += FLOOD_HOLD_MS - 30_000 - 1;
    assert.deepEqual(await burst(bots, room, addresses(1001, 1)), [false]);
    // …and once the rate has stayed under the threshold for the whole hold, a first join passes without work.
    clock.ms += 1;
    assert.deepEqual(await burst(bots, room, addresses(1002, 3)), [true, true, true]);
  });

  it('auto: the hold is kept in the store, so a node that saw none of the burst asks for work too', async () => {
    const shared = new InMemoryBotDefence();
    const a = setUp({ room_threshold_per_minute: 600 }, shared);
    const b = setUp({ room_threshold_per_minute: 600 }, shared);
    a.clock.ms = b.clock.ms = 2_000_000;
    await burst(a.bots, a.room, addresses(0, 11));
    a.clock.ms = b.clock.ms = 2_000_000 + 10_000; // the burst's second is long gone: only the hold remains
    assert.deepEqual(await burst(b.bots, b.room, addresses(500, 1)), [false]);
  });

  it('auto: joins at a rate under the threshold never trip it, however long they go on', async () => {
    const { bots, room, clock, outcomes } = setUp({ room_threshold_per_minute: 600 });
    clock.ms = 3_000_000;
    let passed = 0;
    for (let second = 0; second < 120; second++) {
      // 8 a second (480 a minute), spread over the second.
      for (let i = 0; i < 8; i++) {
        clock.ms = 3_000_000 + second * 1000 + i * 125;
        passed += (await burst(bots, room, addresses(second * 8 + i, 1))).filter(Boolean).length;
      }
    }
    assert.equal(passed, 120 * 8);
    assert.deepEqual(outcomes, []);
  });

  it('raises the difficulty of new challenges as the room is flooded with joins', async () => {
    const { bots, room, difficulties } = setUp({ challenge: 'always', room_threshold_per_minute: 10 });
    await bots.challenge(room);
    for (let i = 0; i < 25; i++) await bots.checkJoin(room, { client: `198.51.100.${i}`, proofOfWork: `good-${i}` });
    await bots.challenge(room);
    assert.deepEqual(difficulties, [10_000, 40_000]);
  });

  it('refuses an invalid proof before counting anything, and an expired one by its own clock', async () => {
    const { bots, room, clock } = setUp({ challenge: 'always', joins_per_client_per_minute: 1 });
    await assert.rejects(bots.checkJoin(room, { client: 'c', proofOfWork: 'bad' }), { message: 'Invalid proof of work' });
    // Not counted: the client's one join a minute is still there.
    await bots.checkJoin(room, { client: 'c', proofOfWork: 'good-1' });
    clock.ms = 10_000_000;
    await assert.rejects(bots.checkJoin(room, { client: 'd', proofOfWork: 'good-2' }), { message: 'Invalid proof of work' });
  });

  it('a proof is used once; the server-wide write limit answers 429 with Retry-After', async () => {
    const { bots, room } = setUp({ challenge: 'always' });
    await bots.checkJoin(room, { proofOfWork: 'good-x' });
    await assert.rejects(bots.checkJoin(room, { proofOfWork: 'good-x' }), { message: 'Proof of work already used' });
    await bots.limitWrite('c', 2);
    await bots.limitWrite('c', 2);
    await assert.rejects(bots.limitWrite('c', 2), (error: { status: number; headers: Record<string, string> }) => {
      assert.equal(error.status, 429);
      assert.ok(Number(error.headers['retry-after']) >= 1);
      return true;
    });
  });
});
