// Keeping bots out of the line (docs/bots.md): the rules a join and the other public writes go through before
// anything is stored, in this order:
//   1. the enqueue key: a join carrying one signed by the site (HMAC-SHA256 with the room's secret) gets the
//      one place of that key — its request ID is derived from the key, so a second join returns the same one;
//   2. a proof of work the join carries is checked (CPU only, no store call);
//   3. rate counters of the room and of the client (fixed windows in the store, shared by every node; a rate is
//      the sliding estimate over its last window): over joins_per_client_per_minute → 429 with Retry-After;
//   4. the challenge: needed always, or (auto) while the room is flooded or the client's rate passes its
//      threshold; a join without a valid solution is refused, and a solution counts once (a mark in the store).
// The room is flooded (the flood detector) while its join rate over a short window — the time in which its
// threshold allows FLOOD_SAMPLE joins, at least a second — is over room_threshold_per_minute, and for
// FLOOD_HOLD_MS after it last was (a mark in the store, so every node sees it). Difficulty doubles with each
// doubling of that rate over the threshold, up to max_difficulty.
// The client is whatever the HTTP layer names it by (its IP, behind --trust-proxy): opaque here.

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Errors, type ContractError } from './errors.ts';
import type { ProofOfWork } from './ports/proof-of-work.ts';
import type { BotDefenceStore, WindowCounts } from './ports/store.ts';
import type { BotDefenceSettings, RoomSettings } from './room-settings.ts';

/** Rates are per minute: a client's counters count in windows of a minute. */
export const RATE_WINDOW_MS = 60_000;

/** The room's rate is measured over the time in which its threshold allows this many joins… */
export const FLOOD_SAMPLE = 10;
/** …but never less than a second (nor more than a minute). */
export const MIN_FLOOD_WINDOW_MS = 1_000;
/** Once the room's rate passed its threshold, `auto` challenges everyone until it has stayed under it this long. */
export const FLOOD_HOLD_MS = 60_000;
/** A node extends the hold when less than this much of a full hold is left to run out (at most once a second under a flood). */
const HOLD_REFRESH_MS = 1_000;

/** What a join brings besides its event ID. */
export interface JoinCredentials {
  /** Who sends it (the client IP); absent when the caller does not know (Lambda without a source IP). */
  client?: string | undefined;
  /** An ALTCHA payload (base64 JSON of the challenge and its solution). */
  proofOfWork?: string | undefined;
  /** An enqueue key signed by the site. */
  enqueueKey?: string | undefined;
  /** The request's Idempotency-Key (src/domain/idempotency-key.ts): a retry with it gets the same place. */
  idempotencyKey?: string | undefined;
}

/** What the defence did, for metrics (challenges issued/solved/failed, joins refused by limits). */
export type BotDefenceOutcome =
  | 'challenge_issued'
  | 'challenge_solved'
  | 'challenge_missing'
  | 'challenge_invalid'
  | 'challenge_replayed'
  | 'join_limited'
  | 'write_limited'
  | 'enqueue_key_refused'
  | 'parked'
  | 'flood_detected';

/** Every outcome, in the order the control panel and the docs list them. */
export const BOT_DEFENCE_OUTCOMES: readonly BotDefenceOutcome[] = [
  'challenge_issued',
  'challenge_solved',
  'challenge_missing',
  'challenge_invalid',
  'challenge_replayed',
  'join_limited',
  'write_limited',
  'enqueue_key_refused',
  'parked',
  'flood_detected',
];

/** What a join may do after the defence: join as usual, take an enqueue key's place, or be parked (infinite queue). */
export type JoinVerdict = { kind: 'join' } | { kind: 'keyed'; requestId: string } | { kind: 'parked' };

/** A place in the infinite queue, as its request ID carries it. */
export interface ParkedPlace {
  position: number;
  /** Epoch seconds. */
  entryTime: number;
}

// ---- pure rules ----

/**
 * The rate over the last minute: the current window's count plus the previous window's, weighted by how much of
 * it is still within the last minute (the estimate of a sliding window from two fixed ones).
 */
export function ratePerMinute(counts: WindowCounts, nowMs: number, windowMs = RATE_WINDOW_MS): number {
  const elapsed = 1 - Math.max(0, Math.min(1, (counts.endsAtMs - nowMs) / windowMs));
  return counts.current + counts.previous * (1 - elapsed);
}

/**
 * Whole seconds until the estimate falls to `limit` or below, at least 1. Retry-After is this for limit − 1:
 * refused attempts count too (a client that ignores Retry-After stays out), so the retry itself must fit.
 */
export function secondsUntilUnder(counts: WindowCounts, limit: number, nowMs: number, windowMs = RATE_WINDOW_MS): number {
  const untilWindowEnds = counts.endsAtMs - nowMs;
  let waitMs: number;
  if (counts.current > limit || counts.previous === 0) {
    // The current window alone is over: at its end it becomes the previous one, weighted down from 1.
    waitMs = untilWindowEnds + (counts.current > limit ? windowMs * (1 - limit / counts.current) : 0);
  } else {
    // previous × (1 − elapsed) + current ≤ limit ⇔ elapsed ≥ 1 − (limit − current) / previous
    const elapsedNeeded = 1 - (limit - counts.current) / counts.previous;
    waitMs = elapsedNeeded * windowMs - (windowMs - untilWindowEnds);
  }
  return Math.max(1, Math.ceil(waitMs / 1000));
}

/**
 * The window of the room's flood counter: the time in which `room_threshold_per_minute` allows FLOOD_SAMPLE
 * joins, between a second and a minute (600 a minute, the default: one second; 100 a minute: six seconds).
 */
export function floodWindowMs(defence: BotDefenceSettings): number {
  const ms = Math.ceil((RATE_WINDOW_MS * FLOOD_SAMPLE) / defence.room_threshold_per_minute);
  return Math.max(MIN_FLOOD_WINDOW_MS, Math.min(RATE_WINDOW_MS, ms));
}

/** The room's join rate, per minute, from its flood counter (the sliding estimate over the last flood window). */
export function floodRate(defence: BotDefenceSettings, counts: WindowCounts, nowMs: number): number {
  const windowMs = floodWindowMs(defence);
  return (ratePerMinute(counts, nowMs, windowMs) * RATE_WINDOW_MS) / windowMs;
}

/** The difficulty now: the base, doubled at each doubling of the room's join rate over its threshold, capped. */
export function floodDifficulty(defence: BotDefenceSettings, roomRate: number): number {
  const threshold = defence.room_threshold_per_minute;
  if (roomRate <= threshold) return defence.difficulty;
  const doublings = Math.ceil(Math.log2(roomRate / threshold));
  return Math.min(defence.max_difficulty, defence.difficulty * 2 ** Math.min(doublings, 40));
}

/**
 * Whether a join must carry a solved challenge: `auto` asks while the room is flooded — its rate is over the
 * threshold now, or was within the hold (`flooded`) — or while the client's rate is over its own threshold.
 */
export function challengeNeeded(defence: BotDefenceSettings, roomRate: number, clientRate: number | undefined, flooded = false): boolean {
  switch (defence.challenge) {
    case 'off':
      return false;
    case 'always':
      return true;
    case 'auto':
      return flooded || roomRate > defence.room_threshold_per_minute || (clientRate ?? 0) > defence.client_threshold_per_minute;
  }
}

// ---- enqueue keys: <base64url(JSON {event_id, key, exp})>.<base64url(HMAC-SHA256(secret, first part))> ----

export interface EnqueueKeyClaims {
  event_id: string;
  /** The identity the site gives one place: a user ID, an order ID, a hash of an e-mail address. */
  key: string;
  /** Epoch seconds after which the enqueue key is refused. */
  exp: number;
}

const MAX_ENQUEUE_KEY_LENGTH = 2048;
const MAX_IDENTITY_LENGTH = 256;

const hmac = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest();

/** What a site does to give a visitor an enqueue key (docs/bots.md shows the same in a few lines). */
export function signEnqueueKey(secret: string, claims: EnqueueKeyClaims): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${hmac(secret, payload).toString('base64url')}`;
}

/** The identity of a valid enqueue key for this room (signature compared in constant time), or undefined. */
export function readEnqueueKey(secret: string, token: string, eventId: string, nowSeconds: number): string | undefined {
  if (token.length > MAX_ENQUEUE_KEY_LENGTH) return undefined;
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return undefined;
  const payload = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = hmac(secret, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null) return undefined;
  const { event_id: room, key, exp } = claims as Record<string, unknown>;
  if (room !== eventId || typeof exp !== 'number' || !(exp > nowSeconds)) return undefined;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDENTITY_LENGTH) return undefined;
  return key;
}

/**
 * The request ID of an identity's one place: a UUID v4 made of the HMAC of the room and the identity under the
 * room's secret (122 bits nobody without the secret can compute, like a random one), so every join with the key,
 * on any node, names the same place.
 */
export function requestIdForKey(secret: string, eventId: string, key: string): string {
  const bytes = hmac(secret, `anteroom request id\u0000${eventId}\u0000${key}`).subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// ---- the infinite queue: places that are never served, stored nowhere ----
// A parked request ID looks like any UUID v4, but carries its place and entry time (masked) and a 24-bit tag,
// both keyed by the server's secret, so the server answers for it without storing it. Bytes: 0–5 and 9–10 the
// masked place and time, 11–13 a random nonce, 7, 14, 15 the tag; 6 and 8 hold the version and variant bits.

const PAYLOAD_BYTES = [0, 1, 2, 3, 4, 5, 9, 10];
const TAG_BYTES = [7, 14, 15];

function parkingMask(secret: string, eventId: string, nonce: Buffer): Buffer {
  return createHmac('sha256', secret).update(`anteroom park mask\u0000${eventId}\u0000`).update(nonce).digest().subarray(0, 8);
}

function parkingTag(secret: string, eventId: string, nonce: Buffer, payload: Buffer): Buffer {
  return createHmac('sha256', secret).update(`anteroom park tag\u0000${eventId}\u0000`).update(nonce).update(payload).digest().subarray(0, 3);
}

const uuidOf = (bytes: Buffer) => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

export function parkedRequestId(secret: string, eventId: string, place: ParkedPlace): string {
  const bytes = randomBytes(16);
  const nonce = bytes.subarray(11, 14);
  const payload = Buffer.alloc(8);
  payload.writeUInt32BE(place.position >>> 0, 0);
  payload.writeUInt32BE(place.entryTime >>> 0, 4);
  const mask = parkingMask(secret, eventId, nonce);
  PAYLOAD_BYTES.forEach((at, i) => (bytes[at] = (payload[i] as number) ^ (mask[i] as number)));
  const tag = parkingTag(secret, eventId, nonce, payload);
  TAG_BYTES.forEach((at, i) => (bytes[at] = tag[i] as number));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  return uuidOf(bytes);
}

/** The place a parked request ID (lowercase UUID) carries, or undefined for any other ID. */
export function readParkedRequestId(secret: string, eventId: string, requestId: string): ParkedPlace | undefined {
  const bytes = Buffer.from(requestId.replaceAll('-', ''), 'hex');
  if (bytes.length !== 16) return undefined;
  const nonce = bytes.subarray(11, 14);
  const mask = parkingMask(secret, eventId, nonce);
  const payload = Buffer.from(PAYLOAD_BYTES.map((at, i) => (bytes[at] as number) ^ (mask[i] as number)));
  const tag = Buffer.from(TAG_BYTES.map((at) => bytes[at] as number));
  if (!timingSafeEqual(tag, parkingTag(secret, eventId, nonce, payload))) return undefined;
  return { position: payload.readUInt32BE(0), entryTime: payload.readUInt32BE(4) };
}

// ---- the defence ----

export interface BotDefenceDeps {
  store: BotDefenceStore;
  proofOfWork: ProofOfWork;
  /** ms since the epoch. */
  clock: () => number;
  onOutcome?: ((outcome: BotDefenceOutcome, eventId: string | undefined) => void) | undefined;
  /** Keys the infinite queue's request IDs; without it a room's infinite_queue refuses as if it were off. */
  parkingSecret?: string | undefined;
}

export class BotDefence {
  private readonly store: BotDefenceStore;
  private readonly proofOfWork: ProofOfWork;
  private readonly clock: () => number;
  private readonly onOutcome: (outcome: BotDefenceOutcome, eventId: string | undefined) => void;
  private readonly parkingSecret: string | undefined;
  /** The outcomes of this node since it started, by room (the control panel's figures; /metrics has the same). */
  private readonly tallies = new Map<string, Record<BotDefenceOutcome, number>>();

  constructor(deps: BotDefenceDeps) {
    this.parkingSecret = deps.parkingSecret;
    this.store = deps.store;
    this.proofOfWork = deps.proofOfWork;
    this.clock = deps.clock;
    const report = deps.onOutcome ?? (() => {});
    this.onOutcome = (outcome, eventId) => {
      if (eventId !== undefined) {
        let tally = this.tallies.get(eventId);
        if (!tally) this.tallies.set(eventId, (tally = emptyTally()));
        tally[outcome]++;
      }
      report(outcome, eventId);
    };
  }

  /** What the defence did in the room on this node since it started, every outcome (0 when none). */
  tally(eventId: string): Record<BotDefenceOutcome, number> {
    return { ...(this.tallies.get(eventId) ?? emptyTally()) };
  }

  /**
   * Checks a join to `room` before anything of it is stored; throws the refusal. Says whether the join goes on
   * as usual, takes the place of its enqueue key, or is parked in the infinite queue (`infinite_queue`: a failed
   * proof of work or a client over its limit is answered like a join, with a place that is never served).
   */
  async checkJoin(room: RoomSettings, credentials: JoinCredentials): Promise<JoinVerdict> {
    try {
      const requestId = await this.judgeJoin(room, credentials);
      return requestId === undefined ? { kind: 'join' } : { kind: 'keyed', requestId };
    } catch (error) {
      const parks =
        room.bot_defence?.infinite_queue === true &&
        this.parkingSecret !== undefined &&
        (error === PROOF_INVALID || error === PROOF_USED || error instanceof TooManyJoins);
      if (!parks) throw error instanceof TooManyJoins ? error.refusal : error === PROOF_INVALID ? Errors.proofOfWorkInvalid() : error === PROOF_USED ? Errors.proofOfWorkUsed() : error;
      this.onOutcome('parked', room.event_id);
      return { kind: 'parked' };
    }
  }

  /** The request ID of a parked place for the room, at `position` given now. */
  parkedRequestId(eventId: string, position: number): string {
    return parkedRequestId(this.parkingSecret as string, eventId, { position, entryTime: Math.floor(this.clock() / 1000) });
  }

  /** The place of a parked request ID of the room, or undefined (any other ID, or no infinite queue here). */
  parkedPlace(room: RoomSettings, requestId: string): ParkedPlace | undefined {
    if (room.bot_defence?.infinite_queue !== true || this.parkingSecret === undefined) return undefined;
    return readParkedRequestId(this.parkingSecret, room.event_id, requestId);
  }

  private async judgeJoin(room: RoomSettings, credentials: JoinCredentials): Promise<string | undefined> {
    const defence = room.bot_defence;
    const eventId = room.event_id;
    const requestId = this.checkEnqueueKey(room, credentials.enqueueKey);
    if (!defence) return requestId;

    // A solution the join carries is checked first: CPU only, nothing stored yet.
    const proof = credentials.proofOfWork === undefined ? undefined : await this.proofOfWork.verify(eventId, credentials.proofOfWork);
    const nowMs = this.clock();
    if (proof && (!proof.ok || proof.expiresAtMs <= nowMs)) {
      this.onOutcome('challenge_invalid', eventId);
      throw PROOF_INVALID;
    }

    const auto = defence.challenge === 'auto';
    const countsClient = credentials.client !== undefined && (defence.joins_per_client_per_minute !== undefined || auto);
    const [clientCounts, roomCounts, heldUntilMs] = await Promise.all([
      countsClient ? this.store.countInWindow(clientJoinsCounter(eventId, credentials.client as string), 1, RATE_WINDOW_MS, nowMs) : undefined,
      defence.challenge === 'off' ? undefined : this.store.countInWindow(roomJoinsCounter(eventId, floodWindowMs(defence)), 1, floodWindowMs(defence), nowMs),
      auto ? this.store.holdUntil(floodHold(eventId), 0, nowMs) : 0,
    ]);
    const roomRate = roomCounts ? floodRate(defence, roomCounts, nowMs) : 0;
    if (auto && roomRate > defence.room_threshold_per_minute && heldUntilMs < nowMs + FLOOD_HOLD_MS - HOLD_REFRESH_MS) {
      // The flood detector trips (or is still tripped): the hold runs a full FLOOD_HOLD_MS from now, on every node.
      const heldBefore = await this.store.holdUntil(floodHold(eventId), nowMs + FLOOD_HOLD_MS, nowMs);
      if (heldBefore <= nowMs) this.onOutcome('flood_detected', eventId);
    }
    const limit = defence.joins_per_client_per_minute;
    if (limit !== undefined && clientCounts && ratePerMinute(clientCounts, nowMs) > limit) {
      this.onOutcome('join_limited', eventId);
      throw new TooManyJoins(Errors.tooManyRequests(secondsUntilUnder(clientCounts, limit - 1, nowMs)));
    }
    const clientRate = clientCounts ? ratePerMinute(clientCounts, nowMs) : undefined;
    if (!proof) {
      if (!challengeNeeded(defence, roomRate, clientRate, heldUntilMs > nowMs)) return requestId;
      this.onOutcome('challenge_missing', eventId);
      throw Errors.proofOfWorkRequired();
    }
    // A valid solution counts once, on whichever node it reaches first.
    if (!(await this.store.useOnce(`pow:${eventId}:${proof.challengeId}`, proof.expiresAtMs, nowMs))) {
      this.onOutcome('challenge_replayed', eventId);
      throw PROOF_USED;
    }
    this.onOutcome('challenge_solved', eventId);
    return requestId;
  }

  /** A challenge for the room (GET /challenge), as hard as its join rate makes it now. */
  async challenge(room: RoomSettings): Promise<unknown> {
    const defence = room.bot_defence;
    if (!defence || defence.challenge === 'off') throw Errors.challengeNotEnabled();
    const nowMs = this.clock();
    const roomCounts = await this.store.countInWindow(roomJoinsCounter(room.event_id, floodWindowMs(defence)), 0, floodWindowMs(defence), nowMs);
    const difficulty = floodDifficulty(defence, floodRate(defence, roomCounts, nowMs));
    const issued = await this.proofOfWork.issue(room.event_id, difficulty, nowMs + defence.challenge_ttl * 1000);
    this.onOutcome('challenge_issued', room.event_id);
    return issued;
  }

  /** The server-wide limit of public writes per client (--writes-per-client-per-minute); throws 429 over it. */
  async limitWrite(client: string, perMinute: number): Promise<void> {
    const nowMs = this.clock();
    const counts = await this.store.countInWindow(`w:${clientKey(client)}`, 1, RATE_WINDOW_MS, nowMs);
    if (ratePerMinute(counts, nowMs) <= perMinute) return;
    this.onOutcome('write_limited', undefined);
    throw Errors.tooManyRequests(secondsUntilUnder(counts, perMinute - 1, nowMs));
  }

  private checkEnqueueKey(room: RoomSettings, token: string | undefined): string | undefined {
    const defence = room.bot_defence;
    const secret = defence?.enqueue_key_secret;
    if (token === undefined) {
      if (defence?.require_enqueue_key) {
        this.onOutcome('enqueue_key_refused', room.event_id);
        throw Errors.enqueueKeyRequired();
      }
      return undefined;
    }
    const key = secret === undefined ? undefined : readEnqueueKey(secret, token, room.event_id, Math.floor(this.clock() / 1000));
    if (key === undefined) {
      this.onOutcome('enqueue_key_refused', room.event_id);
      throw Errors.enqueueKeyInvalid();
    }
    return requestIdForKey(secret as string, room.event_id, key);
  }
}

const emptyTally = () => Object.fromEntries(BOT_DEFENCE_OUTCOMES.map((outcome) => [outcome, 0])) as Record<BotDefenceOutcome, number>;

/** The refusals the infinite queue may turn into parked places (judgeJoin throws them; checkJoin decides). */
const PROOF_INVALID = Symbol('invalid proof of work');
const PROOF_USED = Symbol('proof of work used');
class TooManyJoins {
  readonly refusal: ContractError;
  constructor(refusal: ContractError) {
    this.refusal = refusal;
  }
}

const roomJoinsCounter = (eventId: string, windowMs: number) => `r:${eventId}:${windowMs}`;
const floodHold = (eventId: string) => `flood:${eventId}`;
const clientJoinsCounter = (eventId: string, client: string) => `c:${eventId}:${clientKey(client)}`;

/**
 * The client as a counter name: an IP address as it is; anything else (a proxy trusted to name clients can send
 * any text) as its SHA-256, so a counter's name stays short and free of the braces of Redis hash tags.
 */
export function clientKey(client: string): string {
  return /^[0-9A-Fa-f.:]{1,45}$/.test(client) ? client : createHash('sha256').update(client).digest('hex');
}
