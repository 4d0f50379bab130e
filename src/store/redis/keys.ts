// The Redis store's keys (RedisStore, the Lua scripts in ./lua).
//
// Key layout (prefix default "ar:"; E = event ID, in a hash tag so all keys of an event share one slot):
//   ar:{E}:c   hash      counters: q queue, s serving, ms highest serving ever, t tokens, x expired,
//                        co completed, ab abandoned, mx max expired, es expiry switched on at (absent = off),
//                        lf left
//   ar:{E}:rq  hash      request ID (16 raw bytes of the UUID) → position. The only per-visitor structure.
//   ar:{E}:et  zset      entry-time runs: score = first position of a run of equal entry times,
//                        member "<start>:<entry time>". Entry time of P = run with the greatest start ≤ P.
//   ar:{E}:sh  zset      serving history: score = each new highest counter value, member "<value>:<reached at>"
//   ar:{E}:tk  hash      request ID → token record "<status>,<position>,<JSON [iat,nbf,exp,iss,kid,nonce?] or [.., kid, nonce|null, signatures]>"
//   ar:{E}:te  zset      every token by exp; member = 6-byte big-endian position + request ID, so equal
//                        exps sort by position ("oldest first" in expired_tokens)
//   ar:{E}:to  zset      open sessions only, same members: active tokens = ZCOUNT exp ≥ now, O(log n)
//   ar:{E}:tp  zset      token positions (score = member = position): tokens held in a range of positions
//   ar:{E}:k   hash      signing keys: kid → JSON [createdAt, private JWK, public JWK]
//   ar:{E}:oa  hash      OpenID Connect: request ID (as in ar:{E}:rq) → its authorization request (JSON)
//   ar:{E}:ls  hash      the gate's shared "last seen" of open sessions: request ID → epoch ms (lua/renewSession.lua)
//   ar:{E}:lp  zset      positions given up with leave_queue (score = member = position); counted in lf of ar:{E}:c
//   ar:{E}:pq, ar:{E}:pl, ar:{E}:dr   the pre-queue (hash and list in join order) and the draw: see
//                        lua/joinPrequeue.lua
//   ar:lock:<name> hash  job leader lock {o owner, x expires at (ms, caller's clock)}, with a Redis TTL
//   ar:rate:{<name>}:<window> string  a bot-defence rate counter for one fixed window (TTL two windows)
//   ar:once:<name> string  a single-use mark (a proof of work's challenge), TTL until the challenge expires
//   ar:secret:<name> string  a value generated once and shared by every node (the generated admin
//                        credentials, JSON): readable by anyone who can read this Redis, like the signing keys
//   Rooms at runtime, under the hash tag {@rooms} ('@' is not allowed in an event ID, so no event's keys
//   can share it): one slot for every room's settings, so a put or a list is one script.
//   ar:{@rooms}:settings hash  event ID → settings (JSON text, opaque to Redis)
//   ar:{@rooms}:created  hash  event ID → rooms version at which the room was created
//   ar:{@rooms}:version  string the rooms version, bumped by every change (every node GETs it every second)

import type { EventKeys, RoomKeys } from './scripts.ts';

/** Every key of one event: all carry the hash tag {eventId}, so every script touches one cluster slot. */
export function eventKeys(prefix: string, eventId: string): EventKeys {
  const base = `${prefix}{${eventId}}:`;
  return {
    counters: `${base}c`,
    positions: `${base}rq`,
    runs: `${base}et`,
    history: `${base}sh`,
    tokens: `${base}tk`,
    tokensByExp: `${base}te`,
    openByExp: `${base}to`,
    tokenPositions: `${base}tp`,
    signingKeys: `${base}k`,
    authorizations: `${base}oa`,
    closedSessions: `${base}cs`,
    leftPositions: `${base}lp`,
    prequeue: `${base}pq`,
    prequeueList: `${base}pl`,
    draw: `${base}dr`,
    lastSeen: `${base}ls`,
  };
}

/** Rooms at runtime, under the hash tag {@rooms}. */
export function roomKeys(prefix: string): RoomKeys {
  const base = `${prefix}{@rooms}:`;
  return { settings: `${base}settings`, created: `${base}created`, version: `${base}version` };
}
