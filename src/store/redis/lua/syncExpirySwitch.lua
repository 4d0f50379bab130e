--[[
  Records whether queue-position expiry is on. Switching it on keeps the first switch-on time (eligibility
  of positions served while it was off starts there); switching it off forgets it.

  KEYS[1] counters hash
  ARGV[1] '1' to enable, '0' to disable
  ARGV[2] now (epoch seconds)
]]
if ARGV[1] == '1' then
  redis.call('HSETNX', KEYS[1], 'es', ARGV[2])
else
  redis.call('HDEL', KEYS[1], 'es')
end
return 0
