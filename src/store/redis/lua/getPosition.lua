--[[
  Reads a request ID's position and entry time at one instant (a reset cannot fall in between).

  KEYS[1] request ID -> position hash
  KEYS[2] entry-time runs sorted set
  ARGV[1] request ID

  Output: {position, entry time}, or nil when the request ID has no position.
]]
local position = redis.call('HGET', KEYS[1], ARGV[1])
if not position then
  return false
end
-- The run holding P is the one with the greatest start <= P.
local run = redis.call('ZREVRANGEBYSCORE', KEYS[2], position, '-inf', 'LIMIT', 0, 1)[1]
if not run then
  return redis.error_reply('ERR position without an entry-time run')
end
return {tonumber(position), tonumber(string.match(run, ':(.*)$'))}
