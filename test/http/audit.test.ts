// The audit log (GET /private/audit): every private-API change with who made it, from where, what, before and
// after, kept in the store (it survives a restart); refused credentials counted in /metrics and kept out of
// the log; /metrics behind --metrics-token.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startTestNode, TEST_CREDENTIALS, type TestNode } from '../support/node.ts';

interface Entry {
  seq: number;
  at: number;
  caller: string;
  address: string;
  action: string;
  event_id: string | null;
  request: unknown;
  before: unknown;
  after: unknown;
}

const ADMIN = { authorization: `Bearer ${TEST_CREDENTIALS.adminToken}`, 'content-type': 'application/json' };

async function post(node: TestNode, path: string, body: unknown, headers: Record<string, string> = ADMIN): Promise<Response> {
  return fetch(`${node.privateUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

async function audit(node: TestNode, query = ''): Promise<{ entries: Entry[]; next_before?: number }> {
  const response = await fetch(`${node.privateUrl}/audit${query}`, { headers: ADMIN });
  assert.equal(response.status, 200);
  return (await response.json()) as { entries: Entry[]; next_before?: number };
}

async function metric(node: TestNode, line: RegExp, headers: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${node.publicUrl}/metrics`, { headers })).text();
  const match = text.split('\n').find((l) => line.test(l));
  return match ? Number(match.split(' ').at(-1)) : 0;
}

describe('audit log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'anteroom-audit-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('records who moved the counter, from where, and the counter before and after; kept across a restart', async () => {
    const store = { kind: 'sqlite' as const, path: join(dir, 'audit.db') };
    let node = await startTestNode({ store, dataDir: dir });
    try {
      assert.equal((await post(node, '/increment_serving_counter', { event_id: 'Sample', increment_by: 5 })).status, 200);
      assert.equal((await post(node, '/reset_initial_state', { event_id: 'Sample' })).status, 200);
    } finally {
      await node.close();
    }
    node = await startTestNode({ store, dataDir: dir });
    try {
      const { entries } = await audit(node);
      assert.deepEqual(
        entries.map(({ seq: _s, at: _a, ...e }) => e),
        [
          { caller: 'admin token', address: '127.0.0.1', action: 'POST /private/reset_initial_state', event_id: 'Sample', request: { event_id: 'Sample' }, before: null, after: null },
          {
            caller: 'admin token', address: '127.0.0.1', action: 'POST /private/increment_serving_counter', event_id: 'Sample',
            request: null, before: { serving_counter: 0 }, after: { serving_num: 5 },
          },
        ],
      );
      assert.equal(entries[0]!.at, node.clock.now());
    } finally {
      await node.close();
    }
  });

  it('a room change keeps the room before and after, never its secrets; reads and refused changes are not recorded', async () => {
    const node = await startTestNode();
    try {
      const put = await fetch(`${node.privateUrl}/rooms/Drop`, {
        method: 'PUT',
        headers: ADMIN,
        body: JSON.stringify({ validity_period: 120, webhooks: [{ url: 'http://127.0.0.1:9/hook', secret: 'webhook-secret-never-logged' }] }),
      });
      assert.equal(put.status, 201);
      const patch = await fetch(`${node.privateUrl}/rooms/Drop`, { method: 'PATCH', headers: ADMIN, body: JSON.stringify({ validity_period: 60 }) });
      assert.equal(patch.status, 200);
      assert.equal((await fetch(`${node.privateUrl}/rooms/Drop`, { headers: ADMIN })).status, 200);
      assert.equal((await post(node, '/increment_serving_counter', { event_id: 'Nope', increment_by: 1 })).status, 400);
      const { entries } = await audit(node);
      assert.deepEqual(entries.map((e) => e.action), ['PATCH /private/rooms/:event_id', 'PUT /private/rooms/:event_id']);
      const [patched, created] = entries as [Entry, Entry];
      assert.equal(created.before, null);
      assert.equal((created.after as { validity_period: number }).validity_period, 120);
      assert.equal((patched.before as { validity_period: number }).validity_period, 120);
      assert.equal((patched.after as { validity_period: number }).validity_period, 60);
      assert.equal(JSON.stringify(entries).includes('webhook-secret-never-logged'), false);
    } finally {
      await node.close();
    }
  });

  it('pages newest first with limit and before', async () => {
    const node = await startTestNode();
    try {
      for (const by of [1, 2, 3]) await post(node, '/increment_serving_counter', { event_id: 'Sample', increment_by: by });
      const first = await audit(node, '?limit=2');
      assert.deepEqual(first.entries.map((e) => (e.after as { serving_num: number }).serving_num), [6, 3]);
      assert.equal(first.next_before, first.entries[1]!.seq);
      const rest = await audit(node, `?limit=2&before=${first.next_before}`);
      assert.deepEqual(rest.entries.map((e) => (e.after as { serving_num: number }).serving_num), [1]);
      assert.equal(rest.next_before, undefined);
      assert.equal((await fetch(`${node.privateUrl}/audit?limit=0`, { headers: ADMIN })).status, 400);
    } finally {
      await node.close();
    }
  });

  it('?event_id= filters by room on the server, pages within the room, and refuses what is not an event ID', async () => {
    const node = await startTestNode();
    try {
      for (const id of ['Alpha', 'Beta']) {
        assert.equal((await fetch(`${node.privateUrl}/rooms/${id}`, { method: 'PUT', headers: ADMIN, body: '{}' })).status, 201);
      }
      // Alpha's three changes, with Beta's between them.
      for (const by of [1, 2, 3]) {
        await post(node, '/increment_serving_counter', { event_id: 'Alpha', increment_by: by });
        await post(node, '/increment_serving_counter', { event_id: 'Beta', increment_by: by });
      }
      const first = await audit(node, '?event_id=Alpha&limit=2');
      assert.deepEqual(first.entries.map((e) => [e.event_id, (e.after as { serving_num: number }).serving_num]), [['Alpha', 6], ['Alpha', 3]]);
      assert.equal(first.next_before, first.entries[1]!.seq);
      const rest = await audit(node, `?event_id=Alpha&limit=2&before=${first.next_before}`);
      assert.deepEqual(rest.entries.map((e) => [e.event_id, e.action]), [['Alpha', 'POST /private/increment_serving_counter'], ['Alpha', 'PUT /private/rooms/:event_id']]);
      assert.deepEqual((await audit(node, '?event_id=Nobody')).entries, []);
      // Past more than one chunk of the server's scan (1,000 entries): 2,100 of Beta's after Alpha's.
      for (let i = 0; i < 2_100; i++) {
        await node.room.reports.recordChange({ caller: 'admin token', address: '127.0.0.1', action: 'POST /private/x', event_id: 'Beta', request: null, before: null, after: null });
      }
      const far = await audit(node, '?event_id=Alpha&limit=4');
      assert.deepEqual(far.entries.map((e) => e.event_id), ['Alpha', 'Alpha', 'Alpha', 'Alpha']);
      assert.equal(far.next_before, far.entries[3]!.seq);
      assert.deepEqual((await audit(node, `?event_id=Alpha&before=${far.next_before}`)).entries, []);
      for (const bad of ['', '%3Cscript%3E', 'a%20b', 'x'.repeat(129), 'Alpha&event_id=Beta']) {
        const response = await fetch(`${node.privateUrl}/audit?event_id=${bad}`, { headers: ADMIN });
        assert.equal(response.status, 400, bad);
        const body = (await response.json()) as { error: string };
        assert.equal(typeof body.error, 'string');
        assert.doesNotMatch(JSON.stringify(body), /script/);
      }
    } finally {
      await node.close();
    }
  });

  it('failed authentications are counted in anteroom_auth_failures_total and change nothing', async () => {
    const node = await startTestNode();
    try {
      const wrong = { authorization: 'Bearer wrong-token-wrong-token', 'content-type': 'application/json' };
      assert.equal((await post(node, '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 }, wrong)).status, 403);
      assert.equal((await post(node, '/increment_serving_counter', { event_id: 'Sample', increment_by: 1 }, {})).status, 401);
      assert.equal(await metric(node, /^anteroom_auth_failures_total\{api="private"\}/), 2);
      assert.deepEqual((await audit(node)).entries, []);
    } finally {
      await node.close();
    }
  });

  it('--metrics-token: /metrics answers 401 without it, 403 with another, 200 with it', async () => {
    const token = 'metrics-token-0123456789';
    const node = await startTestNode({ metricsToken: token });
    try {
      assert.equal((await fetch(`${node.publicUrl}/metrics`)).status, 401);
      assert.equal((await fetch(`${node.publicUrl}/metrics`, { headers: { authorization: 'Bearer nope-nope-nope-nope' } })).status, 403);
      const ok = await fetch(`${node.publicUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200);
      assert.match(await ok.text(), /anteroom_auth_failures_total\{api="metrics"\} 2/);
    } finally {
      await node.close();
    }
  });
});
