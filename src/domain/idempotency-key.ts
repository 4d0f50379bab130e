// The Idempotency-Key request header (IETF httpapi "The Idempotency-Key HTTP Header Field" draft) on
// POST /assign_queue_num, and the contract for refused writes (docs/distributed.md, "What a 5xx means"):
// a join that carries a key is numbered at most once, whoever asks and however often. A retry with the same
// key — after a 5xx, a timeout or a lost connection — returns the same api_request_id, so the place a refused
// call may have taken (a write applied on the primary whose replica wait failed, a reply lost with its
// connection) is the place the retry gets, never a second one.
//
// How: the key names the join's request ID (SHA-256 of a label, the room and the key, shaped as a UUID), and the
// join is numbered "if absent" (Store.assignPositionsIfAbsent: one Lua script on Redis, one transaction on
// SQLite), so the key's record IS the place, stored atomically with it and by the same write — never a separate
// step that could succeed while the place fails or the other way round. It costs no storage of its own, expires
// (KEY_WINDOW_SEC below: a retry within an hour always finds its place; a reuse a day later is a new join), and
// is scoped to the room and the client's address: the same key in another room, or from another address, is
// another join. The request ID is the
// visitor's bearer secret, so the key is one too: a client sends a fresh random value (a UUID) per join.
//
// The other POSTs of the visitor are idempotent by their request ID already (generate_token answers the same
// token set, leave_queue "already left", update_session the same status); they accept the header (checked
// like here) and need nothing more.

import { createHash } from 'node:crypto';
import { Errors } from './errors.ts';

/** The header, as Fastify names it (lowercase). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** 16 to 64 characters of [A-Za-z0-9_-] (a UUID is 36): enough entropy to be a secret, short enough to log nowhere. */
const KEY = /^[A-Za-z0-9_-]{16,64}$/;

/**
 * The key of a request, or undefined when it carries none. The draft's value is a Structured Field string
 * ("…", quotes included); a bare token is accepted too. Anything else — empty, too short or long, other
 * characters, the header twice — is a 400 that changes nothing.
 */
export function readIdempotencyKey(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw Errors.invalidIdempotencyKey();
  const trimmed = value.trim();
  const key = trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
  if (!KEY.test(key)) throw Errors.invalidIdempotencyKey();
  return key;
}

/**
 * Keys expire. Time is cut into windows of KEY_WINDOW_SEC (a day, on the epoch); a key names one request ID per
 * window, and during the first KEY_RETRY_SEC of a window a call also finds the place its key made in the window
 * before. So a retry within an hour of the first call always finds that call's place, and a key sent again 25
 * hours or more after its first use is a new join. (Between the two, a reuse finds the old place until the next
 * window begins.) What this costs: one more read (a place of the window before) for the keyed joins of the
 * first hour of each day.
 */
export const KEY_WINDOW_SEC = 24 * 3600;
export const KEY_RETRY_SEC = 3600;

/** The key windows a call at `nowSec` (epoch seconds) looks in: the current one, and the one before in its first hour. */
export function keyWindows(nowSec: number): { current: number; previous: number | null } {
  const current = Math.floor(nowSec / KEY_WINDOW_SEC);
  return { current, previous: nowSec - current * KEY_WINDOW_SEC < KEY_RETRY_SEC ? current - 1 : null };
}

/**
 * The request ID a key names in a room for one client, in one key window (keyWindows): the same on every node, for every retry from that client.
 * The client (its IP as the HTTP layer names it, behind --trust-proxy) is part of it, so a key reused by another
 * visitor — a client that sends one constant key for all its users, a key seen in a log — names another join and
 * never hands out someone else's request ID; a retry from another address (a phone moving from Wi-Fi to mobile
 * data) is a new join, and the refused one, if it took effect, is retired by the expiry job like any unclaimed place.
 */
export function requestIdForIdempotencyKey(eventId: string, key: string, client: string, window: number): string {
  const bytes = createHash('sha256')
    .update(`anteroom idempotency key\u0000${eventId}\u0000${client}\u0000${window}\u0000${key}`)
    .digest()
    .subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80; // UUID version 8 (custom), so it is never mistaken for a v4
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
