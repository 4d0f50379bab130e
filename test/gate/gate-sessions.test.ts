// Sessions behind the gate feed automatic admission (spec rooms.md §2): requests keep a session alive, an idle
// one ends after session_duration, session_renewal false ends it session_duration after admission, and an
// ended session frees its place for the next visitor at the next admission tick.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TOKEN_COOKIE } from '../../src/gate/cookies.ts';
import { RENEW_EVERY_MS } from '../../src/gate/sessions.ts';
import { CookieJar, gatedRoom, startGateNode, startOrigin, type GateNode } from './support.ts';

const JSON_ACCEPT = { accept: 'application/json' };

async function status(node: GateNode, jar: CookieJar, path = '/echo'): Promise<string> {
  const res = await jar.fetch(`${node.gateUrl}${path}`, { headers: JSON_ACCEPT });
  const body = (await res.json()) as { status?: string; method?: string };
  return body.status ?? (body.method ? 'proxied' : 'unknown');
}

async function withRoom(settings: { session_duration: number; session_renewal: boolean }, run: (node: GateNode) => Promise<void>): Promise<void> {
  const origin = await startOrigin();
  const node = await startGateNode([
    gatedRoom('Shop', origin.url, { admission: 'automatic', total_active_users: 1, new_users_per_minute: 600, ...settings }),
  ]);
  try {
    await run(node);
  } finally {
    await node.stop();
    await origin.close();
  }
}

/** Visitor A joins, is admitted by a tick and claims (the gate sets the cookie); B joins behind. */
async function firstInSecondWaiting(node: GateNode): Promise<{ a: CookieJar; b: CookieJar }> {
  const a = new CookieJar();
  assert.equal(await status(node, a), 'queued');
  await node.room.admission.admitAutomatically('Shop');
  assert.equal(await status(node, a), 'admitted');
  assert.ok(a.cookies.has(TOKEN_COOKIE));
  assert.equal(await status(node, a), 'proxied');
  const b = new CookieJar();
  assert.equal(await status(node, b), 'queued');
  node.clock.advance(1);
  await node.room.admission.admitAutomatically('Shop');
  assert.equal(await status(node, b), 'queued', 'the one place is taken by A');
  return { a, b };
}

describe('gate sessions and automatic admission', () => {
  it('requests renew a session: an active visitor keeps the place past session_duration', async () => {
    await withRoom({ session_duration: 10, session_renewal: true }, async (node) => {
      const { a, b } = await firstInSecondWaiting(node);
      for (let i = 0; i < 6; i++) {
        node.clock.advance(4);
        assert.equal(await status(node, a), 'proxied');
        await node.gate?.server.sweep();
        await node.room.admission.admitAutomatically('Shop');
      }
      assert.equal(await status(node, b), 'queued');
    });
  });

  it('an idle session ends after session_duration (+ RENEW_EVERY_MS) and its place goes to the next visitor', async () => {
    await withRoom({ session_duration: 10, session_renewal: true }, async (node) => {
      const { a, b } = await firstInSecondWaiting(node);
      // The shared last seen may lag a request by RENEW_EVERY_MS (written at most that often): never ended early.
      node.clock.advance(10);
      assert.equal(await node.gate?.server.sweep(), 0);
      node.clock.advance(RENEW_EVERY_MS / 1000 + 1);
      assert.equal(await node.gate?.server.sweep(), 1);
      await node.room.admission.admitAutomatically('Shop');
      assert.equal(await status(node, b), 'admitted');
      assert.equal(await status(node, a), 'queued', 'the idle visitor is back in line');
    });
  });

  it('session_renewal false: the session ends session_duration after admission, however busy', async () => {
    await withRoom({ session_duration: 10, session_renewal: false }, async (node) => {
      const { a, b } = await firstInSecondWaiting(node);
      node.clock.advance(5);
      assert.equal(await status(node, a), 'proxied');
      node.clock.advance(5);
      assert.equal(await status(node, a), 'queued', 'refused at session_duration after admission');
      await node.room.admission.admitAutomatically('Shop');
      assert.equal(await status(node, b), 'admitted');
    });
  });
});

// The gate remembers a verified token (sessions.ts): a later request costs a map lookup. What it remembers must
// still be checked against the room asked for and the token's exp — each test warms the memory first, so that
// the remembered claims (not a fresh verification) decide.
describe('the gate remembering verified tokens', () => {
  async function withRooms(run: (node: GateNode) => Promise<void>, validity = 3600): Promise<void> {
    const origin = await startOrigin();
    const gate = (path: string) => ({ origin: origin.url, routes: [{ path }], queueing_status_code: 200 });
    const node = await startGateNode([
      gatedRoom('RoomA', origin.url, { gate: gate('/a'), state: 'off', validity_period: validity, session_duration: 86_400 }),
      gatedRoom('RoomB', origin.url, { gate: gate('/b'), state: 'open' }),
    ]);
    try {
      await run(node);
    } finally {
      await node.stop();
      await origin.close();
    }
  }

  /** What the gate did: the origin's page (proxied), or the gate's own JSON answer's status. */
  async function outcome(node: GateNode, jar: CookieJar, path: string): Promise<string> {
    const res = await jar.fetch(`${node.gateUrl}${path}`, { headers: JSON_ACCEPT });
    const text = await res.text();
    if (text.includes('id="origin-page"')) return 'proxied';
    return (JSON.parse(text) as { status: string }).status;
  }

  /** A visitor admitted to room A (state off), whose token the gate has just verified and remembered. */
  async function admittedToA(node: GateNode): Promise<CookieJar> {
    const jar = new CookieJar();
    assert.equal(await outcome(node, jar, '/a/echo'), 'admitted');
    assert.equal(await outcome(node, jar, '/a/echo'), 'proxied');
    assert.equal(node.gate?.server.sessions.size, 1, 'the token is remembered');
    return jar;
  }

  it("a remembered token of room A does not open room B's paths", async () => {
    await withRooms(async (node) => {
      const jar = await admittedToA(node);
      // Same instant: well within RENEW_EVERY_MS, so only the remembered claims' audience can refuse it.
      assert.equal(await outcome(node, jar, '/b/echo'), 'queued');
      assert.equal(await outcome(node, jar, '/a/echo'), 'proxied', 'room A still lets it in');
    });
  });

  it('a remembered token past its exp is refused, even within RENEW_EVERY_MS of the last store check', async () => {
    await withRooms(async (node) => {
      const jar = await admittedToA(node); // the token's exp: 10 s after admission
      node.clock.advance(7);
      assert.equal(await outcome(node, jar, '/a/echo'), 'proxied', 'renewed with the store at 7 s');
      node.clock.advance(3.5);
      // 10.5 s: the token expired 0.5 s ago, the last store check was 3.5 s ago (< RENEW_EVERY_MS).
      assert.ok(3.5 * 1000 < RENEW_EVERY_MS);
      assert.equal(await outcome(node, jar, '/a/echo'), 'admitted', 'not proxied: a room that is off admits again with a new token');
    }, 10);
  });
});
