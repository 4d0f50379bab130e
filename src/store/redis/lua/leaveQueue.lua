--[[
  The visitor gives the position up: recorded as left (the left positions set) and counted in `lf`, unless
  the request ID has no position, left already, holds a token set (the token positions set, which the
  composite store's claim fills too) or was recorded as expired. Atomic with issueTokenIfAbsent and
  claimTokenPosition: of a leave and a first claim of one position, exactly one succeeds.

  KEYS[1] counters hash
  KEYS[2] request ID -> position hash
  KEYS[3] token positions sorted set (score = member = position)
  KEYS[4] left positions sorted set (score = member = position)
  ARGV[1] request ID

  Output: {'left', position} | {'no-position'} | {'already-left'} | {'claimed'} | {'expired'}
]]
local counters, positions, tokenPositions, leftPositions = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

local position = redis.call('HGET', positions, ARGV[1])
if not position then
  return {'no-position'}
end
if redis.call('ZSCORE', leftPositions, position) then
  return {'already-left'}
end
if redis.call('ZSCORE', tokenPositions, position) then
  return {'claimed'}
end
if tonumber(position) <= tonumber(redis.call('HGET', counters, 'mx') or '0') then
  return {'expired'}
end
redis.call('ZADD', leftPositions, position, position)
redis.call('HINCRBY', counters, 'lf', 1)
return {'left', tonumber(position)}
