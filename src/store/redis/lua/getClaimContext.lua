--[[
  Everything generate_token and queue_pos_expiry decide on, read at one instant.

  KEYS[1] counters hash
  KEYS[2] request ID -> position hash
  KEYS[3] entry-time runs sorted set
  KEYS[4] serving history sorted set
  KEYS[5] tokens hash
  KEYS[6] left positions sorted set (score = member = position)
  ARGV[1] request ID

  Output: nil when the request ID has no position, else
    {position, entry time, serving, servedAt | nil, expiry enabled since | nil, max expired, token | nil,
     1 if the position was left else 0}
]]
local counters, positions, runs, history, tokens, leftPositions = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id = ARGV[1]

local position = redis.call('HGET', positions, id)
if not position then
  return false
end
local run = redis.call('ZREVRANGEBYSCORE', runs, position, '-inf', 'LIMIT', 0, 1)[1]
if not run then
  return redis.error_reply('ERR position without an entry-time run')
end
-- P became servable when the counter first reached the smallest recorded value >= P.
local served = redis.call('ZRANGEBYSCORE', history, position, '+inf', 'LIMIT', 0, 1)[1]
local c = redis.call('HMGET', counters, 's', 'es', 'mx')
return {
  tonumber(position),
  tonumber(string.match(run, ':(.*)$')),
  tonumber(c[1] or '0'),
  served and tonumber(string.match(served, ':(.*)$')) or false,
  c[2] and tonumber(c[2]) or false,
  tonumber(c[3] or '0'),
  redis.call('HGET', tokens, id),
  redis.call('ZSCORE', leftPositions, position) and 1 or 0,
}
