--[[
  Leader lock for interval jobs: taken if free, expired, or already held by the same owner (renewal).
  Time is the caller's clock (like the SQLite store), not the Redis server's.

  KEYS[1] lock hash {o = owner, x = expires at (ms)}
  ARGV[1] owner
  ARGV[2] now (ms)
  ARGV[3] ttl (ms)
  ARGV[4] grace (ms) before Redis itself deletes the key

  Output: 1 if the owner holds the lock until now + ttl, else 0.
]]
local owner, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local current = redis.call('HMGET', KEYS[1], 'o', 'x')
if current[1] and current[1] ~= owner and tonumber(current[2]) > now then
  return 0
end
redis.call('HSET', KEYS[1], 'o', owner, 'x', string.format('%d', now + ttl))
-- The key only needs to outlive the lock; the grace absorbs skew between the caller's and Redis's clocks
-- so Redis never drops a lock its holder still counts on.
redis.call('PEXPIRE', KEYS[1], string.format('%d', ttl + tonumber(ARGV[4])))
return 1
