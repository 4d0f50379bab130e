// How request IDs, token records and signing keys are written into Redis values. Everything here is pure;
// the Lua scripts treat these values as opaque except where their comments say otherwise.

import type { SessionStatus, TokenRecord } from '../../domain/claims.ts';
import { isRequestId } from '../../domain/ids.ts';
import type { DrawRecord, PrequeueEntry, StoredSigningKey } from '../../domain/ports/store.ts';

const UUID_BYTES = 16;

/**
 * A UUID is stored as its 16 raw bytes instead of its 36 characters: the request ID → position hash is the
 * one structure that grows with every visitor, and this saves ~16 bytes of each entry (measured with
 * bench/redis-memory.ts). Hex letters fold to lowercase, which is how the domain stores request IDs anyway.
 *
 * Any other string (the port does not forbid one) keeps its UTF-8 bytes, made never to be 16 bytes long so
 * that it cannot collide with a UUID: a string of 16 bytes or more gets a trailing NUL byte.
 */
export function encodeRequestId(requestId: string): Buffer {
  if (isRequestId(requestId)) return Buffer.from(requestId.replaceAll('-', ''), 'hex');
  const bytes = Buffer.from(requestId, 'utf8');
  return bytes.length < UUID_BYTES ? bytes : Buffer.concat([bytes, Buffer.alloc(1)]);
}

export function decodeRequestId(bytes: Buffer): string {
  if (bytes.length === UUID_BYTES) {
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  return (bytes.length < UUID_BYTES ? bytes : bytes.subarray(0, -1)).toString('utf8');
}

/** Length of the big-endian position that prefixes members of the by-exp token sets (struct '>I6'). */
export const POSITION_PREFIX_BYTES = 6;

/**
 * A token record is stored as "<status>,<position>,<claims JSON>": the scripts set the position (from the
 * position hash, never from the caller) and rewrite the status when the session closes; the rest is
 * written once and only read here.
 */
export function encodeTokenClaims(record: TokenRecord): string {
  const claims: unknown[] = [record.iat, record.nbf, record.exp, record.iss, record.kid];
  // [.., kid, nonce?] as before; with stored signatures (issue 15): [.., kid, nonce or null, signatures].
  if (record.nonce !== undefined || record.signatures !== undefined) claims.push(record.nonce ?? null);
  if (record.signatures !== undefined) claims.push(record.signatures);
  return JSON.stringify(claims);
}

export function decodeTokenRecord(requestId: string, value: string): TokenRecord {
  const firstComma = value.indexOf(',');
  const secondComma = value.indexOf(',', firstComma + 1);
  if (firstComma < 0 || secondComma < 0) throw new Error('Malformed token record in Redis');
  const status = Number(value.slice(0, firstComma)) as SessionStatus;
  const position = Number(value.slice(firstComma + 1, secondComma));
  const [iat, nbf, exp, iss, kid, nonce, signatures] = JSON.parse(value.slice(secondComma + 1)) as [
    number,
    number,
    number,
    string,
    string,
    string | null | undefined,
    string | undefined,
  ];
  return { requestId, position, iat, nbf, exp, iss, kid, status, nonce: nonce ?? undefined, signatures };
}

export function encodeSigningKey(key: StoredSigningKey): string {
  return JSON.stringify([key.createdAt, key.privateJwk, key.publicJwk]);
}

/** Decodes a flat [kid, value, ...] list, ordered like the SQLite store: by creation time, then kid. */
export function decodeSigningKeys(flat: readonly string[]): StoredSigningKey[] {
  const keys: StoredSigningKey[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const [createdAt, privateJwk, publicJwk] = JSON.parse(flat[i + 1] as string) as [number, string, string];
    keys.push({ kid: flat[i] as string, privateJwk, publicJwk, createdAt });
  }
  return keys.sort((a, b) => a.createdAt - b.createdAt || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0));
}

const DRAW_STATES: ReadonlySet<string> = new Set(['committed', 'drawing', 'done']);

/** The draw hash (lua/joinPrequeue.lua) from a flat [field, value, ...] list; null when the room has none. */
export function decodeDraw(flat: readonly string[]): DrawRecord | null {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i] as string, flat[i + 1] as string);
  const state = fields.get('st');
  if (state === undefined) return null;
  if (!DRAW_STATES.has(state)) throw new Error(`Malformed draw in Redis: state ${state}`);
  const count = (field: string) => Number(fields.get(field) ?? 0);
  return {
    state: state as DrawRecord['state'],
    seed: fields.get('sd') ?? '',
    commitment: fields.get('cm') ?? '',
    algorithm: fields.get('al') ?? '',
    drawnThrough: count('dt'),
    entryCount: count('n'),
    progress: count('p'),
    firstPosition: count('fp'),
    numberedThrough: count('nt'),
  };
}

/** A pre-queue entry from its stored value "<join order>:<entry time>[:L]". */
export function decodePrequeueEntry(requestId: string, value: string, position: number | null): PrequeueEntry {
  const match = /^(\d+):(-?\d+)(:L)?$/.exec(value);
  if (!match) throw new Error('Malformed pre-queue entry in Redis');
  return { requestId, joinOrder: Number(match[1]), entryTime: Number(match[2]), left: match[3] !== undefined, position };
}
