--[[
  Everything one tick of automatic admission reads, at one instant (see AdmissionSnapshot in the store port).

  KEYS[1] counters hash
  KEYS[2] serving history sorted set (score = value, member = "<value>:<reached at>")
  KEYS[3] token positions sorted set
  KEYS[4] left positions sorted set
  KEYS[5] open sessions by exp sorted set
  ARGV[1] now (epoch seconds)
  ARGV[2] start of the rate window (epoch seconds)

  Output: {queue, serving, reached in window, reached this second, awaiting claim, active sessions}
]]
local counters, history, tokenPositions, leftPositions, openByExp = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now, windowStart = tonumber(ARGV[1]), tonumber(ARGV[2])
local PAGE = 256

local function int(n)
  return string.format('%d', n)
end

local c = redis.call('HMGET', counters, 'q', 's', 'ms', 'mx')
local queue = tonumber(c[1] or '0')
local serving = tonumber(c[2] or '0')
local highest = tonumber(c[3] or '0')
local maxExpired = tonumber(c[4] or '0')

-- Positions first reached at or after `since`: the highest value minus the highest one reached before
-- `since`, found from the top of the history down (only the window's own values are passed over).
local function reachedSince(since)
  local top = '+inf'
  repeat
    local page = redis.call('ZREVRANGEBYSCORE', history, top, '-inf', 'LIMIT', 0, PAGE)
    for _, member in ipairs(page) do
      local value, at = string.match(member, '^(%d+):(.*)$')
      if tonumber(at) < since then
        return highest - tonumber(value)
      end
      top = '(' .. value
    end
  until #page < PAGE
  return highest
end

local admitted = math.min(serving, queue)
local awaitingClaim = 0
if admitted > maxExpired then
  local range = {'(' .. int(maxExpired), int(admitted)}
  awaitingClaim = admitted - maxExpired
    - redis.call('ZCOUNT', tokenPositions, range[1], range[2])
    - redis.call('ZCOUNT', leftPositions, range[1], range[2])
end

return {
  queue,
  serving,
  reachedSince(windowStart),
  reachedSince(now),
  awaitingClaim,
  redis.call('ZCOUNT', openByExp, now, '+inf'),
}
