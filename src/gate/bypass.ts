// Requests that go straight to the origin and are not counted (spec rooms.md §5): path prefixes (by whole
// segment, on the normalised path, in the case written: "/static/" does not let "/STATIC/" through), client IPs or
// CIDRs (the client IP as Fastify reads it with --trust-proxy), and exact header values, compared in constant
// time (a monitor's shared secret must not leak through timing).

import { timingSafeEqual } from 'node:crypto';
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { GateBypass } from '../domain/room-settings.ts';
import { configuredPath, pathMatches } from './route-match.ts';

export interface BypassRequest {
  /** Normalised (normalise-path.ts). */
  path: string;
  ip: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** The bypass rules of one room, compiled once (the IP list as a node:net BlockList). */
export class BypassRules {
  private readonly paths: readonly string[];
  private readonly ips: BlockList | undefined;
  private readonly headers: [name: string, value: Buffer][];
  /** No rule at all (most rooms): callers skip building the request's description. */
  readonly empty: boolean;

  constructor(bypass: GateBypass | undefined) {
    this.paths = (bypass?.paths ?? []).map(configuredPath);
    this.headers = Object.entries(bypass?.headers ?? {}).map(([name, value]) => [name.toLowerCase(), Buffer.from(value)]);
    if (bypass?.ips?.length) {
      const list = new BlockList();
      for (const entry of bypass.ips) addAddress(list, entry);
      this.ips = list;
    }
    this.empty = this.paths.length === 0 && !this.ips && this.headers.length === 0;
  }


  matches(request: BypassRequest): boolean {
    for (const prefix of this.paths) if (pathMatches(prefix, request.path)) return true;
    if (this.ips && request.ip) {
      const ip = request.ip.startsWith('::ffff:') && isIPv4(request.ip.slice(7)) ? request.ip.slice(7) : request.ip;
      const type = isIPv4(ip) ? 'ipv4' : isIPv6(ip) ? 'ipv6' : undefined;
      if (type && this.ips.check(ip, type)) return true;
    }
    for (const [name, expected] of this.headers) {
      const given = request.headers[name];
      if (typeof given === 'string' && safeEqual(Buffer.from(given), expected)) return true;
    }
    return false;
  }
}

function addAddress(list: BlockList, entry: string): void {
  const [address = '', bits] = entry.split('/');
  const type = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
  if (!type) throw new TypeError(`gate.bypass.ips: "${entry}" is not an IP address or CIDR`);
  if (bits === undefined) list.addAddress(address, type);
  else list.addSubnet(address, Number(bits), type);
}

function safeEqual(a: Buffer, b: Buffer): boolean {
  // Lengths differ: compare b with itself so the time does not depend on where a differs.
  return a.length === b.length ? timingSafeEqual(a, b) : (timingSafeEqual(b, b), false);
}
