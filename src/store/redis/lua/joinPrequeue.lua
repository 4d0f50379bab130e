--[[
  Joins of a room's pre-queue (shuffle_at_event_start), one batch.

  Key layout of the pre-queue and the draw (E = event ID):
    ar:{E}:pq  hash  request ID (as in ar:{E}:rq) -> "<join order>:<entry time>[:L]" (":L" once it left)
    ar:{E}:pl  list  request IDs in join order: join order k is at index k - 1; its length is the last join order
    ar:{E}:dr  hash  the draw: st state (committed | drawing | done), sd seed, cm commitment, al algorithm,
                     dt drawn through (join order), n entry count, p places numbered, fp first position,
                     nt numbered through (join order), lv entries that left

  KEYS[1] counters hash, KEYS[2] request ID -> position hash, KEYS[3] entry-time runs,
  KEYS[4] pre-queue hash, KEYS[5] pre-queue list, KEYS[6] draw hash
  ARGV    seed, commitment, algorithm (stored if the room has no draw), then request ID, entry time, ...

  Output: one number per join: its position if it has one (0 while it waits in the pre-queue). Once the draw
  is done, a new request ID gets the next position (as assignPositionsIfAbsent.lua), never a pre-queue entry.
]]
--- @include "prequeueDraw"
--- @include "positionWriter"
local counters, positions, runs, prequeue, list, draw = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local state = ensureDraw(draw, ARGV[1], ARGV[2], ARGV[3])
local result = {}

if state == 'done' then
  local writer = nil
  local numbered = {}
  for i = 4, #ARGV, 2 do
    local id = ARGV[i]
    local existing = numbered[id] or redis.call('HGET', positions, id)
    if existing then
      result[#result + 1] = tonumber(existing)
    else
      writer = writer or positionWriter(counters, positions, runs)
      numbered[id] = writer.add(id, ARGV[i + 1])
      result[#result + 1] = numbered[id]
    end
  end
  if writer then
    writer.finish()
  end
  return result
end

local joined = redis.call('LLEN', list)
local listed = {}
local pending = {}
for i = 4, #ARGV, 2 do
  local id = ARGV[i]
  local existing = redis.call('HGET', positions, id)
  if existing then
    result[#result + 1] = tonumber(existing)
  else
    result[#result + 1] = 0
    if not listed[id] and redis.call('HEXISTS', prequeue, id) == 0 then
      listed[id] = true
      joined = joined + 1
      redis.call('HSET', prequeue, id, string.format('%d:%s', joined, ARGV[i + 1]))
      pending[#pending + 1] = id
      -- RPUSH takes many values at once; stay far below Lua's limit on unpacked arguments.
      if #pending >= 1000 then
        redis.call('RPUSH', list, unpack(pending))
        pending = {}
      end
    end
  end
end
if #pending > 0 then
  redis.call('RPUSH', list, unpack(pending))
end
return result
