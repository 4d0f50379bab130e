// Which room a request belongs to (spec rooms.md §5): among the rooms with a gate, the route with the longest
// matching path for the request's host; a route without `host` matches any host. Paths match by whole segment
// ("/shop" takes "/shop" and "/shop/cart", not "/shopping"), ignoring ASCII case ("/SHOP/x" is /shop's: an
// origin that reads paths without case must not serve it under a less protected room) and `;` segment
// parameters ("/shop;jsessionid=1/x" is /shop's, as a servlet container reads it). The path given is the
// normalised one (normalise-path.ts); the routes' own paths are read through the same rules.

import type { GateSettings, RoomSettings } from '../domain/room-settings.ts';
import { normalisePath } from './normalise-path.ts';

export interface GatedRoom {
  room: RoomSettings;
  gate: GateSettings;
}

interface Route extends GatedRoom {
  /** Lowercased; undefined matches any host. */
  host: string | undefined;
  /** Normalised and lowercased. */
  path: string;
}

/**
 * The routes of a set of rooms, compiled once: sorted so that the first match is the answer (longest path
 * first; a route naming the host before a catch-all of the same length; otherwise in the rooms' order), and
 * for each request host the routes that can match it, remembered (a site has few hosts).
 */
export class RouteTable {
  private readonly routes: readonly Route[];
  private readonly byHost = new Map<string, readonly Route[]>();

  constructor(rooms: readonly RoomSettings[]) {
    const routes: Route[] = [];
    for (const room of rooms) {
      const gate = room.gate;
      if (!gate) continue;
      for (const route of gate.routes) routes.push({ room, gate, host: route.host?.toLowerCase(), path: routePath(route.path) });
    }
    // Array.prototype.sort is stable: equal routes keep the rooms' order.
    routes.sort((a, b) => b.path.length - a.path.length || Number(b.host !== undefined) - Number(a.host !== undefined));
    this.routes = routes;
  }

  /** The room of a host and a normalised path. */
  match(host: string | undefined, path: string): GatedRoom | undefined {
    // Segment parameters are dropped for the choice (/shop;x/secret is /shop's), as servlet containers read them.
    const lower = (path.includes(';') ? path.replace(/;[^/]*/g, '').replace(/\/{2,}/g, '/') : path).toLowerCase();
    for (const route of this.routesOf(host)) if (pathMatches(route.path, lower)) return route;
    return undefined;
  }

  /**
   * The gated room `eventId` when one of its routes covers this host (names it, or names no host): what the gate
   * may answer for about a room on this host (its draw, src/gate/draw-check.ts), never another site's room.
   */
  roomOnHost(eventId: unknown, host: string | undefined): RoomSettings | undefined {
    return this.routesOf(host).find((route) => route.room.event_id === eventId)?.room;
  }

  /** Whether some route covers this host at all: it names the host, or names no host. */
  coversHost(host: string | undefined): boolean {
    return this.routesOf(host).length > 0;
  }

  private routesOf(host: string | undefined): readonly Route[] {
    const key = host ?? '';
    let candidates = this.byHost.get(key);
    if (!candidates) {
      // A fully qualified name's trailing dot (shop.example.) names the same site: an origin reads it so.
      const hostName = key.toLowerCase().replace(/\.+(:\d+)?$/, '$1');
      const withoutPort = hostName.replace(/:\d+$/, '');
      candidates = this.routes.filter((r) => r.host === undefined || r.host === hostName || r.host === withoutPort);
      // Hosts come from clients: keep the memory bounded.
      if (this.byHost.size >= 1000) this.byHost.clear();
      this.byHost.set(key, candidates);
    }
    return candidates;
  }
}

/** The table of the rooms given, rebuilt only when the array changes (RoomService.roomsSnapshot). */
export function routeTableCache(): (rooms: readonly RoomSettings[]) => RouteTable {
  let last: readonly RoomSettings[] | undefined;
  let table: RouteTable | undefined;
  return (rooms) => {
    if (rooms !== last || !table) {
      table = new RouteTable(rooms);
      last = rooms;
    }
    return table;
  };
}

export function matchRoom(rooms: readonly RoomSettings[], host: string | undefined, path: string): GatedRoom | undefined {
  return new RouteTable(rooms).match(host, path);
}

/** A route's or bypass rule's path read through the request paths' rules (a refused spelling is kept as written: it can never match). */
export function configuredPath(path: string): string {
  const normal = normalisePath(path);
  return typeof normal === 'string' ? normal : path;
}

function routePath(path: string): string {
  return configuredPath(path).toLowerCase();
}

/** Whether `prefix` covers `path` by whole segments: "/health" covers "/health" and "/health/x", not "/healthz". */
export function pathMatches(prefix: string, path: string): boolean {
  if (prefix === '/' || prefix === path) return true;
  if (!path.startsWith(prefix)) return false;
  return prefix.endsWith('/') || path.charAt(prefix.length) === '/';
}
