// Malformed HTTP (issue 14): Node's parser refuses it before any route runs. The answer is the contract's
// one error shape, it is counted in /metrics (route "malformed"), and the raw bytes — which may carry the
// admin token — are logged at no level, not even trace.

import assert from 'node:assert/strict';
import { createConnection } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { startTestNode, TEST_CREDENTIALS, type TestNode } from '../support/node.ts';

/** Sends `bytes` on a fresh connection and returns everything the server wrote before closing. */
function sendRaw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

describe('malformed HTTP requests', () => {
  let node: TestNode;
  let logged = '';
  before(async () => {
    const logStream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged += chunk.toString();
        done();
      },
    });
    node = await startTestNode({ logLevel: 'trace' }, { logStream });
  });
  after(async () => {
    await node?.stop();
  });

  it('get {"error": …} with a 4xx, are counted in /metrics, and their bytes are never logged', async () => {
    const port = Number(new URL(node.url).port);
    const secret = TEST_CREDENTIALS.adminToken;
    const answers = [
      await sendRaw(port, `GET /serving_num HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nBad Header Line\r\n\r\n`),
      await sendRaw(port, `NOT-A-METHOD\x01 / HTTP/1.1\r\nAuthorization: Bearer ${secret}\r\n\r\n`),
      await sendRaw(port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\nAuthorization: Bearer ${secret}\r\n\r\n`),
    ];
    for (const answer of answers) {
      const [head, body] = answer.split('\r\n\r\n') as [string, string];
      assert.match(head, /^HTTP\/1\.1 4\d\d /, answer);
      assert.match(head, /content-type: application\/json/i);
      assert.deepEqual(Object.keys(JSON.parse(body) as object), ['error'], body);
    }
    const metrics = await (await node.get('/metrics')).text();
    const counted = metrics
      .split('\n')
      .filter((line) => line.startsWith('anteroom_http_requests_total{') && line.includes('route="malformed"'))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    assert.equal(counted, 3, 'each malformed request counted');
    assert.doesNotMatch(logged, new RegExp(secret), 'the raw bytes (admin token) were logged');
  });
});
