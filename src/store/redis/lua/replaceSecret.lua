--[[
  Compare-and-set of a shared secret (see claimSecret.lua): replaces the stored value only if it is still
  the one the caller read, so two nodes rotating at once agree on one winner.

  KEYS[1] the secret's string key
  ARGV[1] the value the caller expects to be stored
  ARGV[2] the new value

  Output: the stored value afterwards, or nil when nothing is stored under the key.
]]
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return ARGV[2]
end
return current
