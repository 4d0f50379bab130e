// The waiting-room service alone: its real rules (src/domain) over the in-memory SQLite store, with the
// ports it does not own faked in plain sight — a signer that spells out what it signed, keys with fixed IDs,
// a publisher that records, and a clock the test moves. No HTTP, no sleeps: what must wait, waits on a
// promise the test holds.

import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { signEnqueueKey } from '../../src/domain/bot-defence.ts';
import { ContractError } from '../../src/domain/errors.ts';
import type { TokenRecord } from '../../src/domain/claims.ts';
import type { DetailType, EventDetails, EventPublisher } from '../../src/domain/ports/events.ts';
import { StoreUnavailableError, type IssueResult, type JoinRequest } from '../../src/domain/ports/store.ts';
import type { PublicJwk, SigningKeys, TokenSigning } from '../../src/domain/ports/tokens.ts';
import { RoomRegistry } from '../../src/domain/room-registry.ts';
import { defaultSettings, parseRoomSettings, type RoomSettings } from '../../src/domain/room-settings.ts';
import { describeProblem } from '../../src/domain/setting-problems.ts';
import { ROOM_PROPAGATION_MS } from '../../src/domain/room-sync.ts';
import { waitingOf, type Answer } from '../../src/domain/services/room-context.ts';
import { EXPIRED_TOKENS_LIMIT } from '../../src/domain/services/session-service.ts';
import { buildWaitingRoom, type WaitingRoom, type WaitingRoomDeps } from '../../src/domain/services/waiting-room.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { botDefence } from '../support/bot-defence-settings.ts';

/** The in-memory store, whose join commits the test can hold or make fail. */
class ControlledStore extends SqliteStore {
  holdCommits = false;
  failCommits: Error | null = null;
  private held: (() => void)[] = [];
  private commitStarted: (() => void)[] = [];

  constructor() {
    super({ path: ':memory:' });
  }

  override async assignPositions(eventId: string, joins: readonly JoinRequest[]): Promise<number[]> {
    for (const started of this.commitStarted.splice(0)) started();
    if (this.holdCommits) await new Promise<void>((resolve) => this.held.push(resolve));
    if (this.failCommits) throw this.failCommits;
    return super.assignPositions(eventId, joins);
  }

  /** When set, the next issueTokenIfAbsent answers this (a concurrent claim or the expiry job won the race). */
  forceIssue: IssueResult | null = null;

  override async issueTokenIfAbsent(eventId: string, record: TokenRecord): Promise<IssueResult> {
    const forced = this.forceIssue;
    this.forceIssue = null;
    return forced ?? super.issueTokenIfAbsent(eventId, record);
  }

  /** Resolves when the next join commit reaches the store. */
  nextCommit(): Promise<void> {
    return new Promise((resolve) => this.commitStarted.push(resolve));
  }

  releaseCommits(): void {
    this.holdCommits = false;
    for (const resume of this.held.splice(0)) resume();
  }
}

const jwk = (kid: string): PublicJwk => ({ kty: 'RSA', alg: 'RS256', kid, n: `n-${kid}`, e: 'AQAB' });

/** Keys with fixed IDs: `<event>-k1`, then `<event>-k2` (the current one). Records which events asked. */
function fakeKeys(): SigningKeys & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    forget: () => {},
    current: async (eventId) => {
      asked.push(eventId);
      return { kid: `${eventId}-k2`, publicJwk: jwk(`${eventId}-k2`) };
    },
    all: async (eventId) => [
      { kid: `${eventId}-k1`, publicJwk: jwk(`${eventId}-k1`) },
      { kid: `${eventId}-k2`, publicJwk: jwk(`${eventId}-k2`) },
    ],
  };
}

/**
 * A "signature" that spells out the record it was made from, so tests can read what was signed. Like the real
 * signer, a record's stored signatures do not change the tokens rebuilt from it.
 */
const signWith: TokenSigning['sign'] = async (eventId: string, { signatures: _stored, ...record }: TokenRecord) => {
  const spelled = (use: string) => JSON.stringify({ use, eventId, ...record });
  return { access_token: spelled('access'), refresh_token: spelled('refresh'), id_token: spelled('id') };
};
const signer: TokenSigning = { sign: signWith, signNew: signWith };

/** A promise and its resolve function (Promise.withResolvers, which the project's TypeScript lib does not name). */
function resolvers(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** The test's "now", in epoch seconds. */
const NOW_S = 1_800_000_000;

interface Published<T extends DetailType = DetailType> {
  type: T;
  detail: EventDetails[T];
}

function setup(rooms: RoomSettings[] = [defaultSettings('E')], extra: Partial<WaitingRoomDeps> = {}) {
  const store = new ControlledStore();
  const clock = { ms: NOW_S * 1000 + 999 }; // 999 ms into the second: times are floored to whole seconds
  const published: Published[] = [];
  const events: EventPublisher = { publish: (type, detail) => published.push({ type, detail } as Published) };
  const keys = fakeKeys();
  const service = buildWaitingRoom({
    store,
    rooms: new RoomRegistry(rooms),
    keys,
    signer,
    events,
    clock: () => clock.ms,
    defaultIssuer: () => 'https://node.example',
    ...extra,
  });
  return { store, clock, published, service, keys };
}

/** The body of a 200 answer (fails the test on any other status). */
function ok<T>(answer: Answer<T>): T {
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return (answer as { status: 200; body: T }).body;
}

describe('joining: answered only once the position is stored', () => {
  it('does not answer a join while its commit is pending, and its ID then has its position', async () => {
    const { store, service } = setup();
    store.holdCommits = true;
    const committing = store.nextCommit();
    let answered = false;
    const answer = service.queue.assignQueueNum('E', {}).then((a) => ((answered = true), a));
    await committing;
    assert.equal(answered, false, 'a join answered before its commit would be lost by a crash');
    store.releaseCommits();
    const { api_request_id: id } = ok(await answer);
    assert.equal(ok(await service.queue.queueNum('E', id)).queue_number, 1);
    await store.close();
  });

  it('answers a join whose commit failed with the failure, never with a request ID', async () => {
    const { store, service } = setup();
    store.failCommits = new StoreUnavailableError('down');
    await assert.rejects(service.queue.assignQueueNum('E', {}), StoreUnavailableError);
    store.failCommits = null;
    assert.equal(ok(await service.queue.waitingNum('E')).waiting_num, 0);
    await store.close();
  });
});

/** assert.rejects matcher: the contract error with exactly this status and message. */
const contractError = (status: number, message: string) => (error: unknown) =>
  error instanceof ContractError && error.status === status && error.message === message;

const INVALID_EVENT = contractError(400, 'Invalid event ID');
const INVALID_EVENT_OR_REQUEST = contractError(400, 'Invalid event or request ID');

/** What the fake signer signed into a token: the record, the event and the token's use. */
const signed = (token: string) => JSON.parse(token) as TokenRecord & { use: string; eventId: string };

type Setup = ReturnType<typeof setup>;

/** A visitor who joined and whose position the serving counter has reached. */
async function servedVisitor({ service }: Setup, eventId = 'E'): Promise<string> {
  const { api_request_id: id } = ok(await service.queue.assignQueueNum(eventId, {}));
  const { queue_number: position } = ok(await service.queue.queueNum(eventId, id));
  const { serving_counter: serving } = ok(await service.queue.servingNum(eventId));
  if (serving < position) await service.admission.incrementServingCounter(eventId, position - serving);
  return id;
}

describe('rooms: unknown events and malformed request IDs are client errors', () => {
  it('every operation on an unknown event fails with its contract error, and creates no state', async () => {
    const { service, store } = setup();
    const id = '00000000-0000-4000-8000-000000000000';
    await assert.rejects(service.queue.assignQueueNum('Nope', {}), INVALID_EVENT);
    await assert.rejects(service.queue.assignQueueNum(7, {}), INVALID_EVENT);
    await assert.rejects(service.queue.servingNum('Nope'), INVALID_EVENT);
    await assert.rejects(service.queue.waitingNum('Nope'), INVALID_EVENT);
    await assert.rejects(service.admission.incrementServingCounter('Nope', 1), INVALID_EVENT);
    await assert.rejects(service.sessions.expiredTokens('Nope'), INVALID_EVENT);
    await assert.rejects(service.admission.resetInitialState('Nope'), INVALID_EVENT);
    // The jobs pass over a room that is gone (removed while a tick was running) instead of failing the tick.
    await service.admission.advanceExpiry('Nope');
    await service.reports.emitMetrics('Nope');
    await assert.rejects(service.claims.publicKey('Nope'), contractError(404, 'Invalid event ID'));
    await assert.rejects(service.claims.jwks('Nope'), contractError(404, 'Invalid event ID'));
    await assert.rejects(service.sessions.numActiveTokens('Nope'), contractError(404, 'Invalid event ID'));
    await assert.rejects(service.queue.queueNum('Nope', id), INVALID_EVENT_OR_REQUEST);
    await assert.rejects(service.claims.generateToken('Nope', id), INVALID_EVENT_OR_REQUEST);
    await assert.rejects(service.claims.queuePosExpiry('Nope', id), INVALID_EVENT_OR_REQUEST);
    await assert.rejects(service.sessions.updateSession('Nope', id, 1), INVALID_EVENT_OR_REQUEST);
    await assert.rejects(service.claims.claimReadiness('Nope', id), INVALID_EVENT_OR_REQUEST);
    assert.deepEqual(await store.getCounters('Nope'), await store.getCounters('never-seen'));
    await store.close();
  });

  it('a request ID must be a whole UUID; its case does not matter', async () => {
    const { service, store } = setup();
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    for (const bad of [`${id}x`, id.slice(1), 42, undefined, '']) {
      await assert.rejects(service.queue.queueNum('E', bad), INVALID_EVENT_OR_REQUEST, String(bad));
    }
    assert.equal(ok(await service.queue.queueNum('E', id.toUpperCase())).queue_number, 1);
    await store.close();
  });

  it('lists its rooms and tells an adapter the settings of one (undefined for any other value)', async () => {
    const rooms = [defaultSettings('E'), { ...defaultSettings('F'), validity_period: 60 }];
    const { service, store } = setup(rooms);
    assert.deepEqual(service.rooms.rooms(), rooms);
    assert.deepEqual(service.rooms.roomIds(), ['E', 'F']);
    assert.equal(service.rooms.roomSettings('F')?.validity_period, 60);
    assert.equal(service.rooms.roomSettings('G'), undefined);
    assert.equal(service.rooms.roomSettings(undefined), undefined);
    await store.close();
  });
});

describe('start', () => {
  it('records when expiry was switched on for every room that has it, and creates every room\'s key', async () => {
    const { service, store, keys } = setup([defaultSettings('E'), { ...defaultSettings('Off'), enable_queue_position_expiry: false }]);
    await service.start();
    assert.deepEqual(keys.asked, ['E', 'Off']);
    const { api_request_id: e } = ok(await service.queue.assignQueueNum('E', {}));
    const { api_request_id: off } = ok(await service.queue.assignQueueNum('Off', {}));
    assert.equal((await store.getClaimContext('E', e))?.expiryEnabledSince, NOW_S);
    assert.equal((await store.getClaimContext('Off', off))?.expiryEnabledSince, null);
    await store.close();
  });
});

describe('the public API', () => {
  it('assign_queue_num: a new UUID per visitor, numbered in order, entry time in whole seconds', async () => {
    const { service, store, clock } = setup();
    const first = ok(await service.queue.assignQueueNum('E', {})).api_request_id;
    clock.ms += 5_000;
    const second = ok(await service.queue.assignQueueNum('E', {})).api_request_id;
    assert.match(first, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(first, second);
    assert.deepEqual(ok(await service.queue.queueNum('E', first)), { queue_number: 1, entry_time: NOW_S, event_id: 'E', status: 1, people_ahead: 0 });
    assert.deepEqual(ok(await service.queue.queueNum('E', second)), { queue_number: 2, entry_time: NOW_S + 5, event_id: 'E', status: 1, people_ahead: 1 });
    await store.close();
  });

  it('queue_num of a request ID without a position is 202 "Request ID not found"', async () => {
    const { service, store } = setup();
    assert.deepEqual(await service.queue.queueNum('E', '00000000-0000-4000-8000-000000000000'), {
      status: 202,
      body: { error: 'Request ID not found' },
    });
    await store.close();
  });

  it('serving_num and waiting_num follow joins, the counter, claims and expiry', async () => {
    const { service, store, clock } = setup();
    await service.start();
    assert.deepEqual(await service.queue.servingNum('E'), { status: 200, body: { serving_counter: 0 } });
    assert.deepEqual(await service.queue.waitingNum('E'), { status: 200, body: { waiting_num: 0 } });
    const a = await servedVisitor(setupOf(service, store, clock));
    await service.queue.assignQueueNum('E', {});
    await service.queue.assignQueueNum('E', {});
    assert.equal(ok(await service.queue.servingNum('E')).serving_counter, 1);
    assert.equal(ok(await service.queue.waitingNum('E')).waiting_num, 3);
    ok(await service.claims.generateToken('E', a));
    assert.equal(ok(await service.queue.waitingNum('E')).waiting_num, 2, 'a claimed token leaves the count');
    await service.admission.incrementServingCounter('E', 1);
    clock.ms += 901_000;
    await service.admission.advanceExpiry('E');
    assert.equal(ok(await service.queue.waitingNum('E')).waiting_num, 1, 'an expired position leaves the count');
    await store.close();
  });

  it('public_key is the current key; the JWKS lists every key', async () => {
    const { service, store } = setup();
    assert.deepEqual(await service.claims.publicKey('E'), { status: 200, body: jwk('E-k2') });
    assert.deepEqual(await service.claims.jwks('E'), { status: 200, body: { keys: [jwk('E-k1'), jwk('E-k2')] } });
    await store.close();
  });

  it('waitingOf is queue − tokens − expired, never below 0', () => {
    const counters = { queue: 10, serving: 0, tokens: 3, expired: 2, completed: 9, abandoned: 9, maxExpired: 9, left: 0 };
    assert.equal(waitingOf(counters), 5);
    assert.equal(waitingOf({ ...counters, tokens: 8, expired: 4 }), 0);
  });
});

/** The setup parts a helper needs, from the parts a test destructured. */
function setupOf(service: WaitingRoom, store: ControlledStore, clock: { ms: number }): Setup {
  return { service, store, clock } as Setup;
}

describe('generate_token', () => {
  it('issues a token set from a record of now + validity, signed with the current key, and publishes token_generated', async () => {
    const s = setup([{ ...defaultSettings('E'), validity_period: 600, issuer: 'https://issuer.example' }]);
    const id = await servedVisitor(s);
    const answer = ok(await s.service.claims.generateToken('E', id));
    assert.equal(answer.token_type, 'Bearer');
    assert.equal(answer.expires_in, 600);
    const access = signed(answer.access_token);
    assert.deepEqual(
      [access.use, access.eventId, access.requestId, access.position, access.iat, access.nbf, access.exp, access.iss, access.kid],
      ['access', 'E', id, 1, NOW_S, NOW_S, NOW_S + 600, 'https://issuer.example', 'E-k2'],
    );
    assert.equal(signed(answer.refresh_token).use, 'refresh');
    assert.equal(signed(answer.id_token).use, 'id');
    assert.deepEqual(s.published, [{ type: 'token_generated', detail: { event_id: 'E', request_id: id } }]);
    assert.equal((await s.store.getCounters('E')).tokens, 1);
    await s.store.close();
  });

  it('without a configured issuer uses the node\'s; overrides (OIDC) win over both and carry the nonce', async () => {
    const s = setup();
    const plain = signed(ok(await s.service.claims.generateToken('E', await servedVisitor(s))).access_token);
    assert.equal(plain.iss, 'https://node.example');
    assert.equal(plain.exp - plain.iat, 3600);
    const overridden = ok(
      await s.service.claims.generateToken('E', await servedVisitor(s), { issuer: 'https://oidc.example', validityPeriod: 60, nonce: 'n-1' }),
    );
    assert.equal(overridden.expires_in, 60);
    assert.deepEqual([signed(overridden.id_token).iss, signed(overridden.id_token).nonce], ['https://oidc.example', 'n-1']);
    await s.store.close();
  });

  it('a re-claim answers the stored set again, with the seconds left, and publishes nothing more', async () => {
    const s = setup();
    const id = await servedVisitor(s);
    const first = ok(await s.service.claims.generateToken('E', id));
    s.clock.ms += 4_000_000; // past exp: expires_in floors at 0
    const again = ok(await s.service.claims.generateToken('E', id));
    assert.equal(again.access_token, first.access_token);
    assert.equal(again.expires_in, 0);
    s.clock.ms -= 4_000_000 - 100_000;
    const asked = s.keys.asked.length;
    assert.equal(ok(await s.service.claims.generateToken('E', id)).expires_in, 3500);
    assert.equal(s.keys.asked.length, asked, 'a re-claim makes no new record: not even the current key is needed');
    assert.equal(s.published.length, 1);
    assert.equal((await s.store.getCounters('E')).tokens, 1);
    await s.store.close();
  });

  it('answers each decision of the claim order with its contract answer', async () => {
    const s = setup([{ ...defaultSettings('E'), queue_position_expiry_period: 100 }]);
    await s.service.start();
    await assert.rejects(s.service.claims.generateToken('E', '00000000-0000-4000-8000-000000000000'), contractError(404, 'Invalid request ID'));
    const { api_request_id: waiting } = ok(await s.service.queue.assignQueueNum('E', {}));
    await s.service.queue.assignQueueNum('E', {});
    assert.deepEqual(await s.service.claims.generateToken('E', ok(await s.service.queue.assignQueueNum('E', {})).api_request_id), {
      status: 202,
      body: { error: 'Request ID not being served yet' },
    });
    await s.service.admission.incrementServingCounter('E', 1);
    s.clock.ms += 101_000;
    await assert.rejects(s.service.claims.generateToken('E', waiting), contractError(410, 'Queue position has expired'));
    const closed = await servedVisitor(s);
    ok(await s.service.claims.generateToken('E', closed));
    ok(await s.service.sessions.updateSession('E', closed, -1));
    await assert.rejects(s.service.claims.generateToken('E', closed), contractError(410, 'Token corresponding to request id has expired'));
    assert.equal(s.published.filter((p) => p.type === 'token_generated').length, 1, 'only the one issue published');
    await s.store.close();
  });

  it('when the store\'s issue loses a race it answers as a claim would: the winner\'s set, or the refusal', async () => {
    const s = setup();
    const id = await servedVisitor(s);
    const winner: TokenRecord = {
      requestId: id, position: 1, iat: NOW_S - 10, nbf: NOW_S - 10, exp: NOW_S + 50, iss: 'https://won', kid: 'E-k1', status: 0,
    };
    s.store.forceIssue = { outcome: 'existing', record: winner };
    const answer = ok(await s.service.claims.generateToken('E', id));
    assert.deepEqual([signed(answer.access_token).iss, answer.expires_in], ['https://won', 50]);
    s.store.forceIssue = { outcome: 'existing', record: { ...winner, status: 1 } };
    await assert.rejects(s.service.claims.generateToken('E', id), contractError(410, 'Token corresponding to request id has expired'));
    s.store.forceIssue = { outcome: 'expired' };
    await assert.rejects(s.service.claims.generateToken('E', id), contractError(410, 'Queue position has expired'));
    s.store.forceIssue = { outcome: 'no-position' };
    await assert.rejects(s.service.claims.generateToken('E', id), contractError(404, 'Invalid request ID'));
    assert.deepEqual(s.published, [], 'a lost race publishes nothing');
    await s.store.close();
  });
});

describe('queue_pos_expiry', () => {
  it('answers each decision with its contract answer', async () => {
    const s = setup([{ ...defaultSettings('E'), queue_position_expiry_period: 100 }, { ...defaultSettings('Off'), enable_queue_position_expiry: false }]);
    await s.service.start();
    await assert.rejects(s.service.claims.queuePosExpiry('E', '00000000-0000-4000-8000-000000000000'), contractError(404, 'Invalid request ID'));
    const { api_request_id: off } = ok(await s.service.queue.assignQueueNum('Off', {}));
    assert.deepEqual(await s.service.claims.queuePosExpiry('Off', off), { status: 202, body: { error: 'Queue position expiration not enabled' } });
    const id = await servedVisitor(s);
    const { api_request_id: later } = ok(await s.service.queue.assignQueueNum('E', {}));
    assert.deepEqual(await s.service.claims.queuePosExpiry('E', later), { status: 202, body: { error: 'Request ID not being served yet' } });
    s.clock.ms += 30_000;
    assert.deepEqual(await s.service.claims.queuePosExpiry('E', id), { status: 200, body: { expires_in: 70 } });
    s.clock.ms += 71_000;
    await assert.rejects(s.service.claims.queuePosExpiry('E', id), contractError(410, 'Queue position has expired'));
    await s.store.close();
  });
});

describe('the private API', () => {
  it('increment_serving_counter moves the counter by any integer, answering the new value', async () => {
    const { service, store } = setup();
    assert.deepEqual(await service.admission.incrementServingCounter('E', 5), { status: 200, body: { serving_num: 5 } });
    assert.deepEqual(await service.admission.incrementServingCounter('E', -2), { status: 200, body: { serving_num: 3 } });
    await store.close();
  });

  it('num_active_tokens and expired_tokens read the tokens at the current time', async () => {
    const s = setup([{ ...defaultSettings('E'), validity_period: 60 }]);
    const id = await servedVisitor(s);
    ok(await s.service.claims.generateToken('E', id));
    assert.deepEqual(await s.service.sessions.numActiveTokens('E'), { status: 200, body: { active_tokens: 1 } });
    assert.deepEqual(await s.service.sessions.expiredTokens('E'), { status: 200, body: [] });
    s.clock.ms += 61_000;
    assert.deepEqual(await s.service.sessions.numActiveTokens('E'), { status: 200, body: { active_tokens: 0 } });
    assert.deepEqual(await s.service.sessions.expiredTokens('E'), { status: 200, body: [id] });
    await s.store.close();
  });

  it('expired_tokens asks the store for at most EXPIRED_TOKENS_LIMIT IDs', async () => {
    const s = setup();
    const limits: number[] = [];
    const listed = mock.method(s.store, 'listExpiredTokens', async (_e: string, _now: number, limit: number) => {
      limits.push(limit);
      return [];
    });
    await s.service.sessions.expiredTokens('E');
    assert.deepEqual(limits, [EXPIRED_TOKENS_LIMIT]);
    assert.equal(EXPIRED_TOKENS_LIMIT, 10_000);
    listed.mock.restore();
    await s.store.close();
  });

  it('update_session closes an open session once (1 completed, −1 abandoned) and publishes session_updated', async () => {
    const s = setup();
    const done = await servedVisitor(s);
    const left = await servedVisitor(s);
    ok(await s.service.claims.generateToken('E', done));
    ok(await s.service.claims.generateToken('E', left));
    s.published.length = 0;
    assert.deepEqual(await s.service.sessions.updateSession('E', done, 1), { status: 200, body: {} });
    assert.deepEqual(await s.service.sessions.updateSession('E', left.toUpperCase(), -1), { status: 200, body: {} });
    assert.deepEqual(s.published, [
      { type: 'session_updated', detail: { event_id: 'E', request_id: done, status: 'completed' } },
      { type: 'session_updated', detail: { event_id: 'E', request_id: left, status: 'abandoned' } },
    ]);
    const counters = await s.store.getCounters('E');
    assert.deepEqual([counters.completed, counters.abandoned], [1, 1]);
    await assert.rejects(s.service.sessions.updateSession('E', done, 1), contractError(404, "Request ID doesn't exist or status already set."));
    await assert.rejects(s.service.sessions.updateSession('E', '00000000-0000-4000-8000-000000000000', -1), contractError(404, "Request ID doesn't exist or status already set."));
    for (const status of [0, 2, '1', null, true]) {
      await assert.rejects(s.service.sessions.updateSession('E', left, status), INVALID_EVENT_OR_REQUEST, String(status));
    }
    assert.equal(s.published.length, 2);
    await s.store.close();
  });

  it('reset_initial_state empties the room, then runs the after-reset hook, and answers VWR\'s message', async () => {
    const order: string[] = [];
    const s = setup([defaultSettings('E')], {
      afterReset: async (eventId) => {
        order.push(`hook ${eventId}: queue ${(await s.store.getCounters(eventId)).queue}`);
      },
    });
    await servedVisitor(s);
    assert.deepEqual(await s.service.admission.resetInitialState('E'), {
      status: 200,
      body: { message: 'Counters reset. DynamoDB table recreated.' },
    });
    assert.deepEqual(order, ['hook E: queue 0']);
    assert.equal(ok(await s.service.queue.servingNum('E')).serving_counter, 0);
    await s.store.close();
  });

  it('reset_initial_state needs no after-reset hook', async () => {
    const s = setup();
    await s.service.queue.assignQueueNum('E', {});
    assert.equal((await s.service.admission.resetInitialState('E')).status, 200);
    assert.equal((await s.store.getCounters('E')).queue, 0);
    await s.store.close();
  });

  it('counters adds the waiting number and the active tokens to the store\'s counters', async () => {
    const s = setup();
    ok(await s.service.claims.generateToken('E', await servedVisitor(s)));
    await s.service.queue.assignQueueNum('E', {});
    await s.service.queue.assignQueueNum('E', {});
    assert.deepEqual(await s.service.reports.counters('E'), {
      queue: 3, serving: 1, tokens: 1, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0, generation: 0, waiting: 2, activeTokens: 1,
    });
    await s.store.close();
  });
});

describe('background jobs', () => {
  const rooms = [
    { ...defaultSettings('Plain'), queue_position_expiry_period: 100 },
    { ...defaultSettings('Incr'), queue_position_expiry_period: 100, incr_serving_on_expiry: true },
    { ...defaultSettings('Off'), enable_queue_position_expiry: false },
  ];

  it('the expiry job expires positions eligible longer than the period; with incr_serving_on_expiry it admits as many more and publishes it', async () => {
    const s = setup(rooms);
    await s.service.start();
    for (const room of ['Plain', 'Incr']) {
      await servedVisitor(s, room);
      await s.service.queue.assignQueueNum(room, {});
    }
    s.clock.ms += 100_000;
    await s.service.admission.advanceExpiry('Plain');
    await s.service.admission.advanceExpiry('Incr');
    assert.equal((await s.store.getCounters('Plain')).expired, 0, 'exactly the period: not expired yet');
    assert.deepEqual(s.published, []);
    s.clock.ms += 1_000;
    await s.service.admission.advanceExpiry('Plain');
    await s.service.admission.advanceExpiry('Incr');
    assert.deepEqual([(await s.store.getCounters('Plain')).expired, (await s.store.getCounters('Plain')).serving], [1, 1]);
    assert.deepEqual([(await s.store.getCounters('Incr')).expired, (await s.store.getCounters('Incr')).serving], [1, 2]);
    assert.deepEqual(s.published, [
      {
        type: 'automatic_serving_counter_incr',
        detail: { event_id: 'Incr', previous_serving_counter_position: 1, increment_by: 1, current_serving_counter_position: 2 },
      },
    ]);
    await s.store.close();
  });

  it('the expiry job leaves a room without expiry alone', async () => {
    const s = setup(rooms);
    const advanced = mock.method(s.store, 'advanceExpiry');
    await s.service.admission.advanceExpiry('Off');
    assert.equal(advanced.mock.callCount(), 0);
    advanced.mock.restore();
    await s.store.close();
  });

  it('the metrics job publishes waiting_room_metrics only for rooms with events generation on', async () => {
    const s = setup([{ ...defaultSettings('On'), enable_events_generation: true }, defaultSettings('Quiet')]);
    const done = await servedVisitor(s, 'On');
    ok(await s.service.claims.generateToken('On', done));
    ok(await s.service.sessions.updateSession('On', done, 1));
    const left = await servedVisitor(s, 'On');
    ok(await s.service.claims.generateToken('On', left));
    ok(await s.service.sessions.updateSession('On', left, -1));
    ok(await s.service.claims.generateToken('On', await servedVisitor(s, 'On')));
    await s.service.queue.assignQueueNum('On', {});
    s.published.length = 0;
    await s.service.reports.emitMetrics('Quiet');
    assert.deepEqual(s.published, []);
    await s.service.reports.emitMetrics('On');
    assert.deepEqual(s.published, [
      {
        type: 'waiting_room_metrics',
        detail: {
          event_id: 'On',
          num_active_tokens: 1,
          total_num_tokens: 3,
          queue_counter: 4,
          serving_number: 3,
          completed_sessions: 1,
          abandoned_sessions: 1,
          expired_queue_positions: 0,
          waiting_num: 1,
        },
      },
    ]);
    await s.store.close();
  });
});

describe('for the adapters', () => {
  it('countersInMemory answers from the store\'s memory for a known room only, and never reads the store', async () => {
    const s = setup();
    assert.equal(s.service.queue.answersPollsFromMemory, true);
    await s.service.admission.incrementServingCounter('E', 4);
    await s.service.queue.servingNum('E'); // the SQLite store keeps the row it read
    const read = mock.method(s.store, 'getCounters');
    assert.equal(s.service.queue.countersInMemory('E')?.serving, 4);
    assert.equal(s.service.queue.countersInMemory('Nope'), undefined);
    assert.equal(read.mock.callCount(), 0);
    read.mock.restore();
    await s.store.close();
  });

  it('a store that cannot answer polls from memory says so', async () => {
    const s = setup();
    Object.defineProperty(s.store, 'peekCounters', { value: undefined });
    assert.equal(s.service.queue.answersPollsFromMemory, false);
    assert.equal(s.service.queue.countersInMemory('E'), undefined);
    await s.store.close();
  });

  it('checkStore and storeDescription reach the store; claimReadiness decides without issuing', async () => {
    const s = setup();
    await s.service.reports.checkStore();
    const down = new StoreUnavailableError('down');
    const ping = mock.method(s.store, 'ping', async () => {
      throw down;
    });
    await assert.rejects(s.service.reports.checkStore(), (e) => e === down);
    ping.mock.restore();
    assert.equal(down.name, 'StoreUnavailableError');
    assert.equal(s.service.reports.storeDescription, 'memory');
    const id = await servedVisitor(s);
    const { api_request_id: later } = ok(await s.service.queue.assignQueueNum('E', {}));
    assert.equal(await s.service.claims.claimReadiness('E', id), 'issue');
    assert.equal(await s.service.claims.claimReadiness('E', later), 'not-served-yet');
    assert.equal(await s.service.claims.claimReadiness('E', '00000000-0000-4000-8000-000000000000'), 'no-position');
    assert.equal((await s.store.getCounters('E')).tokens, 0);
    await s.store.close();
  });

  it('binds an OpenID Connect authorization to a position only', async () => {
    const s = setup();
    const { api_request_id: id } = ok(await s.service.queue.assignQueueNum('E', {}));
    assert.equal(await s.service.claims.bindAuthorization('E', id, 'request-1'), true);
    assert.equal(await s.service.claims.boundAuthorization('E', id), 'request-1');
    assert.equal(await s.service.claims.bindAuthorization('E', '00000000-0000-4000-8000-000000000000', 'x'), false);
    assert.equal(await s.service.claims.boundAuthorization('E', '00000000-0000-4000-8000-000000000000'), null);
    await s.store.close();
  });

  it('binds the authorization request a join carries as it numbers the join; not in a pre-queue', async () => {
    const s = setup([defaultSettings('E'), {
      ...defaultSettings('D'),
      prequeue_start_time: new Date((NOW_S - 60) * 1000).toISOString(),
      event_start_time: new Date((NOW_S + 3600) * 1000).toISOString(),
      shuffle_at_event_start: true,
    }]);
    const { api_request_id: id } = ok(await s.service.queue.assignQueueNum('E', {}, 'request-1'));
    assert.equal(s.service.queue.joinsNumberedLater, false);
    assert.equal(await s.service.claims.boundAuthorization('E', id), 'request-1');
    const { api_request_id: plain } = ok(await s.service.queue.assignQueueNum('E', {}));
    assert.equal(await s.service.claims.boundAuthorization('E', plain), null);
    // A pre-queue entry has no position to bind to: refused before anything is stored.
    await assert.rejects(s.service.queue.assignQueueNum('D', {}, 'request-2'), { status: 503 });
    assert.equal((await s.store.getCounters('D')).queue, 0);
    await s.store.close();
  });

  it('numbers intake joins once each, however often they are delivered', async () => {
    const s = setup();
    const joins = [{ requestId: 'a', entryTime: 1 }, { requestId: 'b', entryTime: 1 }];
    assert.deepEqual(await s.service.queue.numberIntakeJoins('E', joins), [1, 2]);
    assert.deepEqual(await s.service.queue.numberIntakeJoins('E', [joins[1]!, { requestId: 'c', entryTime: 2 }]), [2, 3]);
    await s.store.close();
  });
});

describe('joining through an asynchronous intake', () => {
  it('answers once the intake accepted the join, before it has a position; nothing is written to the store', async () => {
    const accepted: [string, readonly JoinRequest[]][] = [];
    const sizes: number[] = [];
    const s = setup([defaultSettings('E')], {
      intake: async (eventId, joins) => {
        accepted.push([eventId, joins]);
      },
      onJoinBatch: (size) => sizes.push(size),
    });
    const answers = await Promise.all([s.service.queue.assignQueueNum('E', {}), s.service.queue.assignQueueNum('E', {})]);
    const ids = answers.map((a) => ok(a).api_request_id);
    const handed = accepted.map(([eventId, joins]) => [eventId, joins.map(({ requestId, entryTime }) => ({ requestId, entryTime }))]);
    assert.deepEqual(handed, [['E', ids.map((requestId) => ({ requestId, entryTime: NOW_S }))]]);
    assert.deepEqual(sizes, [2]);
    assert.deepEqual(await s.service.queue.queueNum('E', ids[0]), { status: 202, body: { error: 'Request ID not found' } });
    assert.equal((await s.store.getCounters('E')).queue, 0);
    await s.store.close();
  });

  it('an authorization request travels with the join and is bound by numberIntakeJoins, once numbered', async () => {
    const accepted: JoinRequest[] = [];
    const s = setup([defaultSettings('E')], {
      intake: async (_eventId, joins) => {
        accepted.push(...joins.map(({ requestId, entryTime, authorization }) => ({ requestId, entryTime, authorization })));
      },
    });
    assert.equal(s.service.queue.joinsNumberedLater, true);
    const { api_request_id: id } = ok(await s.service.queue.assignQueueNum('E', {}, 'request-1'));
    assert.deepEqual(accepted, [{ requestId: id, entryTime: NOW_S, authorization: 'request-1' }]);
    assert.equal(await s.service.claims.boundAuthorization('E', id), null);
    // Delivered twice (SQS): one position, one binding.
    assert.deepEqual(await s.service.queue.numberIntakeJoins('E', accepted), [1]);
    assert.deepEqual(await s.service.queue.numberIntakeJoins('E', accepted), [1]);
    assert.equal(await s.service.claims.boundAuthorization('E', id), 'request-1');
    await s.store.close();
  });

  it('a join the intake refused fails', async () => {
    const s = setup([defaultSettings('E')], {
      intake: async () => {
        throw new StoreUnavailableError('queue down');
      },
    });
    await assert.rejects(s.service.queue.assignQueueNum('E', {}), StoreUnavailableError);
    await s.store.close();
  });
});

describe('join batches', () => {
  it('reports the size of every committed batch, and drainJoins answers every join waiting', async () => {
    const sizes: number[] = [];
    const s = setup([defaultSettings('E')], { onJoinBatch: (size) => sizes.push(size), joinBatch: { maxBatch: 2 } });
    const joins = [s.service.queue.assignQueueNum('E', {}), s.service.queue.assignQueueNum('E', {}), s.service.queue.assignQueueNum('E', {})];
    await s.service.queue.drainJoins();
    assert.deepEqual(sizes, [2, 1]);
    assert.equal((await s.store.getCounters('E')).queue, 3);
    await Promise.all(joins);
    await s.store.close();
  });
});

describe('leave_queue', () => {
  const LEFT = contractError(410, 'Queue position was given up');

  it('a waiting visitor gives the place up once: queue_left is published, the line shortens, a second leave is 410', async () => {
    const { service, store, published } = setup();
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    ok(await service.queue.assignQueueNum('E', {}));
    assert.equal(ok(await service.queue.waitingNum('E')).waiting_num, 2);
    assert.deepEqual(await service.queue.leaveQueue('E', id.toUpperCase()), { status: 200, body: {} });
    assert.deepEqual(published.filter((p) => p.type === 'queue_left'), [{ type: 'queue_left', detail: { event_id: 'E', request_id: id } }]);
    assert.equal(ok(await service.queue.waitingNum('E')).waiting_num, 1);
    await assert.rejects(service.queue.leaveQueue('E', id), LEFT);
    await assert.rejects(service.claims.generateToken('E', id), LEFT);
    await store.close();
  });

  it('a claimed place is ended with update_session, not left (410); an expired one is gone (410)', async () => {
    const s = setup([{ ...defaultSettings('E'), queue_position_expiry_period: 100 }]);
    await s.service.start();
    const claimed = await servedVisitor(s);
    ok(await s.service.claims.generateToken('E', claimed));
    await assert.rejects(s.service.queue.leaveQueue('E', claimed), contractError(410, 'A token was already issued for this request ID'));
    const expired = await servedVisitor(s);
    s.clock.ms += 101_000;
    await s.service.admission.advanceExpiry('E');
    await assert.rejects(s.service.queue.leaveQueue('E', expired), contractError(410, 'Queue position has expired'));
    assert.equal(s.published.filter((p) => p.type === 'queue_left').length, 0);
    await s.store.close();
  });

  it('a request ID without a place is 404; a malformed one or an unknown room 400', async () => {
    const { service, store } = setup();
    await assert.rejects(service.queue.leaveQueue('E', '00000000-0000-4000-8000-000000000000'), contractError(404, 'Invalid request ID'));
    await assert.rejects(service.queue.leaveQueue('E', 'nope'), INVALID_EVENT_OR_REQUEST);
    await assert.rejects(service.queue.leaveQueue('Nope', '00000000-0000-4000-8000-000000000000'), INVALID_EVENT_OR_REQUEST);
    await store.close();
  });
});

describe('the pre-queue and the draw, through the service', () => {
  const START_S = NOW_S + 3600;
  const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
  const drawRoom: RoomSettings = {
    ...defaultSettings('D'),
    prequeue_start_time: iso(NOW_S - 60),
    event_start_time: iso(START_S),
    shuffle_at_event_start: true,
  };

  it('before the start a join has no position, can leave the pre-queue once, and the draw shows its commitment only', async () => {
    const { service, store, published } = setup([drawRoom, defaultSettings('E')]);
    const [a, b] = await Promise.all([service.queue.assignQueueNum('D', {}), service.queue.assignQueueNum('D', {})]).then((all) => all.map((x) => ok(x).api_request_id));
    assert.deepEqual(await service.queue.queueNum('D', a), { status: 202, body: { error: 'Waiting for the draw at the start' } });
    assert.equal(await service.rooms.roomPhase('D'), 'prequeue');
    assert.equal(await service.draws.drawDone('D'), false);
    assert.equal(await service.draws.drawDone('E'), true, 'a room without a draw never waits for one');
    assert.equal(await service.draws.drawDone('Nope'), true);
    assert.deepEqual(Object.keys(JSON.parse(ok(await service.draws.drawPublication('D')).toString())).sort(), ['algorithm', 'commitment', 'committed_at']);
    assert.deepEqual(await service.draws.drawPositions('D', 0, 10), { status: 202, body: { error: 'The draw has not taken place yet' } });
    await assert.rejects(service.draws.drawPublication('E'), contractError(404, 'This waiting room has no draw'));
    await assert.rejects(service.draws.drawPositions('E', 0, 10), contractError(404, 'This waiting room has no draw'));
    await assert.rejects(service.draws.drawPublication('Nope'), INVALID_EVENT);

    assert.deepEqual(await service.queue.leaveQueue('D', b), { status: 200, body: {} });
    assert.deepEqual(published.filter((p) => p.type === 'queue_left'), [{ type: 'queue_left', detail: { event_id: 'D', request_id: b } }]);
    await assert.rejects(service.queue.leaveQueue('D', b), contractError(410, 'Queue position was given up'));
    await assert.rejects(service.queue.leaveQueue('D', '00000000-0000-4000-8000-000000000000'), contractError(404, 'Invalid request ID'));

    await service.draws.runDraws();
    assert.equal((await store.getDraw('D'))?.state, 'committed', 'nothing is drawn before the start');
    await store.close();
  });

  it('at the start the draw job draws; everyone who stayed gets a position, published with the entries', async () => {
    const { service, store, clock } = setup([drawRoom]);
    const ids = (await Promise.all([1, 2, 3, 4].map(() => service.queue.assignQueueNum('D', {})))).map((x) => ok(x).api_request_id);
    await service.queue.leaveQueue('D', ids[1]);
    clock.ms = START_S * 1000;
    assert.equal(await service.rooms.roomPhase('D'), 'prequeue', 'until the draw is done');
    await service.draws.runDraws();
    assert.equal(await service.draws.drawDone('D'), true);
    assert.equal(await service.rooms.roomPhase('D'), 'open');
    const positions = await Promise.all([ids[0], ids[2], ids[3]].map(async (id) => ok(await service.queue.queueNum('D', id)).queue_number));
    assert.deepEqual([...positions].sort(), [1, 2, 3]);
    const publication = JSON.parse(ok(await service.draws.drawPublication('D')).toString()) as { entries: string[]; first_position: number };
    assert.equal(publication.entries.length, 3);
    assert.equal(publication.first_position, 1);
    const drawn = ok(await service.draws.drawPositions('D', 1, 5));
    assert.deepEqual(drawn, { first_position: 1, total: 3, entries: publication.entries.slice(1), positions: positions.slice(1) });
    assert.equal(JSON.parse(ok(await service.draws.drawPublication('D', 1)).toString()).pages, 1);
    await assert.rejects(service.draws.drawPublication('D', 2), contractError(404, 'The draw has no such page'));
    // A join after the draw is numbered at once, behind the drawn places.
    const { api_request_id: late } = ok(await service.queue.assignQueueNum('D', {}));
    assert.equal(ok(await service.queue.queueNum('D', late)).queue_number, 4);
    await store.close();
  });

  it('joins after the start, before this process has seen the draw done, still go through the pre-queue and get a position', async () => {
    const { service, store, clock } = setup([drawRoom]);
    const { api_request_id: early } = ok(await service.queue.assignQueueNum('D', {}));
    clock.ms = START_S * 1000 + 5_000;
    await service.draws.runDraws();
    const { api_request_id: late } = ok(await service.queue.assignQueueNum('D', {}));
    assert.equal(ok(await service.queue.queueNum('D', early)).queue_number, 1);
    assert.equal(ok(await service.queue.queueNum('D', late)).queue_number, 2);
    await store.close();
  });

  it('a reset forgets the draw: the next join commits a new seed', async () => {
    const { service, store, clock } = setup([drawRoom]);
    ok(await service.queue.assignQueueNum('D', {}));
    const first = JSON.parse(ok(await service.draws.drawPublication('D')).toString()).commitment as string;
    clock.ms = START_S * 1000;
    await service.draws.runDraws();
    assert.equal(await service.draws.drawDone('D'), true);
    clock.ms = (NOW_S + 60) * 1000;
    assert.ok(JSON.parse(ok(await service.draws.drawPublication('D')).toString()).seed, 'published, and kept for a second');
    ok(await service.admission.resetInitialState('D'));
    assert.equal(await service.draws.drawDone('D'), false);
    ok(await service.queue.assignQueueNum('D', {}));
    assert.equal(JSON.parse(ok(await service.draws.drawPublication('D')).toString()).seed, undefined, 'at once, not a second later');
    const second = JSON.parse(ok(await service.draws.drawPublication('D')).toString()).commitment as string;
    assert.notEqual(second, first);
    await store.close();
  });
});

describe('the hand-off without a gate', () => {
  const room: RoomSettings = { ...defaultSettings('E'), allowed_return_origins: ['https://shop.example'] };

  it('a served visitor gets a one-time code on an allowed origin; the site exchanges it once for the token set', async () => {
    const s = setup([room]);
    const id = await servedVisitor(s);
    const { location, expires_in: expiresIn } = ok(await s.service.claims.handoffCode('E', id, 'https://shop.example/cart?x=1'));
    assert.equal(expiresIn, 120);
    const url = new URL(location);
    assert.equal(`${url.origin}${url.pathname}`, 'https://shop.example/cart');
    assert.equal(url.searchParams.get('x'), '1');
    const code = url.searchParams.get('anteroom_handoff');
    assert.ok(code);
    const tokens = ok(await s.service.claims.exchangeHandoff('E', code));
    assert.equal(signed(tokens.access_token).requestId, id);
    await assert.rejects(s.service.claims.exchangeHandoff('E', code), contractError(410, 'Hand-off code already used'));
    await s.store.close();
  });

  it('return_to off the allowed origins is 400; a visitor not served yet gets the 202 of generate_token', async () => {
    const s = setup([room]);
    const { api_request_id: waiting } = ok(await s.service.queue.assignQueueNum('E', {}));
    await assert.rejects(s.service.claims.handoffCode('E', waiting, 'https://evil.example/'), contractError(400, 'return_to is not an allowed origin of this room'));
    assert.deepEqual(await s.service.claims.handoffCode('E', waiting, 'https://shop.example/'), { status: 202, body: { error: 'Request ID not being served yet' } });
    await s.store.close();
  });

  it('a code never made, malformed, of another room, or older than its lifetime is 404', async () => {
    const s = setup([room, { ...room, event_id: 'F' }]);
    const id = await servedVisitor(s);
    const code = new URL(ok(await s.service.claims.handoffCode('E', id, 'https://shop.example/')).location).searchParams.get('anteroom_handoff')!;
    const INVALID = contractError(404, 'Invalid hand-off code');
    await assert.rejects(s.service.claims.exchangeHandoff('E', 'garbage'), INVALID);
    await assert.rejects(s.service.claims.exchangeHandoff('E', `${code.split('.')[0]}.forged`), INVALID);
    await assert.rejects(s.service.claims.exchangeHandoff('F', code), INVALID);
    const notAnId = `${Buffer.from(JSON.stringify(['not-a-uuid', NOW_S])).toString('base64url')}.x`;
    await assert.rejects(s.service.claims.exchangeHandoff('E', notAnId), INVALID);
    const second = new URL(ok(await s.service.claims.handoffCode('E', id, 'https://shop.example/')).location).searchParams.get('anteroom_handoff')!;
    s.clock.ms += 120_000;
    ok(await s.service.claims.exchangeHandoff('E', second));
    s.clock.ms += 1_000;
    await assert.rejects(s.service.claims.exchangeHandoff('E', code), INVALID, 'made 121 s ago');
    await s.store.close();
  });
});

describe('rooms at runtime (the rooms API)', () => {
  const put = (extra: object = {}) => ({ validity_period: 600, ...extra });

  it('PUT creates a room (201) that is served at once, and replaces it (200) with the old view as before', async () => {
    const { service, store } = setup([]);
    await service.rooms.openRooms([]);
    const created = await service.rooms.putRoom('Shop', put());
    assert.equal(created.status, 201);
    assert.equal(created.before, null);
    assert.equal(created.body.event_id, 'Shop');
    assert.equal(created.body.validity_period, 600);
    assert.equal(created.body.phase, 'open');
    assert.equal(service.rooms.roomSettings('Shop')?.validity_period, 600, 'served by this node at once');
    ok(await service.queue.assignQueueNum('Shop', {}));

    const replaced = await service.rooms.putRoom('Shop', put({ validity_period: 60, state: 'paused' }));
    assert.equal(replaced.status, 200);
    assert.equal(replaced.before?.validity_period, 600);
    assert.equal(replaced.body.phase, 'paused');
    assert.deepEqual(ok(await service.rooms.getRoom('Shop')), replaced.body);
    assert.deepEqual(ok(await service.rooms.listRooms()).rooms.map((r) => [r.event_id, r.validity_period]), [['Shop', 60]]);
    await store.close();
  });

  it('PATCH merges into the stored settings (null brings the default back) and keeps write-only secrets', async () => {
    const { service, store } = setup([]);
    const hook = { url: 'https://hooks.example/in', secret: 'webhook-secret-1' };
    await service.rooms.putRoom('Shop', put({ webhooks: [hook], queue_position_expiry_period: 60 }));
    const patched = await service.rooms.patchRoom('Shop', { validity_period: 30, queue_position_expiry_period: null, phase: 'whatever' });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.validity_period, 30);
    assert.equal(patched.body.queue_position_expiry_period, defaultSettings('x').queue_position_expiry_period);
    assert.deepEqual(patched.body.webhooks, [{ url: hook.url, secret: '[redacted]' }]);
    assert.equal(patched.before?.validity_period, 600);
    assert.deepEqual(service.rooms.roomSettings('Shop')?.webhooks, [hook], 'the secret was kept');
    // A PUT without the secret keeps it too; the answer never holds it.
    const again = await service.rooms.putRoom('Shop', { webhooks: [{ url: hook.url }] });
    assert.doesNotMatch(JSON.stringify(again), /webhook-secret-1/);
    assert.deepEqual(service.rooms.roomSettings('Shop')?.webhooks, [hook]);
    await store.close();
  });

  it('refuses bodies that are not settings, naming the problem (400), and unknown rooms (404)', async () => {
    const { service, store } = setup([]);
    const invalid = (problem: string) => contractError(400, `Invalid room settings: ${problem}`);
    const unknown = contractError(404, 'Room not found');
    await assert.rejects(service.rooms.putRoom('Shop', [1]), invalid('the settings must be a JSON object'));
    await assert.rejects(service.rooms.putRoom('Shop', { event_id: 'Other' }), invalid("event_id: differs from the room's ID in the path"));
    await assert.rejects(service.rooms.putRoom('Shop', { validity_period: 0 }), (e) => e instanceof ContractError && e.status === 400 && /^Invalid room settings: validity_period: /.test(e.message));
    const badId = parseRoomSettings({ event_id: 'bad id!' });
    assert.equal(badId.ok, false);
    await assert.rejects(service.rooms.putRoom('bad id!', {}), invalid(badId.ok ? '' : describeProblem(badId.problem)));
    await assert.rejects(service.rooms.putRoom(42, {}), (e) => e instanceof ContractError && e.status === 400 && /event_id/.test(e.message));
    assert.deepEqual(ok(await service.rooms.listRooms()).rooms, [], 'nothing was stored');
    await assert.rejects(service.rooms.getRoom('Shop'), unknown);
    await assert.rejects(service.rooms.getRoom('bad id!'), unknown);
    await assert.rejects(service.rooms.patchRoom('Shop', {}), unknown);
    await assert.rejects(service.rooms.deleteRoom('bad id!'), unknown);
    await assert.rejects(service.reports.roomFigures('Shop'), unknown);
    await store.close();
  });

  it('PUT with the event_id of the path in the body is fine', async () => {
    const { service, store } = setup([]);
    assert.equal((await service.rooms.putRoom('Shop', { event_id: 'Shop' })).status, 201);
    await store.close();
  });

  it('DELETE stops serving the room at once, deletes its data only after ROOM_PROPAGATION_MS; a second DELETE is 404', async () => {
    const waits: { ms: number; release: () => void }[] = [];
    const waited = resolvers();
    const sleep = (ms: number) =>
      new Promise<void>((release) => {
        waits.push({ ms, release });
        waited.resolve();
      });
    const { service, store } = setup([], { sleep });
    await service.rooms.putRoom('Shop', put());
    ok(await service.queue.assignQueueNum('Shop', {}));
    const deleting = service.rooms.deleteRoom('Shop');
    await Promise.race([waited.promise, deleting.then(() => assert.fail('answered without waiting for the other nodes'))]);
    // The settings go first: this node no longer serves the room. The data stays while other nodes may.
    assert.deepEqual(waits.map((w) => w.ms), [ROOM_PROPAGATION_MS]);
    assert.equal(service.rooms.roomSettings('Shop'), undefined);
    assert.equal(await store.getRoom('Shop'), null);
    assert.equal((await store.getCounters('Shop')).queue, 1);
    waits[0]!.release();
    const answer = await deleting;
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, {});
    assert.equal(answer.before?.event_id, 'Shop');
    assert.equal((await store.getCounters('Shop')).queue, 0, 'the data is gone');
    await assert.rejects(service.rooms.getRoom('Shop'), contractError(404, 'Room not found'));
    await assert.rejects(service.rooms.deleteRoom('Shop'), contractError(404, 'Room not found'));
    assert.equal(waits.length, 1, 'a DELETE of nothing does not wait');
    await store.close();
  });

  it('a DELETE of a room created again meanwhile keeps the new room\'s data; one of an ID without settings deletes what is left', async () => {
    const waited = resolvers();
    const release = resolvers();
    const { service, store } = setup([], { sleep: () => (waited.resolve(), release.promise) });
    await service.rooms.putRoom('Shop', put());
    const deleting = service.rooms.deleteRoom('Shop');
    await Promise.race([waited.promise, deleting.then(() => assert.fail('answered without waiting for the other nodes'))]);
    await service.rooms.putRoom('Shop', put());
    ok(await service.queue.assignQueueNum('Shop', {}));
    release.resolve();
    assert.equal((await deleting).status, 200);
    assert.equal((await store.getCounters('Shop')).queue, 1, 'the room created again keeps its join');

    // Data left under an ID without settings (a DELETE interrupted between its steps) goes; the answer is 404.
    await store.assignPositions('Gone', [{ requestId: '00000000-0000-4000-8000-000000000001', entryTime: NOW_S }]);
    await assert.rejects(service.rooms.deleteRoom('Gone'), contractError(404, 'Room not found'));
    assert.equal((await store.getCounters('Gone')).queue, 0);
    await store.close();
  });

  it('a room listed but refused by the schema is left out of the list; getting it is a failure of ours', async () => {
    const { service, store } = setup([]);
    await service.rooms.putRoom('Good', {});
    await store.putRoom('Bad', JSON.stringify({ event_id: 'Bad', validity_period: -1 }));
    assert.deepEqual(ok(await service.rooms.listRooms()).rooms.map((r) => r.event_id), ['Good']);
    await assert.rejects(service.rooms.getRoom('Bad'), /the stored settings of room "Bad" are refused: validity_period/);
    // A PUT fixes it; its "before" is not shown, the stored text being refused.
    const fixed = await service.rooms.putRoom('Bad', {});
    assert.equal(fixed.status, 200);
    assert.equal(fixed.before, null);
    await store.close();
  });

  it('figures of a served room: its counters and phase now', async () => {
    const { service, store } = setup();
    ok(await service.queue.assignQueueNum('E', {}));
    ok(await service.queue.assignQueueNum('E', {}));
    await service.admission.incrementServingCounter('E', 1);
    const figures = ok(await service.reports.roomFigures('E'));
    assert.equal(figures.event_id, 'E');
    assert.equal(figures.phase, 'open');
    assert.equal(figures.queue, 2);
    assert.equal(figures.serving, 1);
    assert.equal(figures.admitted_last_minute, 1);
    await store.close();
  });
});

describe('admission through the service', () => {
  it('an unknown room is 400 for every request; the jobs pass over it', async () => {
    const { service, store } = setup();
    const inlet = { eventId: 'Nope', incrementBy: 1, startTime: 0, endTime: 0 };
    await assert.rejects(service.admission.admit('Nope', { kind: 'periodic', inlet, now: NOW_S }), INVALID_EVENT);
    assert.equal(await service.admission.admitAutomatically('Nope'), undefined);
    await assert.rejects(service.rooms.roomPhase('Nope'), INVALID_EVENT);
    await store.close();
  });

  it('a periodic tick moves the counter of the room, never past its queue', async () => {
    const { service, store } = setup();
    ok(await service.queue.assignQueueNum('E', {}));
    const inlet = { eventId: 'E', incrementBy: 5, startTime: 0, endTime: 0 };
    assert.deepEqual(await service.admission.admit('E', { kind: 'periodic', inlet, now: NOW_S }), { kind: 'moved', by: 1, servingNum: 1 });
    await store.close();
  });

  it('an automatic room admits within its limits on its tick, in its phase', async () => {
    const room = { ...defaultSettings('A'), admission: 'automatic', new_users_per_minute: 60, total_active_users: 10 } as RoomSettings;
    const { service, store } = setup([room, { ...defaultSettings('P'), state: 'paused' }]);
    ok(await service.queue.assignQueueNum('A', {}));
    ok(await service.queue.assignQueueNum('A', {}));
    const outcome = await service.admission.admitAutomatically('A');
    assert.equal(outcome?.kind === 'admitted' && outcome.serving, 1, '⌈60/60⌉ = 1 a second');
    assert.deepEqual(await service.admission.admitAutomatically('P'), { kind: 'nothing', reason: 'phase paused' });
    assert.equal(await service.rooms.roomPhase('P'), 'paused');
    await store.close();
  });
});

describe('history, report and audit log', () => {
  it('records each room\'s counters at the minute, and reports the minutes of a range', async () => {
    const { service, store, clock } = setup();
    ok(await service.queue.assignQueueNum('E', {}));
    await service.reports.recordHistory(3600);
    clock.ms += 60_000;
    ok(await service.queue.assignQueueNum('E', {}));
    await service.reports.recordHistory(3600);
    const minute = NOW_S - (NOW_S % 60);
    const report = (await service.reports.roomReport('E', minute + 60, minute + 60)).body;
    assert.equal(report.event_id, 'E');
    assert.equal(report.minutes.length, 1);
    assert.equal(report.minutes[0]?.minute, minute + 60);
    assert.equal(report.minutes[0]?.waiting, 2);
    assert.equal(report.minutes[0]?.arrivals, 1, 'the sample of the minute before gives the movement');
    await assert.rejects(service.reports.roomReport('Nope', 0, 60), contractError(404, 'Room not found'));
    await store.close();
  });

  it('keeps each change with the time it was made, newest first', async () => {
    const { service, store, clock } = setup();
    const change = { caller: 'admin token', address: '127.0.0.1', event_id: 'E', request: {}, before: null, after: null };
    await service.reports.recordChange({ ...change, action: 'first' });
    clock.ms += 1;
    await service.reports.recordChange({ ...change, action: 'second' });
    const log = await service.reports.auditLog(10);
    assert.deepEqual(log.map((e) => [e.action, e.at]), [['second', NOW_S * 1000 + 1000], ['first', NOW_S * 1000 + 999]]);
    assert.equal((await service.reports.auditLog(10, log[0]!.seq)).length, 1);
    await store.close();
  });
});

describe('joins the room refuses, and joins the bot defence shapes', () => {
  it('before the pre-queue opens a join is 403 "not open yet"; in a closed room 403 "closed"; nothing is stored', async () => {
    const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
    const early = { ...defaultSettings('Early'), prequeue_start_time: iso(NOW_S + 60), event_start_time: iso(NOW_S + 120) };
    const { service, store } = setup([early, { ...defaultSettings('Shut'), state: 'closed' }]);
    await assert.rejects(service.queue.assignQueueNum('Early', {}), contractError(403, 'Waiting room is not open yet'));
    await assert.rejects(service.queue.assignQueueNum('Shut', {}), contractError(403, 'Waiting room is closed'));
    assert.equal((await store.getCounters('Early')).queue, 0);
    assert.equal((await store.getCounters('Shut')).queue, 0);
    await store.close();
  });

  const secret = 'site-secret-0123456789abcdef-0123456789';
  const defended: RoomSettings = {
    ...defaultSettings('K'),
    bot_defence: botDefence({ joins_per_client_per_minute: 1, enqueue_key_secret: secret, infinite_queue: true }),
  };

  it('an enqueue key has one place: every join with it answers the same request ID, numbered once', async () => {
    const { service, store } = setup([defended], { parkingSecret: 'parking-secret' });
    const key = signEnqueueKey(secret, { event_id: 'K', key: 'user-42', exp: NOW_S + 60 });
    const first = ok(await service.queue.assignQueueNum('K', { enqueueKey: key, client: 'a' })).api_request_id;
    const again = ok(await service.queue.assignQueueNum('K', { enqueueKey: key, client: 'b' })).api_request_id;
    assert.equal(again, first);
    assert.equal((await store.getCounters('K')).queue, 1);
    assert.equal(ok(await service.queue.queueNum('K', first)).queue_number, 1);
    await store.close();
  });

  it('a client over its join limit in a room with the infinite queue is parked: a place behind everyone, stored nowhere, never served', async () => {
    const { service, store, clock } = setup([defended], { parkingSecret: 'parking-secret' });
    ok(await service.queue.assignQueueNum('K', { client: 'other' }));
    ok(await service.queue.assignQueueNum('K', { client: 'bot' }));
    clock.ms += 3_000;
    const parked = ok(await service.queue.assignQueueNum('K', { client: 'bot' })).api_request_id;
    assert.equal((await store.getCounters('K')).queue, 2, 'the parked join is stored nowhere');
    assert.deepEqual(ok(await service.queue.queueNum('K', parked)), { queue_number: 3, entry_time: NOW_S + 3, event_id: 'K', status: 1 });
    await service.admission.incrementServingCounter('K', 10);
    assert.deepEqual(await service.claims.generateToken('K', parked), { status: 202, body: { error: 'Request ID not being served yet' } });
    assert.deepEqual(await service.claims.queuePosExpiry('K', parked), { status: 202, body: { error: 'Request ID not being served yet' } });
    assert.deepEqual(await service.queue.leaveQueue('K', parked), { status: 200, body: {} });
    await store.close();
  });
});

describe('a room that is off', () => {
  it('serves everyone who joined: a claim beyond the serving counter is issued', async () => {
    const { service, store } = setup([{ ...defaultSettings('E'), state: 'off' }]);
    ok(await service.queue.assignQueueNum('E', {}));
    const { api_request_id: id } = ok(await service.queue.assignQueueNum('E', {}));
    assert.equal(ok(await service.queue.servingNum('E')).serving_counter, 0);
    assert.equal(signed(ok(await service.claims.generateToken('E', id)).access_token).position, 2);
    await store.close();
  });
});

describe('the wait estimate of /queue_num', () => {
  it('none until the pace is known; then (people ahead) / pace as a range, kept from the first lookup and judged at the claim', async () => {
    const s = setup();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(ok(await s.service.queue.assignQueueNum('E', {})).api_request_id);
    const last = ids[11]!;
    assert.equal('wait_estimate_s' in ok(await s.service.queue.queueNum('E', last)), false, 'no pace yet');
    ok(await s.service.queue.servingNum('E'));
    await s.service.admission.incrementServingCounter('E', 2);
    s.clock.ms += 20_000;
    const stream = await s.service.queue.streamCounters('E');
    assert.deepEqual(stream, { serving_counter: 2, waiting_num: 12, generation: stream.generation, phase: 'open' });
    // 2 let in over 20 s: 0.1 a second; 10 people ahead of place 12: 100 s, as 80..125.
    assert.deepEqual(ok(await s.service.queue.queueNum('E', last)).wait_estimate_s, [80, 125]);
    await s.service.admission.incrementServingCounter('E', 2);
    s.clock.ms += 10_000;
    ok(await s.service.queue.servingNum('E'));
    assert.deepEqual(ok(await s.service.queue.queueNum('E', last)).wait_estimate_s, [80, 125], 'the first estimate is kept');
    // A place the counter has reached is answered an estimate of 0, and none is kept to judge.
    assert.deepEqual(ok(await s.service.queue.queueNum('E', ids[0])).wait_estimate_s, [0, 0]);
    assert.equal(s.service.queue.estimates.of('E', ids[0]!), undefined);
    assert.deepEqual(s.service.queue.estimates.of('E', last), { lowSec: 80, highSec: 125 });

    await s.service.admission.incrementServingCounter('E', 8);
    ok(await s.service.claims.generateToken('E', last));
    assert.equal(s.service.queue.estimates.of('E', last), undefined, 'judged at the claim');
    assert.equal(ok(await s.service.reports.roomFigures('E')).estimate_accuracy.samples, 1);
    // A reset forgets the room's pace: a new place gets no estimate until it is measured again.
    ok(await s.service.admission.resetInitialState('E'));
    const { api_request_id: after } = ok(await s.service.queue.assignQueueNum('E', {}));
    assert.equal('wait_estimate_s' in ok(await s.service.queue.queueNum('E', after)), false);
    await s.store.close();
  });
});

describe('rooms followed after start, gate sessions, challenges and write limits', () => {
  it('a room put after start gets its expiry switch and key; a removed room\'s keys are forgotten; close stops following', async () => {
    const forgotten: string[] = [];
    const s = setup([]);
    s.keys.forget = (eventId: string) => void forgotten.push(eventId);
    await s.service.start();
    await s.service.rooms.putRoom('Late', { queue_position_expiry_period: 100 });
    assert.deepEqual(s.keys.asked, ['Late']);
    const { api_request_id: id } = ok(await s.service.queue.assignQueueNum('Late', {}));
    assert.equal((await s.store.getClaimContext('Late', id))?.expiryEnabledSince, NOW_S);
    await s.service.rooms.putRoom('Late', { queue_position_expiry_period: 200 });
    assert.deepEqual(s.keys.asked, ['Late', 'Late'], 'a changed room is prepared again');
    await s.service.close();
    await s.service.rooms.putRoom('After', {});
    assert.deepEqual(s.keys.asked, ['Late', 'Late'], 'after close, rooms are no longer followed');
    assert.deepEqual(forgotten, []);
    await s.store.close();
  });

  it('a removed room\'s keys are forgotten', async () => {
    const forgotten: string[] = [];
    const s = setup([], { sleep: async () => {} });
    s.keys.forget = (eventId: string) => void forgotten.push(eventId);
    await s.service.start();
    await s.service.rooms.putRoom('Gone', {});
    await s.service.rooms.deleteRoom('Gone');
    assert.deepEqual(forgotten, ['Gone']);
    await s.store.close();
  });

  it('a gate session seen idle is ended as abandoned and announced; a renewal of an open one is not', async () => {
    const s = setup();
    const id = await servedVisitor(s);
    ok(await s.service.claims.generateToken('E', id));
    s.published.length = 0;
    const nowMs = NOW_S * 1000;
    assert.equal((await s.service.sessions.renewGateSession('E', id, nowMs, null, true)).outcome, 'open');
    assert.deepEqual(s.published, []);
    assert.equal((await s.service.sessions.renewGateSession('E', id, nowMs + 60_000, nowMs + 30_000, false)).outcome, 'ended');
    assert.deepEqual(s.published, [{ type: 'session_updated', detail: { event_id: 'E', request_id: id, status: 'abandoned' } }]);
    await s.store.close();
  });

  it('a room without a proof of work asks none (404); the write limit answers 429 with Retry-After over it', async () => {
    const s = setup();
    await assert.rejects(s.service.queue.challenge('E'), contractError(404, 'This waiting room asks no proof of work'));
    await assert.rejects(s.service.queue.challenge('Nope'), INVALID_EVENT);
    await s.service.queue.limitPublicWrite('client', 2);
    await s.service.queue.limitPublicWrite('client', 2);
    await assert.rejects(s.service.queue.limitPublicWrite('client', 2), (e) => e instanceof ContractError && e.status === 429);
    await s.service.queue.limitPublicWrite('another', 2);
    await s.store.close();
  });

  it('intake joins of a room with a draw go to its pre-queue', async () => {
    const iso = (sec: number) => new Date(sec * 1000).toISOString().replace('.000Z', 'Z');
    const room = { ...defaultSettings('D'), event_start_time: iso(NOW_S + 60), shuffle_at_event_start: true };
    const s = setup([room]);
    const requestId = '00000000-0000-4000-8000-00000000000a';
    await s.service.queue.numberIntakeJoins('D', [{ requestId, entryTime: NOW_S }]);
    assert.equal((await s.store.getCounters('D')).queue, 0);
    assert.deepEqual(await s.service.queue.queueNum('D', requestId), { status: 202, body: { error: 'Waiting for the draw at the start' } });
    await s.store.close();
  });
});
