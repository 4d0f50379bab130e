// `anteroom loadtest --bots` (src/loadtest/bots.ts) against a real node: visitors and bots join from their own
// loopback addresses; without a defence every bot attempt takes a place, with `challenge: always` none does
// (the bots never solve) while every visitor, who solves, gets one; the CLI refuses a remote target.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runBotFairness } from '../../src/loadtest/bots.ts';
import { parseBotRunOptions } from '../../src/loadtest/options.ts';
import { eventSettings, startTestNode, type TestNode } from '../support/node.ts';

describe('anteroom loadtest --bots', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({
      events: [
        eventSettings('Open'),
        eventSettings('Guarded', {
          bot_defence: {
            challenge: 'always',
            difficulty: 1000,
            max_difficulty: 4000,
            room_threshold_per_minute: 600,
            client_threshold_per_minute: 1,
            challenge_ttl: 120,
            require_enqueue_key: false,
    infinite_queue: false,
          },
        }),
      ],
    });
  });
  after(() => node.stop());

  const run = (eventId: string) =>
    runBotFairness({ target: node.url, eventId, visitors: 20, arrivalRate: 1000, bots: 4, botJoins: 5, botsSolve: false, first: 1000 });

  it('without a defence every bot attempt takes a place, and the share counts every place', async () => {
    const result = await run('Open');
    assert.equal(result.visitorsPlaced, 20);
    assert.equal(result.botPlaces, 20);
    assert.equal(result.placesInFirst, 40);
    assert.equal(result.botsInFirst, 20);
    assert.equal(result.botShare, 0.5);
  });

  it('with challenge "always" bots that do not solve get no place; visitors solve and all get one', async () => {
    const result = await run('Guarded');
    assert.equal(result.visitorsPlaced, 20);
    assert.equal(result.botPlaces, 0);
    assert.equal(result.botShare, 0);
    assert.equal((await node.room.reports.counters('Guarded')).queue, 20);
  });

  it('the options: loopback targets only, bot joins default to half the arrivals', () => {
    const options = parseBotRunOptions({ target: 'http://127.0.0.1:8080', bots: '10', visitors: '1000' });
    assert.equal(options.botJoins, 100);
    assert.throws(() => parseBotRunOptions({ target: 'http://example.com', bots: '10' }), /not a loopback address/);
    assert.throws(() => parseBotRunOptions({ target: 'http://127.0.0.1:8080', bots: '0' }), /--bots must be a whole number/);
  });
});
