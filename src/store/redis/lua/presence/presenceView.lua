--[[
  A room's presence at one instant (PresenceStore.presenceView; src/store/redis/presence.ts). The windows the
  timeout reaches back to are combined with BITOP OR and, with the beating positions, give the absent ones in a
  scratch key (deleted before returning).

  KEYS[1] counters hash, KEYS[2] serving history zset ("<value>:<reached at>"), KEYS[3] token positions zset,
  KEYS[4] left positions zset
  ARGV[1] key base, ARGV[2] now, ARGV[3] timeout (0 = off), ARGV[4] window length, ARGV[5] arrival cutoff
  ('' = off), ARGV[6] rate window start, ARGV[7] limit of next present positions

  Output: {serving, queue, present waiting, absent waiting, counted awaiting, no-shows, arrival boundary,
           skipped in window, skipped this second, late arrivals, next present...}
]]
local counters, history, tokenPositions, leftPositions = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base = ARGV[1]
local now, timeout, windowSeconds = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local cutoff = nil
if ARGV[5] ~= '' then cutoff = tonumber(ARGV[5]) end
local windowStart, limit = tonumber(ARGV[6]), tonumber(ARGV[7])
local PAGE = 256

local c = redis.call('HMGET', counters, 'q', 's', 'mx', 'g')
local queue = tonumber(c[1] or '0')
local serving = tonumber(c[2] or '0')
local maxExpired = tonumber(c[3] or '0')
local generation = c[4] or '0'
local stats = base .. 'pt:' .. generation

-- `absent` (when presence is on and some position ever beat): the positions that beat and were not seen
-- within the timeout — the windows it reaches back to OR'ed, widened to cover every position, inverted, AND the
-- beating positions. A position that never beat is never absent (src/domain/presence-settings.ts).
local absent = nil
local beating = base .. 'pb:' .. generation
if timeout > 0 and redis.call('EXISTS', beating) == 1 then
  local windows = {}
  for i = math.floor((now - timeout) / windowSeconds), math.floor(now / windowSeconds) do
    windows[#windows + 1] = base .. 'pw:' .. generation .. ':' .. windowSeconds .. ':' .. i
  end
  absent = base .. 'pv:' .. generation
  redis.call('BITOP', 'OR', absent, unpack(windows))
  redis.call('SETBIT', absent, queue + 1, 0)
  redis.call('BITOP', 'NOT', absent, absent)
  redis.call('BITOP', 'AND', absent, absent, beating)
end

local function present(p)
  return absent == nil or redis.call('GETBIT', absent, p) == 0
end
-- Present positions in lo..hi (inclusive).
local function countPresent(lo, hi)
  if hi < lo then return 0 end
  if absent == nil then return hi - lo + 1 end
  return hi - lo + 1 - redis.call('BITCOUNT', absent, lo, hi, 'BIT')
end
-- Members of a position zset in lo..hi that are present.
local function presentMembers(zset, lo, hi)
  if hi < lo then return 0 end
  if absent == nil then return redis.call('ZCOUNT', zset, lo, hi) end
  local n = 0
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', zset, lo, hi)) do
    if present(tonumber(member)) then n = n + 1 end
  end
  return n
end

-- The highest counter value first reached before `since` (0 if none), from the top of the history down.
local function reachedBefore(since)
  local top = '+inf'
  repeat
    local page = redis.call('ZREVRANGEBYSCORE', history, top, '-inf', 'LIMIT', 0, PAGE)
    for _, member in ipairs(page) do
      local value, at = string.match(member, '^(%d+):(.*)$')
      if tonumber(at) < since then return tonumber(value) end
      top = '(' .. value
    end
  until #page < PAGE
  return 0
end

local presentWaiting, absentWaiting = 0, 0
if queue > serving then
  local left = redis.call('ZCOUNT', leftPositions, serving + 1, queue)
  presentWaiting = countPresent(serving + 1, queue) - presentMembers(leftPositions, serving + 1, queue)
  absentWaiting = queue - serving - left - presentWaiting
end

local admitted = math.min(serving, queue)
local boundary = maxExpired
if cutoff ~= nil then boundary = math.max(maxExpired, math.min(reachedBefore(cutoff), admitted)) end
local countedAwaiting = 0
if admitted > boundary then
  countedAwaiting = countPresent(boundary + 1, admitted)
    - presentMembers(tokenPositions, boundary + 1, admitted)
    - presentMembers(leftPositions, boundary + 1, admitted)
end
local noShows = 0
if boundary > maxExpired then
  noShows = boundary - maxExpired
    - redis.call('ZCOUNT', tokenPositions, maxExpired + 1, boundary)
    - redis.call('ZCOUNT', leftPositions, maxExpired + 1, boundary)
end

local nextPresent = {}
local p = serving + 1
while #nextPresent < limit and p <= queue do
  local found = p
  -- The string covers every position up to the queue (widened above): a clear bit is a present position.
  if absent ~= nil then found = redis.call('BITPOS', absent, 0, p, queue, 'BIT') end
  if found < 0 then break end
  if not redis.call('ZSCORE', leftPositions, found) then nextPresent[#nextPresent + 1] = found end
  p = found + 1
end

local skippedInWindow, skippedThisSecond = 0, 0
local fields = redis.call('HGETALL', stats)
local lateArrivals = 0
for i = 1, #fields, 2 do
  local at = string.match(fields[i], '^k(%d+)$')
  if at then
    local n = tonumber(fields[i + 1])
    if tonumber(at) >= windowStart then skippedInWindow = skippedInWindow + n end
    if tonumber(at) >= now then skippedThisSecond = skippedThisSecond + n end
  elseif fields[i] == 'la' then
    lateArrivals = tonumber(fields[i + 1])
  end
end

if absent ~= nil then redis.call('DEL', absent) end
local out = {serving, queue, presentWaiting, absentWaiting, countedAwaiting, noShows, boundary,
  skippedInWindow, skippedThisSecond, lateArrivals}
for _, position in ipairs(nextPresent) do out[#out + 1] = position end
return out
