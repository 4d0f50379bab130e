--[[
  Deletes every position, token, history entry and counter of one event, in one atomic step: a request
  that straddles the reset sees either all of the old state or none of it. Keeps the signing keys and the
  expiry switch time (a setting, not state). Counts the resets in the generation field 'g', which the
  composite store (src/store/dynamodb/) uses to tell token records of before the reset from current ones.

  KEYS[1]    counters hash
  KEYS[2..n] every other per-event state key

  The presence keys of the generation that ends go too (lua/includes/presenceKeys.lua).
]]
--- @include "presenceKeys"
local since = redis.call('HGET', KEYS[1], 'es')
local generation = tonumber(redis.call('HGET', KEYS[1], 'g') or '0') + 1
-- UNLINK frees a million-entry hash in the background instead of blocking the server.
redis.call('UNLINK', unpack(KEYS))
unlinkPresence(string.sub(KEYS[1], 1, -2), generation - 1)
if since then
  redis.call('HSET', KEYS[1], 'es', since)
end
redis.call('HSET', KEYS[1], 'g', generation)
return 0
