import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startTestNode, type TestNode } from '../support/node.ts';

interface Received {
  authorization: string | undefined;
  body: { event_id: string; paths: string[] };
}

describe('reset_initial_state calls the configured CDN purge hook', () => {
  let receiver: Server;
  let received: Received[] = [];
  let answer = 200;
  let node: TestNode;

  before(async () => {
    receiver = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ authorization: req.headers.authorization, body: JSON.parse(body) as Received['body'] });
        res.writeHead(answer).end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const address = receiver.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    node = await startTestNode({ cdnPurgeUrl: `http://127.0.0.1:${port}/purge`, cdnPurgeToken: 'purge-token-123' });
  });
  after(async () => {
    await node.stop();
    receiver.close();
  });

  it('a reset answers 200 after asking the hook to purge every cached path of that event', async () => {
    received = [];
    const response = await node.admin('POST', '/reset_initial_state', { event_id: 'Sample' });
    assert.equal(response.status, 200);
    assert.equal(received.length, 1);
    assert.equal(received[0]?.authorization, 'Bearer purge-token-123');
    assert.equal(received[0]?.body.event_id, 'Sample');
    for (const path of ['/queue_num', '/serving_num', '/waiting_num', '/queue_pos_expiry']) {
      assert.ok(received[0]?.body.paths.includes(path), `${path} not purged`);
    }
  });

  it('a failing hook does not fail the reset, which stays done', async () => {
    answer = 500;
    const join = await node.post('/assign_queue_num', { event_id: 'Sample' });
    assert.equal(join.status, 200);
    const response = await node.admin('POST', '/reset_initial_state', { event_id: 'Sample' });
    assert.equal(response.status, 200);
    assert.equal((await node.room.reports.counters('Sample')).queue, 0);
    answer = 200;
  });

  it('a bad request to reset does not call the hook', async () => {
    received = [];
    const response = await node.admin('POST', '/reset_initial_state', { event_id: 'Nope' });
    assert.equal(response.status, 400);
    assert.equal(received.length, 0);
  });
});
