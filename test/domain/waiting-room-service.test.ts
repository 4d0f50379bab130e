// The waiting-room service alone: its real rules (src/domain) over the in-memory SQLite store, with the
// ports it does not own faked in plain sight — a signer that spells out what it signed, keys with fixed IDs,
// a publisher that records, and a clock the test moves. No HTTP, no sleeps: what must wait, waits on a
// promise the test holds.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TokenRecord } from '../../src/domain/claims.ts';
import type { DetailType, EventDetails, EventPublisher } from '../../src/domain/ports/events.ts';
import { StoreUnavailableError, type JoinRequest } from '../../src/domain/ports/store.ts';
import type { PublicJwk, SigningKeys, TokenSigning } from '../../src/domain/ports/tokens.ts';
import { RoomRegistry } from '../../src/domain/room-registry.ts';
import { defaultSettings, type RoomSettings } from '../../src/domain/room-settings.ts';
import { WaitingRoomService, type Answer, type WaitingRoomServiceDeps } from '../../src/domain/waiting-room-service.ts';
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

/** Keys with fixed IDs: `<event>-k1`. */
const keys: SigningKeys = {
  current: async (eventId) => ({ kid: `${eventId}-k1`, publicJwk: jwk(`${eventId}-k1`) }),
  all: async (eventId) => [{ kid: `${eventId}-k1`, publicJwk: jwk(`${eventId}-k1`) }],
};

/** A "signature" that spells out the record it was made from, so tests can read what was signed. */
const signer: TokenSigning = {
  sign: async (eventId: string, record: TokenRecord) => {
    const spelled = (use: string) => JSON.stringify({ use, eventId, ...record });
    return { access_token: spelled('access'), refresh_token: spelled('refresh'), id_token: spelled('id') };
  },
};

interface Published<T extends DetailType = DetailType> {
  type: T;
  detail: EventDetails[T];
}

function setup(rooms: RoomSettings[] = [defaultSettings('E')], extra: Partial<WaitingRoomServiceDeps> = {}) {
  const store = new ControlledStore();
  const clock = { ms: 1_000_000 };
  const published: Published[] = [];
  const events: EventPublisher = { publish: (type, detail) => published.push({ type, detail } as Published) };
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
  return { store, clock, published, service };
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
