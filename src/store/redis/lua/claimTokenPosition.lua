--[[
  Composite store (Redis + DynamoDB, see src/store/dynamodb/): the Redis half of issuing a token set. Decides,
  atomically with the expiry job, that the request ID's position is claimed: the position must exist and must
  not be recorded as expired. A claimed position is never expired afterwards (the expiry job skips positions
  in the token positions set), and is counted in `tokens` once, however often this runs for it: a retry after
  a crash between this step and the DynamoDB write counts nothing twice.

  KEYS[1] counters hash
  KEYS[2] request ID -> position hash
  KEYS[3] token positions sorted set (score = member = position)
  KEYS[4] left positions sorted set (score = member = position)
  ARGV[1] request ID

  Output: {'claimed', position, reset generation} | {'no-position'} | {'left'} | {'expired'}
]]
local counters, positions, tokenPositions, leftPositions = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

local position = redis.call('HGET', positions, ARGV[1])
if not position then
  return {'no-position'}
end
local generation = tonumber(redis.call('HGET', counters, 'g') or '0')
if redis.call('ZSCORE', tokenPositions, position) then
  return {'claimed', tonumber(position), generation}
end
if redis.call('ZSCORE', leftPositions, position) then
  return {'left'}
end
if tonumber(position) <= tonumber(redis.call('HGET', counters, 'mx') or '0') then
  return {'expired'}
end
redis.call('ZADD', tokenPositions, position, position)
redis.call('HINCRBY', counters, 't', 1)
return {'claimed', tonumber(position), generation}
