// The Lua scripts of the Redis store and one typed caller per script (BullMQ's layout: one file per
// operation in ./lua, shared fragments in ./lua/includes pulled in by a `--- @include "name"` line).
// ioredis' defineCommand sends EVALSHA and falls back to EVAL on NOSCRIPT, so a script is transferred once
// per connection, and again only after the server lost its script cache (restart, SCRIPT FLUSH).

import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

/** The keys of one event; all carry the hash tag {eventId}, so every script touches one cluster slot. */
export interface EventKeys {
  counters: string;
  positions: string;
  runs: string;
  history: string;
  tokens: string;
  tokensByExp: string;
  openByExp: string;
  tokenPositions: string;
  signingKeys: string;
  /** OpenID Connect authorization requests bound to request IDs. */
  authorizations: string;
  /** Composite store only: sessions closed in DynamoDB and already counted (request ID -> status). */
  closedSessions: string;
}

/** Rooms at runtime: the rooms' keys, under a hash tag of their own (see RedisStore.roomKeys). */
export interface RoomKeys {
  /** event ID -> settings (JSON text) */
  settings: string;
  /** event ID -> rooms version at which the room was created */
  created: string;
  /** the rooms version, bumped by every change */
  version: string;
}

type ScriptArg = string | number | Buffer;
type ScriptCommand = (...args: ScriptArg[]) => Promise<unknown>;

/** Every script with its number of KEYS; read-only scripts may be routed to replicas by a cluster client. */
const SCRIPTS = {
  syncExpirySwitch: { keys: 1 },
  assignPositions: { keys: 3 },
  assignPositionsIfAbsent: { keys: 3 },
  getPosition: { keys: 2, readOnly: true },
  incrementServing: { keys: 2 },
  getClaimContext: { keys: 5, readOnly: true },
  issueTokenIfAbsent: { keys: 6 },
  closeSession: { keys: 3 },
  advanceExpiry: { keys: 4 },
  resetEvent: { keys: 10 },
  addSigningKeyIfNone: { keys: 1 },
  tryAcquireLock: { keys: 1 },
  claimSecret: { keys: 1 },
  replaceSecret: { keys: 1 },
  saveAuthorization: { keys: 2 },
  claimTokenPosition: { keys: 3 },
  countClosedSession: { keys: 2 },
  // rooms at runtime
  putRoom: { keys: 3 },
  getRoom: { keys: 2, readOnly: true },
  listRooms: { keys: 3, readOnly: true },
  deleteRoomSettings: { keys: 3 },
  /** Every key of the room, however many there are (a key added to EventKeys later is deleted too). */
  deleteRoomData: { keys: 'any' },
} as const satisfies Record<string, { keys: number | 'any'; readOnly?: boolean }>;

type ScriptName = keyof typeof SCRIPTS;

const INCLUDE = /^--- @include "([\w-]+)"$/gm;

function loadLua(name: string): string {
  const source = readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
  return source.replace(INCLUDE, (_line, include: string) =>
    readFileSync(new URL(`./lua/includes/${include}.lua`, import.meta.url), 'utf8'),
  );
}

// Prefixed so that a client shared with other code cannot have a command of the same name.
const commandName = (name: ScriptName) => `anteroom_${name}`;

/** A Lua nil reaches us as null over RESP2 and as false over RESP3 (ioredis' default). */
const isNil = (value: unknown): value is null | false | undefined =>
  value === null || value === false || value === undefined;

const optionalNumber = (value: unknown): number | null => (isNil(value) ? null : Number(value));

export interface JoinArgs {
  requestId: Buffer;
  entryTime: number;
}

export interface RawClaimContext {
  position: number;
  entryTime: number;
  serving: number;
  servedAt: number | null;
  expiryEnabledSince: number | null;
  maxExpired: number;
  /** The stored token value, if a token set was issued. */
  token: string | null;
}

export type RawIssueResult =
  | { outcome: 'existing'; token: string }
  | { outcome: 'issued'; position: number }
  | { outcome: 'expired' }
  | { outcome: 'no-position' };

/** Composite store: the Redis half of issuing a token set (see claimTokenPosition.lua). */
export type RawTokenClaim =
  | { outcome: 'claimed'; position: number; generation: number }
  | { outcome: 'expired' }
  | { outcome: 'no-position' };

export interface RawExpiryAdvance {
  previousMaxExpired: number;
  maxExpired: number;
  newlyExpiredUnclaimed: number;
  previousServing: number;
  serving: number;
}

export class RedisScripts {
  private readonly client: RedisClient;

  constructor(client: RedisClient) {
    this.client = client;
    for (const [name, definition] of Object.entries(SCRIPTS) as [ScriptName, { keys: number | 'any'; readOnly?: boolean }][]) {
      client.defineCommand(commandName(name), {
        lua: loadLua(name),
        // Without numberOfKeys, ioredis takes the number of keys as the first argument of each call.
        ...(definition.keys === 'any' ? {} : { numberOfKeys: definition.keys }),
        readOnly: definition.readOnly ?? false,
      });
    }
  }

  private run(name: ScriptName, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    const expected: number | 'any' = SCRIPTS[name].keys;
    if (expected !== 'any' && keys.length !== expected) throw new Error(`${name}.lua takes ${expected} keys`);
    const command = (this.client as unknown as Record<string, ScriptCommand>)[commandName(name)] as ScriptCommand;
    return expected === 'any' ? command.call(this.client, keys.length, ...keys, ...args) : command.call(this.client, ...keys, ...args);
  }

  async syncExpirySwitch(k: EventKeys, enabled: boolean, now: number): Promise<void> {
    await this.run('syncExpirySwitch', [k.counters], [enabled ? '1' : '0', now]);
  }

  /** Returns the first position of the batch; the others follow it. */
  async assignPositions(k: EventKeys, joins: readonly JoinArgs[]): Promise<number> {
    const args: ScriptArg[] = [];
    // Entry times are compared as strings inside the script, so they must be spelled one way.
    for (const join of joins) args.push(join.requestId, String(Math.trunc(join.entryTime)));
    return Number(await this.run('assignPositions', [k.counters, k.positions, k.runs], args));
  }

  /** One position per join, in join order; request IDs that have a position keep it. */
  async assignPositionsIfAbsent(k: EventKeys, joins: readonly JoinArgs[]): Promise<number[]> {
    const args: ScriptArg[] = [];
    for (const join of joins) args.push(join.requestId, String(Math.trunc(join.entryTime)));
    const reply = (await this.run('assignPositionsIfAbsent', [k.counters, k.positions, k.runs], args)) as unknown[];
    return reply.map(Number);
  }

  async getPosition(k: EventKeys, requestId: Buffer): Promise<{ position: number; entryTime: number } | null> {
    const reply = await this.run('getPosition', [k.positions, k.runs], [requestId]);
    if (isNil(reply)) return null;
    const [position, entryTime] = reply as [number, number];
    return { position: Number(position), entryTime: Number(entryTime) };
  }

  async incrementServing(k: EventKeys, by: number, now: number): Promise<number> {
    return Number(await this.run('incrementServing', [k.counters, k.history], [Math.trunc(by), now]));
  }

  async getClaimContext(k: EventKeys, requestId: Buffer): Promise<RawClaimContext | null> {
    const reply = await this.run(
      'getClaimContext',
      [k.counters, k.positions, k.runs, k.history, k.tokens],
      [requestId],
    );
    if (isNil(reply)) return null;
    const [position, entryTime, serving, servedAt, since, maxExpired, token] = reply as unknown[];
    return {
      position: Number(position),
      entryTime: Number(entryTime),
      serving: Number(serving),
      servedAt: optionalNumber(servedAt),
      expiryEnabledSince: optionalNumber(since),
      maxExpired: Number(maxExpired),
      token: isNil(token) ? null : String(token),
    };
  }

  async issueTokenIfAbsent(k: EventKeys, requestId: Buffer, exp: number, claims: string): Promise<RawIssueResult> {
    const reply = (await this.run(
      'issueTokenIfAbsent',
      [k.counters, k.positions, k.tokens, k.tokensByExp, k.openByExp, k.tokenPositions],
      [requestId, exp, claims],
    )) as [string, unknown?];
    const [outcome, detail] = reply;
    switch (outcome) {
      case 'existing':
        return { outcome, token: String(detail) };
      case 'issued':
        return { outcome, position: Number(detail) };
      case 'expired':
      case 'no-position':
        return { outcome };
      default:
        throw new Error(`issueTokenIfAbsent.lua answered ${String(outcome)}`);
    }
  }

  async closeSession(k: EventKeys, requestId: Buffer, status: 1 | -1): Promise<boolean> {
    const reply = await this.run('closeSession', [k.counters, k.tokens, k.openByExp], [requestId, String(status)]);
    return Number(reply) === 1;
  }

  async advanceExpiry(
    k: EventKeys,
    cutoff: number,
    incrServing: boolean,
    now: number,
  ): Promise<RawExpiryAdvance> {
    const reply = (await this.run(
      'advanceExpiry',
      [k.counters, k.runs, k.history, k.tokenPositions],
      [cutoff, incrServing ? '1' : '0', now],
    )) as unknown[];
    const [previousMaxExpired, maxExpired, newlyExpiredUnclaimed, previousServing, serving] = reply.map(Number);
    return {
      previousMaxExpired: previousMaxExpired as number,
      maxExpired: maxExpired as number,
      newlyExpiredUnclaimed: newlyExpiredUnclaimed as number,
      previousServing: previousServing as number,
      serving: serving as number,
    };
  }

  async resetEvent(k: EventKeys): Promise<void> {
    // The counters hash must come first: the script keeps its expiry switch time.
    await this.run(
      'resetEvent',
      [
        k.counters, k.positions, k.runs, k.history, k.tokens, k.tokensByExp, k.openByExp, k.tokenPositions,
        k.authorizations, k.closedSessions,
      ],
      [],
    );
  }

  /** Returns every stored key as a flat [kid, value, ...] list. */
  async addSigningKeyIfNone(k: EventKeys, kid: string, value: string): Promise<string[]> {
    return ((await this.run('addSigningKeyIfNone', [k.signingKeys], [kid, value])) as unknown[]).map(String);
  }

  async tryAcquireLock(lockKey: string, owner: string, ttlMs: number, nowMs: number, graceMs: number): Promise<boolean> {
    const reply = await this.run('tryAcquireLock', [lockKey], [owner, Math.trunc(nowMs), Math.trunc(ttlMs), graceMs]);
    return Number(reply) === 1;
  }

  async claimSecret(key: string, candidate: string): Promise<string> {
    return String(await this.run('claimSecret', [key], [candidate]));
  }

  /** Compare-and-set; null when nothing is stored under the key. */
  async replaceSecret(key: string, expected: string, next: string): Promise<string | null> {
    const reply = await this.run('replaceSecret', [key], [expected, next]);
    return isNil(reply) ? null : String(reply);
  }

  async claimTokenPosition(k: EventKeys, requestId: Buffer): Promise<RawTokenClaim> {
    const reply = (await this.run('claimTokenPosition', [k.counters, k.positions, k.tokenPositions], [requestId])) as [
      string,
      unknown?,
      unknown?,
    ];
    const [outcome, position, generation] = reply;
    switch (outcome) {
      case 'claimed':
        return { outcome, position: Number(position), generation: Number(generation) };
      case 'expired':
      case 'no-position':
        return { outcome };
      default:
        throw new Error(`claimTokenPosition.lua answered ${String(outcome)}`);
    }
  }

  async countClosedSession(k: EventKeys, requestId: Buffer, status: 1 | -1): Promise<boolean> {
    return Number(await this.run('countClosedSession', [k.counters, k.closedSessions], [requestId, String(status)])) === 1;
  }

  async saveAuthorization(k: EventKeys, requestId: Buffer, value: string): Promise<boolean> {
    return Number(await this.run('saveAuthorization', [k.positions, k.authorizations], [requestId, value])) === 1;
  }

  // ---- rooms at runtime ----

  async putRoom(k: RoomKeys, eventId: string, settings: string): Promise<'created' | 'replaced' | 'unchanged'> {
    const outcome = String(await this.run('putRoom', [k.settings, k.created, k.version], [eventId, settings]));
    if (outcome !== 'created' && outcome !== 'replaced' && outcome !== 'unchanged') throw new Error(`putRoom.lua answered ${outcome}`);
    return outcome;
  }

  async getRoom(k: RoomKeys, eventId: string): Promise<{ settings: string; createdVersion: number } | null> {
    const reply = await this.run('getRoom', [k.settings, k.created], [eventId]);
    if (isNil(reply)) return null;
    const [settings, created] = reply as [unknown, unknown];
    return { settings: String(settings), createdVersion: Number(created) };
  }

  /** The version, and the rooms as flat [event ID, value, ...] lists of settings and of creation versions. */
  async listRooms(k: RoomKeys): Promise<{ version: number; settings: string[]; created: string[] }> {
    const [version, settings, created] = (await this.run('listRooms', [k.settings, k.created, k.version], [])) as [
      unknown,
      unknown[],
      unknown[],
    ];
    return { version: Number(version), settings: settings.map(String), created: created.map(String) };
  }

  async deleteRoomSettings(k: RoomKeys, eventId: string): Promise<boolean> {
    return Number(await this.run('deleteRoomSettings', [k.settings, k.created, k.version], [eventId])) === 1;
  }

  /** Deletes every key of the room; the counters hash goes first in `keys` (see deleteRoomData.lua). */
  async deleteRoomData(k: EventKeys): Promise<void> {
    const others = Object.values(k).filter((key) => key !== k.counters);
    await this.run('deleteRoomData', [k.counters, ...others], []);
  }
}
