// The waiting-room service alone: its real rules (src/domain) over the in-memory SQLite store, with the
// ports it does not own faked in plain sight — a signer that spells out what it signed, keys with fixed IDs,
// a publisher that records, and a clock the test moves. No HTTP, no sleeps: what must wait, waits on a
// promise the test holds.

import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { ContractError } from '../../src/domain/errors.ts';
import type { TokenRecord } from '../../src/domain/claims.ts';
import type { DetailType, EventDetails, EventPublisher } from '../../src/domain/ports/events.ts';
import { StoreUnavailableError, type IssueResult, type JoinRequest } from '../../src/domain/ports/store.ts';
import type { PublicJwk, SigningKeys, TokenSigning } from '../../src/domain/ports/tokens.ts';
import { RoomRegistry } from '../../src/domain/room-registry.ts';
import { defaultSettings, type RoomSettings } from '../../src/domain/room-settings.ts';
import { EXPIRED_TOKENS_LIMIT, WaitingRoomService, waitingOf, type Answer, type WaitingRoomServiceDeps } from '../../src/domain/waiting-room-service.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

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
const signer: TokenSigning = {
  sign: async (eventId: string, { signatures: _stored, ...record }: TokenRecord) => {
    const spelled = (use: string) => JSON.stringify({ use, eventId, ...record });
    return { access_token: spelled('access'), refresh_token: spelled('refresh'), id_token: spelled('id') };
  },
};

/** The test's "now", in epoch seconds. */
const NOW_S = 1_800_000_000;

interface Published<T extends DetailType = DetailType> {
  type: T;
  detail: EventDetails[T];
}

function setup(rooms: RoomSettings[] = [defaultSettings('E')], extra: Partial<WaitingRoomServiceDeps> = {}) {
  const store = new ControlledStore();
  const clock = { ms: NOW_S * 1000 + 999 }; // 999 ms into the second: times are floored to whole seconds
  const published: Published[] = [];
  const events: EventPublisher = { publish: (type, detail) => published.push({ type, detail } as Published) };
  const keys = fakeKeys();
  const service = new WaitingRoomService({
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
    const answer = service.assignQueueNum('E').then((a) => ((answered = true), a));
    await committing;
    assert.equal(answered, false, 'a join answered before its commit would be lost by a crash');
    store.releaseCommits();
    const { api_request_id: id } = ok(await answer);
    assert.equal(ok(await service.queueNum('E', id)).queue_number, 1);
    await store.close();
  });

  it('answers a join whose commit failed with the failure, never with a request ID', async () => {
    const { store, service } = setup();
    store.failCommits = new StoreUnavailableError('down');
    await assert.rejects(service.assignQueueNum('E'), StoreUnavailableError);
    store.failCommits = null;
    assert.equal(ok(await service.waitingNum('E')).waiting_num, 0);
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
  const { api_request_id: id } = ok(await service.assignQueueNum(eventId));
  const { queue_number: position } = ok(await service.queueNum(eventId, id));
  const { serving_counter: serving } = ok(await service.servingNum(eventId));
  if (serving < position) await service.incrementServingCounter(eventId, position - serving);
  return id;
}

describe('rooms: unknown events and malformed request IDs are client errors', () => {
  it('every operation on an unknown event fails with its contract error, and creates no state', async () => {
    const { service, store } = setup();
    const id = '00000000-0000-4000-8000-000000000000';
    await assert.rejects(service.assignQueueNum('Nope'), INVALID_EVENT);
    await assert.rejects(service.assignQueueNum(7), INVALID_EVENT);
    await assert.rejects(service.servingNum('Nope'), INVALID_EVENT);
    await assert.rejects(service.waitingNum('Nope'), INVALID_EVENT);
    await assert.rejects(service.incrementServingCounter('Nope', 1), INVALID_EVENT);
    await assert.rejects(service.expiredTokens('Nope'), INVALID_EVENT);
    await assert.rejects(service.resetInitialState('Nope'), INVALID_EVENT);
    // The jobs pass over a room that is gone (removed while a tick was running) instead of failing the tick.
    await service.advanceExpiry('Nope');
    await service.emitMetrics('Nope');
    await assert.rejects(service.publicKey('Nope'), contractError(404, 'Invalid event ID'));
    await assert.rejects(service.jwks('Nope'), contractError(404, 'Invalid event ID'));
    await assert.rejects(service.numActiveTokens('Nope'), contractError(404, 'Invalid event ID'));
    await assert.rejects(service.queueNum('Nope', id), INVALID_EVENT_OR_REQUEST);
    await assert.rejects(service.generateToken('Nope', id), INVALID_EVENT_OR_REQUEST);
    await assert.rejects(service.queuePosExpiry('Nope', id), INVALID_EVENT_OR_REQUEST);
    await assert.rejects(service.updateSession('Nope', id, 1), INVALID_EVENT_OR_REQUEST);
    await assert.rejects(service.claimReadiness('Nope', id), INVALID_EVENT_OR_REQUEST);
    assert.deepEqual(await store.getCounters('Nope'), await store.getCounters('never-seen'));
    await store.close();
  });

  it('a request ID must be a whole UUID; its case does not matter', async () => {
    const { service, store } = setup();
    const { api_request_id: id } = ok(await service.assignQueueNum('E'));
    for (const bad of [`${id}x`, id.slice(1), 42, undefined, '']) {
      await assert.rejects(service.queueNum('E', bad), INVALID_EVENT_OR_REQUEST, String(bad));
    }
    assert.equal(ok(await service.queueNum('E', id.toUpperCase())).queue_number, 1);
    await store.close();
  });

  it('lists its rooms and tells an adapter the settings of one (undefined for any other value)', async () => {
    const rooms = [defaultSettings('E'), { ...defaultSettings('F'), validity_period: 60 }];
    const { service, store } = setup(rooms);
    assert.deepEqual(service.rooms(), rooms);
    assert.deepEqual(service.roomIds(), ['E', 'F']);
    assert.equal(service.roomSettings('F')?.validity_period, 60);
    assert.equal(service.roomSettings('G'), undefined);
    assert.equal(service.roomSettings(undefined), undefined);
    await store.close();
  });
});

describe('start', () => {
  it('records when expiry was switched on for every room that has it, and creates every room\'s key', async () => {
    const { service, store, keys } = setup([defaultSettings('E'), { ...defaultSettings('Off'), enable_queue_position_expiry: false }]);
    await service.start();
    assert.deepEqual(keys.asked, ['E', 'Off']);
    const { api_request_id: e } = ok(await service.assignQueueNum('E'));
    const { api_request_id: off } = ok(await service.assignQueueNum('Off'));
    assert.equal((await store.getClaimContext('E', e))?.expiryEnabledSince, NOW_S);
    assert.equal((await store.getClaimContext('Off', off))?.expiryEnabledSince, null);
    await store.close();
  });
});

describe('the public API', () => {
  it('assign_queue_num: a new UUID per visitor, numbered in order, entry time in whole seconds', async () => {
    const { service, store, clock } = setup();
    const first = ok(await service.assignQueueNum('E')).api_request_id;
    clock.ms += 5_000;
    const second = ok(await service.assignQueueNum('E')).api_request_id;
    assert.match(first, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(first, second);
    assert.deepEqual(ok(await service.queueNum('E', first)), { queue_number: 1, entry_time: NOW_S, event_id: 'E', status: 1 });
    assert.deepEqual(ok(await service.queueNum('E', second)), { queue_number: 2, entry_time: NOW_S + 5, event_id: 'E', status: 1 });
    await store.close();
  });

  it('queue_num of a request ID without a position is 202 "Request ID not found"', async () => {
    const { service, store } = setup();
    assert.deepEqual(await service.queueNum('E', '00000000-0000-4000-8000-000000000000'), {
      status: 202,
      body: { error: 'Request ID not found' },
    });
    await store.close();
  });

  it('serving_num and waiting_num follow joins, the counter, claims and expiry', async () => {
    const { service, store, clock } = setup();
    await service.start();
    assert.deepEqual(await service.servingNum('E'), { status: 200, body: { serving_counter: 0 } });
    assert.deepEqual(await service.waitingNum('E'), { status: 200, body: { waiting_num: 0 } });
    const a = await servedVisitor(setupOf(service, store, clock));
    await service.assignQueueNum('E');
    await service.assignQueueNum('E');
    assert.equal(ok(await service.servingNum('E')).serving_counter, 1);
    assert.equal(ok(await service.waitingNum('E')).waiting_num, 3);
    ok(await service.generateToken('E', a));
    assert.equal(ok(await service.waitingNum('E')).waiting_num, 2, 'a claimed token leaves the count');
    await service.incrementServingCounter('E', 1);
    clock.ms += 901_000;
    await service.advanceExpiry('E');
    assert.equal(ok(await service.waitingNum('E')).waiting_num, 1, 'an expired position leaves the count');
    await store.close();
  });

  it('public_key is the current key; the JWKS lists every key', async () => {
    const { service, store } = setup();
    assert.deepEqual(await service.publicKey('E'), { status: 200, body: jwk('E-k2') });
    assert.deepEqual(await service.jwks('E'), { status: 200, body: { keys: [jwk('E-k1'), jwk('E-k2')] } });
    await store.close();
  });

  it('waitingOf is queue − tokens − expired, never below 0', () => {
    const counters = { queue: 10, serving: 0, tokens: 3, expired: 2, completed: 9, abandoned: 9, maxExpired: 9, left: 0 };
    assert.equal(waitingOf(counters), 5);
    assert.equal(waitingOf({ ...counters, tokens: 8, expired: 4 }), 0);
  });
});

/** The setup parts a helper needs, from the parts a test destructured. */
function setupOf(service: WaitingRoomService, store: ControlledStore, clock: { ms: number }): Setup {
  return { service, store, clock } as Setup;
}

describe('generate_token', () => {
  it('issues a token set from a record of now + validity, signed with the current key, and publishes token_generated', async () => {
    const s = setup([{ ...defaultSettings('E'), validity_period: 600, issuer: 'https://issuer.example' }]);
    const id = await servedVisitor(s);
    const answer = ok(await s.service.generateToken('E', id));
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
    const plain = signed(ok(await s.service.generateToken('E', await servedVisitor(s))).access_token);
    assert.equal(plain.iss, 'https://node.example');
    assert.equal(plain.exp - plain.iat, 3600);
    const overridden = ok(
      await s.service.generateToken('E', await servedVisitor(s), { issuer: 'https://oidc.example', validityPeriod: 60, nonce: 'n-1' }),
    );
    assert.equal(overridden.expires_in, 60);
    assert.deepEqual([signed(overridden.id_token).iss, signed(overridden.id_token).nonce], ['https://oidc.example', 'n-1']);
    await s.store.close();
  });

  it('a re-claim answers the stored set again, with the seconds left, and publishes nothing more', async () => {
    const s = setup();
    const id = await servedVisitor(s);
    const first = ok(await s.service.generateToken('E', id));
    s.clock.ms += 4_000_000; // past exp: expires_in floors at 0
    const again = ok(await s.service.generateToken('E', id));
    assert.equal(again.access_token, first.access_token);
    assert.equal(again.expires_in, 0);
    s.clock.ms -= 4_000_000 - 100_000;
    const asked = s.keys.asked.length;
    assert.equal(ok(await s.service.generateToken('E', id)).expires_in, 3500);
    assert.equal(s.keys.asked.length, asked, 'a re-claim makes no new record: not even the current key is needed');
    assert.equal(s.published.length, 1);
    assert.equal((await s.store.getCounters('E')).tokens, 1);
    await s.store.close();
  });

  it('answers each decision of the claim order with its contract answer', async () => {
    const s = setup([{ ...defaultSettings('E'), queue_position_expiry_period: 100 }]);
    await s.service.start();
    await assert.rejects(s.service.generateToken('E', '00000000-0000-4000-8000-000000000000'), contractError(404, 'Invalid request ID'));
    const { api_request_id: waiting } = ok(await s.service.assignQueueNum('E'));
    await s.service.assignQueueNum('E');
    assert.deepEqual(await s.service.generateToken('E', ok(await s.service.assignQueueNum('E')).api_request_id), {
      status: 202,
      body: { error: 'Request ID not being served yet' },
    });
    await s.service.incrementServingCounter('E', 1);
    s.clock.ms += 101_000;
    await assert.rejects(s.service.generateToken('E', waiting), contractError(410, 'Queue position has expired'));
    const closed = await servedVisitor(s);
    ok(await s.service.generateToken('E', closed));
    ok(await s.service.updateSession('E', closed, -1));
    await assert.rejects(s.service.generateToken('E', closed), contractError(410, 'Token corresponding to request id has expired'));
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
    const answer = ok(await s.service.generateToken('E', id));
    assert.deepEqual([signed(answer.access_token).iss, answer.expires_in], ['https://won', 50]);
    s.store.forceIssue = { outcome: 'existing', record: { ...winner, status: 1 } };
    await assert.rejects(s.service.generateToken('E', id), contractError(410, 'Token corresponding to request id has expired'));
    s.store.forceIssue = { outcome: 'expired' };
    await assert.rejects(s.service.generateToken('E', id), contractError(410, 'Queue position has expired'));
    s.store.forceIssue = { outcome: 'no-position' };
    await assert.rejects(s.service.generateToken('E', id), contractError(404, 'Invalid request ID'));
    assert.deepEqual(s.published, [], 'a lost race publishes nothing');
    await s.store.close();
  });
});

describe('queue_pos_expiry', () => {
  it('answers each decision with its contract answer', async () => {
    const s = setup([{ ...defaultSettings('E'), queue_position_expiry_period: 100 }, { ...defaultSettings('Off'), enable_queue_position_expiry: false }]);
    await s.service.start();
    await assert.rejects(s.service.queuePosExpiry('E', '00000000-0000-4000-8000-000000000000'), contractError(404, 'Invalid request ID'));
    const { api_request_id: off } = ok(await s.service.assignQueueNum('Off'));
    assert.deepEqual(await s.service.queuePosExpiry('Off', off), { status: 202, body: { error: 'Queue position expiration not enabled' } });
    const id = await servedVisitor(s);
    const { api_request_id: later } = ok(await s.service.assignQueueNum('E'));
    assert.deepEqual(await s.service.queuePosExpiry('E', later), { status: 202, body: { error: 'Request ID not being served yet' } });
    s.clock.ms += 30_000;
    assert.deepEqual(await s.service.queuePosExpiry('E', id), { status: 200, body: { expires_in: 70 } });
    s.clock.ms += 71_000;
    await assert.rejects(s.service.queuePosExpiry('E', id), contractError(410, 'Queue position has expired'));
    await s.store.close();
  });
});

describe('the private API', () => {
  it('increment_serving_counter moves the counter by any integer, answering the new value', async () => {
    const { service, store } = setup();
    assert.deepEqual(await service.incrementServingCounter('E', 5), { status: 200, body: { serving_num: 5 } });
    assert.deepEqual(await service.incrementServingCounter('E', -2), { status: 200, body: { serving_num: 3 } });
    await store.close();
  });

  it('num_active_tokens and expired_tokens read the tokens at the current time', async () => {
    const s = setup([{ ...defaultSettings('E'), validity_period: 60 }]);
    const id = await servedVisitor(s);
    ok(await s.service.generateToken('E', id));
    assert.deepEqual(await s.service.numActiveTokens('E'), { status: 200, body: { active_tokens: 1 } });
    assert.deepEqual(await s.service.expiredTokens('E'), { status: 200, body: [] });
    s.clock.ms += 61_000;
    assert.deepEqual(await s.service.numActiveTokens('E'), { status: 200, body: { active_tokens: 0 } });
    assert.deepEqual(await s.service.expiredTokens('E'), { status: 200, body: [id] });
    await s.store.close();
  });

  it('expired_tokens asks the store for at most EXPIRED_TOKENS_LIMIT IDs', async () => {
    const s = setup();
    const limits: number[] = [];
    const listed = mock.method(s.store, 'listExpiredTokens', async (_e: string, _now: number, limit: number) => {
      limits.push(limit);
      return [];
    });
    await s.service.expiredTokens('E');
    assert.deepEqual(limits, [EXPIRED_TOKENS_LIMIT]);
    assert.equal(EXPIRED_TOKENS_LIMIT, 10_000);
    listed.mock.restore();
    await s.store.close();
  });

  it('update_session closes an open session once (1 completed, −1 abandoned) and publishes session_updated', async () => {
    const s = setup();
    const done = await servedVisitor(s);
    const left = await servedVisitor(s);
    ok(await s.service.generateToken('E', done));
    ok(await s.service.generateToken('E', left));
    s.published.length = 0;
    assert.deepEqual(await s.service.updateSession('E', done, 1), { status: 200, body: {} });
    assert.deepEqual(await s.service.updateSession('E', left.toUpperCase(), -1), { status: 200, body: {} });
    assert.deepEqual(s.published, [
      { type: 'session_updated', detail: { event_id: 'E', request_id: done, status: 'completed' } },
      { type: 'session_updated', detail: { event_id: 'E', request_id: left, status: 'abandoned' } },
    ]);
    const counters = await s.store.getCounters('E');
    assert.deepEqual([counters.completed, counters.abandoned], [1, 1]);
    await assert.rejects(s.service.updateSession('E', done, 1), contractError(404, "Request ID doesn't exist or status already set."));
    await assert.rejects(s.service.updateSession('E', '00000000-0000-4000-8000-000000000000', -1), contractError(404, "Request ID doesn't exist or status already set."));
    for (const status of [0, 2, '1', null, true]) {
      await assert.rejects(s.service.updateSession('E', left, status), INVALID_EVENT_OR_REQUEST, String(status));
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
    assert.deepEqual(await s.service.resetInitialState('E'), {
      status: 200,
      body: { message: 'Counters reset. DynamoDB table recreated.' },
    });
    assert.deepEqual(order, ['hook E: queue 0']);
    assert.equal(ok(await s.service.servingNum('E')).serving_counter, 0);
    await s.store.close();
  });

  it('reset_initial_state needs no after-reset hook', async () => {
    const s = setup();
    await s.service.assignQueueNum('E');
    assert.equal((await s.service.resetInitialState('E')).status, 200);
    assert.equal((await s.store.getCounters('E')).queue, 0);
    await s.store.close();
  });

  it('counters adds the waiting number and the active tokens to the store\'s counters', async () => {
    const s = setup();
    ok(await s.service.generateToken('E', await servedVisitor(s)));
    await s.service.assignQueueNum('E');
    await s.service.assignQueueNum('E');
    assert.deepEqual(await s.service.counters('E'), {
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
      await s.service.assignQueueNum(room);
    }
    s.clock.ms += 100_000;
    await s.service.advanceExpiry('Plain');
    await s.service.advanceExpiry('Incr');
    assert.equal((await s.store.getCounters('Plain')).expired, 0, 'exactly the period: not expired yet');
    assert.deepEqual(s.published, []);
    s.clock.ms += 1_000;
    await s.service.advanceExpiry('Plain');
    await s.service.advanceExpiry('Incr');
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
    await s.service.advanceExpiry('Off');
    assert.equal(advanced.mock.callCount(), 0);
    advanced.mock.restore();
    await s.store.close();
  });

  it('the metrics job publishes waiting_room_metrics only for rooms with events generation on', async () => {
    const s = setup([{ ...defaultSettings('On'), enable_events_generation: true }, defaultSettings('Quiet')]);
    const done = await servedVisitor(s, 'On');
    ok(await s.service.generateToken('On', done));
    ok(await s.service.updateSession('On', done, 1));
    const left = await servedVisitor(s, 'On');
    ok(await s.service.generateToken('On', left));
    ok(await s.service.updateSession('On', left, -1));
    ok(await s.service.generateToken('On', await servedVisitor(s, 'On')));
    await s.service.assignQueueNum('On');
    s.published.length = 0;
    await s.service.emitMetrics('Quiet');
    assert.deepEqual(s.published, []);
    await s.service.emitMetrics('On');
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
    assert.equal(s.service.answersPollsFromMemory, true);
    await s.service.incrementServingCounter('E', 4);
    await s.service.servingNum('E'); // the SQLite store keeps the row it read
    const read = mock.method(s.store, 'getCounters');
    assert.equal(s.service.countersInMemory('E')?.serving, 4);
    assert.equal(s.service.countersInMemory('Nope'), undefined);
    assert.equal(read.mock.callCount(), 0);
    read.mock.restore();
    await s.store.close();
  });

  it('a store that cannot answer polls from memory says so', async () => {
    const s = setup();
    Object.defineProperty(s.store, 'peekCounters', { value: undefined });
    assert.equal(s.service.answersPollsFromMemory, false);
    assert.equal(s.service.countersInMemory('E'), undefined);
    await s.store.close();
  });

  it('checkStore and storeDescription reach the store; claimReadiness decides without issuing', async () => {
    const s = setup();
    await s.service.checkStore();
    const down = new StoreUnavailableError('down');
    const ping = mock.method(s.store, 'ping', async () => {
      throw down;
    });
    await assert.rejects(s.service.checkStore(), (e) => e === down);
    ping.mock.restore();
    assert.equal(down.name, 'StoreUnavailableError');
    assert.equal(s.service.storeDescription, 'memory');
    const id = await servedVisitor(s);
    const { api_request_id: later } = ok(await s.service.assignQueueNum('E'));
    assert.equal(await s.service.claimReadiness('E', id), 'issue');
    assert.equal(await s.service.claimReadiness('E', later), 'not-served-yet');
    assert.equal(await s.service.claimReadiness('E', '00000000-0000-4000-8000-000000000000'), 'no-position');
    assert.equal((await s.store.getCounters('E')).tokens, 0);
    await s.store.close();
  });

  it('binds an OpenID Connect authorization to a position only', async () => {
    const s = setup();
    const { api_request_id: id } = ok(await s.service.assignQueueNum('E'));
    assert.equal(await s.service.bindAuthorization('E', id, 'request-1'), true);
    assert.equal(await s.service.boundAuthorization('E', id), 'request-1');
    assert.equal(await s.service.bindAuthorization('E', '00000000-0000-4000-8000-000000000000', 'x'), false);
    assert.equal(await s.service.boundAuthorization('E', '00000000-0000-4000-8000-000000000000'), null);
    await s.store.close();
  });

  it('binds the authorization request a join carries as it numbers the join; not in a pre-queue', async () => {
    const s = setup([defaultSettings('E'), {
      ...defaultSettings('D'),
      prequeue_start_time: new Date((NOW_S - 60) * 1000).toISOString(),
      event_start_time: new Date((NOW_S + 3600) * 1000).toISOString(),
      shuffle_at_event_start: true,
    }]);
    const { api_request_id: id } = ok(await s.service.assignQueueNum('E', {}, 'request-1'));
    assert.equal(s.service.joinsNumberedLater, false);
    assert.equal(await s.service.boundAuthorization('E', id), 'request-1');
    const { api_request_id: plain } = ok(await s.service.assignQueueNum('E'));
    assert.equal(await s.service.boundAuthorization('E', plain), null);
    // A pre-queue entry has no position to bind to: refused before anything is stored.
    await assert.rejects(s.service.assignQueueNum('D', {}, 'request-2'), { status: 503 });
    assert.equal((await s.store.getCounters('D')).queue, 0);
    await s.store.close();
  });

  it('numbers intake joins once each, however often they are delivered', async () => {
    const s = setup();
    const joins = [{ requestId: 'a', entryTime: 1 }, { requestId: 'b', entryTime: 1 }];
    assert.deepEqual(await s.service.numberIntakeJoins('E', joins), [1, 2]);
    assert.deepEqual(await s.service.numberIntakeJoins('E', [joins[1]!, { requestId: 'c', entryTime: 2 }]), [2, 3]);
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
    const answers = await Promise.all([s.service.assignQueueNum('E'), s.service.assignQueueNum('E')]);
    const ids = answers.map((a) => ok(a).api_request_id);
    const handed = accepted.map(([eventId, joins]) => [eventId, joins.map(({ requestId, entryTime }) => ({ requestId, entryTime }))]);
    assert.deepEqual(handed, [['E', ids.map((requestId) => ({ requestId, entryTime: NOW_S }))]]);
    assert.deepEqual(sizes, [2]);
    assert.deepEqual(await s.service.queueNum('E', ids[0]), { status: 202, body: { error: 'Request ID not found' } });
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
    assert.equal(s.service.joinsNumberedLater, true);
    const { api_request_id: id } = ok(await s.service.assignQueueNum('E', {}, 'request-1'));
    assert.deepEqual(accepted, [{ requestId: id, entryTime: NOW_S, authorization: 'request-1' }]);
    assert.equal(await s.service.boundAuthorization('E', id), null);
    // Delivered twice (SQS): one position, one binding.
    assert.deepEqual(await s.service.numberIntakeJoins('E', accepted), [1]);
    assert.deepEqual(await s.service.numberIntakeJoins('E', accepted), [1]);
    assert.equal(await s.service.boundAuthorization('E', id), 'request-1');
    await s.store.close();
  });

  it('a join the intake refused fails', async () => {
    const s = setup([defaultSettings('E')], {
      intake: async () => {
        throw new StoreUnavailableError('queue down');
      },
    });
    await assert.rejects(s.service.assignQueueNum('E'), StoreUnavailableError);
    await s.store.close();
  });
});

describe('join batches', () => {
  it('reports the size of every committed batch, and drainJoins answers every join waiting', async () => {
    const sizes: number[] = [];
    const s = setup([defaultSettings('E')], { onJoinBatch: (size) => sizes.push(size), joinBatch: { maxBatch: 2 } });
    const joins = [s.service.assignQueueNum('E'), s.service.assignQueueNum('E'), s.service.assignQueueNum('E')];
    await s.service.drainJoins();
    assert.deepEqual(sizes, [2, 1]);
    assert.equal((await s.store.getCounters('E')).queue, 3);
    await Promise.all(joins);
    await s.store.close();
  });
});
