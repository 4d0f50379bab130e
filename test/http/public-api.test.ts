// Contract tests of the public API (spec/core-api.md "Public API", "Queue position expiry", "Tokens"):
// one test per rule and per status code, named after the rule, against a real node over HTTP.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose';
import { waitingOf } from '../../src/domain/services/room-context.ts';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';
import { type Body, read, type TokenBody, join, positionOf, resetEvents, serveUpTo, collectEvents } from '../support/api-calls.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function serve(node: TestNode, by: number, eventId = 'Sample'): Promise<number> {
  const res = await read<{ serving_num: number }>(
    node.admin('POST', '/increment_serving_counter', { event_id: eventId, increment_by: by }),
  );
  assert.equal(res.status, 200, res.text);
  return res.body.serving_num;
}

function claim(node: TestNode, requestId: string, eventId = 'Sample', extra: Body = {}) {
  return read<TokenBody & { error?: string }>(
    node.post('/generate_token', { event_id: eventId, request_id: requestId, ...extra }),
  );
}

async function publicKey(node: TestNode, eventId = 'Sample') {
  const res = await read<JWK>(node.get(`/public_key?event_id=${eventId}`));
  assert.equal(res.status, 200, res.text);
  return importJWK(res.body, 'RS256');
}

const nowSeconds = (node: TestNode) => Math.floor(node.clock.now() / 1000);

describe('POST /assign_queue_num', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  it('answers 200 with a request ID that is a UUID v4', async () => {
    const res = await read<{ api_request_id: string }>(node.post('/assign_queue_num', { event_id: 'Sample' }));
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ['api_request_id']);
    assert.match(res.body.api_request_id, UUID_V4);
  });

  it('each call is a new visitor: a new request ID and the next position', async () => {
    const before = (await node.room.reports.counters('Sample')).queue;
    const ids = [await join(node), await join(node), await join(node)];
    assert.equal(new Set(ids).size, 3);
    const positions = await Promise.all(ids.map((id) => positionOf(node, id)));
    assert.deepEqual(positions, [before + 1, before + 2, before + 3]);
    assert.equal((await node.room.reports.counters('Sample')).queue, before + 3);
  });

  it('the position exists as soon as the join is answered (/queue_num succeeds immediately)', async () => {
    const id = await join(node);
    const res = await read(node.get(`/queue_num?event_id=Sample&request_id=${id}`));
    assert.equal(res.status, 200);
  });

  it('an unknown event answers 400 "Invalid event ID" and consumes no position', async () => {
    const before = await node.room.reports.counters('Sample');
    const res = await read(node.post('/assign_queue_num', { event_id: 'NoSuchEvent' }));
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'Invalid event ID' });
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
    // No gap: the next visitor gets the very next position.
    assert.equal(await positionOf(node, await join(node)), before.queue + 1);
  });
});

describe('GET /queue_num', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  it('200 carries queue_number, entry_time in integer epoch seconds, event_id and status 1', async () => {
    node.clock.advance(0.75); // entry_time must be floored to whole seconds
    const joinedAt = nowSeconds(node);
    const id = await join(node);
    node.clock.advance(30);
    const res = await read(node.get(`/queue_num?event_id=Sample&request_id=${id}`));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { queue_number: 1, entry_time: joinedAt, event_id: 'Sample', status: 1, people_ahead: 0 });
    assert.ok(Number.isInteger(res.body.entry_time));
  });

  it('an unknown request ID answers 202 "Request ID not found"', async () => {
    const res = await read(node.get(`/queue_num?event_id=Sample&request_id=${randomUUID()}`));
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { error: 'Request ID not found' });
  });

  it('an unknown event answers 400 "Invalid event or request ID"', async () => {
    const id = await join(node);
    const res = await read(node.get(`/queue_num?event_id=Other&request_id=${id}`));
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'Invalid event or request ID' });
  });

  it('a malformed request ID answers 400 "Invalid event or request ID", trailing junk after a valid UUID included', async () => {
    const id = await join(node);
    const malformed = [
      'abc',
      id.replaceAll('-', ''),
      `${id}x`,
      `${id}-0000`,
      `${id}%20`,
      `%20${id}`,
      id.slice(0, 35),
      `${id.slice(0, 35)}g`,
      '',
    ];
    for (const bad of malformed) {
      const res = await read(node.get(`/queue_num?event_id=Sample&request_id=${bad}`));
      assert.equal(res.status, 400, `request_id=${bad}`);
      assert.deepEqual(res.body, { error: 'Invalid event or request ID' }, `request_id=${bad}`);
    }
  });

  it('an upper-case request ID finds the same position (UUIDs are case-insensitive)', async () => {
    const id = await join(node);
    assert.equal(await positionOf(node, id.toUpperCase()), await positionOf(node, id));
  });
});

describe('GET /serving_num', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  it('200 {"serving_counter": N} is a JSON number that starts at 0', async () => {
    const res = await read(node.get('/serving_num?event_id=Sample'));
    assert.equal(res.status, 200);
    assert.equal(res.text, '{"serving_counter":0}');
  });

  it('follows the private increments, backwards too', async () => {
    await serve(node, 5);
    await serve(node, -2);
    const res = await read(node.get('/serving_num?event_id=Sample'));
    assert.deepEqual(res.body, { serving_counter: 3 });
  });

  it('an unknown event answers 400 "Invalid event ID"', async () => {
    const res = await read(node.get('/serving_num?event_id=Nope'));
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'Invalid event ID' });
  });
});

describe('GET /waiting_num', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  beforeEach(() => resetEvents(node));
  after(() => node.stop());

  const waiting = async () => {
    const res = await read<{ waiting_num: number }>(node.get('/waiting_num?event_id=Sample'));
    assert.equal(res.status, 200, res.text);
    assert.equal(typeof res.body.waiting_num, 'number');
    return res.body.waiting_num;
  };

  it('is 0 when nobody joined', async () => {
    assert.equal(await waiting(), 0);
  });

  it('is queue − tokens − expired: a claimed token and an expired position both leave the count', async () => {
    const ids = [await join(node), await join(node), await join(node), await join(node)];
    assert.equal(await waiting(), 4);
    await serve(node, 2);
    assert.equal(await waiting(), 4, 'being served is not leaving the queue');
    assert.equal((await claim(node, ids[0]!)).status, 200);
    assert.equal(await waiting(), 3);
    // Position 2 never claims: once it expired unclaimed, it no longer counts (VWR #208: always subtracted,
    // even without incr_serving_on_expiry).
    node.clock.advance(901);
    await node.room.admission.advanceExpiry('Sample');
    const counters = await node.room.reports.counters('Sample');
    assert.equal(counters.expired, 1);
    assert.equal(await waiting(), counters.queue - counters.tokens - counters.expired);
    assert.equal(await waiting(), 2);
  });

  it('is never below 0', () => {
    const zero = { queue: 0, serving: 0, tokens: 0, expired: 0, completed: 0, abandoned: 0, maxExpired: 0, left: 0 };
    assert.equal(waitingOf({ ...zero, queue: 3, tokens: 2, expired: 2 }), 0);
    assert.equal(waitingOf({ ...zero, queue: 3, tokens: 1, expired: 1 }), 1);
  });

  it('an unknown event answers 400 "Invalid event ID"', async () => {
    const res = await read(node.get('/waiting_num?event_id=Nope'));
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'Invalid event ID' });
  });
});

describe('POST /generate_token: decision order', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  it('1. an unknown event answers 400 "Invalid event or request ID"', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    const res = await claim(node, id, 'Elsewhere');
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'Invalid event or request ID' });
  });

  it('1. a malformed request ID (trailing junk included) answers 400 "Invalid event or request ID"', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    const before = await node.room.reports.counters('Sample');
    for (const bad of ['nope', `${id}0`, `${id} `, id.replaceAll('-', '')]) {
      const res = await claim(node, bad);
      assert.equal(res.status, 400, bad);
      assert.deepEqual(res.body, { error: 'Invalid event or request ID' });
    }
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });

  it('2. a request ID without a position answers 404 "Invalid request ID"', async () => {
    await serve(node, 100);
    const res = await claim(node, randomUUID());
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'Invalid request ID' });
    await serve(node, -100);
  });

  it('3. a position beyond the serving counter answers 202 "Request ID not being served yet" and issues nothing', async () => {
    const id = await join(node);
    await serveUpTo(node, (await positionOf(node, id)) - 1);
    const before = await node.room.reports.counters('Sample');
    const res = await claim(node, id);
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { error: 'Request ID not being served yet' });
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });

  it('4. a claim after the session was closed answers 410 "Token corresponding to request id has expired"', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    assert.equal((await claim(node, id)).status, 200);
    const closed = await read(node.admin('POST', '/update_session', { event_id: 'Sample', request_id: id, status: 1 }));
    assert.equal(closed.status, 200);
    const before = await node.room.reports.counters('Sample');
    const res = await claim(node, id);
    assert.equal(res.status, 410);
    assert.deepEqual(res.body, { error: 'Token corresponding to request id has expired' });
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });

  it('4. an abandoned session answers 410 as well, even long after its position would have expired', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    assert.equal((await claim(node, id)).status, 200);
    await node.admin('POST', '/update_session', { event_id: 'Sample', request_id: id, status: -1 });
    node.clock.advance(5000);
    const res = await claim(node, id);
    assert.equal(res.status, 410);
    assert.deepEqual(res.body, { error: 'Token corresponding to request id has expired' });
  });

  it('4. a re-claim answers 200 with byte-identical tokens, expires_in = seconds left, no event and no counter change', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    const first = await claim(node, id);
    assert.equal(first.status, 200);
    assert.equal(first.body.expires_in, 3600);
    const before = await node.room.reports.counters('Sample');
    const { events, stop } = collectEvents(node);
    node.clock.advance(100);
    const again = await claim(node, id);
    stop();
    assert.equal(again.status, 200);
    for (const name of ['access_token', 'refresh_token', 'id_token'] as const) {
      assert.equal(again.body[name], first.body[name], `${name} must be byte-identical`);
    }
    assert.equal(again.body.token_type, 'Bearer');
    assert.equal(again.body.expires_in, 3500);
    assert.deepEqual(events, []);
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
  });

  it('4. a re-claim after the tokens expired still answers 200, with expires_in floored at 0', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    const first = await claim(node, id);
    node.clock.advance(3600 + 500);
    const again = await claim(node, id);
    assert.equal(again.status, 200);
    assert.equal(again.body.access_token, first.body.access_token);
    assert.equal(again.body.expires_in, 0);
  });

  it('3 before 4: a token holder whose position is again beyond the serving counter answers 202', async () => {
    const id = await join(node);
    const position = await positionOf(node, id);
    await serveUpTo(node, position);
    assert.equal((await claim(node, id)).status, 200);
    await serveUpTo(node, position - 1);
    const res = await claim(node, id);
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { error: 'Request ID not being served yet' });
    await serveUpTo(node, position);
  });

  it('5. a position that expired unclaimed answers 410 "Queue position has expired" and issues nothing', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    node.clock.advance(901);
    const before = await node.room.reports.counters('Sample');
    const res = await claim(node, id);
    assert.equal(res.status, 410);
    assert.deepEqual(res.body, { error: 'Queue position has expired' });
    assert.deepEqual(await node.room.reports.counters('Sample'), before);
    // And it stays refused.
    assert.equal((await claim(node, id)).status, 410);
  });

  it('6. issue: 200 with token_type Bearer, expires_in = validity_period, tokens += 1 and one token_generated event', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    const before = await node.room.reports.counters('Sample');
    const { events, stop } = collectEvents(node);
    const res = await claim(node, id);
    stop();
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['access_token', 'expires_in', 'id_token', 'refresh_token', 'token_type']);
    assert.equal(res.body.token_type, 'Bearer');
    assert.equal(res.body.expires_in, 3600);
    assert.equal((await node.room.reports.counters('Sample')).tokens, before.tokens + 1);
    assert.deepEqual(
      events.map((e) => [e['detail-type'], e.detail]),
      [['token_generated', { event_id: 'Sample', request_id: id }]],
    );
  });

  it('6. the three tokens are RS256 JWTs with the same claims aud/sub/queue_position/iat/nbf/exp/iss, but token_use', async () => {
    node.clock.advance(0.4);
    const id = await join(node);
    const position = await positionOf(node, id);
    await serveUpTo(node, position);
    const issuedAt = nowSeconds(node);
    const res = await claim(node, id);
    assert.equal(res.status, 200);
    const key = await publicKey(node);
    const { kid } = (await read<JWK>(node.get('/public_key?event_id=Sample'))).body;
    const uses = { access_token: 'access', refresh_token: 'refresh', id_token: 'id' } as const;
    for (const [field, use] of Object.entries(uses) as [keyof typeof uses, string][]) {
      const token = res.body[field];
      assert.deepEqual(decodeProtectedHeader(token), { alg: 'RS256', kid, typ: 'JWT' });
      const { payload } = await jwtVerify(token, key, {
        algorithms: ['RS256'],
        audience: 'Sample',
        issuer: node.url,
        currentDate: new Date(node.clock.now()),
      });
      assert.deepEqual(payload, {
        aud: 'Sample',
        sub: id,
        queue_position: position,
        token_use: use,
        iat: issuedAt,
        nbf: issuedAt,
        exp: issuedAt + 3600,
        iss: node.url,
      });
    }
  });

  it('the public endpoint ignores issuer and validity_period in the body', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    const res = await claim(node, id, 'Sample', { issuer: 'https://evil.example', validity_period: 5 });
    assert.equal(res.status, 200);
    assert.equal(res.body.expires_in, 3600);
    const { payload } = await jwtVerify(res.body.access_token, await publicKey(node), {
      currentDate: new Date(node.clock.now()),
    });
    assert.equal(payload.iss, node.url);
    assert.equal(payload.exp! - payload.iat!, 3600);
  });

  it('an upper-case spelling of the request ID claims the same token set', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    const upper = await claim(node, id.toUpperCase());
    assert.equal(upper.status, 200);
    const lower = await claim(node, id);
    assert.equal(lower.body.access_token, upper.body.access_token);
    const { payload } = await jwtVerify(upper.body.id_token, await publicKey(node), {
      currentDate: new Date(node.clock.now()),
    });
    assert.equal(payload.sub, id);
  });
});

describe('GET /public_key and /jwks.json', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode();
  });
  after(() => node.stop());

  const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'];

  it('200 is a bare RSA JWK with exactly kty, alg, kid, n, e — never a private member', async () => {
    const res = await read<Record<string, string>>(node.get('/public_key?event_id=Sample'));
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['alg', 'e', 'kid', 'kty', 'n']);
    for (const member of PRIVATE_MEMBERS) assert.equal(res.body[member], undefined);
    assert.equal(res.body.kty, 'RSA');
    assert.equal(res.body.alg, 'RS256');
    assert.equal(res.body.e, 'AQAB');
    // RSA-2048: a 256-byte modulus is 342 base64url characters.
    assert.equal(Buffer.from(res.body.n!, 'base64url').length, 256);
  });

  it('kid is 32 lowercase hex characters and stays the same from call to call', async () => {
    const first = await read<{ kid: string }>(node.get('/public_key?event_id=Sample'));
    const second = await read<{ kid: string }>(node.get('/public_key?event_id=Sample'));
    assert.match(first.body.kid, /^[0-9a-f]{32}$/);
    assert.equal(second.text, first.text);
  });

  it('an unknown event answers 404 "Invalid event ID"', async () => {
    const res = await read(node.get('/public_key?event_id=Nope'));
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'Invalid event ID' });
  });

  it('/jwks.json publishes the same public key as a JWKS, with its ES256 and EdDSA keys, without private members', async () => {
    const key = await read<Body>(node.get('/public_key?event_id=Sample'));
    const jwks = await read<{ keys: Record<string, string>[] }>(node.get('/jwks.json?event_id=Sample'));
    assert.equal(jwks.status, 200);
    // The RS256 key first, then the keys a room with signing_algorithm ES256 or EdDSA signs with.
    assert.deepEqual(jwks.body.keys[0], key.body);
    assert.deepEqual(jwks.body.keys.map((k) => k.alg), ['RS256', 'ES256', 'EdDSA']);
    for (const jwk of jwks.body.keys) for (const member of PRIVATE_MEMBERS) assert.equal(jwk[member], undefined);
  });

  it('/jwks.json of an unknown event answers 404 "Invalid event ID"', async () => {
    const res = await read(node.get('/jwks.json?event_id=Nope'));
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'Invalid event ID' });
  });
});

describe('GET /queue_pos_expiry', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({
      events: [eventSettings('Sample'), eventSettings('NoExpiry', { enable_queue_position_expiry: false })],
    });
  });
  beforeEach(() => resetEvents(node, 'Sample', 'NoExpiry'));
  after(() => node.stop());

  const expiry = (requestId: string, eventId = 'Sample') =>
    read<{ expires_in?: number; error?: string }>(node.get(`/queue_pos_expiry?event_id=${eventId}&request_id=${requestId}`));

  it('an unknown event or a malformed request ID answers 400 "Invalid event or request ID"', async () => {
    const id = await join(node);
    for (const res of [await expiry(id, 'Nope'), await expiry(`${id}ff`), await expiry('not-a-uuid')]) {
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { error: 'Invalid event or request ID' });
    }
  });

  it('a request ID without a position answers 404 "Invalid request ID"', async () => {
    const res = await expiry(randomUUID());
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'Invalid request ID' });
  });

  it('an event without queue position expiry answers 202 "Queue position expiration not enabled"', async () => {
    const id = await join(node, 'NoExpiry');
    await serve(node, 1, 'NoExpiry');
    const res = await expiry(id, 'NoExpiry');
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { error: 'Queue position expiration not enabled' });
  });

  it('on an event without expiry a served position never expires: a claim hours later answers 200', async () => {
    const id = await join(node, 'NoExpiry');
    await serveUpTo(node, await positionOf(node, id, 'NoExpiry'), 'NoExpiry');
    node.clock.advance(10 * 3600);
    await node.room.admission.advanceExpiry('NoExpiry');
    assert.equal((await claim(node, id, 'NoExpiry')).status, 200);
    assert.equal((await node.room.reports.counters('NoExpiry')).expired, 0);
  });

  it('a position not served yet answers 202 "Request ID not being served yet"', async () => {
    const id = await join(node);
    await serveUpTo(node, (await positionOf(node, id)) - 1);
    const res = await expiry(id);
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { error: 'Request ID not being served yet' });
  });

  it('200 {"expires_in": S} counts down from the period, with 0 ≤ S ≤ period', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    assert.deepEqual((await expiry(id)).body, { expires_in: 900 });
    node.clock.advance(100);
    const res = await expiry(id);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { expires_in: 800 });
    node.clock.advance(800);
    assert.deepEqual((await expiry(id)).body, { expires_in: 0 }, 'exactly period seconds after eligibility: not expired');
  });

  it('period + 1 seconds after eligibility answers 410 "Queue position has expired"', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    node.clock.advance(901);
    const res = await expiry(id);
    assert.equal(res.status, 410);
    assert.deepEqual(res.body, { error: 'Queue position has expired' });
  });

  it('eligibility starts when the counter reached the position, not at the join', async () => {
    const id = await join(node);
    node.clock.advance(500);
    await serveUpTo(node, await positionOf(node, id));
    node.clock.advance(100);
    assert.deepEqual((await expiry(id)).body, { expires_in: 800 });
  });

  it('eligibility starts at the join for a position the counter had already passed', async () => {
    await serve(node, 10);
    node.clock.advance(300);
    const id = await join(node);
    node.clock.advance(50);
    assert.deepEqual((await expiry(id)).body, { expires_in: 850 });
  });

  it('a claimed token stops the count: never 410 after the token was issued', async () => {
    const id = await join(node);
    await serveUpTo(node, await positionOf(node, id));
    node.clock.advance(200);
    assert.equal((await claim(node, id)).status, 200);
    node.clock.advance(5000);
    const res = await expiry(id);
    assert.equal(res.status, 200);
    const left = (res.body as { expires_in: number }).expires_in;
    assert.ok(left >= 0 && left <= 900, `0 ≤ ${left} ≤ 900`);
  });
});

describe('several events, each with its own settings and its own RSA key', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({
      events: [
        eventSettings('A', { validity_period: 60, issuer: 'https://rooms.example/A', queue_position_expiry_period: 30 }),
        eventSettings('B', {}),
      ],
    });
  });
  beforeEach(() => resetEvents(node, 'A', 'B'));
  after(() => node.stop());

  it('each event numbers its own queue from 1 and has its own serving counter', async () => {
    const a = await join(node, 'A');
    const b = await join(node, 'B');
    assert.equal(await positionOf(node, a, 'A'), 1);
    assert.equal(await positionOf(node, b, 'B'), 1);
    await serve(node, 1, 'A');
    assert.deepEqual((await read(node.get('/serving_num?event_id=A'))).body, { serving_counter: 1 });
    assert.deepEqual((await read(node.get('/serving_num?event_id=B'))).body, { serving_counter: 0 });
  });

  it('a request ID of one event is unknown to another', async () => {
    const a = await join(node, 'A');
    const res = await read(node.get(`/queue_num?event_id=B&request_id=${a}`));
    assert.equal(res.status, 202);
    await serveUpTo(node, 100, 'B');
    assert.equal((await claim(node, a, 'B')).status, 404);
  });

  it('each event publishes its own key, and a token of one event does not verify with the key of another', async () => {
    const jwkA = (await read<JWK>(node.get('/public_key?event_id=A'))).body;
    const jwkB = (await read<JWK>(node.get('/public_key?event_id=B'))).body;
    assert.notEqual(jwkA.kid, jwkB.kid);
    assert.notEqual(jwkA.n, jwkB.n);
    const id = await join(node, 'A');
    await serveUpTo(node, await positionOf(node, id, 'A'), 'A');
    const token = (await claim(node, id, 'A')).body.access_token;
    const currentDate = new Date(node.clock.now());
    await jwtVerify(token, await importJWK(jwkA, 'RS256'), { currentDate });
    await assert.rejects(jwtVerify(token, await importJWK(jwkB, 'RS256'), { currentDate }), {
      code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
    });
  });

  it("each event's validity_period, issuer and expiry period apply to its own visitors only", async () => {
    const a = await join(node, 'A');
    const b = await join(node, 'B');
    await serveUpTo(node, await positionOf(node, a, 'A'), 'A');
    await serveUpTo(node, await positionOf(node, b, 'B'), 'B');
    const tokenA = await claim(node, a, 'A');
    const tokenB = await claim(node, b, 'B');
    assert.equal(tokenA.body.expires_in, 60);
    assert.equal(tokenB.body.expires_in, 3600);
    const currentDate = new Date(node.clock.now());
    const { payload: pa } = await jwtVerify(tokenA.body.access_token, await publicKey(node, 'A'), { currentDate });
    const { payload: pb } = await jwtVerify(tokenB.body.access_token, await publicKey(node, 'B'), { currentDate });
    assert.equal(pa.iss, 'https://rooms.example/A');
    assert.equal(pa.aud, 'A');
    assert.equal(pb.iss, node.url);
    assert.equal(pb.aud, 'B');

    const lateA = await join(node, 'A');
    const lateB = await join(node, 'B');
    await serveUpTo(node, await positionOf(node, lateA, 'A'), 'A');
    await serveUpTo(node, await positionOf(node, lateB, 'B'), 'B');
    node.clock.advance(31);
    assert.equal((await claim(node, lateA, 'A')).status, 410, "A's 30 s expiry period");
    assert.equal((await claim(node, lateB, 'B')).status, 200, "B's default 900 s period");
  });
});
