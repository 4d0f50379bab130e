-- The pre-queue and the draw of one room (see joinPrequeue.lua for the key layout).
-- A pre-queue entry is stored as "<join order>:<entry time>", with ":L" appended once it left.
local function parseEntry(value)
  local order, entryTime, flag = string.match(value, '^(%d+):(%-?%d+)(.*)$')
  return tonumber(order), entryTime, flag == ':L'
end

-- The room's draw, created as "committed" with the given seed unless it has one; returns its state.
local function ensureDraw(drawKey, seed, commitment, algorithm)
  if redis.call('HSETNX', drawKey, 'st', 'committed') == 1 then
    redis.call('HSET', drawKey, 'sd', seed, 'cm', commitment, 'al', algorithm)
  end
  return redis.call('HGET', drawKey, 'st')
end
