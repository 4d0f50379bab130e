--[[
  Single-use mark (a proof of work's challenge): set if absent, with a Redis TTL so marks clean themselves up.

  KEYS[1] the mark
  ARGV[1] milliseconds the mark lives

  Output: 1 the first time, 0 while the mark exists.
]]
if redis.call('SET', KEYS[1], '1', 'PX', ARGV[1], 'NX') then
  return 1
end
return 0
