--[[
  Starts a room's draw: fixes its entries (every pre-queue entry listed now that has not left) and the position
  of place 1. Stores the given seed first if the room has no draw. A draw started or done is left as it is.

  KEYS[1] counters hash, KEYS[2] pre-queue list, KEYS[3] draw hash
  ARGV    seed, commitment, algorithm

  Output: the draw hash as a flat [field, value, ...] list.
]]
--- @include "prequeueDraw"
local counters, list, draw = KEYS[1], KEYS[2], KEYS[3]
if ensureDraw(draw, ARGV[1], ARGV[2], ARGV[3]) == 'committed' then
  local joined = redis.call('LLEN', list)
  -- Every entry that left so far is among those listed so far: the draw orders the others.
  local left = tonumber(redis.call('HGET', draw, 'lv') or '0')
  local queue = tonumber(redis.call('HGET', counters, 'q') or '0')
  redis.call('HSET', draw, 'st', 'drawing', 'dt', joined, 'n', joined - left, 'p', 0, 'fp', queue + 1, 'nt', joined)
end
return redis.call('HGETALL', draw)
