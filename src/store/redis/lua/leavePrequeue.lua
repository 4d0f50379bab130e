--[[
  Gives up a pre-queue place that has no position yet.

  KEYS[1] request ID -> position hash, KEYS[2] pre-queue hash, KEYS[3] draw hash
  ARGV[1] request ID

  Output: left | already-left | not-in-prequeue | numbered | being-drawn (see PrequeueLeave in the store port).
]]
--- @include "prequeueDraw"
local positions, prequeue, draw = KEYS[1], KEYS[2], KEYS[3]
local id = ARGV[1]
local value = redis.call('HGET', prequeue, id)
if not value then
  return 'not-in-prequeue'
end
local order, _entryTime, left = parseEntry(value)
if left then
  return 'already-left'
end
if redis.call('HEXISTS', positions, id) == 1 then
  return 'numbered'
end
local d = redis.call('HMGET', draw, 'st', 'dt')
if d[1] == 'drawing' and order <= tonumber(d[2]) then
  return 'being-drawn'
end
redis.call('HSET', prequeue, id, value .. ':L')
redis.call('HINCRBY', draw, 'lv', 1)
return 'left'
