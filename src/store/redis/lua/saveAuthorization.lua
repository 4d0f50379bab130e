--[[
  Binds an OpenID Connect authorization request to a request ID of the event, only while that request ID
  has a position: a reset between the join and this call must not leave an authorization behind.

  KEYS[1] request ID -> position hash
  KEYS[2] request ID -> authorization hash
  ARGV[1] request ID
  ARGV[2] the authorization (opaque text)

  Output: 1 if stored (a second call replaces the first), 0 if the request ID has no position.
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
