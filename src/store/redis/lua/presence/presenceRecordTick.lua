--[[
  After an admission tick's move (src/store/redis/presence.ts, PresenceStore.recordTick):
    - the positions passed while absent are set in the skipped bitmap and counted in this second's skips;
    - the no-show boundary moves forward to ARGV[3], answering the positions that crossed it unclaimed, not
      left and not expired (at most 1000 listed, at most 20000 looked at), once across nodes.

  KEYS[1] counters hash, KEYS[2] token positions zset, KEYS[3] left positions zset
  ARGV[1] key base, ARGV[2] now, ARGV[3] no-shows through, ARGV[4..] skipped ranges as lo, hi pairs
  Output: the new no-shows' positions
]]
local c = redis.call('HMGET', KEYS[1], 'g', 'mx')
local generation = c[1] or '0'
local maxExpired = tonumber(c[2] or '0')
local stats = ARGV[1] .. 'pt:' .. generation
local skippedBits = ARGV[1] .. 'ps:' .. generation
local now = tonumber(ARGV[2])
local through = tonumber(ARGV[3])
local KEEP = 604800

local function setBits(lo, hi)
  while lo <= hi and lo % 8 ~= 0 do
    redis.call('SETBIT', skippedBits, lo, 1)
    lo = lo + 1
  end
  local bytes = math.floor((hi - lo + 1) / 8)
  if bytes > 0 then
    redis.call('SETRANGE', skippedBits, lo / 8, string.rep('\255', bytes))
    lo = lo + bytes * 8
  end
  while lo <= hi do
    redis.call('SETBIT', skippedBits, lo, 1)
    lo = lo + 1
  end
end

local skipped = 0
for i = 4, #ARGV - 1, 2 do
  local lo, hi = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  if hi >= lo then
    setBits(lo, hi)
    skipped = skipped + hi - lo + 1
  end
end
if skipped > 0 then
  redis.call('HINCRBY', stats, 'k' .. now, skipped)
  redis.call('EXPIRE', skippedBits, KEEP)
  -- Skips older than any rate window (60 s) are dropped.
  for _, field in ipairs(redis.call('HKEYS', stats)) do
    local at = string.match(field, '^k(%d+)$')
    if at and tonumber(at) < now - 120 then redis.call('HDEL', stats, field) end
  end
end

local newNoShows = {}
local previous = redis.call('HGET', stats, 'ns')
if previous == false or previous == nil then
  -- The first tick with presence records where the boundary is: earlier no-shows are not announced.
  redis.call('HSET', stats, 'ns', through)
elseif through > tonumber(previous) then
  local lo = math.max(tonumber(previous), maxExpired) + 1
  local hi = math.min(through, lo + 19999)
  for p = lo, hi do
    if #newNoShows >= 1000 then break end
    if not redis.call('ZSCORE', KEYS[2], p) and not redis.call('ZSCORE', KEYS[3], p) then
      newNoShows[#newNoShows + 1] = p
    end
  end
  redis.call('HSET', stats, 'ns', through)
end
redis.call('EXPIRE', stats, KEEP)
return newNoShows
