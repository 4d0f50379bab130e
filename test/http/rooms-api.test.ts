// The rooms API (spec/rooms.md §1, docs/rooms.md "Rooms API") on the embedded store (SQLite): rooms created,
// read, replaced, patched and deleted while the node runs, served at once; unknown keys and bad values a 400
// naming the field; secrets never answered and kept when left out; a deleted room's data gone; a reset keeps
// the settings; the events file wins for its rooms at every start; a stored room the schema refuses skipped.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { defaultEventDefaults, readEventsFile } from '../../src/config/config.ts';
import { join, positionOf, read, servedVisitor, type Body } from '../support/api-calls.ts';
import { startTestNode, TEST_CREDENTIALS, type TestNode } from '../support/node.ts';

const SECRET = 'rooms-api-webhook-secret-0123456789';
const CLIENT_SECRET = 'rooms-api-client-secret-0123456789';

interface LogLine {
  msg: string;
  [key: string]: unknown;
}

describe('the rooms API', () => {
  let node: TestNode;
  const lines: LogLine[] = [];
  const texts: string[] = [];
  /** Every answer's text is kept: no secret may appear in any of them. */
  const call = async <T = Body>(method: 'GET' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown) => {
    const res = await read<T>(node.admin(method, path, body));
    texts.push(res.text);
    return res;
  };
  const storedSettings = async (eventId: string) => JSON.parse((await node.store.getRoom(eventId))!.settings) as Body;

  before(async () => {
    node = await startTestNode(
      { logLevel: 'info' },
      { logStream: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) } },
    );
  });
  after(async () => {
    await node.stop();
    const everything = [...texts, ...lines.map((line) => JSON.stringify(line))].join('\n');
    assert.ok(!everything.includes(SECRET), 'a webhook secret was answered or logged');
    assert.ok(!everything.includes(CLIENT_SECRET), 'a client secret was answered or logged');
  });

  it('lists the configured room, with its settings and phase', async () => {
    const res = await call<{ rooms: Body[] }>('GET', '/rooms');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.deepEqual(res.body.rooms.map((room) => [room.event_id, room.phase]), [['Sample', 'open']]);
  });

  it('PUT creates a room (201) that is served at once; PUT again replaces it (200)', async () => {
    const created = await call('PUT', '/rooms/Drop', { validity_period: 120 });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.event_id, 'Drop');
    assert.equal(created.body.validity_period, 120);
    assert.equal(created.body.queue_position_expiry_period, 900, 'defaults filled in');
    assert.equal(created.body.phase, 'open');
    const visitor = await join(node, 'Drop');
    assert.equal(await positionOf(node, visitor, 'Drop'), 1);

    const got = await call('GET', '/rooms/Drop');
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, created.body);

    const replaced = await call('PUT', '/rooms/Drop', { event_id: 'Drop', validity_period: 60, phase: 'ignored' });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.validity_period, 60);
    assert.equal(node.rooms.get('Drop')?.validity_period, 60, 'the node serves the new settings at once');
    assert.equal((await call('PUT', '/rooms/Drop', { validity_period: 60 })).status, 200, 'the same settings again');

    const list = await call<{ rooms: Body[] }>('GET', '/rooms');
    assert.deepEqual(list.body.rooms.map((room) => room.event_id), ['Sample', 'Drop'], 'in the order they were created');
  });

  it('unknown keys and bad values are a 400 naming the field; nothing is stored', async () => {
    const cases: [string, unknown, string][] = [
      ['/rooms/Typo', { validity_periodd: 60 }, 'Invalid room settings: validity_periodd: unknown setting'],
      ['/rooms/Typo', { validity_period: 0 }, 'Invalid room settings: validity_period: must be a whole number from 1 to 31536000'],
      ['/rooms/Typo', { webhooks: [{ url: 'http://x/h', secret: SECRET, secrett: 'x' }] }, 'Invalid room settings: webhooks[0].secrett: unknown setting'],
      ['/rooms/Typo', { inlet: { strategy: 'max_size', max_size: 1, maxsize: 2 } }, 'Invalid room settings: inlet.maxsize: unknown setting'],
      ['/rooms/Typo', { event_id: 'Other' }, "Invalid room settings: event_id: differs from the room's ID in the path"],
      ['/rooms/Typo', [1, 2], 'Invalid room settings: the settings must be a JSON object'],
      ['/rooms/Not%20an%20ID', {}, "Invalid room settings: event_id: must be 1–128 letters, digits, '.', '_', '~' or '-'"],
    ];
    for (const [path, body, error] of cases) {
      const res = await call('PUT', path, body);
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
      // The first problem in `error`; since issue 33 every problem also in `problems` (the panel shows them all).
      const { problems, ...rest } = res.body as { error: string; problems?: { field: string; rule: string }[] };
      assert.deepEqual(rest, { error });
      for (const problem of problems ?? []) assert.ok(error.includes(problem.field) || error.includes(problem.rule), JSON.stringify(problem));
    }
    const patch = await call('PATCH', '/rooms/Drop', { enable_events_generationn: true });
    assert.deepEqual([patch.status, patch.body], [
      400,
      { error: 'Invalid room settings: enable_events_generationn: unknown setting', problems: [{ field: 'enable_events_generationn', rule: 'unknown setting' }] },
    ]);
    const notJson = await read(fetch(`${node.privateUrl}/rooms/Typo`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}` },
      body: '{"validity_period":',
    }));
    assert.deepEqual([notJson.status, notJson.body], [400, { error: 'Invalid request body' }]);
    assert.equal(await node.store.getRoom('Typo'), null);
    assert.equal(node.rooms.get('Typo'), undefined);
  });

  it('a deeply nested body is a 400 for PATCH as for PUT (not a 500), and changes nothing', async () => {
    await call('PUT', '/rooms/Deep', { validity_period: 42 });
    // The merge patch walks the body: 5,000 levels overflowed its stack (a 500) before the edge refused them.
    for (const depth of [33, 5_000]) {
      const deep = `{"gate":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
      for (const method of ['PUT', 'PATCH'] as const) {
        const res = await call(method, '/rooms/Deep', deep);
        assert.deepEqual([res.status, res.body], [400, { error: 'Invalid request body' }], `${method} ${depth}`);
      }
    }
    assert.equal((await storedSettings('Deep')).validity_period, 42);
    const nested = await call('PATCH', '/rooms/Deep', { gate: { origin: 'http://127.0.0.1:9', routes: [{ path: '/deep' }], bypass: { headers: { 'x-a': 'b' } } } });
    assert.equal(nested.status, 200, nested.text);
  });

  it('PATCH merges: objects key by key, arrays and scalars replaced, null removes; unknown room 404', async () => {
    await call('PUT', '/rooms/Merge', {
      issuer: 'https://issuer.example',
      inlet: { strategy: 'periodic', interval: 60, increment_by: 5 },
      webhooks: [{ url: 'http://127.0.0.1:9/a', secret: SECRET }],
    });
    const patched = await call('PATCH', '/rooms/Merge', {
      inlet: { interval: 30 },
      webhooks: [{ url: 'http://127.0.0.1:9/b', secret: `${SECRET}-b` }],
      issuer: null,
      validity_period: 90,
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.inlet, { strategy: 'periodic', interval: 30, increment_by: 5, start_time: 0, end_time: 0 });
    assert.deepEqual(patched.body.webhooks, [{ url: 'http://127.0.0.1:9/b', secret: '[redacted]' }]);
    assert.equal('issuer' in patched.body, false);
    assert.equal(patched.body.validity_period, 90);
    assert.equal(node.rooms.get('Merge')?.inlet?.strategy, 'periodic');

    const unknown = await call('PATCH', '/rooms/Nowhere', { validity_period: 5 });
    assert.deepEqual([unknown.status, unknown.body], [404, { error: 'Room not found' }]);
    assert.equal((await call('GET', '/rooms/Nowhere')).status, 404);
  });

  it('secrets are never answered; a body that leaves one out keeps the stored one', async () => {
    const created = await call('PUT', '/rooms/Secret', {
      webhooks: [{ url: 'http://127.0.0.1:9/hook', secret: SECRET }],
      oidc: { redirect_uris: ['https://rp.example/cb'], client_secret: CLIENT_SECRET },
    });
    assert.deepEqual(created.body.webhooks, [{ url: 'http://127.0.0.1:9/hook', secret: '[redacted]' }]);
    assert.deepEqual(created.body.oidc, { redirect_uris: ['https://rp.example/cb'], client_secret: '[redacted]' });

    // The answer, edited and PUT back as it is: the secrets stay.
    const edited = { ...(await call('GET', '/rooms/Secret')).body, validity_period: 30 };
    assert.equal((await call('PUT', '/rooms/Secret', edited)).status, 200);
    let stored = await storedSettings('Secret');
    assert.deepEqual(stored.webhooks, [{ url: 'http://127.0.0.1:9/hook', secret: SECRET }]);
    assert.equal((stored.oidc as Body).client_secret, CLIENT_SECRET);
    assert.equal(stored.validity_period, 30);

    // PATCH: the same URL keeps its secret, a new URL must bring one.
    const patched = await call('PATCH', '/rooms/Secret', {
      webhooks: [{ url: 'http://127.0.0.1:9/hook' }],
      oidc: { redirect_uris: ['https://rp.example/other'] },
    });
    assert.equal(patched.status, 200, patched.text);
    stored = await storedSettings('Secret');
    assert.deepEqual(stored.webhooks, [{ url: 'http://127.0.0.1:9/hook', secret: SECRET }]);
    assert.deepEqual(stored.oidc, { redirect_uris: ['https://rp.example/other'], client_secret: CLIENT_SECRET });
    const newUrl = await call('PATCH', '/rooms/Secret', { webhooks: [{ url: 'http://127.0.0.1:9/new' }] });
    assert.deepEqual([newUrl.status, newUrl.body], [
      400,
      { error: 'Invalid room settings: webhooks[0].secret: is required', problems: [{ field: 'webhooks[0].secret', rule: 'is required' }] },
    ]);

    // Sending a secret changes it.
    await call('PATCH', '/rooms/Secret', { webhooks: [{ url: 'http://127.0.0.1:9/hook', secret: `${SECRET}-2` }] });
    assert.deepEqual((await storedSettings('Secret')).webhooks, [{ url: 'http://127.0.0.1:9/hook', secret: `${SECRET}-2` }]);
  });

  it('DELETE removes the room and its data: created again, it starts from position 1 with a new key', async () => {
    await call('PUT', '/rooms/Gone', {});
    const first = await servedVisitor(node, 'Gone');
    await servedVisitor(node, 'Gone');
    const claimed = await read(node.post('/generate_token', { event_id: 'Gone', request_id: first }));
    assert.equal(claimed.status, 200);
    const oldKey = (await read<{ kid: string }>(node.get('/public_key?event_id=Gone'))).body.kid;

    const deleted = await call('DELETE', '/rooms/Gone');
    assert.deepEqual([deleted.status, deleted.body], [200, {}]);
    assert.equal((await read(node.post('/assign_queue_num', { event_id: 'Gone' }))).status, 400, 'no longer served');
    assert.equal((await call('GET', '/rooms/Gone')).status, 404);
    assert.deepEqual((await call('DELETE', '/rooms/Gone')).body, { error: 'Room not found' });
    assert.equal((await call('DELETE', '/rooms/Not%20an%20ID')).status, 404);

    assert.equal((await call('PUT', '/rooms/Gone', {})).status, 201);
    const again = await join(node, 'Gone');
    assert.equal(await positionOf(node, again, 'Gone'), 1);
    assert.deepEqual((await read(node.get('/serving_num?event_id=Gone'))).body, { serving_counter: 0 });
    assert.equal((await read(node.post('/generate_token', { event_id: 'Gone', request_id: first }))).status, 404, 'old request IDs are gone');
    const newKey = (await read<{ kid: string }>(node.get('/public_key?event_id=Gone'))).body.kid;
    assert.notEqual(newKey, oldKey);
  });

  it('a reset keeps the settings', async () => {
    await call('PUT', '/rooms/Reset', { validity_period: 77 });
    await join(node, 'Reset');
    const reset = await read(node.admin('POST', '/reset_initial_state', { event_id: 'Reset' }));
    assert.equal(reset.status, 200);
    const got = await call('GET', '/rooms/Reset');
    assert.equal(got.status, 200);
    assert.equal(got.body.validity_period, 77);
  });

  it('bodies up to 5 MiB are taken (a page template of 1 Mi characters); a larger one is 413', async () => {
    // Twenty webhooks with long URLs: about 42 KB, beyond the 16 KB of the other routes.
    const webhooks = Array.from({ length: 20 }, (_, i) => ({ url: `http://127.0.0.1:9/${i}/${'x'.repeat(2000)}`, secret: SECRET }));
    const big = await call('PUT', '/rooms/Big', { webhooks });
    assert.equal(big.status, 201, big.text);
    const tooBig = await call('PUT', '/rooms/Big', { issuer: 'x'.repeat(5 * 1024 * 1024 + 1) });
    assert.deepEqual([tooBig.status, tooBig.body], [413, { error: 'Request body too large' }]);
  });

  it('needs the private credentials, and answers 405 for other methods', async () => {
    assert.equal((await read(fetch(`${node.privateUrl}/rooms`))).status, 401);
    assert.equal((await read(fetch(`${node.privateUrl}/rooms/Drop`, { method: 'DELETE', headers: { authorization: 'Bearer wrong' } }))).status, 403);
    const post = await read(node.admin('POST', '/rooms/Drop', {}));
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS');
  });

  it('writes every change to the audit log: who, and the room before and after (without secrets)', async () => {
    lines.length = 0;
    await call('PUT', '/rooms/Audited', { validity_period: 10, webhooks: [{ url: 'http://127.0.0.1:9/h', secret: SECRET }] });
    await call('PATCH', '/rooms/Audited', { validity_period: 11 });
    await call('DELETE', '/rooms/Audited');
    const audit = lines.filter((line) => line.audit === 'room');
    assert.deepEqual(audit.map((line) => [line.action, line.event_id, line.caller]), [
      ['put', 'Audited', 'admin token'],
      ['patch', 'Audited', 'admin token'],
      ['delete', 'Audited', 'admin token'],
    ]);
    const [put, patch, del] = audit as (LogLine & { before: Body | null; after: Body | null })[];
    assert.equal(put!.before, null);
    assert.equal(put!.after?.validity_period, 10);
    assert.deepEqual(put!.after?.webhooks, [{ url: 'http://127.0.0.1:9/h', secret: '[redacted]' }]);
    assert.deepEqual([patch!.before?.validity_period, patch!.after?.validity_period], [10, 11]);
    assert.deepEqual([del!.before?.validity_period, del!.after], [11, null]);
  });

  it('a stored room the schema refuses is skipped with a log line, and the node goes on', async () => {
    lines.length = 0;
    await node.store.putRoom('Refused', JSON.stringify({ event_id: 'Refused', validity_periodd: 5 }));
    await node.room.rooms.syncRooms();
    const warning = lines.find((line) => line.event_id === 'Refused');
    assert.equal(warning?.msg, 'stored room refused by the room-settings schema; skipped');
    assert.equal(warning?.problem, 'validity_periodd: unknown setting');
    assert.equal((await read(node.post('/assign_queue_num', { event_id: 'Refused' }))).status, 400);
    const list = await call<{ rooms: Body[] }>('GET', '/rooms');
    assert.ok(!list.body.rooms.some((room) => room.event_id === 'Refused'));
    assert.equal((await read(node.post('/assign_queue_num', { event_id: 'Drop' }))).status, 200);
  });
});

describe('rooms and the events file', () => {
  const dir = mkdtempSync(joinPath(tmpdir(), 'anteroom-rooms-file-'));
  const file = joinPath(dir, 'events.json');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('an unknown key in the events file stops the start, naming the event and the field', () => {
    writeFileSync(file, JSON.stringify({ events: [{ event_id: 'A', validity_periodd: 60 }] }));
    assert.throws(() => readEventsFile(file, defaultEventDefaults()), /event "A": validity_periodd: unknown setting/);
  });

  it('at every start the file wins for the rooms it lists; rooms created through the API stay', async () => {
    writeFileSync(file, JSON.stringify({ events: [{ event_id: 'FromFile', validity_period: 100 }] }));
    const config = () => ({ store: { kind: 'sqlite' as const, path: joinPath(dir, 'anteroom.db') }, events: readEventsFile(file, defaultEventDefaults()) });
    let node = await startTestNode(config());
    try {
      assert.equal((await read(node.admin('PATCH', '/rooms/FromFile', { validity_period: 200 }))).status, 200);
      assert.equal((await read(node.admin('PUT', '/rooms/FromApi', {}))).status, 201);
      await join(node, 'FromApi');
    } finally {
      await node.close();
    }
    node = await startTestNode(config());
    try {
      assert.equal(node.rooms.get('FromFile')?.validity_period, 100, 'the file wins');
      assert.equal((await read<Body>(node.admin('GET', '/rooms/FromFile'))).body.validity_period, 100);
      const visitor = await join(node, 'FromApi');
      assert.equal(await positionOf(node, visitor, 'FromApi'), 2, 'the API room and its data are still there');
    } finally {
      await node.stop();
    }
  });
});
