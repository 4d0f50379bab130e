// Every node follows the rooms of the store by itself: once a second it asks the service to bring the rooms it
// serves in line with the store (RoomService.syncRooms: one read of the rooms version, and a list only
// when that moved), so a room created, changed or deleted on any node is served so here within about a second —
// inside the 2 s the rooms API promises, with room for a slow read. Unlike the interval jobs of ./scheduler.ts
// there is no leader lock: each node keeps its own rooms.

import type { Logger } from 'pino';
import { ROOM_CHECK_INTERVAL_MS } from '../domain/room-sync.ts';

export interface RoomPollingOptions {
  sync: () => Promise<void>;
  log: Pick<Logger, 'warn' | 'info'>;
  intervalMs?: number;
}

export interface RoomPolling {
  /** No look starts after this call; resolves once the one in flight, if any, has finished. */
  stop(): Promise<void>;
}

/** Looks `intervalMs` from now (the rooms were loaded at start) and again `intervalMs` after each look ends. */
export function pollStoredRooms(options: RoomPollingOptions): RoomPolling {
  const intervalMs = options.intervalMs ?? ROOM_CHECK_INTERVAL_MS;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  // While the store is unreachable every look fails the same way: say so when it starts and when it ends.
  let failing = false;

  const look = async () => {
    try {
      await options.sync();
      if (failing) options.log.info('rooms follow the store again');
      failing = false;
    } catch (error) {
      if (!failing) options.log.warn({ err: error }, 'cannot follow the rooms of the store; serving the rooms known so far');
      failing = true;
    }
  };
  const scheduleNext = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = look().finally(scheduleNext);
    }, intervalMs);
    timer.unref();
  };
  scheduleNext();

  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
