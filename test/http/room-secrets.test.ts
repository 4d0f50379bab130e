// Secret settings (issue 30): a webhook's secret, the OpenID Connect client secret, the enqueue key secret and
// the gate's bypass header values appear in no answer (rooms API GET/PUT/PATCH, the control panel's data), no
// audit entry (/private/audit) and no log line — at the most verbose level, trace, with request lines — whatever the room went
// through: configured at start, created, read, patched, written back as answered, refused, proxied by the gate.
// An answer shows "[redacted]" and can be PUT back as it is without erasing a secret.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { read, type Body } from '../support/api-calls.ts';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';

const SECRETS = {
  webhook: 'room-secrets-webhook-0123456789',
  client: 'room-secrets-client-0123456789',
  enqueue: 'room-secrets-enqueue-key-0123456789abcdef',
  bypass: 'room-secrets-bypass-0123456789',
  configured: 'room-secrets-configured-bypass-value',
};

function settings(eventId: string, bypass: string): Body {
  return {
    event_id: eventId,
    webhooks: [{ url: 'http://127.0.0.1:9/hook', secret: SECRETS.webhook }],
    oidc: { redirect_uris: ['https://rp.example/cb'], client_secret: SECRETS.client },
    bot_defence: { enqueue_key_secret: SECRETS.enqueue },
    gate: { origin: 'http://127.0.0.1:9', routes: [{ path: `/${eventId}` }], bypass: { paths: ['/static/'], headers: { 'x-monitor': bypass } } },
  };
}

describe('secret settings are never answered nor logged', () => {
  let node: TestNode;
  const logLines: string[] = [];
  const answers: string[] = [];
  const call = async (method: 'GET' | 'PUT' | 'PATCH', path: string, body?: unknown) => {
    const res = await read(node.admin(method, path, body));
    answers.push(res.text);
    return res;
  };
  const stored = async (eventId: string) => JSON.parse((await node.store.getRoom(eventId))!.settings) as Body;

  before(async () => {
    const configured = eventSettings('Configured', settings('Configured', SECRETS.configured) as never);
    node = await startTestNode(
      { logLevel: 'trace', logRequests: true, gatePort: 0, events: [eventSettings('Sample'), configured] },
      { logStream: { write: (line: string) => void logLines.push(line) } },
    );
  });
  after(async () => {
    await node.stop();
  });

  it('answers show each secret as "[redacted]"; written back as answered, every secret is kept', async () => {
    const created = await call('PUT', '/rooms/Shop', settings('Shop', SECRETS.bypass));
    assert.equal(created.status, 201, created.text);
    const view = created.body as { webhooks: Body[]; oidc: Body; bot_defence: Body; gate: { bypass: { headers: Body } } };
    assert.deepEqual(view.webhooks, [{ url: 'http://127.0.0.1:9/hook', secret: '[redacted]' }]);
    assert.equal(view.oidc.client_secret, '[redacted]');
    assert.equal(view.bot_defence.enqueue_key_secret, '[redacted]');
    assert.deepEqual(view.gate.bypass.headers, { 'x-monitor': '[redacted]' });

    const got = await call('GET', '/rooms/Shop');
    assert.deepEqual(got.body, created.body);
    const listed = await call('GET', '/rooms');
    assert.equal(listed.status, 200);
    assert.equal((await call('GET', '/rooms/Configured')).status, 200);

    // The answer, edited and sent back as it is (PUT), and parts of it (PATCH): nothing is erased.
    const put = await call('PUT', '/rooms/Shop', { ...got.body, validity_period: 30 });
    assert.equal(put.status, 200, put.text);
    const patch = await call('PATCH', '/rooms/Shop', { validity_period: 31, gate: view.gate, oidc: view.oidc, bot_defence: view.bot_defence });
    assert.equal(patch.status, 200, patch.text);
    const now = await stored('Shop');
    assert.deepEqual(now.webhooks, [{ url: 'http://127.0.0.1:9/hook', secret: SECRETS.webhook }]);
    assert.equal((now.oidc as Body).client_secret, SECRETS.client);
    assert.equal((now.bot_defence as Body).enqueue_key_secret, SECRETS.enqueue);
    assert.deepEqual(((now.gate as Body).bypass as Body).headers, { 'x-monitor': SECRETS.bypass });
    assert.equal(now.validity_period, 31);
    assert.equal(node.rooms.get('Shop')?.gate?.bypass?.headers?.['x-monitor'], SECRETS.bypass, 'the node serves the stored value');
  });

  it('"[redacted]" where nothing is stored is a 400 naming the field; a new value replaces the secret; null removes it', async () => {
    const refused = await call('PATCH', '/rooms/Shop', { gate: { bypass: { headers: { 'x-monitor': '[redacted]', 'x-new': '[redacted]' } } } });
    assert.deepEqual([refused.status, refused.body], [
      400,
      { error: 'Invalid room settings: gate.bypass.headers.x-new: is "[redacted]" (as answered) but no value is stored here: send the secret itself' },
    ]);
    assert.deepEqual(((await stored('Shop')).gate as { bypass: Body }).bypass.headers, { 'x-monitor': SECRETS.bypass }, 'nothing changed');

    const changed = await call('PATCH', '/rooms/Shop', { gate: { bypass: { headers: { 'x-monitor': `${SECRETS.bypass}-2` } } } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(node.rooms.get('Shop')?.gate?.bypass?.headers?.['x-monitor'], `${SECRETS.bypass}-2`);
    const removed = await call('PATCH', '/rooms/Shop', { bot_defence: { enqueue_key_secret: null } });
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await stored('Shop')).bot_defence && 'enqueue_key_secret' in ((await stored('Shop')).bot_defence as Body), false);
  });

  it('a refused body does not echo its secrets', async () => {
    const refused = await call('PUT', '/rooms/Shop', { ...settings('Shop', SECRETS.bypass), validity_periodd: 1 });
    assert.equal(refused.status, 400);
  });

  it('the gate serving a bypass request logs nothing of it', async () => {
    const res = await fetch(`${node.gate?.url}/Shop/static/x`, { headers: { 'x-monitor': `${SECRETS.bypass}-2` } });
    assert.equal(res.status, 502, 'bypassed to the origin, which does not answer');
    await res.arrayBuffer();
  });

  it('no secret in any answer, the audit log, or any log line (trace level)', async () => {
    const audit = await call('GET', '/audit?limit=1000');
    assert.equal(audit.status, 200);
    assert.ok((audit.body as { entries: unknown[] }).entries.length >= 4);
    assert.ok(logLines.filter((line) => line.includes('"msg":"request"')).length >= 8, 'every request is logged');
    assert.ok(logLines.some((line) => line.includes('origin unreachable')), "the gate's failure is logged");
    assert.ok(logLines.some((line) => line.includes('room changed')), 'room changes are logged');
    const everything = [...answers, ...logLines].join('\n');
    for (const [name, secret] of Object.entries(SECRETS)) {
      assert.ok(!everything.includes(secret), `the ${name} secret was answered or logged`);
    }
  });
});
