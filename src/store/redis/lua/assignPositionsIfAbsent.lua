--[[
  Hands out the next positions to the request IDs of a batch that have none yet; a request ID that already
  has a position (a redelivered intake message) keeps it. Redelivery must never renumber a visitor.

  KEYS[1] counters hash
  KEYS[2] request ID -> position hash
  KEYS[3] entry-time runs sorted set (score = first position of the run, member = "<start>:<entry time>")
  ARGV    request ID (16 raw bytes for a UUID), entry time, request ID, entry time, ...

  Output: one position per request ID of ARGV, in ARGV order.
]]
local counters, positions, runs = KEYS[1], KEYS[2], KEYS[3]

-- First pass: which IDs are new (a repeat inside the batch is not new the second time).
local result = {}
local fresh = {}
local assignedInBatch = {}
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  local existing = redis.call('HGET', positions, id)
  if existing then
    result[#result + 1] = tonumber(existing)
  else
    if not assignedInBatch[id] then
      fresh[#fresh + 1] = i
      assignedInBatch[id] = true
    end
    result[#result + 1] = false
  end
end
if #fresh == 0 then
  return result
end

local first = redis.call('HINCRBY', counters, 'q', #fresh) - #fresh + 1
local lastRun = redis.call('ZREVRANGE', runs, 0, 0)[1]
local lastTime = lastRun and string.match(lastRun, ':(.*)$')

local position = first - 1
for _, i in ipairs(fresh) do
  position = position + 1
  local id, entryTime = ARGV[i], ARGV[i + 1]
  redis.call('HSET', positions, id, position)
  assignedInBatch[id] = position
  if entryTime ~= lastTime then
    redis.call('ZADD', runs, position, string.format('%d:%s', position, entryTime))
    lastTime = entryTime
  end
end
for k = 1, #result do
  if result[k] == false then
    result[k] = assignedInBatch[ARGV[2 * k - 1]]
  end
end
return result
