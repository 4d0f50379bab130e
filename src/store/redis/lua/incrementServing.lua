--[[
  Adds ARGV[1] (may be negative) to the serving counter, never below zero, and records when each new
  highest value was first reached.

  KEYS[1] counters hash
  KEYS[2] serving history sorted set (score = value, member = "<value>:<reached at>")
  ARGV[1] increment
  ARGV[2] now (epoch seconds)

  Output: the new counter value.
]]
--- @include "setServing"

-- Never below zero: "nobody may enter" is 0, and a negative value would make every later increment
-- silently admit nobody.
local value = tonumber(redis.call('HGET', KEYS[1], 's') or '0') + tonumber(ARGV[1])
if value < 0 then
  value = 0
end
setServing(KEYS[1], KEYS[2], value, ARGV[2])
return value
