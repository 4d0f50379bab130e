--[[
  A value generated once and shared by every node: stored unless one is stored already; every racer then
  reads the same winner.

  KEYS[1] the secret's string key
  ARGV[1] the candidate value

  Output: the stored value.
]]
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
