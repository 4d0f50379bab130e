--[[
  Closes an open session once.

  KEYS[1] counters hash
  KEYS[2] tokens hash
  KEYS[3] open sessions by exp sorted set
  ARGV[1] request ID
  ARGV[2] status: '1' completed, '-1' abandoned

  Output: 1 if the session was open and is now closed, else 0 (no token set, or already closed).
]]
local counters, tokens, openByExp = KEYS[1], KEYS[2], KEYS[3]
local id, status = ARGV[1], ARGV[2]

local record = redis.call('HGET', tokens, id)
if not record then
  return 0
end
local current, position, claims = string.match(record, '^(%-?%d+),(%d+),(.*)$')
if current ~= '0' then
  return 0
end
redis.call('HSET', tokens, id, status .. ',' .. position .. ',' .. claims)
redis.call('ZREM', openByExp, struct.pack('>I6', tonumber(position)) .. id)
redis.call('HINCRBY', counters, status == '1' and 'co' or 'ab', 1)
return 1
