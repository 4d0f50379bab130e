--[[
  Once every place of a draw is numbered: gives the next positions, FIFO, to up to ARGV[1] pre-queue entries
  that joined after the draw started (skipping those that left); when none are left, marks the draw done.

  KEYS[1] counters hash, KEYS[2] request ID -> position hash, KEYS[3] entry-time runs,
  KEYS[4] pre-queue hash, KEYS[5] pre-queue list, KEYS[6] draw hash
  ARGV[1] limit

  Output: the draw hash as a flat [field, value, ...] list, or nil when the room has no draw.
]]
--- @include "prequeueDraw"
--- @include "positionWriter"
local counters, positions, runs, prequeue, list, draw = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local d = redis.call('HMGET', draw, 'st', 'p', 'n', 'nt')
if not d[1] then
  return false
end
if d[1] ~= 'drawing' or tonumber(d[2]) ~= tonumber(d[3]) then
  return redis.call('HGETALL', draw)
end
local through = tonumber(d[4])
local limit = math.max(1, tonumber(ARGV[1]))
-- Join order k is at index k - 1: the entries after `through` start at index `through`.
local ids = redis.call('LRANGE', list, through, through + limit - 1)
local writer = positionWriter(counters, positions, runs)
for _, id in ipairs(ids) do
  local _order, entryTime, left = parseEntry(redis.call('HGET', prequeue, id))
  if not left then
    writer.add(id, entryTime)
  end
end
writer.finish()
through = through + #ids
redis.call('HSET', draw, 'nt', through)
if through == redis.call('LLEN', list) then
  redis.call('HSET', draw, 'st', 'done')
end
return redis.call('HGETALL', draw)
