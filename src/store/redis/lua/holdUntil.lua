--[[
  A mark that holds until a time (the bot defence's flood hold): extended, never shortened.

  KEYS[1] the mark (its value: until when it holds, ms since the epoch)
  ARGV[1] until when it should hold (0 only reads)
  ARGV[2] milliseconds Redis keeps the mark when it is extended

  Output: until when it held before (0: no mark).
]]
local held = tonumber(redis.call('GET', KEYS[1]) or '0')
local untilMs = tonumber(ARGV[1])
if untilMs > held then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return held
