// The gate listener's own limits (docs/gate.md, "Limits of the gate listener"): how long a client may take to
// send a request, how long an idle connection stays open, how many connections one client and all clients may
// hold, and how much of a body the gate reads of a request it answers itself (a queued visitor's). Without
// them a few hundred trickling connections hold the gate for Node's 60 s/300 s defaults, and held connections
// use up the file descriptors the API listener of the same process needs.

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { BlockList, isIPv4, isIPv6, type Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface GateListenerLimits {
  /** The request line and headers must arrive within this (ms). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (ms); 0 = no limit. Answers are not limited. */
  requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this (ms). */
  keepAliveTimeoutMs: number;
  /** Open connections at most, all clients together; one more is closed at once. */
  maxConnections: number;
  /** Open connections one client (an IPv4 address, an IPv6 /64) may hold; one more is closed at once. 0 = no cap. */
  maxConnectionsPerClient: number;
}

/** Bytes of a body the gate reads (and drops) of a request it answers itself; past it the connection is closed. */
export const UNSENT_BODY_LIMIT = 16 * 1024;

export const GATE_HEADERS_TIMEOUT_MS = 10_000;
export const GATE_REQUEST_TIMEOUT_MS = 30_000;
export const GATE_KEEP_ALIVE_TIMEOUT_MS = 5_000;
export const GATE_MAX_CONNECTIONS_PER_CLIENT = 256;
/** The total cap's ceiling, and its value where the open-file limit cannot be read. */
export const GATE_MAX_CONNECTIONS_CEILING = 50_000;

/**
 * The default total cap: a quarter of the process's open-file limit (each proxied connection may hold a second
 * one to the origin; the rest stays for the API listener and the store), at most GATE_MAX_CONNECTIONS_CEILING.
 */
export function defaultGateMaxConnections(limitsFile = '/proc/self/limits'): number {
  try {
    const line = readFileSync(limitsFile, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    if (Number.isSafeInteger(soft) && soft > 0) return Math.max(1, Math.min(GATE_MAX_CONNECTIONS_CEILING, Math.floor(soft / 4)));
  } catch {
    // Not Linux: the ceiling.
  }
  return GATE_MAX_CONNECTIONS_CEILING;
}

export function defaultGateListenerLimits(): GateListenerLimits {
  return {
    headersTimeoutMs: GATE_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: GATE_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: GATE_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: defaultGateMaxConnections(),
    maxConnectionsPerClient: GATE_MAX_CONNECTIONS_PER_CLIENT,
  };
}

/** --trust-proxy's values (src/config/config.ts). */
type TrustProxy = boolean | number | string[] | undefined;

/**
 * The gate's node:http server (Fastify's serverFactory) with the limits set. The per-client cap counts
 * connections by the socket's peer: a connection exists before any header names a client, and a proxy's
 * connection carries many clients' requests. Peers --trust-proxy trusts are not capped (the proxy holds its
 * clients' connections and must limit them itself); the total cap applies to every connection.
 */
export function gateServerFactory(limits: GateListenerLimits, trustProxy: TrustProxy): (handler: RequestListener) => Server {
  return (handler) => {
    // Node requires headersTimeout ≤ requestTimeout when both are set.
    const headersTimeout = limits.requestTimeoutMs > 0 ? Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) : limits.headersTimeoutMs;
    const server = createServer(
      {
        headersTimeout,
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        // Node checks both timeouts only this often (30 s by default, which would let a 10 s limit run to 40 s).
        connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4))),
      },
      handler,
    );
    server.maxConnections = limits.maxConnections;
    if (limits.maxConnectionsPerClient > 0) capPerClient(server, limits.maxConnectionsPerClient, trustedPeer(trustProxy));
    return server;
  };
}

function capPerClient(server: Server, cap: number, trusted: (address: string) => boolean): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || trusted(address)) return;
    const client = clientKey(address);
    const count = open.get(client) ?? 0;
    if (count >= cap) {
      socket.destroy();
      return;
    }
    open.set(client, count + 1);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left <= 0) open.delete(client);
      else open.set(client, left);
    });
  });
}

/** One client: an IPv4 address (IPv4-mapped IPv6 included), or an IPv6 /64 (one host's usual allocation). */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail] = address.toLowerCase().split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** Whether --trust-proxy trusts a connection's peer to name clients (then it is a proxy, not a client). */
export function trustedPeer(trustProxy: TrustProxy): (address: string) => boolean {
  if (trustProxy === true) return () => true;
  if (typeof trustProxy === 'number') return () => trustProxy > 0;
  if (!Array.isArray(trustProxy) || trustProxy.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of trustProxy) {
    for (const range of NAMED_RANGES[entry] ?? [entry]) {
      const [address = '', bits] = range.split('/');
      const family = isIPv4(address) ? 'ipv4' : 'ipv6';
      if (bits === undefined) list.addAddress(address, family);
      else list.addSubnet(address, Number(bits), family);
    }
  }
  return (address) => {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    const plain = mapped ?? address;
    return list.check(plain, isIPv4(plain) ? 'ipv4' : 'ipv6');
  };
}

/** proxy-addr's named ranges, as --trust-proxy accepts them. */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/**
 * Before the gate sends an answer of its own (not the origin's): a request body nobody read is read and
 * dropped up to UNSENT_BODY_LIMIT bytes, so that a small form's connection stays usable; a larger one (or one
 * announced larger) is not read further and the answer closes the connection. Without this Node reads and
 * drops the whole body after the answer, however large, to keep the connection alive.
 */
export function boundUnreadBody(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
  const raw = request.raw;
  // The common case, a request without a body or one streamed to the origin: nothing to wait for.
  if (!hasBody(raw) || raw.readableEnded || raw.readableFlowing || raw.destroyed) return undefined;
  if (Number(raw.headers['content-length']) > UNSENT_BODY_LIMIT) {
    reply.header('connection', 'close');
    return undefined;
  }
  return readsWithin(raw, UNSENT_BODY_LIMIT).then((ended) => {
    if (!ended) reply.header('connection', 'close');
  });
}

function hasBody(raw: IncomingMessage): boolean {
  return raw.headers['transfer-encoding'] !== undefined || (raw.headers['content-length'] !== undefined && raw.headers['content-length'] !== '0');
}

/** Reads and drops the body: true when it ended within `limit` bytes, false (reading paused) past it. */
function readsWithin(raw: IncomingMessage, limit: number): Promise<boolean> {
  return new Promise((resolve) => {
    let bytes = 0;
    const finish = (ended: boolean) => {
      raw.off('data', onData).off('end', onEnd).off('error', onFail).off('close', onFail);
      if (!ended) raw.pause();
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) finish(false);
    };
    const onEnd = () => finish(true);
    const onFail = () => finish(false);
    raw.on('data', onData).on('end', onEnd).on('error', onFail).on('close', onFail);
  });
}
