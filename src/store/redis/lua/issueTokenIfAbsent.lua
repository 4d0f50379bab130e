--[[
  Stores a token set for a request ID unless it has one, and counts it.

  KEYS[1] counters hash
  KEYS[2] request ID -> position hash
  KEYS[3] tokens hash (request ID -> "<status>,<position>,<claims JSON>")
  KEYS[4] tokens by exp sorted set (member = 6-byte big-endian position .. request ID)
  KEYS[5] open sessions by exp sorted set (same members)
  KEYS[6] token positions sorted set (score = member = position)
  KEYS[7] left positions sorted set (score = member = position)
  ARGV[1] request ID
  ARGV[2] exp
  ARGV[3] claims JSON (everything but status and position)

  Output: {'existing', stored value} | {'no-position'} | {'left'} | {'expired'} | {'issued', position}
]]
local counters, positions, tokens, byExp, openByExp, tokenPositions = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local leftPositions = KEYS[7]
local id, exp = ARGV[1], ARGV[2]

local existing = redis.call('HGET', tokens, id)
if existing then
  return {'existing', existing}
end
local position = redis.call('HGET', positions, id)
if not position then
  return {'no-position'}
end
if redis.call('ZSCORE', leftPositions, position) then
  return {'left'}
end
if tonumber(position) <= tonumber(redis.call('HGET', counters, 'mx') or '0') then
  return {'expired'}
end

redis.call('HSET', tokens, id, '0,' .. position .. ',' .. ARGV[3])
-- The fixed-width position prefix makes tokens with the same exp sort by position ("oldest first").
local member = struct.pack('>I6', tonumber(position)) .. id
redis.call('ZADD', byExp, exp, member)
redis.call('ZADD', openByExp, exp, member)
redis.call('ZADD', tokenPositions, position, position)
redis.call('HINCRBY', counters, 't', 1)
return {'issued', tonumber(position)}
