// The bot defence's rules (src/domain/bot-defence.ts), without HTTP: the sliding rate and Retry-After, difficulty
// under a flood, when a challenge is needed, enqueue keys, and the order of the checks of a join (with the
// in-memory counters of the embedded store and a proof of work that records what it is asked).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BOT_DEFENCE_OUTCOMES,
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

describe('the bot defence: each rule stated on its own', () => {
  const PARKING = 'parking-secret-0123456789abcdef';
  const SITE = 'site-secret-0123456789abcdef-0123456789';
  const T0 = 6_000_000; // a multiple of every window used here (a second, a minute)

  /** A store that records the names it is asked about; `rawHolds`: it answers a past hold's end rather than 0 (the contract allows either). */
  class RecordingStore extends InMemoryBotDefence {
    readonly names: string[] = [];
    readonly #ends = new Map<string, number>();
    readonly #rawHolds: boolean;
    constructor(rawHolds = false) {
      super();
      this.#rawHolds = rawHolds;
    }
    override async countInWindow(name: string, by: number, windowMs: number, nowMs: number) {
      this.names.push(name);
      return super.countInWindow(name, by, windowMs, nowMs);
    }
    override async holdUntil(name: string, untilMs: number, nowMs: number) {
      this.names.push(name);
      const held = await super.holdUntil(name, untilMs, nowMs);
      const end = this.#ends.get(name) ?? 0;
      if (untilMs > end) this.#ends.set(name, untilMs);
      return this.#rawHolds ? end : held;
    }
  }

  function setUp(settings: Partial<BotDefenceSettings> | undefined, options: { store?: InMemoryBotDefence; parkingSecret?: string; eventId?: string } = {}) {
    const store = options.store ?? new RecordingStore();
    const issued: { difficulty: number; expiresAtMs: number }[] = [];
    const proofOfWork: ProofOfWork = {
      issue: async (_eventId, difficulty, expiresAtMs) => (issued.push({ difficulty, expiresAtMs }), { difficulty }),
      verify: async (_eventId, payload) => (payload.startsWith('good') ? { ok: true, challengeId: payload, expiresAtMs: T0 + 10_000_000 } : { ok: false, reason: 'invalid' }),
    };
    const clock = { ms: T0 };
    const outcomes: [string, string | undefined][] = [];
    const bots = new BotDefence({ store, proofOfWork, clock: () => clock.ms, onOutcome: (outcome, eventId) => outcomes.push([outcome, eventId]), parkingSecret: options.parkingSecret });
    const base = defaultSettings(options.eventId ?? 'Sale');
    const room: RoomSettings = settings === undefined ? { ...base, bot_defence: undefined } : { ...base, bot_defence: defence(settings) };
    return { bots, room, clock, outcomes, issued, store };
  }
  const refusal = (message: string, status?: number) => (error: { message: string; status?: number }) => {
    assert.equal(error.message, message);
    if (status !== undefined) assert.equal(error.status, status);
    return true;
  };
  const retryAfter = async (promise: Promise<unknown>) => {
    let seconds: string | undefined;
    await assert.rejects(promise, (error: { status: number; headers: Record<string, string> }) => {
      assert.equal(error.status, 429);
      seconds = error.headers['retry-after'];
      return true;
    });
    return Number(seconds);
  };

  it('every outcome, in the order the control panel and the docs list them; a tally starts at 0 for each', () => {
    const names = ['challenge_issued', 'challenge_solved', 'challenge_missing', 'challenge_invalid', 'challenge_replayed', 'join_limited', 'write_limited', 'enqueue_key_refused', 'parked', 'flood_detected'];
    assert.deepEqual(BOT_DEFENCE_OUTCOMES, names);
    const { bots } = setUp({});
    assert.deepEqual(bots.tally('Sale'), Object.fromEntries(names.map((n) => [n, 0])));
  });

  it("tallies each room's outcomes on their own (a copy), and the server-wide write limit in no room", async () => {
    const { bots, room, outcomes } = setUp({ challenge: 'always' });
    await assert.rejects(bots.checkJoin(room, {}), refusal('Proof of work required'));
    await assert.rejects(bots.checkJoin(room, {}), refusal('Proof of work required'));
    await bots.checkJoin(room, { proofOfWork: 'good-1' });
    await bots.limitWrite('c', 0).catch(() => {});
    const tally = bots.tally('Sale');
    assert.equal(tally.challenge_missing, 2);
    assert.equal(tally.challenge_solved, 1);
    assert.equal(tally.write_limited, 0);
    assert.equal(bots.tally('Other').challenge_missing, 0);
    tally.challenge_missing = 99;
    assert.equal(bots.tally('Sale').challenge_missing, 2, 'the answer is a copy');
    assert.deepEqual(outcomes, [['challenge_missing', 'Sale'], ['challenge_missing', 'Sale'], ['challenge_solved', 'Sale'], ['write_limited', undefined]]);
  });

  it('a room without a bot defence lets every join through as a plain join, and issues no challenge', async () => {
    const { bots, room, outcomes } = setUp(undefined);
    assert.deepEqual(await bots.checkJoin(room, { client: '198.51.100.7' }), { kind: 'join' });
    assert.deepEqual(await bots.checkJoin(room, {}), { kind: 'join' });
    await assert.rejects(bots.checkJoin(room, { enqueueKey: 'x.y' }), refusal('Invalid enqueue key', 403), 'no enqueue keys here');
    await assert.rejects(bots.challenge(room), refusal('This waiting room asks no proof of work', 404));
    assert.deepEqual(outcomes, [['enqueue_key_refused', 'Sale']]);
  });

  it('challenge off: no challenge to fetch, no join asked for one, and no room counter kept', async () => {
    const { bots, room, store } = setUp({ challenge: 'off' });
    await assert.rejects(bots.challenge(room), refusal('This waiting room asks no proof of work', 404));
    for (let i = 0; i < 50; i++) assert.deepEqual(await bots.checkJoin(room, { client: '198.51.100.7' }), { kind: 'join' });
    assert.deepEqual((store as RecordingStore).names, []);
  });

  it('GET /challenge: a challenge valid for challenge_ttl from now', async () => {
    const { bots, room, issued, outcomes } = setUp({ challenge: 'auto', challenge_ttl: 90 });
    await bots.challenge(room);
    assert.deepEqual(issued, [{ difficulty: 10_000, expiresAtMs: T0 + 90_000 }]);
    assert.deepEqual(outcomes, [['challenge_issued', 'Sale']]);
  });

  it('the outcome of each refusal and success of a join', async () => {
    const { bots, room, outcomes } = setUp({ challenge: 'always' });
    await assert.rejects(bots.checkJoin(room, { proofOfWork: 'bad' }), refusal('Invalid proof of work', 403));
    await assert.rejects(bots.checkJoin(room, {}), refusal('Proof of work required', 403));
    assert.deepEqual(await bots.checkJoin(room, { proofOfWork: 'good-1' }), { kind: 'join' });
    await assert.rejects(bots.checkJoin(room, { proofOfWork: 'good-1' }), refusal('Proof of work already used', 403));
    assert.deepEqual(outcomes.map(([o]) => o), ['challenge_invalid', 'challenge_missing', 'challenge_solved', 'challenge_replayed']);
  });

  it('joins_per_client_per_minute: over it, 429 with the Retry-After at which a retry fits; other clients and joins without a client are not limited', async () => {
    const { bots, room, clock, outcomes } = setUp({ challenge: 'always', joins_per_client_per_minute: 3 });
    clock.ms = T0 + 30_000; // half-way through a minute's window
    for (let i = 1; i <= 3; i++) await bots.checkJoin(room, { client: 'c', proofOfWork: `good-${i}` });
    // The fourth in the window: a retry fits (as the third of a minute) once 4 × (1 − elapsed) ≤ 2, half-way
    // through the next window: 30 + 30 s.
    assert.equal(await retryAfter(bots.checkJoin(room, { client: 'c', proofOfWork: 'good-0' })), 60);
    assert.deepEqual(outcomes.at(-1), ['join_limited', 'Sale']);
    await bots.checkJoin(room, { client: 'd', proofOfWork: 'good-4' });
    for (let i = 5; i < 9; i++) await bots.checkJoin(room, { proofOfWork: `good-${i}` });
  });

  it('auto counts a client even without a per-client limit: past client_threshold_per_minute it asks that client for work', async () => {
    const { bots, room } = setUp({ challenge: 'auto', client_threshold_per_minute: 2 });
    assert.deepEqual(await bots.checkJoin(room, { client: 'c' }), { kind: 'join' });
    assert.deepEqual(await bots.checkJoin(room, { client: 'c' }), { kind: 'join' });
    await assert.rejects(bots.checkJoin(room, { client: 'c' }), refusal('Proof of work required'));
    assert.deepEqual(await bots.checkJoin(room, { client: 'd' }), { kind: 'join' });
    // A join whose client is not known is counted for the room only.
    assert.deepEqual(await bots.checkJoin(room, {}), { kind: 'join' });
  });

  it("always does not run the flood detector (everyone solves anyway): no flood_detected", async () => {
    const { bots, room, outcomes } = setUp({ challenge: 'always', room_threshold_per_minute: 600 });
    for (let i = 0; i < 30; i++) await bots.checkJoin(room, { client: `198.51.100.${i}`, proofOfWork: `good-${i}` });
    assert.equal(outcomes.filter(([o]) => o === 'flood_detected').length, 0);
  });

  it("a room's counters and flood hold are its own: a flood in one room asks nothing of another", async () => {
    const store = new RecordingStore();
    const a = setUp({ room_threshold_per_minute: 600 }, { store, eventId: 'A' });
    const b = setUp({ room_threshold_per_minute: 600 }, { store, eventId: 'B' });
    for (let i = 0; i < 20; i++) await a.bots.checkJoin(a.room, { client: `198.51.100.${i}` }).catch(() => {});
    await assert.rejects(a.bots.checkJoin(a.room, { client: '198.51.101.1' }), refusal('Proof of work required'));
    assert.deepEqual(await b.bots.checkJoin(b.room, { client: '198.51.101.1' }), { kind: 'join' });
    b.clock.ms += 2_000; // the burst's window gone: only A's hold is left
    assert.deepEqual(await b.bots.checkJoin(b.room, { client: '198.51.101.2' }), { kind: 'join' });
  });

  it('the flood detector trips on a rate over the threshold, not at it', async () => {
    const { bots, room, clock, outcomes } = setUp({ room_threshold_per_minute: 600 });
    // Exactly 10 joins in the second: 600 a minute.
    for (let i = 0; i < 10; i++) assert.deepEqual(await bots.checkJoin(room, { client: `198.51.100.${i}` }), { kind: 'join' });
    clock.ms = T0 + 1_900; // the next second, its previous weighted 0.1: 1 + 1 joins, far under
    assert.deepEqual(await bots.checkJoin(room, { client: '198.51.100.99' }), { kind: 'join' });
    assert.deepEqual(outcomes, []);
  });

  it('the hold runs a full minute from the last join that found it with less than 59 s left', async () => {
    const { bots, room, clock } = setUp({ room_threshold_per_minute: 600 });
    const join = (client: string) => bots.checkJoin(room, { client }).then(() => 'joined', () => 'asked');
    for (let i = 0; i < 11; i++) await join(`198.51.100.${i}`); // trips at T0: held until T0 + 60 s
    // One second later the rate is still over (1 + 11 in the last second), but 59 s are left: not extended.
    clock.ms = T0 + 1_000;
    assert.equal(await join('198.51.100.50'), 'asked');
    clock.ms = T0 + 60_500;
    assert.equal(await join('198.51.100.51'), 'joined', 'the hold of T0 ran out');
  });

  it('a flood that goes on extends the hold: a minute after its last over-threshold join', async () => {
    const { bots, room, clock, outcomes } = setUp({ room_threshold_per_minute: 600 });
    const join = (client: string) => bots.checkJoin(room, { client }).then(() => 'joined', () => 'asked');
    for (let i = 0; i < 11; i++) await join(`198.51.100.${i}`);
    clock.ms = T0 + 30_000;
    for (let i = 0; i < 11; i++) await join(`198.51.101.${i}`); // over again: held until T0 + 90 s
    clock.ms = T0 + 70_000;
    assert.equal(await join('198.51.102.1'), 'asked');
    clock.ms = T0 + 90_000;
    assert.equal(await join('198.51.102.2'), 'joined');
    assert.equal(outcomes.filter(([o]) => o === 'flood_detected').length, 1, 'one flood, extended');
  });

  it('with a store that answers the end of a past hold: a hold ending this very millisecond no longer holds, and a new flood then is a new detection', async () => {
    const { bots, room, clock, outcomes } = setUp({ room_threshold_per_minute: 600 }, { store: new RecordingStore(true) });
    const join = (client: string) => bots.checkJoin(room, { client }).then(() => 'joined', () => 'asked');
    for (let i = 0; i < 11; i++) await join(`198.51.100.${i}`); // held until T0 + 60 s
    clock.ms = T0 + 60_000;
    assert.equal(await join('198.51.101.0'), 'joined', 'the hold ended at this millisecond');
    for (let i = 1; i < 11; i++) await join(`198.51.101.${i}`); // 11 in this second: a flood again
    assert.equal(outcomes.filter(([o]) => o === 'flood_detected').length, 2);
  });

  it('the server-wide write limit counts each client on its own, and says when a retry fits', async () => {
    const { bots, clock, outcomes } = setUp({});
    clock.ms = T0 + 30_000;
    for (let i = 0; i < 3; i++) await bots.limitWrite('198.51.100.1', 3);
    await bots.limitWrite('198.51.100.2', 3);
    // The fourth of a client: fits once 4 × (1 − elapsed) ≤ 2: 30 s to the window's end, then 30 s.
    assert.equal(await retryAfter(bots.limitWrite('198.51.100.1', 3)), 60);
    assert.deepEqual(outcomes, [['write_limited', undefined]]);
  });

  describe('enqueue keys', () => {
    const key = (claims: Partial<{ event_id: string; key: string; exp: number }> = {}) => signEnqueueKey(SITE, { event_id: 'Sale', key: 'user-42', exp: T0 / 1000 + 60, ...claims });

    it("a valid key takes its identity's place; the key's time is judged in seconds", async () => {
      const { bots, room, outcomes } = setUp({ challenge: 'off', enqueue_key_secret: SITE });
      assert.deepEqual(await bots.checkJoin(room, { enqueueKey: key() }), { kind: 'keyed', requestId: requestIdForKey(SITE, 'Sale', 'user-42') });
      assert.deepEqual(await bots.checkJoin(room, {}), { kind: 'join' }, 'without a key, a join as usual');
      assert.deepEqual(outcomes, []);
    });

    it('an invalid key is refused, and so is any key where the room has no secret', async () => {
      const { bots, room, outcomes } = setUp({ challenge: 'off', enqueue_key_secret: SITE });
      await assert.rejects(bots.checkJoin(room, { enqueueKey: key({ event_id: 'Other' }) }), refusal('Invalid enqueue key', 403));
      const noSecret = setUp({ challenge: 'off' });
      await assert.rejects(noSecret.bots.checkJoin(noSecret.room, { enqueueKey: key() }), refusal('Invalid enqueue key', 403));
      assert.deepEqual([...outcomes, ...noSecret.outcomes], [['enqueue_key_refused', 'Sale'], ['enqueue_key_refused', 'Sale']]);
    });

    it('require_enqueue_key: a join without one is refused', async () => {
      const { bots, room, outcomes } = setUp({ challenge: 'off', enqueue_key_secret: SITE, require_enqueue_key: true });
      await assert.rejects(bots.checkJoin(room, {}), refusal('Enqueue key required', 403));
      assert.deepEqual(outcomes, [['enqueue_key_refused', 'Sale']]);
      assert.equal((await bots.checkJoin(room, { enqueueKey: key() })).kind, 'keyed');
    });
  });

  describe('the infinite queue', () => {
    const parkingRoom = (settings: Partial<BotDefenceSettings>, parkingSecret: string | null = PARKING) =>
      setUp({ infinite_queue: true, ...settings }, parkingSecret === null ? {} : { parkingSecret });

    it('a failed or used proof and a client over its limit are parked; a missing proof is still refused', async () => {
      const { bots, room, outcomes } = parkingRoom({ challenge: 'always', joins_per_client_per_minute: 1 });
      assert.deepEqual(await bots.checkJoin(room, { client: 'a', proofOfWork: 'bad' }), { kind: 'parked' });
      assert.deepEqual(await bots.checkJoin(room, { client: 'b', proofOfWork: 'good-1' }), { kind: 'join' });
      assert.deepEqual(await bots.checkJoin(room, { client: 'c', proofOfWork: 'good-1' }), { kind: 'parked' });
      assert.deepEqual(await bots.checkJoin(room, { client: 'b', proofOfWork: 'good-2' }), { kind: 'parked' });
      await assert.rejects(bots.checkJoin(room, { client: 'd' }), refusal('Proof of work required'));
      assert.equal(bots.tally('Sale').parked, 3);
      assert.deepEqual(outcomes.filter(([o]) => o === 'parked'), [['parked', 'Sale'], ['parked', 'Sale'], ['parked', 'Sale']]);
    });

    it('without the server’s parking secret, or with infinite_queue off, the same joins are refused', async () => {
      for (const { bots, room } of [parkingRoom({ challenge: 'always' }, null), setUp({ challenge: 'always', infinite_queue: false }, { parkingSecret: PARKING })]) {
        await assert.rejects(bots.checkJoin(room, { proofOfWork: 'bad' }), refusal('Invalid proof of work'));
        assert.equal(bots.parkedPlace(room, parkedRequestId(PARKING, 'Sale', { position: 1, entryTime: 1 })), undefined);
      }
    });

    it("a parked place's request ID carries its position and the time now, in seconds, for this room only", () => {
      const { bots, room, clock } = parkingRoom({});
      clock.ms = 1_795_000_000_999;
      const id = bots.parkedRequestId('Sale', 77);
      assert.deepEqual(bots.parkedPlace(room, id), { position: 77, entryTime: 1_795_000_000 });
      assert.equal(bots.parkedPlace(room, crypto.randomUUID()), undefined);
      assert.equal(setUp(undefined, { parkingSecret: PARKING }).bots.parkedPlace(setUp(undefined).room, id), undefined, 'a room without a bot defence');
    });

    it('a parked ID made by another node (or before an upgrade) reads back the same: the format is fixed', () => {
      // Made once with parkedRequestId(PARKING, 'Sale', { position: 123456, entryTime: 1795000000 }).
      assert.deepEqual(readParkedRequestId(PARKING, 'Sale', 'a2f6fdfe-53fc-4fa5-97dc-7536c6923ddd'), { position: 123_456, entryTime: 1_795_000_000 });
    });

    it('an ID longer than a UUID is not a parked one, even if it starts with one', () => {
      const id = parkedRequestId(PARKING, 'Sale', { position: 5, entryTime: 6 });
      assert.deepEqual(readParkedRequestId(PARKING, 'Sale', id), { position: 5, entryTime: 6 });
      assert.equal(readParkedRequestId(PARKING, 'Sale', `${id}00`), undefined);
    });
  });
});

describe('enqueue keys: the bounds', () => {
  const secret = 'site-secret-0123456789abcdef-0123456789';
  const signed = (claims: Record<string, unknown>) => signEnqueueKey(secret, claims as unknown as Parameters<typeof signEnqueueKey>[1]);
  const base = { event_id: 'Sale', key: 'user-42', exp: 2_000 };

  it('a key of up to 2048 characters is read, a longer one is not', () => {
    // The payload grows with a padding field; the first length of each size is found by trying.
    const ofLength = (length: number) => {
      for (let pad = 0; pad < 2000; pad++) {
        const token = signed({ ...base, pad: 'p'.repeat(pad) });
        if (token.length === length) return token;
      }
      throw new Error(`no key of ${length} characters`);
    };
    assert.equal(readEnqueueKey(secret, ofLength(2048), 'Sale', 0), 'user-42');
    assert.equal(readEnqueueKey(secret, ofLength(2050), 'Sale', 0), undefined);
  });

  it('one dot only: a dot inside the signature (which base64url decoding would skip) makes the key unreadable', () => {
    const [payload, signature] = signed(base).split('.') as [string, string];
    assert.equal(readEnqueueKey(secret, `${payload}.${signature}`, 'Sale', 0), 'user-42');
    assert.equal(readEnqueueKey(secret, `${payload}.${signature.slice(0, 10)}.${signature.slice(10)}`, 'Sale', 0), undefined);
  });

  it('signed claims of the wrong shape read nothing (and throw nothing)', () => {
    assert.equal(readEnqueueKey(secret, signed(null as unknown as Record<string, unknown>), 'Sale', 0), undefined);
    assert.equal(readEnqueueKey(secret, signed({ ...base, exp: '9999999999' }), 'Sale', 0), undefined);
    assert.equal(readEnqueueKey(secret, signed({ ...base, key: 42 }), 'Sale', 0), undefined);
  });

  it('an identity of up to 256 characters', () => {
    assert.equal(readEnqueueKey(secret, signed({ ...base, key: 'k'.repeat(256) }), 'Sale', 0), 'k'.repeat(256));
    assert.equal(readEnqueueKey(secret, signed({ ...base, key: 'k'.repeat(257) }), 'Sale', 0), undefined);
  });
});

describe('rates: the bounds', () => {
  it('Retry-After when the current window alone is over and the previous one counts too: the current window decides', () => {
    // 5 now, 10 before, limit 3, 10 s before the window ends: at its end the 5 become the previous window and
    // must fall to 3: 60 × (1 − 3/5) = 24 s more.
    assert.equal(secondsUntilUnder({ current: 5, previous: 10, endsAtMs: 60_000 }, 3, 50_000), 10 + 24);
  });

  it('is a whole number of seconds, at least 1, for counts already at the limit', () => {
    const seconds = secondsUntilUnder({ current: 3, previous: 0, endsAtMs: 60_000 }, 3, 30_000);
    assert.ok(Number.isInteger(seconds) && seconds >= 1, String(seconds));
  });

  it('a client key is a whole IP address; text around one is hashed', () => {
    assert.match(clientKey('client 198.51.100.7'), /^[0-9a-f]{64}$/);
    assert.match(clientKey('198.51.100.7 {x}'), /^[0-9a-f]{64}$/);
  });
});
