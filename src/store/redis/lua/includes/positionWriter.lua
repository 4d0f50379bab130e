-- Hands out positions one at a time after the queue counter, keeping the entry-time runs as assignPositions.lua
-- does (a run starts wherever the entry time differs from the previous position's). Entry times are strings
-- of whole seconds, compared as written. Call finish() once, after the last add().
local function positionWriter(countersKey, positionsKey, runsKey)
  local queue = tonumber(redis.call('HGET', countersKey, 'q') or '0')
  local start = queue
  local lastRun = redis.call('ZREVRANGE', runsKey, 0, 0)[1]
  local lastTime = lastRun and string.match(lastRun, ':(.*)$')
  local writer = {}
  function writer.add(id, entryTime)
    queue = queue + 1
    redis.call('HSET', positionsKey, id, queue)
    if entryTime ~= lastTime then
      redis.call('ZADD', runsKey, queue, string.format('%d:%s', queue, entryTime))
      lastTime = entryTime
    end
    return queue
  end
  function writer.finish()
    if queue ~= start then
      redis.call('HSET', countersKey, 'q', queue)
    end
    return queue
  end
  return writer
end
