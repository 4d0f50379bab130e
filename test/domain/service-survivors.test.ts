// The waiting-room service's answers that the mutation run of the domain scope found unstated (docs/testing.md,
// "Mutation testing"): a room asking a proof of work on a node without a proof-of-work adapter, a visitor who
// leaves the pre-queue while the draw numbers it, a claim that loses its race to a leave, a position left before
// queue_pos_expiry, and the first minute of a report whose range begins with the room's history.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ContractError } from '../../src/domain/errors.ts';
import type { TokenRecord } from '../../src/domain/claims.ts';
import type { DetailType, EventDetails, EventPublisher } from '../../src/domain/ports/events.ts';
import type { IssueResult } from '../../src/domain/ports/store.ts';
import type { TokenSigning } from '../../src/domain/ports/tokens.ts';
import { RoomRegistry } from '../../src/domain/room-registry.ts';
import { defaultSettings, type RoomSettings } from '../../src/domain/room-settings.ts';
import { waitField } from '../../src/domain/wait-histogram.ts';
import { WaitingRoomService, type Answer, type WaitingRoomServiceDeps } from '../../src/domain/waiting-room-service.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const NOW_S = 1_800_000_000;
const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

class RacingStore extends SqliteStore {
  forceIssue: IssueResult | null = null;
  constructor() {
    super({ path: ':memory:' });
  }
  override async issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult> {
    const forced = this.forceIssue;
    this.forceIssue = null;
    return forced ?? super.issueTokenIfAbsent(eventId, record);
  }
}

const signer: TokenSigning = {
  sign: async (eventId, record) => {
    const spelled = (use: string) => JSON.stringify({ use, eventId, ...record });
    return { access_token: spelled('access'), refresh_token: spelled('refresh'), id_token: spelled('id') };
  },
};

function setup(rooms: RoomSettings[], extra: Partial<WaitingRoomServiceDeps> = {}) {
  const store = new RacingStore();
  const clock = { ms: NOW_S * 1000 };
  const published: { type: DetailType; detail: EventDetails[DetailType] }[] = [];
  const events: EventPublisher = { publish: (type, detail) => void published.push({ type, detail }) };
  const service = new WaitingRoomService({
    store,
    rooms: new RoomRegistry(rooms),
    keys: {
      forget: () => {},
      current: async (eventId) => ({ kid: `${eventId}-k`, publicJwk: { kty: 'RSA', alg: 'RS256', kid: `${eventId}-k`, n: 'n', e: 'AQAB' } }),
      all: async () => [],
    },
    signer,
    events,
    clock: () => clock.ms,
    defaultIssuer: () => 'https://node.example',
    ...extra,
  });
  return { store, clock, published, service };
}

function ok<T>(answer: Answer<T>): T {
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return (answer as { status: 200; body: T }).body;
}

const contractError = (status: number, message: string) => (error: unknown) =>
  error instanceof ContractError && error.status === status && error.message === message;

describe('a room that asks a proof of work, on a node without a proof-of-work adapter', () => {
  const room: RoomSettings = {
    ...defaultSettings('P'),
    bot_defence: {
      challenge: 'always',
      difficulty: 1000,
      max_difficulty: 100_000,
      room_threshold_per_minute: 600,
      client_threshold_per_minute: 10,
      challenge_ttl: 300,
      require_enqueue_key: false,
      infinite_queue: false,
    },
  };

  it('offers no challenge (404) and refuses any solution as invalid (403); nothing is stored', async () => {
    const { service, store } = setup([room]);
    await assert.rejects(service.challenge('P'), contractError(404, 'This waiting room asks no proof of work'));
    await assert.rejects(service.assignQueueNum('P', { client: 'a', proofOfWork: 'any.solution' }), contractError(403, 'Invalid proof of work'));
    await assert.rejects(service.assignQueueNum('P', { client: 'a' }), contractError(403, 'Proof of work required'));
    assert.equal((await store.getCounters('P')).queue, 0);
    await store.close();
  });
});

describe('leave_queue of a visitor of the pre-queue while the draw runs', () => {
  const START_S = NOW_S + 60;
  const drawRoom: RoomSettings = { ...defaultSettings('D'), prequeue_start_time: iso(NOW_S - 60), event_start_time: iso(START_S), shuffle_at_event_start: true };

  it('while the draw is numbering the pre-queue: 409 "draw in progress", nothing published', async () => {
    const { service, store, published } = setup([drawRoom]);
    const { api_request_id: id } = ok(await service.assignQueueNum('D'));
    store.leavePrequeue = async () => 'being-drawn';
    const refused = await service.leaveQueue('D', id).then(
      () => assert.fail('answered'),
      (error: unknown) => error,
    );
    assert.ok(refused instanceof ContractError, String(refused));
    assert.deepEqual([refused.status, refused.code], [409, 'ANTEROOM_ERR_DRAW_IN_PROGRESS']);
    assert.deepEqual(published.filter((p) => p.type === 'queue_left'), []);
    await store.close();
  });

  it('numbered by the draw between the two store calls: the visitor leaves the position the draw gave', async () => {
    const { service, store, published, clock } = setup([drawRoom]);
    const [a, b] = (await Promise.all([service.assignQueueNum('D'), service.assignQueueNum('D')])).map((x) => ok(x).api_request_id);
    const leavePrequeue = store.leavePrequeue.bind(store);
    store.leavePrequeue = async () => {
      store.leavePrequeue = leavePrequeue;
      clock.ms = START_S * 1000;
      await service.runDraws();
      return 'numbered';
    };
    assert.deepEqual(await service.leaveQueue('D', a), { status: 200, body: {} });
    assert.deepEqual(published.filter((p) => p.type === 'queue_left'), [{ type: 'queue_left', detail: { event_id: 'D', request_id: a } }]);
    assert.equal(ok(await service.waitingNum('D')).waiting_num, 1);
    await assert.rejects(service.generateToken('D', a), contractError(410, 'Queue position was given up'));
    assert.ok(ok(await service.queueNum('D', b)).queue_number >= 1);
    await store.close();
  });
});

describe('a visitor who left the pre-queue before the draw', () => {
  const drawRoom: RoomSettings = { ...defaultSettings('D'), prequeue_start_time: iso(NOW_S - 60), event_start_time: iso(NOW_S + 60), shuffle_at_event_start: true };

  it('is no longer waiting for the draw: generate_token and queue_pos_expiry answer 404, as for an unknown ID', async () => {
    const { service, store } = setup([drawRoom]);
    const [stays, leaves] = (await Promise.all([service.assignQueueNum('D'), service.assignQueueNum('D')])).map((x) => ok(x).api_request_id);
    ok(await service.leaveQueue('D', leaves));
    const waiting = { status: 202, body: { error: 'Request ID not being served yet' } };
    assert.deepEqual(await service.generateToken('D', stays), waiting);
    await assert.rejects(service.generateToken('D', leaves), contractError(404, 'Invalid request ID'));
    await assert.rejects(service.queuePosExpiry('D', leaves), contractError(404, 'Invalid request ID'));
    await assert.rejects(service.generateToken('D', '00000000-0000-4000-8000-000000000000'), contractError(404, 'Invalid request ID'));
    await store.close();
  });
});

describe('a place left before its claim or its expiry question', () => {
  it('a claim whose atomic issue finds the visitor left (a leave between the read and the issue) is 410 "given up"', async () => {
    const { service, store, published } = setup([defaultSettings('E')]);
    const { api_request_id: id } = ok(await service.assignQueueNum('E'));
    await service.incrementServingCounter('E', 1);
    published.length = 0;
    store.forceIssue = { outcome: 'left' };
    await assert.rejects(service.generateToken('E', id), contractError(410, 'Queue position was given up'));
    assert.deepEqual(published, []);
    await store.close();
  });

  it('queue_pos_expiry of a visitor who left is 410 "given up"', async () => {
    const { service, store } = setup([{ ...defaultSettings('E'), queue_position_expiry_period: 100 }]);
    await service.start();
    const { api_request_id: id } = ok(await service.assignQueueNum('E'));
    await service.incrementServingCounter('E', 1);
    ok(await service.leaveQueue('E', id));
    await assert.rejects(service.queuePosExpiry('E', id), contractError(410, 'Queue position was given up'));
    await service.close();
    await store.close();
  });
});

describe('the report of a range that begins with the room\'s history', () => {
  it('keeps the first minute (a sample at the range\'s first minute is not taken for the minute before)', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    const minute = NOW_S - (NOW_S % 60);
    clock.ms = minute * 1000;
    ok(await service.assignQueueNum('E'));
    await service.recordHistory(3600);
    clock.ms += 60_000;
    ok(await service.assignQueueNum('E'));
    await service.recordHistory(3600);
    const report = (await service.roomReport('E', minute + 30, minute + 60)).body;
    assert.deepEqual(report.minutes.map((m) => [m.minute, m.waiting]), [[minute, 1], [minute + 60, 2]]);
    await store.close();
  });
});

describe('the wait of an admitted visitor, and the estimate it was given', () => {
  it('a claim tallies the wait from the join to the admission (not to the claim) under the admission\'s minute', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    const { api_request_id: id } = ok(await service.assignQueueNum('E'));
    clock.ms += 30_000;
    await service.incrementServingCounter('E', 1);
    clock.ms += 100_000;
    ok(await service.generateToken('E', id));
    await service.flushWaits(3600);
    assert.deepEqual(await store.readWaits('E', NOW_S - 600, NOW_S + 600), [{ minute: NOW_S, counts: { [waitField(30)]: 1 } }]);
    await store.close();
  });

  it('a visitor who joins after the counter passed the place waited nothing, admitted when it joined', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    clock.ms -= 5_000;
    await service.incrementServingCounter('E', 5);
    clock.ms += 15_000;
    const { api_request_id: id } = ok(await service.assignQueueNum('E'));
    ok(await service.generateToken('E', id));
    await service.flushWaits(3600);
    assert.deepEqual(await store.readWaits('E', NOW_S - 600, NOW_S + 600), [{ minute: NOW_S, counts: { [waitField(0)]: 1 } }]);
    await store.close();
  });

  it('the pace counts up to now, with the counter read now; the estimate is judged against the admission time', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(ok(await service.assignQueueNum('E')).api_request_id);
    const last = ids[11]!;
    ok(await service.servingNum('E')); // 0 seen at t0
    await service.incrementServingCounter('E', 2);
    clock.ms += 5_000;
    ok(await service.servingNum('E')); // 2 seen at t0 + 5 s: too short a span for a pace
    await service.incrementServingCounter('E', 3); // 5, not seen until the lookup
    clock.ms += 20_000;
    // At t0 + 25 s: 5 let in over 25 s = 0.2 a second; 7 people ahead: 35 s, as 28..44.
    assert.deepEqual(ok(await service.queueNum('E', last)).wait_estimate_s, [28, 44]);
    clock.ms += 10_000;
    await service.incrementServingCounter('E', 7); // the place is served at t0 + 35 s, 35 s after its join
    clock.ms += 50_000;
    ok(await service.generateToken('E', last));
    // Judged: waited 35 s against the middle of 28..44 (36 s): 1 s off.
    assert.deepEqual(ok(await service.roomFigures('E')).estimate_accuracy, { samples: 1, median_abs_error_s: 1 });
    await store.close();
  });
});
