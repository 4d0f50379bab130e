--[[
  Hands out the next positions, in order, to a batch of request IDs.

  KEYS[1] counters hash
  KEYS[2] request ID -> position hash
  KEYS[3] entry-time runs sorted set (score = first position of the run, member = "<start>:<entry time>")
  ARGV    request ID (16 raw bytes for a UUID), entry time, request ID, entry time, ...

  Output: the first position of the batch (the others follow it without a gap).

  A script cannot roll back, so every request ID is checked before anything is written: a duplicate fails
  the whole batch and changes nothing, like the unique index of the SQLite store.
]]
local counters, positions, runs = KEYS[1], KEYS[2], KEYS[3]
local count = #ARGV / 2

local seen = {}
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  if seen[id] or redis.call('HEXISTS', positions, id) == 1 then
    return redis.error_reply('ERR request ID already has a position')
  end
  seen[id] = true
end

local first = redis.call('HINCRBY', counters, 'q', count) - count + 1

-- Entry times are kept per run of equal times rather than per visitor: a run starts wherever the entry time
-- differs from the previous position's, which is once per second under a steady stream of joins.
local lastRun = redis.call('ZREVRANGE', runs, 0, 0)[1]
local lastTime = lastRun and string.match(lastRun, ':(.*)$')

-- HSET takes many pairs at once; stay far below Lua's limit on unpacked arguments.
local FLUSH_AT = 1000
local pairs_ = {}
local position = first - 1
for i = 1, #ARGV, 2 do
  position = position + 1
  pairs_[#pairs_ + 1] = ARGV[i]
  pairs_[#pairs_ + 1] = position
  local entryTime = ARGV[i + 1]
  if entryTime ~= lastTime then
    redis.call('ZADD', runs, position, string.format('%d:%s', position, entryTime))
    lastTime = entryTime
  end
  if #pairs_ >= FLUSH_AT then
    redis.call('HSET', positions, unpack(pairs_))
    pairs_ = {}
  end
end
if #pairs_ > 0 then
  redis.call('HSET', positions, unpack(pairs_))
end
return first
