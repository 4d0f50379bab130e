--[[
  Moves the serving counter forward by min(ARGV[1], queue - serving), never backwards (a counter already past
  the queue stays where it is): nobody who joins later skips the line. Records when each new highest value
  was first reached, like incrementServing.

  KEYS[1] counters hash
  KEYS[2] serving history sorted set (score = value, member = "<value>:<reached at>")
  ARGV[1] increment (>= 0)
  ARGV[2] now (epoch seconds)
  ARGV[3] the counter the caller read ('' = any): if the counter is no longer that value, nothing moves

  Output: {previous serving, serving}
]]
--- @include "setServing"

local c = redis.call('HMGET', KEYS[1], 'q', 's')
local queue = tonumber(c[1] or '0')
local serving = tonumber(c[2] or '0')
local by = math.max(0, math.min(tonumber(ARGV[1]), queue - serving))
if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= serving then
  by = 0
end
if by > 0 then
  setServing(KEYS[1], KEYS[2], serving + by, ARGV[2])
end
return {serving, serving + by}
