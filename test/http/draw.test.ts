// GET /draw, the pre-queue's answers over HTTP, /private/draw_positions, and `anteroom verify-draw` against a
// real node: a draw that matches passes; a tampered seed or entry list, served by a proxy in between, fails.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { drawCommitment, drawEntry, drawOrder, newDrawSeed, placesOf } from '../../src/domain/draw.ts';
import { eventSettings, startTestNode, TEST_CREDENTIALS, TestClock, type TestNode } from '../support/node.ts';
import { read } from '../support/api-calls.ts';
import { killWithTest } from '../support/children.ts';

const BIN = fileURLToPath(new URL('../../bin/anteroom.js', import.meta.url));
const START_MS = Date.UTC(2026, 10, 24, 18, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

interface Published {
  algorithm: string;
  commitment: string;
  committed_at?: string;
  drawn_at?: string;
  seed?: string;
  first_position?: number;
  entries?: string[];
}

/** Runs `anteroom verify-draw` with the arguments; resolves with its exit code and output. */
async function verifyDraw(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = killWithTest(spawn(process.execPath, [BIN, 'verify-draw', ...args], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  }));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** A proxy in front of the node that serves /draw rewritten by `tamper` (and everything else unchanged). */
async function startTamperingProxy(target: string, tamper: (draw: Published) => Published): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const upstream = await fetch(`${target}${req.url}`, { headers: req.headers.authorization ? { authorization: req.headers.authorization } : {} });
    let body = await upstream.text();
    if (req.url?.startsWith('/draw?') && upstream.status === 200) body = JSON.stringify(tamper(JSON.parse(body) as Published));
    res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

describe('GET /draw and anteroom verify-draw', () => {
  let node: TestNode;
  const visitors: string[] = [];
  let before_: Published;

  before(async () => {
    const clock = new TestClock(START_MS - 600_000);
    node = await startTestNode(
      {
        events: [
          eventSettings('drop', {
            prequeue_start_time: iso(START_MS - 3_600_000),
            event_start_time: iso(START_MS),
            shuffle_at_event_start: true,
          }),
          // The same schedule, and nobody looks at its commitment before the start (no GET /draw, no draw job).
          eventSettings('late', {
            prequeue_start_time: iso(START_MS - 3_600_000),
            event_start_time: iso(START_MS),
            shuffle_at_event_start: true,
          }),
          eventSettings('plain'),
        ],
      },
      { clock },
    );
    for (let i = 0; i < 40; i++) {
      const res = await read<{ api_request_id: string }>(node.post('/assign_queue_num', { event_id: 'drop' }));
      visitors.push(res.body.api_request_id);
    }
    for (let i = 0; i < 3; i++) assert.equal((await node.post('/assign_queue_num', { event_id: 'late' })).status, 200);
  });
  after(() => node.stop());

  it('before the start: the commitment only, and the visitors wait with 202', async () => {
    const res = await node.get('/draw?event_id=drop');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=1');
    before_ = (await res.json()) as Published;
    assert.deepEqual(Object.keys(before_).sort(), ['algorithm', 'commitment', 'committed_at']);
    assert.match(before_.commitment, /^[0-9a-f]{64}$/);
    // Published now (the first look), ten minutes before the start; a later look does not move it.
    assert.equal(before_.committed_at, new Date(START_MS - 600_000).toISOString());
    node.clock.ms += 2_000;
    const again = (await (await node.get('/draw?event_id=drop')).json()) as Published;
    assert.equal(again.committed_at, before_.committed_at);

    const queue = await read(node.get(`/queue_num?event_id=drop&request_id=${visitors[0]}`));
    assert.equal(queue.status, 202);
    assert.deepEqual(queue.body, { error: 'Waiting for the draw at the start' });
    const token = await read(node.post('/generate_token', { event_id: 'drop', request_id: visitors[0] }));
    assert.equal(token.status, 202);
    assert.deepEqual(token.body, { error: 'Request ID not being served yet' });
    const positions = await read(node.admin('GET', '/draw_positions?event_id=drop'));
    assert.equal(positions.status, 202);

    const notYet = await verifyDraw(['--public-url', node.url, '--event-id', 'drop']);
    assert.equal(notYet.code, 1);
    assert.match(notYet.stderr, /the draw has not taken place yet/);
  });

  it('a room without a draw answers 404; an unknown room 400', async () => {
    const plain = await read(node.get('/draw?event_id=plain'));
    assert.equal(plain.status, 404);
    assert.deepEqual(plain.body, { error: 'This waiting room has no draw' });
    const unknown = await read(node.get('/draw?event_id=nope'));
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body, { error: 'Invalid event ID' });
  });

  it('after the draw: seed, first position and entries; every visitor has the place they give', async () => {
    node.clock.ms = START_MS;
    await node.room.draws.runDraws();
    const published = (await (await node.get('/draw?event_id=drop')).json()) as Published;
    assert.equal(published.commitment, before_.commitment);
    assert.equal(published.committed_at, before_.committed_at);
    assert.equal(published.drawn_at, new Date(START_MS).toISOString());
    assert.equal(drawCommitment(published.seed!), published.commitment);
    assert.equal(published.first_position, 1);
    assert.deepEqual(published.entries, visitors.map(drawEntry));

    const page = await read<{ total: number; entries: string[]; positions: number[] }>(
      node.admin('GET', '/draw_positions?event_id=drop&offset=38&limit=10'),
    );
    assert.equal(page.status, 200);
    assert.equal(page.body.total, 40);
    assert.deepEqual(page.body.entries, published.entries!.slice(38));
    const queued = await read<{ queue_number: number }>(node.get(`/queue_num?event_id=drop&request_id=${visitors[39]}`));
    assert.deepEqual(page.body.positions, [
      (await read<{ queue_number: number }>(node.get(`/queue_num?event_id=drop&request_id=${visitors[38]}`))).body.queue_number,
      queued.body.queue_number,
    ]);
  });

  it('verify-draw: a visitor finds their place, and it is the one /queue_num gives', async () => {
    const result = await verifyDraw(['--public-url', node.url, '--event-id', 'drop', '--request-id', visitors[7]!.toUpperCase()]);
    assert.equal(result.code, 0, result.stderr);
    const position = (await read<{ queue_number: number }>(node.get(`/queue_num?event_id=drop&request_id=${visitors[7]}`))).body
      .queue_number;
    assert.match(result.stdout, new RegExp(`Your entry is number 8 in join order; the draw gave it place ${position}: position ${position}\\.`));
    assert.match(result.stdout, /\/queue_num gives the same position/);
    assert.match(result.stdout, /which the room first published at 2026-11-24T17:50:00\.000Z, before the draw at 2026-11-24T18:00:00\.000Z/);
  });

  it('verify-draw --commitment: the one seen before the start must be the one published', async () => {
    const same = await verifyDraw(['--public-url', node.url, '--event-id', 'drop', '--commitment', before_.commitment.toUpperCase()]);
    assert.equal(same.code, 0, same.stderr);
    assert.match(same.stdout, /It is the commitment you saw before the start\./);
    const other = await verifyDraw(['--public-url', node.url, '--event-id', 'drop', '--commitment', drawCommitment(newDrawSeed())]);
    assert.equal(other.code, 1, other.stdout);
    assert.match(other.stderr, /is not the one you saw before the start .*: the commitment changed/);
    const malformed = await verifyDraw(['--public-url', node.url, '--event-id', 'drop', '--commitment', 'abc']);
    assert.equal(malformed.code, 2);
  });

  it('a commitment nobody was shown before the draw is published with the instant it was first shown, and fails the check', async () => {
    const late = (await (await node.get('/draw?event_id=late')).json()) as Published;
    assert.equal(late.drawn_at, new Date(START_MS).toISOString());
    assert.ok(Date.parse(late.committed_at!) >= Date.parse(late.drawn_at!));
    const result = await verifyDraw(['--public-url', node.url, '--event-id', 'late']);
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stderr, /the commitment was first published at .*, not before the draw at/);
  });

  it('verify-draw fails when the commitment was not published before the draw, or the instants are missing', async () => {
    for (const tamper of [
      (d: Published) => ({ ...d, committed_at: d.drawn_at }),
      (d: Published) => ({ ...d, committed_at: new Date(Date.parse(d.drawn_at!) + 1000).toISOString() }),
      (d: Published) => ({ ...d, committed_at: undefined }),
      (d: Published) => ({ ...d, drawn_at: 'yesterday' }),
    ]) {
      const proxy = await startTamperingProxy(node.url, tamper);
      try {
        const result = await verifyDraw(['--public-url', proxy.url, '--event-id', 'drop']);
        assert.equal(result.code, 1, result.stdout);
        assert.match(result.stderr, /not before the draw|does not say when/);
      } finally {
        await proxy.close();
      }
    }
  });

  it('verify-draw: with the admin token it checks every position (or a sample); without, only the publication', async () => {
    const all = await verifyDraw(['--public-url', node.url, '--event-id', 'drop', '--admin-token', TEST_CREDENTIALS.adminToken, '--check-all']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /40 of 40 positions checked: every one matches the draw/);
    const sample = await verifyDraw(['--public-url', node.url, '--event-id', 'drop', '--admin-token', TEST_CREDENTIALS.adminToken, '--sample', '5']);
    assert.equal(sample.code, 0, sample.stderr);
    assert.match(sample.stdout, /5 of 40 positions checked/);
    const publicOnly = await verifyDraw(['--public-url', node.url, '--event-id', 'drop']);
    assert.equal(publicOnly.code, 0, publicOnly.stderr);
    assert.match(publicOnly.stdout, /Positions not checked/);
    const noCredentials = await verifyDraw(['--public-url', node.url, '--event-id', 'drop', '--check-all']);
    assert.equal(noCredentials.code, 2);
  });

  it('verify-draw: a visitor who is not in the draw is told so', async () => {
    const res = await read<{ api_request_id: string }>(node.post('/assign_queue_num', { event_id: 'drop' }));
    const result = await verifyDraw(['--public-url', node.url, '--event-id', 'drop', '--request-id', res.body.api_request_id]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /is not among the draw's entries/);
  });

  it('verify-draw fails on a tampered seed', async () => {
    const otherSeed = newDrawSeed();
    for (const tamper of [
      (d: Published) => ({ ...d, seed: otherSeed }),
      // Seed and commitment swapped together: the commitment no longer is the one published before the start,
      // which a visitor notices as a wrong place.
      (d: Published) => ({ ...d, seed: otherSeed, commitment: drawCommitment(otherSeed) }),
    ]) {
      const proxy = await startTamperingProxy(node.url, tamper);
      try {
        const result = await verifyDraw(['--public-url', proxy.url, '--event-id', 'drop', '--admin-token', TEST_CREDENTIALS.adminToken, '--check-all']);
        assert.equal(result.code, 1, result.stdout);
        assert.match(result.stderr, /does not match the commitment|positions checked do not match the draw/);
      } finally {
        await proxy.close();
      }
    }
  });

  it('verify-draw fails on a tampered entry list', async () => {
    const { seed } = (await (await node.get('/draw?event_id=drop')).json()) as Published;
    // One entry (the 21st) left out: the places are recomputed for 39 entries. A visitor whose place then differs
    // (most do; which ones depends on the seed) sees it.
    const places40 = placesOf(await drawOrder(seed!, 40));
    const places39 = placesOf(await drawOrder(seed!, 39));
    const moved = visitors.findIndex((_, i) => i !== 20 && places39[i < 20 ? i : i - 1] !== places40[i]);
    const cases = [
      {
        visitor: visitors[moved]!,
        tamper: (d: Published) => ({ ...d, entries: d.entries!.filter((e) => e !== drawEntry(visitors[20]!)) }),
      },
      {
        // Two entries swapped: each of the two gets the other's place.
        visitor: visitors[3]!,
        tamper: (d: Published) => {
          const entries = [...d.entries!];
          [entries[3], entries[30]] = [entries[30]!, entries[3]!];
          return { ...d, entries };
        },
      },
    ];
    for (const { visitor, tamper } of cases) {
      const proxy = await startTamperingProxy(node.url, tamper);
      try {
        const mine = await verifyDraw(['--public-url', proxy.url, '--event-id', 'drop', '--request-id', visitor]);
        assert.equal(mine.code, 1, mine.stdout);
        assert.match(mine.stderr, /\/queue_num gives position \d+, the draw gives position \d+/);
        const all = await verifyDraw(['--public-url', proxy.url, '--event-id', 'drop', '--admin-token', TEST_CREDENTIALS.adminToken, '--check-all']);
        assert.equal(all.code, 1, all.stdout);
        assert.match(all.stderr, /the room drew 40 entries, the publication lists 39|positions checked do not match the draw/);
      } finally {
        await proxy.close();
      }
    }
  });
});
