// Which room a request belongs to (spec rooms.md §5): among the rooms with a gate, the route with the longest
// matching path for the request's host; a route without `host` matches any host. Paths match by segment
// ("/shop" takes "/shop" and "/shop/cart", not "/shopping").

import type { GateSettings, RoomSettings } from '../domain/room-settings.ts';

export interface GatedRoom {
  room: RoomSettings;
  gate: GateSettings;
}

export function matchRoom(rooms: readonly RoomSettings[], host: string | undefined, path: string): GatedRoom | undefined {
  const hostName = (host ?? '').toLowerCase();
  const withoutPort = hostName.replace(/:\d+$/, '');
  let best: GatedRoom | undefined;
  let bestLength = -1;
  // A route naming the host beats a catch-all route of the same length.
  let bestHasHost = false;
  for (const room of rooms) {
    const gate = room.gate;
    if (!gate) continue;
    for (const route of gate.routes) {
      if (route.host !== undefined) {
        const wanted = route.host.toLowerCase();
        if (wanted !== hostName && wanted !== withoutPort) continue;
      }
      if (!pathMatches(route.path, path)) continue;
      const length = route.path.length;
      const hasHost = route.host !== undefined;
      if (length > bestLength || (length === bestLength && hasHost && !bestHasHost)) {
        best = { room, gate };
        bestLength = length;
        bestHasHost = hasHost;
      }
    }
  }
  return best;
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
