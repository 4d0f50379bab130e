// Free TCP ports on 127.0.0.1 for servers a test starts next. A Redis server in cluster mode also binds its
// cluster bus at port + 10000, so freeRedisPort() answers only a port whose bus port is free too.

import { createServer } from 'node:net';

/** Whether nobody listens on `port` right now (binding 0 asks the kernel for any free port). */
function listenOnce(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : null;
      server.close(() => resolve(bound));
    });
  });
}

/** A TCP port nobody listens on right now (for a server started next). */
export async function freePort(): Promise<number> {
  const port = await listenOnce(0);
  if (port === null) throw new Error('no free TCP port on 127.0.0.1');
  return port;
}

/** A free port whose Redis cluster-bus port (port + 10000) is free as well. */
export async function freeRedisPort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await freePort();
    if (port + 10_000 <= 65_535 && (await listenOnce(port + 10_000)) !== null) return port;
  }
  throw new Error('no free port p with p + 10000 free (the Redis cluster bus) after 100 tries');
}
