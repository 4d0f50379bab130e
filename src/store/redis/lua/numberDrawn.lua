--[[
  Numbers the next places of a draw: ARGV[2..] are the entries of places p+1, p+2, ... in that order, each
  getting the next position with its pre-queue entry time. Only while the draw is "drawing" with exactly
  ARGV[1] places numbered; otherwise nothing changes.

  KEYS[1] counters hash, KEYS[2] request ID -> position hash, KEYS[3] entry-time runs,
  KEYS[4] pre-queue hash, KEYS[5] draw hash
  ARGV    expected progress, request ID, request ID, ...

  Output: the draw hash as a flat [field, value, ...] list, or nil when the room has no draw.

  A script cannot roll back, so every request ID is checked before anything is written: one that is not a
  fixed, unnumbered entry of the draw fails the whole call and changes nothing.
]]
--- @include "prequeueDraw"
--- @include "positionWriter"
local counters, positions, runs, prequeue, draw = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local d = redis.call('HMGET', draw, 'st', 'p', 'n', 'dt')
if not d[1] then
  return false
end
local expected, count = tonumber(ARGV[1]), #ARGV - 1
if d[1] ~= 'drawing' or tonumber(d[2]) ~= expected or expected + count > tonumber(d[3]) then
  return redis.call('HGETALL', draw)
end
local drawnThrough = tonumber(d[4])

local times = {}
local seen = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  local value = redis.call('HGET', prequeue, id)
  if not value or seen[id] then
    return redis.error_reply('ERR numberDrawn: a request ID is not an entry of the draw')
  end
  local order, entryTime, left = parseEntry(value)
  if left or order > drawnThrough or redis.call('HEXISTS', positions, id) == 1 then
    return redis.error_reply('ERR numberDrawn: a request ID is not an unnumbered entry of the draw')
  end
  seen[id] = true
  times[i] = entryTime
end

local writer = positionWriter(counters, positions, runs)
for i = 2, #ARGV do
  writer.add(ARGV[i], times[i])
end
writer.finish()
redis.call('HSET', draw, 'p', expected + count)
return redis.call('HGETALL', draw)
