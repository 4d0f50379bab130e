--[[
  Expiry job step: records as expired every position whose eligibility time is before the cutoff and that
  holds no token, advancing max expired and the expired count (a position that was left is passed over but
  never counted as expired); optionally moves the serving counter forward by the number of newly expired
  unclaimed positions, never past the queue. Same rules as the SQLite store.

  KEYS[1] counters hash
  KEYS[2] entry-time runs sorted set
  KEYS[3] serving history sorted set
  KEYS[4] token positions sorted set
  KEYS[5] left positions sorted set
  ARGV[1] cutoff (epoch seconds): eligible strictly before it means expired
  ARGV[2] '1' to move the serving counter forward, else '0'
  ARGV[3] now (epoch seconds), recorded if the counter reaches a new highest value

  Output: {previous max expired, max expired, newly expired unclaimed, previous serving, serving}
]]
--- @include "setServing"

local counters, runs, history, tokenPositions, leftPositions = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local cutoff = tonumber(ARGV[1])
-- Both history and runs are read in pages so one step never builds a huge reply inside the script.
local PAGE = 256

local function int(n)
  return string.format('%d', n)
end
local function timeOf(member)
  local head, at = string.match(member, '^(%d+):(.*)$')
  return tonumber(head), tonumber(at)
end

local c = redis.call('HMGET', counters, 'q', 's', 'mx', 'es')
local queue = tonumber(c[1] or '0')
local serving = tonumber(c[2] or '0')
local maxExpired = tonumber(c[3] or '0')
local since = c[4] and tonumber(c[4])
local unchanged = {maxExpired, maxExpired, 0, serving, serving}

-- Every eligibility time is >= the time expiry was switched on; none can be before the cutoff yet.
if not since or since >= cutoff then
  return unchanged
end

-- Highest value the counter had reached before the cutoff: beyond it nothing was servable long enough.
-- Scanned from the top down, so only values reached within the last expiry period are passed over;
-- values <= max expired could not move anything.
local reached
local top = '+inf'
repeat
  local page = redis.call('ZREVRANGEBYSCORE', history, top, '(' .. int(maxExpired), 'LIMIT', 0, PAGE)
  for _, member in ipairs(page) do
    local value, at = timeOf(member)
    if at < cutoff then
      reached = value
      break
    end
    top = '(' .. int(value)
  end
until reached or #page < PAGE
if not reached then
  return unchanged
end

local upper = math.min(reached, queue)
if upper <= maxExpired then
  return unchanged
end

-- Positions expire in order: stop at the first one in (max expired, upper] that joined at or after the
-- cutoff. Entry times are stored per run, so look at the run holding max expired + 1, then at later runs.
local firstTooRecent
local runOfNext = redis.call('ZREVRANGEBYSCORE', runs, int(maxExpired + 1), '-inf', 'LIMIT', 0, 1)[1]
if runOfNext then
  local _, at = timeOf(runOfNext)
  if at >= cutoff then
    firstTooRecent = maxExpired + 1
  end
end
if not firstTooRecent then
  local low = '(' .. int(maxExpired + 1)
  repeat
    local page = redis.call('ZRANGEBYSCORE', runs, low, int(upper), 'LIMIT', 0, PAGE)
    for _, member in ipairs(page) do
      local start, at = timeOf(member)
      if at >= cutoff then
        firstTooRecent = start
        break
      end
      low = '(' .. int(start)
    end
  until firstTooRecent or #page < PAGE
end

local newMax = firstTooRecent and (firstTooRecent - 1) or upper
if newMax <= maxExpired then
  return unchanged
end

local claimed = redis.call('ZCOUNT', tokenPositions, '(' .. int(maxExpired), int(newMax))
local left = redis.call('ZCOUNT', leftPositions, '(' .. int(maxExpired), int(newMax))
local unclaimed = newMax - maxExpired - claimed - left
redis.call('HSET', counters, 'mx', newMax)
redis.call('HINCRBY', counters, 'x', unclaimed)

local newServing = serving
if ARGV[2] == '1' and unclaimed > 0 then
  -- Never past the queue, never backwards (incrementServingWithinQueue.lua).
  newServing = math.max(serving, math.min(serving + unclaimed, queue))
  if newServing ~= serving then
    setServing(counters, history, newServing, ARGV[3])
  end
end
return {maxExpired, newMax, unclaimed, serving, newServing}
