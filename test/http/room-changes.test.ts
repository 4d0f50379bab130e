// Rooms are data: a room put into or removed from a running node's registry is followed by every part of the
// node that holds something per room — its webhooks, its expiry switch and signing key, its periodic inlet
// job, its OpenID Connect client — with no restart.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Envelope } from '../../src/events/envelope.ts';
import type { InletSettings } from '../../src/domain/room-settings.ts';
import { read, servedVisitor } from '../support/api-calls.ts';
import { eventSettings, startTestNode, type TestNode, wallClock } from '../support/node.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const SECRET = 'room-changes-secret-0123456789';

async function claim(node: TestNode, eventId: string, requestId: string): Promise<number> {
  const res = await node.post('/generate_token', { event_id: eventId, request_id: requestId });
  await res.body?.cancel();
  return res.status;
}

describe('a running node follows room changes', () => {
  let node: TestNode;
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await startReceiver();
    node = await startTestNode();
  });
  after(async () => {
    await node.stop();
    await receiver.close();
  });

  it('webhooks: a room put with one delivers its token claims; put without it, or removed, delivers nothing', async () => {
    await node.rooms.put(eventSettings('Hooked', { webhooks: [{ url: receiver.url, secret: SECRET }] }));
    assert.deepEqual(node.webhooks.targets('Hooked'), [receiver.url]);
    const first = await servedVisitor(node, 'Hooked');
    assert.equal(await claim(node, 'Hooked', first), 200);
    await receiver.until(1);
    const envelope = JSON.parse(receiver.received[0]!.body) as Envelope;
    assert.deepEqual(envelope.detail, { event_id: 'Hooked', request_id: first });

    // The same room without the webhook: its sink is closed, and a claim goes nowhere.
    await node.rooms.put(eventSettings('Hooked'));
    assert.deepEqual(node.webhooks.targets('Hooked'), []);
    const second = await servedVisitor(node, 'Hooked');
    assert.equal(await claim(node, 'Hooked', second), 200);
    await node.webhooks.idle();
    assert.equal(receiver.received.length, 1, 'nothing sent for a claim made after the webhook was taken out');

    await node.rooms.put(eventSettings('Hooked', { webhooks: [{ url: receiver.url, secret: SECRET }] }));
    assert.equal(await node.rooms.remove('Hooked'), true);
    assert.deepEqual(node.webhooks.targets('Hooked'), []);
    assert.equal(await claim(node, 'Hooked', second), 400, 'a removed room is an unknown event');
  });

  it('expiry switch: a room put with expiry on starts its clock; put with it off, positions no longer expire', async () => {
    const expiryOf = (requestId: string) =>
      read<{ expires_in?: number; error?: string }>(node.get(`/queue_pos_expiry?event_id=Late&request_id=${requestId}`));
    await node.rooms.put(eventSettings('Late', { enable_queue_position_expiry: true, queue_position_expiry_period: 300 }));
    const visitor = await servedVisitor(node, 'Late');
    node.clock.advance(10);
    const on = await expiryOf(visitor);
    assert.equal(on.status, 200, on.text);
    assert.equal(on.body.expires_in, 290);

    await node.rooms.put(eventSettings('Late', { enable_queue_position_expiry: false, queue_position_expiry_period: 300 }));
    assert.equal((await expiryOf(visitor)).status, 202, 'expiry off: the store forgot when it was switched on');

    await node.rooms.put(eventSettings('Late', { enable_queue_position_expiry: true, queue_position_expiry_period: 300 }));
    assert.equal((await expiryOf(visitor)).body.expires_in, 300, 'switched on again now: a new full period');
  });

  it('signing keys: a room put gets its key before anyone asks for it', async () => {
    assert.deepEqual(await node.store.getSigningKeys('Keyed'), []);
    await node.rooms.put(eventSettings('Keyed'));
    const keys = await node.store.getSigningKeys('Keyed');
    assert.equal(keys.length, 1);
    const published = await read<{ kid: string }>(node.get('/public_key?event_id=Keyed'));
    assert.equal(published.body.kid, keys[0]!.kid);
  });

  it('OpenID Connect: a room put with an oidc section is a client at once; put without one it is not', async () => {
    const redirectUri = 'https://rp.example/cb';
    const authorize = () =>
      fetch(`${node.url}/oidc/authorize?${new URLSearchParams({ client_id: 'Sso', redirect_uri: redirectUri, response_type: 'code', scope: 'openid' })}`, {
        redirect: 'manual',
      });
    const refused = await authorize();
    await refused.body?.cancel();
    assert.equal(refused.status, 400);
    assert.equal((await read(node.get('/oidc/.well-known/jwks.json'))).status, 404, 'no client: no keys published');

    await node.rooms.put(eventSettings('Sso', { oidc: { redirect_uris: [redirectUri] } }));
    const accepted = await authorize();
    await accepted.body?.cancel();
    assert.equal(accepted.status, 302);
    const jwks = await read<{ keys: { kid: string }[] }>(node.get('/oidc/.well-known/jwks.json'));
    assert.equal(jwks.status, 200);
    // Each stored key and the ES256 and EdDSA keys derived from it (signing_algorithm).
    const stored = (await node.store.getSigningKeys('Sso')).map((k) => k.kid);
    assert.deepEqual(jwks.body.keys.map((k) => k.kid), stored.flatMap((kid) => [kid, `${kid}-es256`, `${kid}-eddsa`]));

    await node.rooms.put(eventSettings('Sso'));
    const again = await authorize();
    await again.body?.cancel();
    assert.equal(again.status, 400);
  });
});

describe('a running node follows room changes: periodic inlets', () => {
  let node: TestNode;
  before(async () => {
    // The jobs run on the wall clock: the node's clock is the real time (a clock frozen at the start ran one tick
    // per job only; when it came before the visitors were added, the counter never moved: soak, session 6).
    node = await startTestNode({}, { jobs: true, clock: wallClock() });
  });
  after(() => node.stop());

  const periodic = (increment_by: number): InletSettings => ({ strategy: 'periodic', interval: 1, increment_by, start_time: 0, end_time: 0 });

  /**
   * Waits until the room's serving counter satisfies `done` (the job ticks once a second). The deadline only
   * guards against a hang; the test does not depend on how soon a tick runs.
   */
  async function servingUntil(eventId: string, done: (serving: number) => boolean): Promise<number> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { serving } = await node.room.reports.counters(eventId);
      if (done(serving)) return serving;
      if (Date.now() > deadline) assert.fail(`${eventId}: serving counter still ${serving}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('a room put with a periodic inlet gets its job, which ticks; a change restarts it; removal stops it', async () => {
    assert.equal(node.scheduler.isScheduled('inlet:Timed'), false);
    await node.rooms.put(eventSettings('Timed', { inlet: periodic(7) }));
    assert.equal(node.scheduler.isScheduled('inlet:Timed'), true);
    // An inlet never moves the counter past the last position handed out (spec/rooms.md §2): people wait.
    const visitors = Array.from({ length: 3000 }, () => ({ requestId: randomUUID(), entryTime: 0 }));
    await node.store.assignPositions('Timed', visitors);
    const moved = await servingUntil('Timed', (serving) => serving > 0);
    assert.equal(moved % 7, 0, `moved by multiples of 7 (got ${moved})`);

    // New settings: the job now adds 1000 a tick (a multiple of 7 plus 1000s is told apart from 7s alone).
    await node.rooms.put(eventSettings('Timed', { inlet: periodic(1000) }));
    const after = await servingUntil('Timed', (serving) => serving >= moved + 1000);
    assert.ok(after >= moved + 1000);

    // Without an inlet the job goes; so it does when the room is removed.
    await node.rooms.put(eventSettings('Timed'));
    assert.equal(node.scheduler.isScheduled('inlet:Timed'), false);
    await node.rooms.put(eventSettings('Timed', { inlet: periodic(1) }));
    assert.equal(node.scheduler.isScheduled('inlet:Timed'), true);
    await node.rooms.remove('Timed');
    assert.equal(node.scheduler.isScheduled('inlet:Timed'), false);
  });
});
