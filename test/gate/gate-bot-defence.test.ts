// One join path (issue 30): a join through the gate passes the room's bot defence exactly as a public-API join
// does — the same per-client counters (the client as --trust-proxy names it), the proof of work of
// `challenge: always` (a challenge served by the gate, solved, sent back in Anteroom-Proof-Of-Work), the
// infinite queue, and --writes-per-client-per-minute. Places are counted in the store, not in answers.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BotDefenceSettings } from '../../src/domain/room-settings.ts';
import { PLACE_COOKIE, TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { botDefence } from '../support/bot-defence-settings.ts';
import { eventSettings } from '../support/node.ts';
import { fetchChallenge, solve, solvedProof } from '../support/proof-of-work.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode, type Origin } from './support.ts';

const JSON_ACCEPT = { accept: 'application/json' };
/** The header the page sends its solution in (docs/gate.md), spelled as on the wire. */
const PROOF_OF_WORK_HEADER = 'anteroom-proof-of-work';

/** A room protecting `path` of every host, with this bot defence. */
function guardedRoom(eventId: string, origin: string, path: string, defence: Partial<BotDefenceSettings>) {
  return gatedRoom(eventId, origin, { gate: { origin, routes: [{ path }], queueing_status_code: 200 }, bot_defence: botDefence(defence) });
}

/** Places actually numbered in the store. */
async function placesOf(node: GateNode, eventId: string): Promise<number> {
  return (await node.room.reports.counters(eventId)).queue;
}

/** A public-API join from `client` (X-Forwarded-For, believed from the loopback peer: --trust-proxy 127.0.0.1). */
function apiJoin(node: GateNode, eventId: string, client: string, body: Record<string, unknown> = {}): Promise<Response> {
  return node.post('/assign_queue_num', { event_id: eventId, ...body }, { 'x-forwarded-for': client });
}

describe('per-client limits: the same room refuses the same client on both doors', () => {
  let origin: Origin;
  let node: GateNode;

  before(async () => {
    origin = await startOrigin();
    node = await startGateNode(
      [
        guardedRoom('ApiFirst', origin.url, '/a', { joins_per_client_per_minute: 2 }),
        guardedRoom('GateFirst', origin.url, '/b', { joins_per_client_per_minute: 2 }),
        guardedRoom('Auto', origin.url, '/c', { challenge: 'auto', client_threshold_per_minute: 1 }),
      ],
      { trustProxy: ['127.0.0.1'] },
    );
  });
  after(async () => {
    await node?.stop();
    await origin?.close();
  });

  it('two places through the public API, then the gate refuses the third: 429 page with Retry-After, no place taken', async () => {
    const client = '203.0.113.1';
    assert.deepEqual([(await apiJoin(node, 'ApiFirst', client)).status, (await apiJoin(node, 'ApiFirst', client)).status], [200, 200]);
    assert.equal(await placesOf(node, 'ApiFirst'), 2);

    const jar = new CookieJar();
    const page = await jar.fetch(`${node.gateUrl}/a/item`, { headers: { 'x-forwarded-for': client } });
    assert.equal(page.status, 429);
    assert.equal(page.headers.get('anteroom-gate'), 'limited');
    assert.match(page.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    assert.match(await page.text(), /<meta name="anteroom-gate" content="limited"/);
    assert.ok(!jar.cookies.has(PLACE_COOKIE), 'no place');

    const json = await jar.fetch(`${node.gateUrl}/a/item`, { headers: { ...JSON_ACCEPT, 'x-forwarded-for': client } });
    assert.equal(json.status, 429);
    assert.match(json.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.deepEqual(await json.json(), { status: 'limited', event_id: 'ApiFirst', error: 'Too many requests' });
    assert.equal(await placesOf(node, 'ApiFirst'), 2, 'the refused joins took no place');
    assert.equal(origin.seen.length, 0, 'nothing reached the origin');

    // The limit is the client's, as the gate names it: another address still joins, through either door.
    const other = await new CookieJar().fetch(`${node.gateUrl}/a/item`, { headers: { ...JSON_ACCEPT, 'x-forwarded-for': '203.0.113.2' } });
    assert.equal(other.status, 200);
    assert.equal(((await other.json()) as { status: string }).status, 'queued');
    assert.equal(await placesOf(node, 'ApiFirst'), 3);
    assert.equal((await apiJoin(node, 'ApiFirst', client)).status, 429);
  });

  it('twenty gate requests of one client take two places, and the public API then refuses it too', async () => {
    const client = '198.51.100.7';
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const answer = await fetch(`${node.gateUrl}/b/sale`, { headers: { ...JSON_ACCEPT, 'x-forwarded-for': client }, redirect: 'manual' });
      statuses.push(answer.status);
      await answer.body?.cancel();
    }
    assert.deepEqual(statuses, [200, 200, ...Array<number>(18).fill(429)]);
    assert.equal(await placesOf(node, 'GateFirst'), 2);
    const refused = await apiJoin(node, 'GateFirst', client);
    assert.equal(refused.status, 429);
    assert.deepEqual(await refused.json(), { error: 'Too many requests' });
    assert.equal(await placesOf(node, 'GateFirst'), 2);
  });

  it('challenge: auto — a client that joined through the API is asked to solve at the gate; another client is not', async () => {
    const client = '198.51.100.20';
    assert.equal((await apiJoin(node, 'Auto', client)).status, 200);
    const asked = await new CookieJar().fetch(`${node.gateUrl}/c/`, { headers: { ...JSON_ACCEPT, 'x-forwarded-for': client } });
    assert.equal(asked.status, 403);
    assert.equal(((await asked.json()) as { status: string }).status, 'challenge');
    const other = await new CookieJar().fetch(`${node.gateUrl}/c/`, { headers: { ...JSON_ACCEPT, 'x-forwarded-for': '198.51.100.21' } });
    assert.equal(other.status, 200);
    await other.body?.cancel();
    assert.equal(await placesOf(node, 'Auto'), 2);
  });
});

describe('--writes-per-client-per-minute counts joins through the gate as public writes', () => {
  let origin: Origin;
  let node: GateNode;

  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([gatedRoom('Open', origin.url)], { trustProxy: ['127.0.0.1'], writesPerClientPerMinute: 3 });
  });
  after(async () => {
    await node?.stop();
    await origin?.close();
  });

  it('two joins through the gate and one through the API, then both doors answer 429', async () => {
    const client = '192.0.2.44';
    const gateJoin = async () => {
      const answer = await fetch(`${node.gateUrl}/`, { headers: { ...JSON_ACCEPT, 'x-forwarded-for': client } });
      await answer.body?.cancel();
      return answer.status;
    };
    assert.deepEqual([await gateJoin(), await gateJoin(), (await apiJoin(node, 'Open', client)).status], [200, 200, 200]);
    assert.equal(await gateJoin(), 429);
    assert.equal((await apiJoin(node, 'Open', client)).status, 429);
    assert.equal(await placesOf(node, 'Open'), 3);
  });
});

describe('challenge: always through the gate', () => {
  let origin: Origin;
  let node: GateNode;

  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([
      guardedRoom('Guarded', origin.url, '/', { challenge: 'always' }),
      guardedRoom('Plain', origin.url, '/plain', {}),
      eventSettings('NoGate'),
    ]);
  });
  after(async () => {
    await node?.stop();
    await origin?.close();
  });

  it('a visitor gets the challenge page, not the closed page, and no place', async () => {
    const jar = new CookieJar();
    const page = await jar.fetch(`${node.gateUrl}/product/7`);
    assert.equal(page.status, 403);
    assert.equal(page.headers.get('anteroom-gate'), 'challenge');
    assert.equal(page.headers.get('cache-control'), 'no-store');
    const html = await page.text();
    assert.match(html, /<meta name="anteroom-gate" content="challenge" data-event-id="Guarded">/);
    assert.doesNotMatch(html, /content="closed"/);
    assert.ok(!jar.cookies.has(PLACE_COOKIE));

    const json = await jar.fetch(`${node.gateUrl}/product/7`, { headers: JSON_ACCEPT });
    assert.equal(json.status, 403);
    assert.deepEqual(await json.json(), {
      status: 'challenge',
      event_id: 'Guarded',
      error: 'Proof of work required',
      challenge: '/_anteroom/challenge?event_id=Guarded',
    });
    assert.equal(await placesOf(node, 'Guarded'), 0);
    assert.equal(origin.seen.length, 0);
  });

  it('solving the challenge the gate serves takes a place, kept by the cookie, and is admitted when served', async () => {
    const jar = new CookieJar();
    const challenge = await fetch(`${node.gateUrl}/_anteroom/challenge?event_id=Guarded`);
    assert.equal(challenge.status, 200);
    assert.equal(challenge.headers.get('cache-control'), 'no-store');
    const proof = await solve((await challenge.json()) as Parameters<typeof solve>[0]);

    const joined = await jar.fetch(`${node.gateUrl}/product/7`, { headers: { ...JSON_ACCEPT, [PROOF_OF_WORK_HEADER]: proof } });
    assert.equal(joined.status, 200);
    const state = (await joined.json()) as { status: string; queue_number: number };
    assert.equal(state.status, 'queued');
    assert.ok(jar.cookies.has(PLACE_COOKIE));
    const places = await placesOf(node, 'Guarded');
    assert.equal(places, state.queue_number);

    // The place is the cookie's from now on: a poll needs no proof and takes no second place.
    const poll = (await (await jar.fetch(`${node.gateUrl}/product/7`, { headers: JSON_ACCEPT })).json()) as { status: string; queue_number: number };
    assert.deepEqual([poll.status, poll.queue_number], ['queued', state.queue_number]);
    assert.equal(await placesOf(node, 'Guarded'), places);

    // The same solution again, from a visitor without a place: used once, refused, nothing stored.
    const replay = await new CookieJar().fetch(`${node.gateUrl}/`, { headers: { ...JSON_ACCEPT, [PROOF_OF_WORK_HEADER]: proof } });
    assert.equal(replay.status, 403);
    assert.equal(((await replay.json()) as { error: string }).error, 'Proof of work already used');
    const forged = await new CookieJar().fetch(`${node.gateUrl}/`, { headers: { ...JSON_ACCEPT, [PROOF_OF_WORK_HEADER]: 'bm90IGEgcHJvb2Y=' } });
    assert.equal(forged.status, 403);
    assert.equal(((await forged.json()) as { error: string }).error, 'Invalid proof of work');
    assert.equal(await placesOf(node, 'Guarded'), places);

    const serving = (await (await node.get('/serving_num?event_id=Guarded')).json()) as { serving_counter: number };
    const by = state.queue_number - serving.serving_counter;
    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Guarded', increment_by: by })).status, 200);
    const admitted = await jar.fetch(`${node.gateUrl}/product/7`);
    assert.equal(admitted.status, 303);
    assert.equal(admitted.headers.get('location'), '/product/7');
    assert.ok(jar.cookies.has(TOKEN_COOKIE));
  });

  it('the forward-auth waiting page asks for the challenge the same way', async () => {
    const jar = new CookieJar();
    const refused = await jar.fetch(`${node.gateUrl}/_anteroom/wait?to=%2Fcart`, { headers: JSON_ACCEPT });
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { status: string }).status, 'challenge');
    const proof = await solvedProof(`${node.gateUrl}/_anteroom`, 'Guarded');
    const joined = await jar.fetch(`${node.gateUrl}/_anteroom/wait?to=%2Fcart`, { headers: { ...JSON_ACCEPT, [PROOF_OF_WORK_HEADER]: proof } });
    assert.equal(joined.status, 200);
    assert.equal(((await joined.json()) as { status: string }).status, 'queued');
  });

  it("the gate's challenge: only for a gated room that asks one, in the one error shape", async () => {
    const cases: [string, number, string][] = [
      ['Unknown', 404, 'No waiting room protects this URL'],
      ['NoGate', 404, 'No waiting room protects this URL'],
      ['Plain', 404, 'This waiting room asks no proof of work'],
    ];
    for (const [eventId, status, error] of cases) {
      const answer = await fetch(`${node.gateUrl}/_anteroom/challenge?event_id=${eventId}`);
      assert.equal(answer.status, status, eventId);
      assert.deepEqual(await answer.json(), { error }, eventId);
    }
    const noQuery = await fetch(`${node.gateUrl}/_anteroom/challenge`);
    assert.equal(noQuery.status, 404);
    // The challenge of the gate is the public API's: a solution of either is accepted by either door.
    const fromGate = await fetchChallenge(`${node.gateUrl}/_anteroom`, 'Guarded');
    const joined = await node.post('/assign_queue_num', { event_id: 'Guarded', proof_of_work: await solve(fromGate) });
    assert.equal(joined.status, 200);
  });
});

describe('the infinite queue through the gate', () => {
  let origin: Origin;
  let node: GateNode;

  before(async () => {
    origin = await startOrigin();
    node = await startGateNode([guardedRoom('Parking', origin.url, '/', { challenge: 'always', infinite_queue: true })]);
  });
  after(async () => {
    await node?.stop();
    await origin?.close();
  });

  it('a forged proof is answered with a place behind everyone that is never served and stored nowhere', async () => {
    const honest = await new CookieJar().fetch(`${node.gateUrl}/`, { headers: { ...JSON_ACCEPT, [PROOF_OF_WORK_HEADER]: await solvedProof(`${node.gateUrl}/_anteroom`, 'Parking') } });
    assert.equal(honest.status, 200);
    assert.equal(await placesOf(node, 'Parking'), 1);

    const bot = new CookieJar();
    const parked = await bot.fetch(`${node.gateUrl}/`, { headers: { ...JSON_ACCEPT, [PROOF_OF_WORK_HEADER]: 'bm90IGEgcHJvb2Y=' } });
    assert.equal(parked.status, 200);
    const state = (await parked.json()) as { status: string; queue_number: number };
    assert.deepEqual([state.status, state.queue_number], ['queued', 2]);
    assert.ok(bot.cookies.has(PLACE_COOKIE));
    assert.equal(await placesOf(node, 'Parking'), 1, 'the parked place is stored nowhere');

    // A join without any proof is still asked to solve (that is how the page learns it must).
    const asked = await new CookieJar().fetch(`${node.gateUrl}/`, { headers: JSON_ACCEPT });
    assert.equal(asked.status, 403);

    assert.equal((await node.admin('POST', '/increment_serving_counter', { event_id: 'Parking', increment_by: 5 })).status, 200);
    const later = await bot.fetch(`${node.gateUrl}/`, { headers: JSON_ACCEPT });
    assert.equal(later.status, 200);
    assert.equal(((await later.json()) as { status: string }).status, 'queued', 'never admitted');
    assert.ok(!bot.cookies.has(TOKEN_COOKIE));
    assert.equal(origin.seen.length, 0);
  });
});
