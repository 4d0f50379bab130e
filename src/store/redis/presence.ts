// Presence on Redis (issue 34; the port: src/domain/ports/presence.ts). Keys, under the room's hash tag (so a
// Cluster keeps them in the room's slot) and its reset generation G (the counters' 'g'):
//   ar:{E}:pw:G:<W>:<i>  bitmap   positions that beat in presence window i (W seconds long): one SETBIT per
//                                 position per node per flush (lua/presence/presenceMarkSeen.lua); expires after 14 W
//   ar:{E}:pb:G          bitmap   positions that ever beat (the others are never absent)
//   ar:{E}:pi:G          zset     the window keys written (score: the window's first second), for deletion
//   ar:{E}:pv:G          bitmap   scratch: the absent positions, from the windows a timeout reaches back to
//                                 (BITOP OR), inverted, AND the beating ones; built by presenceView.lua and
//                                 deleted in the same script
//   ar:{E}:ps:G          bitmap   positions the counter passed while they were absent (presenceRecordTick.lua)
//   ar:{E}:pt:G          hash     k<second> → positions skipped that second (last 120 s); ns → the no-show
//                                 boundary; la → late arrivals
// A reset deletes the generation's keys (resetEvent.lua), and so does deleteRoomData (deleteRoomData.lua; both
// through lua/includes/presenceKeys.lua).
// The scripts write only soft state: they carry the write fence like every writing script, and are never
// followed by WAIT (a lost mark costs a visitor a few seconds of presence, never a place).

import type { PresenceQuery, PresenceStore, PresenceView, TickRecord } from '../../domain/ports/presence.ts';
import { readFileSync } from 'node:fs';
import { FENCE_PROLOGUE, type RedisClient } from './scripts.ts';

const SCRIPTS = {
  presenceMarkSeen: 1,
  presenceView: 4,
  presenceRecordTick: 3,
  presenceRecordClaim: 1,
} as const;
type ScriptName = keyof typeof SCRIPTS;
type ScriptArg = string | number;

export interface RedisPresenceOptions {
  /** The store's current client (a new one after the last ended: ./connection.ts). */
  client: () => RedisClient;
  /** The store's key prefix ("ar:"). */
  prefix: string;
  /** The store's call wrapper (connection checks, timeout, StoreUnavailableError). */
  call: <T>(operation: () => Promise<T>) => Promise<T>;
  /** The write fence argument for a script sent now (RedisStore's WriteFenceClock). */
  fence: () => string;
}

export class RedisPresence implements PresenceStore {
  readonly inProcess = false;
  private readonly options: RedisPresenceOptions;
  private readonly lua = new Map<string, string>();
  /** The clients the scripts are defined on (the store may replace its client: ./connection.ts). */
  private readonly defined = new WeakSet<RedisClient>();

  constructor(options: RedisPresenceOptions) {
    this.options = options;
    for (const name of Object.keys(SCRIPTS)) {
      this.lua.set(name, FENCE_PROLOGUE + readFileSync(new URL(`./lua/presence/${name}.lua`, import.meta.url), 'utf8'));
    }
  }

  /** The current client, with the presence scripts defined on it. */
  private client(): RedisClient {
    const client = this.options.client();
    if (!this.defined.has(client)) {
      for (const [name, keys] of Object.entries(SCRIPTS)) client.defineCommand(`anteroom_${name}`, { lua: this.lua.get(name)!, numberOfKeys: keys });
      this.defined.add(client);
    }
    return client;
  }

  private base(eventId: string): string {
    return `${this.options.prefix}{${eventId}}:`;
  }

  private run(name: ScriptName, eventId: string, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    const base = this.base(eventId);
    return this.options.call(() => {
      const client = this.client();
      const command = (client as unknown as Record<string, (...a: ScriptArg[]) => Promise<unknown>>)[`anteroom_${name}`]!;
      return command.call(client, ...keys.map((key) => base + key), base, ...args, this.options.fence());
    });
  }

  async markSeen(eventId: string, positions: readonly number[], now: number, windowSeconds: number): Promise<void> {
    if (positions.length === 0) return;
    // Lua's unpack and argument lists are bounded: large batches go in slices.
    for (let i = 0; i < positions.length; i += 5000) {
      await this.run('presenceMarkSeen', eventId, ['c'], [now, windowSeconds, ...positions.slice(i, i + 5000)]);
    }
  }

  async presenceView(eventId: string, q: PresenceQuery): Promise<PresenceView> {
    const raw = (await this.run('presenceView', eventId, ['c', 'sh', 'tp', 'lp'], [
      q.now,
      q.timeout,
      q.windowSeconds,
      q.arrivalCutoff === null ? '' : q.arrivalCutoff,
      q.rateWindowStart,
      q.limit,
    ])) as unknown[];
    const n = raw.map(Number);
    return {
      serving: n[0] ?? 0,
      queue: n[1] ?? 0,
      presentWaiting: n[2] ?? 0,
      absentWaiting: n[3] ?? 0,
      countedAwaiting: n[4] ?? 0,
      noShows: n[5] ?? 0,
      arrivalBoundary: n[6] ?? 0,
      skippedInWindow: n[7] ?? 0,
      skippedThisSecond: n[8] ?? 0,
      lateArrivals: n[9] ?? 0,
      nextPresent: n.slice(10),
    };
  }

  async recordTick(eventId: string, skipped: readonly (readonly [number, number])[], now: number, noShowsThrough: number): Promise<TickRecord> {
    const raw = (await this.run('presenceRecordTick', eventId, ['c', 'tp', 'lp'], [now, noShowsThrough, ...skipped.flat()])) as unknown[];
    return { newNoShows: raw.map(Number) };
  }

  async recordClaim(eventId: string, position: number, late: boolean): Promise<boolean> {
    return Number(await this.run('presenceRecordClaim', eventId, ['c'], [position, late ? '1' : '0'])) === 1;
  }
}
