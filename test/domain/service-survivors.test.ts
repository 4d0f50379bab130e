// The waiting-room service's answers that the mutation run of the domain scope found unstated (docs/testing.md,
// "Mutation testing"): a room asking a proof of work on a node without a proof-of-work adapter, a visitor who
// leaves the pre-queue while the draw numbers it, a claim that loses its race to a leave, a position left before
// queue_pos_expiry, the first minute of a report whose range begins with the room's history; and (the judging of
// the last 35 survivors of `72747cf`) joins through an asynchronous intake or with an enqueue key, the estimate
// fed by the counter stream and the polls from memory, the waits tallied and flushed, the history minute, a
// re-claim after the clock went back, a MaxSize report, and the rooms API's edges.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signEnqueueKey } from '../../src/domain/bot-defence.ts';
import { ContractError } from '../../src/domain/errors.ts';
import type { TokenRecord } from '../../src/domain/claims.ts';
import type { DetailType, EventDetails, EventPublisher } from '../../src/domain/ports/events.ts';
import type { IssueResult, JoinRequest } from '../../src/domain/ports/store.ts';
import type { TokenSigning } from '../../src/domain/ports/tokens.ts';
import { RoomRegistry } from '../../src/domain/room-registry.ts';
import { defaultSettings, type RoomSettings } from '../../src/domain/room-settings.ts';
import { waitField } from '../../src/domain/wait-histogram.ts';
import type { Answer } from '../../src/domain/services/room-context.ts';
import { buildWaitingRoom, type WaitingRoomDeps } from '../../src/domain/services/waiting-room.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { botDefence } from '../support/bot-defence-settings.ts';


const NOW_S = 1_800_000_000;
const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

class RacingStore extends SqliteStore {
  forceIssue: IssueResult | null = null;
  /** Another node's claim of the same place lands just before this one's atomic issue. */
  otherNodeClaimsFirst = false;
  constructor() {
    super({ path: ':memory:' });
  }
  override async issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult> {
    const forced = this.forceIssue;
    this.forceIssue = null;
    if (this.otherNodeClaimsFirst) {
      this.otherNodeClaimsFirst = false;
      await super.issueTokenIfAbsent(eventId, record);
    }
    return forced ?? super.issueTokenIfAbsent(eventId, record);
  }
}

const signWith: TokenSigning['sign'] = async (eventId, record) => {
  const spelled = (use: string) => JSON.stringify({ use, eventId, ...record });
  return { access_token: spelled('access'), refresh_token: spelled('refresh'), id_token: spelled('id') };
};
const signer: TokenSigning = { sign: signWith, signNew: signWith };

function setup(rooms: RoomSettings[], extra: Partial<WaitingRoomDeps> = {}) {
  const store = new RacingStore();
  const clock = { ms: NOW_S * 1000 };
  const published: { type: DetailType; detail: EventDetails[DetailType] }[] = [];
  const events: EventPublisher = { publish: (type, detail) => void published.push({ type, detail }) };
  const registry = new RoomRegistry(rooms);
  const service = buildWaitingRoom({
    store,
    rooms: registry,
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
  return { store, clock, published, service, registry };
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
    bot_defence: botDefence({ challenge: 'always' }),
  };

  it('offers no challenge (404) and refuses any solution as invalid (403); nothing is stored', async () => {
    const { service, store } = setup([room]);
    await assert.rejects(service.queue.challenge('P'), contractError(404, 'This waiting room asks no proof of work'));
    await assert.rejects(service.queue.assignQueueNum('P', { client: 'a', proofOfWork: 'any.solution' }), contractError(403, 'Invalid proof of work'));
    await assert.rejects(service.queue.assignQueueNum('P', { client: 'a' }), contractError(403, 'Proof of work required'));
    assert.equal((await store.getCounters('P')).queue, 0);
    await store.close();
  });
});

describe('leave_queue of a visitor of the pre-queue while the draw runs', () => {
  const START_S = NOW_S + 60;
  const drawRoom: RoomSettings = { ...defaultSettings('D'), prequeue_start_time: iso(NOW_S - 60), event_start_time: iso(START_S), shuffle_at_event_start: true };

  it('while the draw is numbering the pre-queue: 409 "draw in progress", nothing published', async () => {
    const { service, store, published } = setup([drawRoom]);
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('D', {}));
    store.leavePrequeue = async () => 'being-drawn';
    const refused = await service.queue.leaveQueue('D', id).then(
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
    const [a, b] = (await Promise.all([service.queue.assignQueueNum('D', {}), service.queue.assignQueueNum('D', {})])).map((x) => ok(x).api_request_id);
    const leavePrequeue = store.leavePrequeue.bind(store);
    store.leavePrequeue = async () => {
      store.leavePrequeue = leavePrequeue;
      clock.ms = START_S * 1000;
      await service.draws.runDraws();
      return 'numbered';
    };
    assert.deepEqual(await service.queue.leaveQueue('D', a), { status: 200, body: {} });
    assert.deepEqual(published.filter((p) => p.type === 'queue_left'), [{ type: 'queue_left', detail: { event_id: 'D', request_id: a } }]);
    assert.equal(ok(await service.queue.waitingNum('D')).waiting_num, 1);
    await assert.rejects(service.claims.generateToken('D', a), contractError(410, 'Queue position was given up'));
    assert.ok(ok(await service.queue.queueNum('D', b)).queue_number >= 1);
    await store.close();
  });
});

describe('a visitor who left the pre-queue before the draw', () => {
  const drawRoom: RoomSettings = { ...defaultSettings('D'), prequeue_start_time: iso(NOW_S - 60), event_start_time: iso(NOW_S + 60), shuffle_at_event_start: true };

  it('is no longer waiting for the draw: generate_token and queue_pos_expiry answer 404, as for an unknown ID', async () => {
    const { service, store } = setup([drawRoom]);
    const [stays, leaves] = (await Promise.all([service.queue.assignQueueNum('D', {}), service.queue.assignQueueNum('D', {})])).map((x) => ok(x).api_request_id);
    ok(await service.queue.leaveQueue('D', leaves));
    const waiting = { status: 202, body: { error: 'Request ID not being served yet' } };
    assert.deepEqual(await service.claims.generateToken('D', stays), waiting);
    await assert.rejects(service.claims.generateToken('D', leaves), contractError(404, 'Invalid request ID'));
    await assert.rejects(service.claims.queuePosExpiry('D', leaves), contractError(404, 'Invalid request ID'));
    await assert.rejects(service.claims.generateToken('D', '00000000-0000-4000-8000-000000000000'), contractError(404, 'Invalid request ID'));
    await store.close();
  });
});

describe('a room whose draw is switched off while visitors wait in its pre-queue', () => {
  it('no longer knows that pre-queue: queue_num answers "not found" and leave_queue 404, as for an unknown ID', async () => {
    const drawRoom: RoomSettings = { ...defaultSettings('D'), prequeue_start_time: iso(NOW_S - 60), event_start_time: iso(NOW_S + 60), shuffle_at_event_start: true };
    const { service, store, registry, published } = setup([drawRoom]);
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('D', {}));
    await registry.put({ ...drawRoom, shuffle_at_event_start: false });
    assert.deepEqual(await service.queue.queueNum('D', id), { status: 202, body: { error: 'Request ID not found' } });
    await assert.rejects(service.queue.leaveQueue('D', id), contractError(404, 'Invalid request ID'));
    assert.deepEqual(published.filter((p) => p.type === 'queue_left'), []);
    await store.close();
  });
});

describe('a place left before its claim or its expiry question', () => {
  it('a claim whose atomic issue finds the visitor left (a leave between the read and the issue) is 410 "given up"', async () => {
    const { service, store, published } = setup([defaultSettings('E')]);
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    await service.admission.incrementServingCounter('E', 1);
    published.length = 0;
    store.forceIssue = { outcome: 'left' };
    await assert.rejects(service.claims.generateToken('E', id), contractError(410, 'Queue position was given up'));
    assert.deepEqual(published, []);
    await store.close();
  });

  it('queue_pos_expiry of a visitor who left is 410 "given up"', async () => {
    const { service, store } = setup([{ ...defaultSettings('E'), queue_position_expiry_period: 100 }]);
    await service.start();
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    await service.admission.incrementServingCounter('E', 1);
    ok(await service.queue.leaveQueue('E', id));
    await assert.rejects(service.claims.queuePosExpiry('E', id), contractError(410, 'Queue position was given up'));
    await service.close();
    await store.close();
  });
});

describe('the report of a range that begins with the room\'s history', () => {
  it('keeps the first minute (a sample at the range\'s first minute is not taken for the minute before)', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    const minute = NOW_S - (NOW_S % 60);
    clock.ms = minute * 1000;
    ok(await service.queue.assignQueueNum('E', {}));
    await service.reports.recordHistory(3600);
    clock.ms += 60_000;
    ok(await service.queue.assignQueueNum('E', {}));
    await service.reports.recordHistory(3600);
    const report = (await service.reports.roomReport('E', minute + 30, minute + 60)).body;
    assert.deepEqual(report.minutes.map((m) => [m.minute, m.waiting]), [[minute, 1], [minute + 60, 2]]);
    await store.close();
  });
});

describe('the wait of an admitted visitor, and the estimate it was given', () => {
  it('a claim tallies the wait from the join to the admission (not to the claim) under the admission\'s minute', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    clock.ms += 30_000;
    await service.admission.incrementServingCounter('E', 1);
    clock.ms += 100_000;
    ok(await service.claims.generateToken('E', id));
    await service.reports.flushWaits(3600);
    assert.deepEqual(await store.readWaits('E', NOW_S - 600, NOW_S + 600), [{ minute: NOW_S, counts: { [waitField(30)]: 1 } }]);
    await store.close();
  });

  it('a visitor who joins after the counter passed the place waited nothing, admitted when it joined', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    clock.ms -= 5_000;
    await service.admission.incrementServingCounter('E', 5);
    clock.ms += 15_000;
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    ok(await service.claims.generateToken('E', id));
    await service.reports.flushWaits(3600);
    assert.deepEqual(await store.readWaits('E', NOW_S - 600, NOW_S + 600), [{ minute: NOW_S, counts: { [waitField(0)]: 1 } }]);
    await store.close();
  });

  it('the pace counts up to now, with the counter read now; the estimate is judged against the admission time', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(ok(await service.queue.assignQueueNum('E', {})).api_request_id);
    const last = ids[11]!;
    ok(await service.queue.servingNum('E')); // 0 seen at t0
    await service.admission.incrementServingCounter('E', 2);
    clock.ms += 5_000;
    ok(await service.queue.servingNum('E')); // 2 seen at t0 + 5 s: too short a span for a pace
    await service.admission.incrementServingCounter('E', 3); // 5, not seen until the lookup
    clock.ms += 20_000;
    // At t0 + 25 s: 5 let in over 25 s = 0.2 a second; 7 people ahead: 35 s, as 28..44.
    assert.deepEqual(ok(await service.queue.queueNum('E', last)).wait_estimate_s, [28, 44]);
    clock.ms += 10_000;
    await service.admission.incrementServingCounter('E', 7); // the place is served at t0 + 35 s, 35 s after its join
    clock.ms += 50_000;
    ok(await service.claims.generateToken('E', last));
    // Judged: waited 35 s against the middle of 28..44 (36 s): 1 s off.
    assert.deepEqual(ok(await service.reports.roomFigures('E')).estimate_accuracy, { samples: 1, median_abs_error_s: 1 });
    await store.close();
  });
});

describe('joins: an asynchronous intake, enqueue keys', () => {
  const secret = 'site-secret-0123456789abcdef-0123456789';
  const keyed: RoomSettings = { ...defaultSettings('K'), bot_defence: botDefence({ enqueue_key_secret: secret }) };

  it('with an asynchronous intake, a join is handed to the intake and answered before it has a position', async () => {
    const handed: { eventId: string; joins: readonly JoinRequest[] }[] = [];
    const { service, store } = setup([defaultSettings('E')], { intake: async (eventId, joins) => void handed.push({ eventId, joins }) });
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    assert.deepEqual(handed.map(({ eventId, joins }) => [eventId, joins.map((j) => j.requestId)]), [['E', [id]]]);
    assert.equal((await store.getCounters('E')).queue, 0, 'numbered later, by whoever consumes the intake');
    await store.close();
  });

  it('a join carrying an enqueue key to a room without bot defence is refused (403): no key can be valid there', async () => {
    const { service, store } = setup([defaultSettings('E')]);
    const key = signEnqueueKey(secret, { event_id: 'E', key: 'user-42', exp: NOW_S + 60 });
    await assert.rejects(service.queue.assignQueueNum('E', { enqueueKey: key }), contractError(403, 'Invalid enqueue key'));
    assert.equal((await store.getCounters('E')).queue, 0);
    await store.close();
  });

  it('an OpenID join with an enqueue key binds its authorization request to the key\'s place', async () => {
    const { service, store } = setup([keyed]);
    const key = signEnqueueKey(secret, { event_id: 'K', key: 'user-42', exp: NOW_S + 60 });
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('K', { enqueueKey: key }, 'authorization-request'));
    assert.equal(await service.claims.boundAuthorization('K', id), 'authorization-request');
    await store.close();
  });

  it('a reset forgets the estimate given to a place: the same enqueue key joining again is not shown the old one', async () => {
    const { service, store, clock } = setup([keyed]);
    for (let i = 0; i < 11; i++) ok(await service.queue.assignQueueNum('K', {}));
    const key = signEnqueueKey(secret, { event_id: 'K', key: 'user-42', exp: NOW_S + 600 });
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('K', { enqueueKey: key }));
    ok(await service.queue.servingNum('K'));
    await service.admission.incrementServingCounter('K', 2);
    clock.ms += 20_000;
    ok(await service.queue.servingNum('K'));
    // 2 let in over 20 s: 0.1 a second; 10 people ahead of place 12: 100 s, as 80..125.
    assert.deepEqual(ok(await service.queue.queueNum('K', id)).wait_estimate_s, [80, 125]);
    ok(await service.admission.resetInitialState('K'));
    assert.equal(ok(await service.queue.assignQueueNum('K', { enqueueKey: key })).api_request_id, id, 'the key\'s place, again');
    const again = ok(await service.queue.queueNum('K', id));
    assert.equal(again.queue_number, 1);
    assert.equal('wait_estimate_s' in again, false, 'no pace measured since the reset, and the old estimate is gone');
    await store.close();
  });
});

describe('the wait estimate, fed by every read of the counter', () => {
  it('the public counter stream measures the pace on its own (its reads are timed in milliseconds like the others)', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(ok(await service.queue.assignQueueNum('E', {})).api_request_id);
    await service.queue.streamCounters('E');
    await service.admission.incrementServingCounter('E', 2);
    clock.ms += 20_000;
    await service.queue.streamCounters('E');
    assert.deepEqual(ok(await service.queue.queueNum('E', ids[11])).wait_estimate_s, [80, 125]);
    await store.close();
  });

  it('so do the polls answered from memory; a room whose counters are not in memory yet answers nothing', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    assert.equal(service.queue.countersInMemory('E'), undefined, 'nothing read yet');
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(ok(await service.queue.assignQueueNum('E', {})).api_request_id);
    await store.getCounters('E');
    assert.equal(service.queue.countersInMemory('E')?.serving, 0);
    await service.admission.incrementServingCounter('E', 2);
    clock.ms += 20_000;
    await store.getCounters('E'); // a write drops the row; the next read keeps it again
    assert.equal(service.queue.countersInMemory('E')?.serving, 2);
    assert.deepEqual(ok(await service.queue.queueNum('E', ids[11])).wait_estimate_s, [80, 125]);
    await store.close();
  });

  it('a place looked up when the counter stands exactly at it is shown 0 s, and that estimate is not judged', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(ok(await service.queue.assignQueueNum('E', {})).api_request_id);
    ok(await service.queue.servingNum('E'));
    await service.admission.incrementServingCounter('E', 5);
    clock.ms += 25_000;
    ok(await service.queue.servingNum('E'));
    assert.deepEqual(ok(await service.queue.queueNum('E', ids[4])).wait_estimate_s, [0, 0]);
    ok(await service.claims.generateToken('E', ids[4]));
    assert.deepEqual(ok(await service.reports.roomFigures('E')).estimate_accuracy, { samples: 0, median_abs_error_s: null });
    await store.close();
  });

  it('the counter stream reports the room\'s generation: how many times it was reset', async () => {
    const { service, store } = setup([defaultSettings('E')]);
    assert.equal((await service.queue.streamCounters('E')).generation, 0);
    ok(await service.admission.resetInitialState('E'));
    ok(await service.admission.resetInitialState('E'));
    assert.equal((await service.queue.streamCounters('E')).generation, 2);
    await store.close();
  });
});

describe('the waits tallied for the history', () => {
  it('are not tallied at all when recording waits is off', async () => {
    const { service, store } = setup([defaultSettings('E')], { recordWaits: false });
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    await service.admission.incrementServingCounter('E', 1);
    ok(await service.claims.generateToken('E', id));
    await service.reports.flushWaits(3600);
    assert.deepEqual(await store.readWaits('E', NOW_S - 600, NOW_S + 600), []);
    await store.close();
  });

  it('a claim that loses its race to another node\'s claim answers that set and tallies no wait here (the winner does)', async () => {
    const { service, store } = setup([defaultSettings('E')]);
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    await service.admission.incrementServingCounter('E', 1);
    store.otherNodeClaimsFirst = true;
    const tokens = ok(await service.claims.generateToken('E', id));
    assert.deepEqual(ok(await service.claims.generateToken('E', id)), tokens, 'the stored set');
    await service.reports.flushWaits(3600);
    assert.deepEqual(await store.readWaits('E', NOW_S - 600, NOW_S + 600), []);
    await store.close();
  });

  it('of a room removed are dropped, not written under its ID', async () => {
    const { service, store, registry } = setup([defaultSettings('E')]);
    await service.start();
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    await service.admission.incrementServingCounter('E', 1);
    ok(await service.claims.generateToken('E', id));
    await registry.remove('E');
    await service.reports.flushWaits(3600);
    assert.deepEqual(await store.readWaits('E', NOW_S - 600, NOW_S + 600), []);
    await service.close();
    await store.close();
  });

  it('a flush the store refuses part of fails; the part not written is written at the next flush, the rest not again', async () => {
    const { service, store } = setup([defaultSettings('A'), defaultSettings('B')]);
    for (const room of ['A', 'B']) {
      const { api_request_id: id } = ok(await service.queue.assignQueueNum(room, {}));
      await service.admission.incrementServingCounter(room, 1);
      ok(await service.claims.generateToken(room, id));
    }
    const addWaits = store.addWaits.bind(store);
    store.addWaits = async (eventId, waits, keep) => {
      if (eventId === 'B') throw new Error('store away');
      return addWaits(eventId, waits, keep);
    };
    await assert.rejects(service.reports.flushWaits(3600), /store away/);
    store.addWaits = addWaits;
    await service.reports.flushWaits(3600);
    const one = [{ minute: NOW_S, counts: { [waitField(0)]: 1 } }];
    assert.deepEqual(await store.readWaits('A', NOW_S - 600, NOW_S + 600), one);
    assert.deepEqual(await store.readWaits('B', NOW_S - 600, NOW_S + 600), one);
    await store.close();
  });
});

describe('the history sample of a minute', () => {
  it('taken in the middle of a minute is filed under that minute', async () => {
    const { service, store, clock } = setup([defaultSettings('E')]);
    clock.ms = (NOW_S + 30) * 1000;
    ok(await service.queue.assignQueueNum('E', {}));
    await service.reports.recordHistory(3600);
    assert.deepEqual((await store.readHistory('E', NOW_S - 600, NOW_S + 600)).map((s) => s.minute), [NOW_S]);
    await store.close();
  });
});

describe('a claim answered again after the clock went back', () => {
  it('says the set stays valid for its validity period, never longer', async () => {
    const { service, store, clock } = setup([{ ...defaultSettings('E'), validity_period: 3600 }]);
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    await service.admission.incrementServingCounter('E', 1);
    assert.equal(ok(await service.claims.generateToken('E', id)).expires_in, 3600);
    clock.ms -= 100_000;
    assert.equal(ok(await service.claims.generateToken('E', id)).expires_in, 3600);
    await store.close();
  });
});

describe('a MaxSize report through the service', () => {
  it('closes the sessions it reports completed (session_updated) and counts them', async () => {
    const { service, store, published } = setup([defaultSettings('E')]);
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    await service.admission.incrementServingCounter('E', 1);
    ok(await service.claims.generateToken('E', id));
    published.length = 0;
    const result = await service.admission.admit('E', { kind: 'max-size', maxSize: 10, report: { exited: 0, completed: [id], abandoned: [] } });
    assert.equal(result.closed, 1);
    assert.deepEqual(published.filter((p) => p.type === 'session_updated'), [
      { type: 'session_updated', detail: { event_id: 'E', request_id: id, status: 'completed' } },
    ]);
    await store.close();
  });
});

describe('rooms: start, close, the rooms API', () => {
  it('close of a service never started stops nothing and resolves', async () => {
    const { service, store } = setup([defaultSettings('E')]);
    await service.close();
    await store.close();
  });

  it('openRooms serves the configured rooms; syncRooms serves a room another node stored', async () => {
    const { service, store } = setup([]);
    await service.rooms.openRooms([defaultSettings('Configured')]);
    assert.equal(service.rooms.roomSettings('Configured')?.event_id, 'Configured');
    assert.notEqual(await store.getRoom('Configured'), null, 'written to the store');
    await store.putRoom('Other', JSON.stringify(defaultSettings('Other')));
    assert.equal(service.rooms.roomSettings('Other'), undefined);
    await service.rooms.syncRooms();
    assert.equal(service.rooms.roomSettings('Other')?.event_id, 'Other');
    await store.close();
  });

  it('roomsSnapshot is every room served, the same array until a room changes', async () => {
    const { service, store, registry } = setup([defaultSettings('A')]);
    const snapshot = service.rooms.roomsSnapshot();
    assert.deepEqual(snapshot.map((r) => r.event_id), ['A']);
    assert.equal(service.rooms.roomsSnapshot(), snapshot);
    await registry.put(defaultSettings('B'));
    assert.deepEqual(service.rooms.roomsSnapshot().map((r) => r.event_id), ['A', 'B']);
    await store.close();
  });

  it('a room put through the rooms API takes the node\'s defaults for the settings its body leaves out', async () => {
    const { service, store } = setup([], { roomDefaults: { validity_period: 1234 } });
    const put = await service.rooms.putRoom('R', {});
    assert.equal((put.body as unknown as RoomSettings).validity_period, 1234);
    await store.close();
  });

  it('a PUT to an ID no room can have names event_id, whatever the body', async () => {
    const { service, store } = setup([]);
    const refusal = "Invalid room settings: event_id: must be 1–128 letters, digits, '.', '_', '~' or '-'";
    await assert.rejects(service.rooms.putRoom('bad id!', 'not an object'), contractError(400, refusal));
    await assert.rejects(service.rooms.putRoom('bad id!', { event_id: 'Other' }), contractError(400, refusal));
    await store.close();
  });

  it('a value that is not a string names no room: 404 without asking the store (which cannot look it up)', async () => {
    const { service, store } = setup([], { sleep: async () => {} });
    for (const id of [['R'], undefined, { toString: () => 'R' }]) {
      await assert.rejects(service.rooms.getRoom(id), contractError(404, 'Room not found'), JSON.stringify(id));
      await assert.rejects(service.rooms.deleteRoom(id), contractError(404, 'Room not found'), JSON.stringify(id));
    }
    await store.close();
  });

  it('the figures of a room with bot defence count what the defence did here', async () => {
    const room: RoomSettings = {
      ...defaultSettings('P'),
      bot_defence: botDefence({ require_enqueue_key: true }),
    };
    const { service, store } = setup([room]);
    await assert.rejects(service.queue.assignQueueNum('P', {}), contractError(403, 'Enqueue key required'));
    const figures = ok(await service.reports.roomFigures('P'));
    assert.equal(figures.bot_defence?.enqueue_key_refused, 1);
    await store.close();
  });
});
