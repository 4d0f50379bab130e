--[[
  Rate counter of the bot defence: adds to the count of the current fixed window and reads the previous one.
  Both keys carry the counter's name as their hash tag, so they share one cluster slot.

  KEYS[1] the current window's counter
  KEYS[2] the previous window's counter
  ARGV[1] how much to add (0 only reads)
  ARGV[2] milliseconds Redis keeps the current window's key (two windows: it is the previous one next)

  Output: {current, previous}
]]
local by = tonumber(ARGV[1])
local current
if by > 0 then
  current = redis.call('INCRBY', KEYS[1], by)
  if current == by then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
else
  current = tonumber(redis.call('GET', KEYS[1]) or '0')
end
local previous = tonumber(redis.call('GET', KEYS[2]) or '0')
return {current, previous}
