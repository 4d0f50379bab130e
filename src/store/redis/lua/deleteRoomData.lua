--[[
  Rooms at runtime, second step of deleting a room: every key of the room goes at once — counters, positions,
  entry times, serving history, tokens, signing keys, OpenID Connect authorizations, and whatever else is kept
  per room (the caller passes every key of the room's hash tag).

  One field survives: the reset generation 'g' of the counters hash, bumped as a reset bumps it. The composite
  store (src/store/dynamodb/) leaves the room's token records in DynamoDB to their TTL; with the generation
  bumped, a room created again under the same ID never reads them as its own. It is written only where a
  counters hash existed (a delete of a room that never had data creates nothing).

  KEYS[1]    counters hash
  KEYS[2..n] every other key of the room

  The presence keys (named by the generation: lua/includes/presenceKeys.lua) go too. A reset deletes those of
  the generation it ends, so only the current generation's can exist.
]]
--- @include "presenceKeys"
local existed = redis.call('EXISTS', KEYS[1]) == 1
local generation = tonumber(redis.call('HGET', KEYS[1], 'g') or '0') + 1
-- UNLINK frees a million-entry hash in the background instead of blocking the server.
redis.call('UNLINK', unpack(KEYS))
unlinkPresence(string.sub(KEYS[1], 1, -2), generation - 1)
if existed then
  redis.call('HSET', KEYS[1], 'g', generation)
end
return 0
