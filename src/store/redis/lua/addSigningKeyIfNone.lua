--[[
  Stores a signing key unless the event has one already; every racer then reads the same winner.

  KEYS[1] signing keys hash (kid -> JSON [createdAt, private JWK, public JWK])
  ARGV[1] kid
  ARGV[2] the key as JSON

  Output: every stored key as a flat [kid, value, ...] list.
]]
if redis.call('HLEN', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return redis.call('HGETALL', KEYS[1])
