// The Lua scripts of the Redis store and one typed caller per script (BullMQ's layout: one file per
// operation in ./lua, shared fragments in ./lua/includes pulled in by a `--- @include "name"` line).
// ioredis' defineCommand sends EVALSHA and falls back to EVAL on NOSCRIPT, so a script is transferred once
// per connection, and again only after the server lost its script cache (restart, SCRIPT FLUSH).

import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';
import type { AdmissionSnapshot, LeaveResult, ServingMove } from '../../domain/ports/store.ts';
import { runAndWait } from './replica-waits.ts';

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
  /** Positions given up with leave_queue (score = member = position). */
  leftPositions: string;
  /** The gate's shared "last seen" of sessions: request ID -> epoch ms (see lua/renewSession.lua). */
  lastSeen: string;
  /** Pre-queue entries: request ID -> "<join order>:<entry time>[:L]" (see lua/joinPrequeue.lua). */
  prequeue: string;
  /** Pre-queue request IDs in join order. */
  prequeueList: string;
  /** The room's draw. */
  draw: string;
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

/**
 * Every script with its number of KEYS; read-only scripts may be routed to replicas by a cluster client.
 * `confirm`: a read that answers a visitor, confirmed on the replicas like a write (replica-waits.ts).
 */
const SCRIPTS = {
  syncExpirySwitch: { keys: 1 },
  assignPositions: { keys: 3 },
  assignPositionsIfAbsent: { keys: 3 },
  getPosition: { keys: 2, readOnly: true, confirm: true },
  incrementServing: { keys: 2 },
  getClaimContext: { keys: 6, readOnly: true, confirm: true },
  issueTokenIfAbsent: { keys: 7 },
  closeSession: { keys: 3 },
  renewSession: { keys: 4 },
  advanceExpiry: { keys: 5 },
  resetEvent: { keys: 15 },
  addSigningKeyIfNone: { keys: 1 },
  tryAcquireLock: { keys: 1 },
  claimSecret: { keys: 1 },
  countInWindow: { keys: 2 },
  useOnce: { keys: 1 },
  holdUntil: { keys: 1 },
  replaceSecret: { keys: 1 },
  saveAuthorization: { keys: 2 },
  claimTokenPosition: { keys: 4 },
  countClosedSession: { keys: 2 },
  // ---- leaving the queue and automatic admission ----
  leaveQueue: { keys: 4 },
  incrementServingWithinQueue: { keys: 2 },
  getAdmissionSnapshot: { keys: 5, readOnly: true },
  // Pre-queue and the draw
  commitDraw: { keys: 1 },
  joinPrequeue: { keys: 6 },
  readPrequeue: { keys: 3, readOnly: true },
  getPrequeueEntry: { keys: 2, readOnly: true, confirm: true },
  startDraw: { keys: 3 },
  numberDrawn: { keys: 5 },
  numberLateArrivals: { keys: 6 },
  leavePrequeue: { keys: 3 },
  // rooms at runtime
  putRoom: { keys: 3 },
  getRoom: { keys: 2, readOnly: true },
  listRooms: { keys: 3, readOnly: true },
  deleteRoomSettings: { keys: 3 },
  /** Every key of the room, however many there are (a key added to EventKeys later is deleted too). */
  deleteRoomData: { keys: 'any' },
} as const satisfies Record<string, { keys: number | 'any'; readOnly?: boolean; confirm?: boolean }>;

type ScriptName = keyof typeof SCRIPTS;

const INCLUDE = /^--- @include "([\w-]+)"$/gm;

function loadLua(name: string): string {
  const source = readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
  return source.replace(INCLUDE, (_line, include: string) =>
    readFileSync(new URL(`./lua/includes/${include}.lua`, import.meta.url), 'utf8'),
  );
}

/**
 * The write fence, run before every writing script: its last argument is the latest time (ms on the Redis
 * server's clock) at which the caller still waits for the answer; a script that runs later (it sat in a
 * socket buffer of a paused Redis, or was re-sent) changes nothing. Removed from ARGV, so the script proper
 * sees its own arguments only. An empty fence (never sent by RedisStore) means "no deadline".
 */
export const FENCE_PROLOGUE = `local anteroom_fence = tonumber(table.remove(ARGV))
if anteroom_fence then
  local anteroom_time = redis.call('TIME')
  if tonumber(anteroom_time[1]) * 1000 + math.floor(tonumber(anteroom_time[2]) / 1000) > anteroom_fence then
    return redis.error_reply('FENCED the caller gave up on this write before it ran')
  end
end
`;

/** How a writing script is fenced and acknowledged (see RedisStore). */
export interface WriteGuard {
  /** The fence argument for a write sent now: a deadline on the Redis server's clock (ms), as text. */
  fence(): string;
  /** With `count` > 0, a write is answered only after WAIT saw it on `count` replicas within `timeoutMs`. */
  replicas?: { count: number; timeoutMs: number } | undefined;
}

/** No fence, no WAIT: for tests of the scripts themselves. */
const UNGUARDED: WriteGuard = { fence: () => '' };

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
  left: boolean;
}

export type RawIssueResult =
  | { outcome: 'existing'; token: string }
  | { outcome: 'issued'; position: number }
  | { outcome: 'expired' }
  | { outcome: 'no-position' }
  | { outcome: 'left' };

/** Composite store: the Redis half of issuing a token set (see claimTokenPosition.lua). */
export type RawTokenClaim =
  | { outcome: 'claimed'; position: number; generation: number }
  | { outcome: 'expired' }
  | { outcome: 'no-position' }
  | { outcome: 'left' };

export interface RawExpiryAdvance {
  previousMaxExpired: number;
  maxExpired: number;
  newlyExpiredUnclaimed: number;
  previousServing: number;
  serving: number;
}

export interface DrawSeedArgs {
  seed: string;
  commitment: string;
  algorithm: string;
}

/** A pre-queue entry as stored: its value is "<join order>:<entry time>[:L]". */
export interface RawPrequeueEntry {
  requestId: Buffer;
  value: string;
  position: number | null;
}

export class RedisScripts {
  private readonly client: RedisClient;
  private readonly guard: WriteGuard;

  constructor(client: RedisClient, guard: WriteGuard = UNGUARDED) {
    this.client = client;
    this.guard = guard;
    for (const [name, definition] of Object.entries(SCRIPTS) as [ScriptName, { keys: number | 'any'; readOnly?: boolean }][]) {
      const readOnly = 'readOnly' in definition && definition.readOnly;
      client.defineCommand(commandName(name), {
        lua: readOnly ? loadLua(name) : FENCE_PROLOGUE + loadLua(name),
        // Without numberOfKeys, ioredis takes the number of keys as the first argument of each call.
        ...(definition.keys === 'any' ? {} : { numberOfKeys: definition.keys }),
        readOnly: definition.readOnly ?? false,
      });
    }
  }

  private run(name: ScriptName, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    const definition: { keys: number | 'any'; readOnly?: boolean; confirm?: boolean } = SCRIPTS[name];
    const expected = definition.keys;
    if (expected !== 'any' && keys.length !== expected) throw new Error(`${name}.lua takes ${expected} keys`);
    const writes = !definition.readOnly;
    const all: ScriptArg[] = [...(expected === 'any' ? [keys.length] : []), ...keys, ...args];
    if (writes) all.push(this.guard.fence());
    const replicas = this.guard.replicas;
    const confirms = writes || ('confirm' in definition && definition.confirm === true);
    if (confirms && replicas && replicas.count > 0) return runAndWait(this.client, commandName(name), all, keys[0] as string, replicas);
    const command = (this.client as unknown as Record<string, ScriptCommand>)[commandName(name)] as ScriptCommand;
    return command.call(this.client, ...all);
  }

  /** Like run, with every string of the reply as a Buffer (for replies that carry raw request IDs). */
  private runBuffer(name: ScriptName, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    if (keys.length !== SCRIPTS[name].keys) throw new Error(`${name}.lua takes ${SCRIPTS[name].keys} keys`);
    if (!('readOnly' in SCRIPTS[name] && SCRIPTS[name].readOnly)) throw new Error(`${name}.lua writes: use run()`);
    const commands = this.client as unknown as Record<string, ScriptCommand>;
    const command = commands[`${commandName(name)}Buffer`] as ScriptCommand;
    return command.call(this.client, ...keys, ...args);
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

  /**
   * The stored token set of `requestId` as the tokens hash holds it (status, position, claims), or null: one HGET,
   * confirmed on the replicas like the claim context it stands in for (a re-claim answered from memory).
   */
  async tokenField(k: EventKeys, requestId: Buffer): Promise<string | null> {
    const replicas = this.guard.replicas;
    const reply =
      replicas && replicas.count > 0 ? await runAndWait(this.client, 'hget', [k.tokens, requestId], k.tokens, replicas) : await this.client.hget(k.tokens, requestId);
    return isNil(reply) ? null : String(reply);
  }

  async getClaimContext(k: EventKeys, requestId: Buffer): Promise<RawClaimContext | null> {
    const reply = await this.run(
      'getClaimContext',
      [k.counters, k.positions, k.runs, k.history, k.tokens, k.leftPositions],
      [requestId],
    );
    if (isNil(reply)) return null;
    const [position, entryTime, serving, servedAt, since, maxExpired, token, left] = reply as unknown[];
    return {
      position: Number(position),
      entryTime: Number(entryTime),
      serving: Number(serving),
      servedAt: optionalNumber(servedAt),
      expiryEnabledSince: optionalNumber(since),
      maxExpired: Number(maxExpired),
      token: isNil(token) ? null : String(token),
      left: Number(left) === 1,
    };
  }

  async issueTokenIfAbsent(k: EventKeys, requestId: Buffer, exp: number, claims: string): Promise<RawIssueResult> {
    const reply = (await this.run(
      'issueTokenIfAbsent',
      [k.counters, k.positions, k.tokens, k.tokensByExp, k.openByExp, k.tokenPositions, k.leftPositions],
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
      case 'left':
        return { outcome };
      default:
        throw new Error(`issueTokenIfAbsent.lua answered ${String(outcome)}`);
    }
  }

  async closeSession(k: EventKeys, requestId: Buffer, status: 1 | -1): Promise<boolean> {
    const reply = await this.run('closeSession', [k.counters, k.tokens, k.openByExp], [requestId, String(status)]);
    return Number(reply) === 1;
  }

  /** renewSession.lua; `externalIatMs` when the token set lives outside Redis (the composite store). */
  async renewSession(
    k: EventKeys,
    requestId: Buffer,
    nowMs: number,
    idleBeforeMs: number | null,
    touch: boolean,
    externalIatMs?: number,
  ): Promise<{ outcome: 'open'; lastSeen: number } | { outcome: 'ended' | 'closed' | 'no-session' | 'idle' }> {
    const reply = (await this.run(
      'renewSession',
      [k.counters, k.tokens, k.openByExp, k.lastSeen],
      [requestId, String(nowMs), idleBeforeMs === null ? '' : String(idleBeforeMs), touch ? '1' : '0', externalIatMs === undefined ? '' : String(externalIatMs)],
    )) as unknown[];
    const outcome = String(reply[0]);
    if (outcome === 'open') return { outcome, lastSeen: Number(reply[1]) };
    return { outcome: outcome as 'ended' | 'closed' | 'no-session' | 'idle' };
  }

  async advanceExpiry(
    k: EventKeys,
    cutoff: number,
    incrServing: boolean,
    now: number,
  ): Promise<RawExpiryAdvance> {
    const reply = (await this.run(
      'advanceExpiry',
      [k.counters, k.runs, k.history, k.tokenPositions, k.leftPositions],
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
        k.authorizations, k.closedSessions, k.leftPositions, k.prequeue, k.prequeueList, k.draw, k.lastSeen,
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

  async countInWindow(currentKey: string, previousKey: string, by: number, keepMs: number): Promise<[number, number]> {
    const [current, previous] = (await this.run('countInWindow', [currentKey, previousKey], [by, keepMs])) as [number, number];
    return [Number(current), Number(previous)];
  }

  async useOnce(key: string, keepMs: number): Promise<boolean> {
    return Number(await this.run('useOnce', [key], [keepMs])) === 1;
  }

  async holdUntil(key: string, untilMs: number, keepMs: number): Promise<number> {
    return Number(await this.run('holdUntil', [key], [Math.trunc(untilMs), keepMs]));
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
    const reply = (await this.run(
      'claimTokenPosition',
      [k.counters, k.positions, k.tokenPositions, k.leftPositions],
      [requestId],
    )) as [
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
      case 'left':
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

  // ---- leaving the queue and automatic admission ----

  async leaveQueue(k: EventKeys, requestId: Buffer): Promise<LeaveResult> {
    const reply = (await this.run(
      'leaveQueue',
      [k.counters, k.positions, k.tokenPositions, k.leftPositions],
      [requestId],
    )) as [string, unknown?];
    const [outcome, position] = reply;
    switch (outcome) {
      case 'left':
        return { outcome, position: Number(position) };
      case 'no-position':
      case 'already-left':
      case 'claimed':
      case 'expired':
        return { outcome };
      default:
        throw new Error(`leaveQueue.lua answered ${String(outcome)}`);
    }
  }

  async incrementServingWithinQueue(k: EventKeys, by: number, now: number, ifServing?: number): Promise<ServingMove> {
    const condition = ifServing === undefined ? '' : Math.trunc(ifServing);
    const reply = (await this.run('incrementServingWithinQueue', [k.counters, k.history], [Math.trunc(by), now, condition])) as unknown[];
    const [previousServing, serving] = reply.map(Number);
    return { previousServing: previousServing as number, serving: serving as number };
  }

  async getAdmissionSnapshot(k: EventKeys, now: number, windowStart: number): Promise<AdmissionSnapshot> {
    const reply = (await this.run(
      'getAdmissionSnapshot',
      [k.counters, k.history, k.tokenPositions, k.leftPositions, k.openByExp],
      [now, windowStart],
    )) as unknown[];
    const [queue, serving, reachedInWindow, reachedThisSecond, awaitingClaim, activeSessions] = reply.map(Number);
    return {
      queue: queue as number,
      serving: serving as number,
      reachedInWindow: reachedInWindow as number,
      reachedThisSecond: reachedThisSecond as number,
      awaitingClaim: awaitingClaim as number,
      activeSessions: activeSessions as number,
    };
  }

  // ---- Pre-queue and the draw ----

  /** The draw hash as a flat [field, value, ...] list. */
  async commitDraw(k: EventKeys, seed: DrawSeedArgs): Promise<string[]> {
    return ((await this.run('commitDraw', [k.draw], [seed.seed, seed.commitment, seed.algorithm])) as unknown[]).map(String);
  }

  /** One number per join: its position, or 0 while it waits in the pre-queue. */
  async joinPrequeue(k: EventKeys, joins: readonly JoinArgs[], seed: DrawSeedArgs): Promise<number[]> {
    const args: ScriptArg[] = [seed.seed, seed.commitment, seed.algorithm];
    for (const join of joins) args.push(join.requestId, String(Math.trunc(join.entryTime)));
    const reply = (await this.run(
      'joinPrequeue',
      [k.counters, k.positions, k.runs, k.prequeue, k.prequeueList, k.draw],
      args,
    )) as unknown[];
    return reply.map(Number);
  }

  async readPrequeue(k: EventKeys, after: number, limit: number): Promise<RawPrequeueEntry[]> {
    const reply = (await this.runBuffer('readPrequeue', [k.prequeueList, k.prequeue, k.positions], [after, limit])) as unknown[];
    const entries: RawPrequeueEntry[] = [];
    for (let i = 0; i + 2 < reply.length; i += 3) {
      const position = reply[i + 2];
      entries.push({
        requestId: reply[i] as Buffer,
        value: String(reply[i + 1]),
        position: isNil(position) ? null : Number(String(position)),
      });
    }
    return entries;
  }

  async getPrequeueEntry(k: EventKeys, requestId: Buffer): Promise<{ value: string; position: number | null } | null> {
    const reply = await this.run('getPrequeueEntry', [k.prequeue, k.positions], [requestId]);
    if (isNil(reply)) return null;
    const [value, position] = reply as [unknown, unknown];
    return { value: String(value), position: optionalNumber(position) };
  }

  async startDraw(k: EventKeys, seed: DrawSeedArgs): Promise<string[]> {
    const reply = await this.run('startDraw', [k.counters, k.prequeueList, k.draw], [seed.seed, seed.commitment, seed.algorithm]);
    return (reply as unknown[]).map(String);
  }

  /** The draw hash after the call, or null when the room has no draw. */
  async numberDrawn(k: EventKeys, expectedProgress: number, requestIds: readonly Buffer[]): Promise<string[] | null> {
    const reply = await this.run(
      'numberDrawn',
      [k.counters, k.positions, k.runs, k.prequeue, k.draw],
      [expectedProgress, ...requestIds],
    );
    return isNil(reply) ? null : (reply as unknown[]).map(String);
  }

  async numberLateArrivals(k: EventKeys, limit: number): Promise<string[] | null> {
    const reply = await this.run(
      'numberLateArrivals',
      [k.counters, k.positions, k.runs, k.prequeue, k.prequeueList, k.draw],
      [limit],
    );
    return isNil(reply) ? null : (reply as unknown[]).map(String);
  }

  async leavePrequeue(k: EventKeys, requestId: Buffer): Promise<string> {
    return String(await this.run('leavePrequeue', [k.positions, k.prequeue, k.draw], [requestId]));
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
