// Which room a request belongs to (spec rooms.md §5): among the rooms with a gate, the route with the longest
// matching path for the request's host; a route without `host` matches any host. Paths match by segment
// ("/shop" takes "/shop" and "/shop/cart", not "/shopping").

import type { GateSettings, RoomSettings } from '../domain/room-settings.ts';

export interface GatedRoom {
  room: RoomSettings;
  gate: GateSettings;
}

interface Route extends GatedRoom {
  /** Lowercased; undefined matches any host. */
  host: string | undefined;
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
      for (const route of gate.routes) routes.push({ room, gate, host: route.host?.toLowerCase(), path: route.path });
    }
    // Array.prototype.sort is stable: equal routes keep the rooms' order.
    routes.sort((a, b) => b.path.length - a.path.length || Number(b.host !== undefined) - Number(a.host !== undefined));
    this.routes = routes;
  }

  match(host: string | undefined, path: string): GatedRoom | undefined {
    const key = host ?? '';
    let candidates = this.byHost.get(key);
    if (!candidates) {
      const hostName = key.toLowerCase();
      const withoutPort = hostName.replace(/:\d+$/, '');
      candidates = this.routes.filter((r) => r.host === undefined || r.host === hostName || r.host === withoutPort);
      // Hosts come from clients: keep the memory bounded.
      if (this.byHost.size >= 1000) this.byHost.clear();
      this.byHost.set(key, candidates);
    }
    for (const route of candidates) if (pathMatches(route.path, path)) return route;
    return undefined;
  }
}

/** The table of the rooms given, rebuilt only when the array changes (WaitingRoomService.roomsSnapshot). */
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

export function pathMatches(prefix: string, path: string): boolean {
  if (prefix === '/' || prefix === path) return true;
  if (!path.startsWith(prefix)) return false;
  return prefix.endsWith('/') || path.charAt(prefix.length) === '/';
}

/** The path of a request target, without its query. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
