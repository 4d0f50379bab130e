// The bot defence across nodes on one real Redis: a proof of work used on one node is refused on the other
// (single use is kept in Redis), a client's join limit counts its joins on every node, and `auto`'s flood
// detector counts the room's joins on every node and holds the challenge on for all of them.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BotDefenceSettings } from '../../src/domain/room-settings.ts';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';
import { solvedProof } from '../support/proof-of-work.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { freshPrefix } from './fleet.ts';

const defence: BotDefenceSettings = {
  challenge: 'always',
  difficulty: 1000,
  max_difficulty: 1_000_000,
  room_threshold_per_minute: 600,
  client_threshold_per_minute: 5,
  challenge_ttl: 120,
  joins_per_client_per_minute: 4,
  require_enqueue_key: false,
    infinite_queue: false,
};

describe('bot defence on two nodes sharing one Redis', () => {
  let redis: RedisServer;
  let nodes: TestNode[];
  before(async () => {
    redis = await startRedisServer();
    const prefix = freshPrefix();
    const config = {
      store: { kind: 'redis' as const, url: redis.url },
      redisKeyPrefix: prefix,
      events: [
        eventSettings('Guarded', { bot_defence: defence }),
        // 60 a minute: a 10 s flood window, so a burst on a busy machine lands in one.
        eventSettings('Flood', { bot_defence: { ...defence, challenge: 'auto', room_threshold_per_minute: 60, client_threshold_per_minute: 1 } }),
      ],
      trustProxy: ['loopback'],
    };
    nodes = [await startTestNode(config), await startTestNode(config)];
  });
  after(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    await redis.stop();
  });

  const joinOn = (node: TestNode, proof: string) => node.post('/assign_queue_num', { event_id: 'Guarded', proof_of_work: proof });

  it('a challenge issued by one node is accepted by the other, once: the replay on the first node is refused', async () => {
    const [a, b] = nodes as [TestNode, TestNode];
    const proof = await solvedProof(a.url, 'Guarded');
    assert.equal((await joinOn(b, proof)).status, 200);
    const replay = await joinOn(a, proof);
    assert.equal(replay.status, 403);
    assert.deepEqual(await replay.json(), { error: 'Proof of work already used' });
  });

  it("a client's joins count on every node: the limit is reached across both", async () => {
    const [a, b] = nodes as [TestNode, TestNode];
    // The two joins of the test above counted already, the refused replay too (4 a minute): two more pass,
    // alternating nodes, and the next is refused on either.
    const statuses: number[] = [];
    for (const node of [a, b, a, b]) statuses.push((await joinOn(node, await solvedProof(node.url, 'Guarded'))).status);
    assert.deepEqual(statuses, [200, 200, 429, 429]);
  });

  it('auto: a burst of first joins from many addresses, spread over both nodes, trips the challenge for both after about 10', async () => {
    const [a, b] = nodes as [TestNode, TestNode];
    const joinAs = (node: TestNode, ip: string) => node.post('/assign_queue_num', { event_id: 'Flood' }, { 'x-forwarded-for': ip });
    const statuses = await Promise.all(Array.from({ length: 100 }, (_, i) => joinAs(i % 2 ? b : a, `198.51.100.${i + 1}`).then((res) => res.status)));
    const passed = statuses.filter((status) => status === 200).length;
    assert.ok(passed >= 10 && passed <= 12, `${passed} let in without work`);
    assert.equal(statuses.filter((status) => status === 403).length, 100 - passed);
    for (const [node, ip] of [[a, '203.0.113.1'], [b, '203.0.113.2']] as const) assert.equal((await joinAs(node, ip)).status, 403, ip);
  });
});
