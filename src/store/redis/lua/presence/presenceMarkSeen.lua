--[[
  Merges the beats one node saw during one presence window: each position is set in the room's bitmap of that
  window and in its bitmap of beating positions (a position that never beat is never absent:
  src/domain/presence-settings.ts). The keys carry the room's reset generation, so a reset starts presence
  afresh (resetEvent.lua deletes the old generation's); a window expires by itself once no presence timeout
  can reach back to it, and is listed in the window index until then, so that a reset or a room's deletion can
  delete it (lua/includes/presenceKeys.lua).

  KEYS[1] counters hash (for the generation 'g'); every other key is built here under the room's hash tag
  ARGV[1] key base "<prefix>{<event>}:"
  ARGV[2] now (epoch seconds)
  ARGV[3] window length in seconds
  ARGV[4..] positions
]]
local generation = redis.call('HGET', KEYS[1], 'g') or '0'
local now = tonumber(ARGV[2])
local windowSeconds = tonumber(ARGV[3])
local window = math.floor(now / windowSeconds)
local suffix = 'pw:' .. generation .. ':' .. windowSeconds .. ':' .. window
local key = ARGV[1] .. suffix
local beating = ARGV[1] .. 'pb:' .. generation
local index = ARGV[1] .. 'pi:' .. generation
for i = 4, #ARGV do
  local position = tonumber(ARGV[i])
  redis.call('SETBIT', key, position, 1)
  redis.call('SETBIT', beating, position, 1)
end
-- A timeout spans at most 12 windows (presenceWindowSeconds): two more for the window being filled.
redis.call('EXPIRE', key, windowSeconds * 14)
redis.call('EXPIRE', beating, 604800)
-- The index: by the window's first second; entries older than two hours (past any timeout: 3600 s) are dropped.
redis.call('ZADD', index, window * windowSeconds, suffix)
redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. (now - 7200))
redis.call('EXPIRE', index, 604800)
return #ARGV - 3
