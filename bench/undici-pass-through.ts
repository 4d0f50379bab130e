// The floor for a proxy in Node: a bare node:http server passing every request to one origin with undici
// (a keep-alive pool), streaming both bodies, adding nothing. bench/gate.ts compares the gate with it.
//
//   node bench/undici-pass-through.ts <origin URL>     prints "listening <port>", stops on SIGTERM

import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const origin = process.argv[2] as string;
const pool = new Pool(origin, { connections: 128 });

const server = createServer((req, res) => {
  const headers = { ...req.headers };
  delete headers.connection;
  delete headers['keep-alive'];
  delete headers['transfer-encoding'];
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  pool
    .request({ path: req.url ?? '/', method: (req.method ?? 'GET') as 'GET', headers, body: hasBody ? req : null })
    .then(async (answer) => {
      const out = { ...answer.headers };
      delete out.connection;
      delete out['keep-alive'];
      res.writeHead(answer.statusCode, out as Record<string, string>);
      await pipeline(answer.body, res);
    })
    .catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
