// A deliberately small waiting room (node:http on 127.0.0.1, port 0) implementing only the endpoints of the
// load test's journey, correct except for one chosen bug. It proves the verdicts notice what they claim to:
// each bug must turn its verdict red, and leave the others green.

import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export type Bug =
  | 'none'
  /** The 10th visitor gets the same position as the 9th. */
  | 'duplicate-position'
  /** A re-claim signs a fresh token set instead of returning the stored one. */
  | 'different-reclaim'
  /** /public_key publishes a key other than the signing key. */
  | 'foreign-key'
  /** Lets visitors in up to 1000 positions ahead of the counter (and says so on /serving_num). */
  | 'ahead-of-counter';

export const FAKE_ADMIN_TOKEN = 'fake-admin-token-0123456789';

interface Entry {
  position: number;
  entryTime: number;
  /** Single flight: concurrent first claims share one signing (a race here would be a bug of its own). */
  tokens?: Promise<{ access_token: string; refresh_token: string; id_token: string }>;
}

export interface FakeWaitingRoom {
  url: string;
  privateUrl: string;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

// RSA key generation is slow; every fake of a test file can share the same two pairs.
type CryptoKeyPair = { privateKey: CryptoKey; publicKey: CryptoKey };
let keyPairs: Promise<CryptoKeyPair[]> | null = null;

export interface FakeOptions {
  /**
   * Every n-th GET /serving_num gets a connection fault instead of an answer, in turn: the connection dropped
   * without a word, a malformed answer, an answer with `Connection: close` (node:http then ignores whatever was
   * pipelined behind it). Not a bug of the waiting room: the load tester must retry, count, and stay correct.
   */
  faultyPollEvery?: number;
}

export async function startFakeWaitingRoom(bug: Bug, eventId = 'Sample', fakeOptions: FakeOptions = {}): Promise<FakeWaitingRoom> {
  keyPairs ??= Promise.all([generateKeyPair('RS256', { extractable: true }), generateKeyPair('RS256', { extractable: true })]);
  const [{ privateKey, publicKey }, foreign] = (await keyPairs) as [CryptoKeyPair, CryptoKeyPair];
  const kid = randomBytes(16).toString('hex');
  const published: JWK = await exportJWK(bug === 'foreign-key' ? foreign.publicKey : publicKey);
  const publicJwk = { ...published, alg: 'RS256', kid };

  let queue = 0;
  let serving = 0;
  let issued = 0;
  const entries = new Map<string, Entry>();
  const lead = bug === 'ahead-of-counter' ? 1000 : 0;
  let polls = 0;
  let faults = 0;

  const sign = async (requestId: string, entry: Entry, key: CryptoKey) => {
    const now = Math.floor(Date.now() / 1000);
    const token = (use: string) =>
      new SignJWT({ queue_position: entry.position, token_use: use, ...(bug === 'different-reclaim' ? { jti: randomUUID() } : {}) })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .setAudience(eventId)
        .setSubject(requestId)
        .setIssuer('http://fake')
        .setIssuedAt(now)
        .setNotBefore(now)
        .setExpirationTime(now + 3600)
        .sign(key);
    const [access_token, refresh_token, id_token] = await Promise.all([token('access'), token('refresh'), token('id')]);
    return { access_token, refresh_token, id_token };
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const route = `${req.method} ${url.pathname}`;
    const requestId = url.searchParams.get('request_id') ?? '';
    if (url.pathname.startsWith('/private/') && req.headers.authorization !== `Bearer ${FAKE_ADMIN_TOKEN}`) {
      send(res, 403, { error: 'Forbidden' });
      return;
    }
    switch (route) {
      case 'POST /assign_queue_num': {
        await readBody(req);
        const id = randomUUID();
        const position = bug === 'duplicate-position' && queue === 9 ? queue : ++queue;
        entries.set(id, { position, entryTime: Math.floor(Date.now() / 1000) });
        send(res, 200, { api_request_id: id });
        return;
      }
      case 'GET /queue_num': {
        const entry = entries.get(requestId);
        if (!entry) send(res, 202, { error: 'Request ID not found' });
        else send(res, 200, { queue_number: entry.position, entry_time: entry.entryTime, event_id: eventId, status: 1 });
        return;
      }
      case 'GET /serving_num': {
        const every = fakeOptions.faultyPollEvery ?? 0;
        if (every > 0 && ++polls % every === 0) {
          const fault = faults++ % 3;
          if (fault === 0) {
            req.socket.destroy();
            return;
          }
          if (fault === 1) {
            req.socket.end('HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n{}');
            return;
          }
          res.setHeader('connection', 'close');
        }
        send(res, 200, { serving_counter: serving + lead });
        return;
      }
      case 'GET /waiting_num':
        send(res, 200, { waiting_num: Math.max(0, queue - issued) });
        return;
      case 'POST /generate_token': {
        const body = await readBody(req);
        const id = String(body.request_id);
        const entry = entries.get(id);
        if (!entry) {
          send(res, 404, { error: 'Invalid request ID' });
        } else if (entry.position > serving + lead) {
          send(res, 202, { error: 'Request ID not being served yet' });
        } else {
          if (!entry.tokens) issued++;
          if (!entry.tokens || bug === 'different-reclaim') entry.tokens = sign(id, entry, privateKey);
          send(res, 200, { ...(await entry.tokens), token_type: 'Bearer', expires_in: 3600 });
        }
        return;
      }
      case 'GET /public_key':
        send(res, 200, publicJwk);
        return;
      case 'POST /private/increment_serving_counter': {
        const body = await readBody(req);
        serving += Number(body.increment_by);
        send(res, 200, { serving_num: serving });
        return;
      }
      case 'GET /private/num_active_tokens':
        send(res, 200, { active_tokens: issued });
        return;
      case 'POST /private/reset_initial_state':
        await readBody(req);
        queue = serving = issued = 0;
        entries.clear();
        send(res, 200, { message: 'Counters reset. DynamoDB table recreated.' });
        return;
      default:
        send(res, 404, { error: 'Not found' });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    privateUrl: `${url}/private`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
