// A canned HTTP/1.1 server for measuring a client's own cost: every request (a GET without a body) is answered
// with the same prebuilt /serving_num response, headers as Anteroom sends them. It parses nothing but the end
// of each request head ("\r\n\r\n"), answers pipelined requests in one write, and so costs far less per
// request than any real server: what a client measures against it is mostly the client.
//
//   node bench/canned-http-server.ts [port]      prints "listening <port>", stops on SIGTERM

import { createServer, type Socket } from 'node:net';

const body = '{"serving_counter":0}';
const RESPONSE = Buffer.from(
  'HTTP/1.1 200 OK\r\naccess-control-allow-origin: *\r\ncache-control: public, max-age=1\r\n' +
    `content-type: application/json; charset=utf-8\r\ncontent-length: ${body.length}\r\n` +
    'Date: Sun, 22 Nov 2026 00:00:00 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n' +
    body,
);
const END = Buffer.from('\r\n\r\n');
const batches: Buffer[] = [];
function answers(n: number): Buffer {
  if (n <= 64) return (batches[n] ??= Buffer.concat(Array.from({ length: n }, () => RESPONSE)));
  return Buffer.concat(Array.from({ length: n }, () => RESPONSE));
}

const server = createServer((socket: Socket) => {
  socket.setNoDelay(true);
  // The tail of the previous chunk, so a "\r\n\r\n" split across chunks is still found.
  let tail: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    const data = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
    let n = 0;
    let from = 0;
    let last = -1;
    for (;;) {
      const at = data.indexOf(END, from);
      if (at < 0) break;
      n++;
      last = at + 4;
      from = last;
    }
    tail = data.subarray(last < 0 ? Math.max(0, data.length - 3) : Math.max(last, data.length - 3));
    if (n > 0) socket.write(answers(n));
  });
  socket.on('error', () => socket.destroy());
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 500).unref();
});
