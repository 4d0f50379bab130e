// A real HTTP key endpoint on 127.0.0.1, serving what an Anteroom server serves: the event's key as a bare
// JWK at `/public_key?event_id=E` and as a JWKS at `/jwks.json`. Tests swap the keys to simulate a rotation.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JWK } from 'jose';

export interface KeyServer {
  publicKeyUrl: string;
  jwksUrl: string;
  /** Requests answered so far (to observe caching and rate limiting). */
  requests: number;
  /** Serve these keys from now on; the first one is the bare JWK of `/public_key`. */
  serve(keys: JWK[]): void;
  /** Answer every request with this status (0 = back to normal). */
  failWith(status: number): void;
  close(): Promise<void>;
}

export async function startKeyServer(eventId: string, keys: JWK[]): Promise<KeyServer> {
  let served = keys;
  let failure = 0;
  const state = { requests: 0 };
  const server = createServer((req, res) => {
    state.requests += 1;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' });
      res.end(JSON.stringify(body));
    };
    if (failure) return answer(failure, { error: 'Service temporarily unavailable' });
    if (url.pathname === '/public_key') {
      if (url.searchParams.get('event_id') !== eventId) return answer(404, { error: 'Invalid event ID' });
      return answer(200, served[0]);
    }
    if (url.pathname === '/jwks.json') return answer(200, { keys: served });
    return answer(404, { error: 'Not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    publicKeyUrl: `${base}/public_key`,
    jwksUrl: `${base}/jwks.json`,
    get requests() {
      return state.requests;
    },
    serve(next) {
      served = next;
    },
    failWith(status) {
      failure = status;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
