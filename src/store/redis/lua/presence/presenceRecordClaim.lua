--[[
  A first claim: counts a late arrival when the claim is past its arrival window (ARGV[3] = 1) or the position
  was passed while absent (bit set in the skipped bitmap by presenceRecordTick).

  KEYS[1] counters hash (generation 'g')
  ARGV[1] key base, ARGV[2] position, ARGV[3] late (1/0)
  Output: 1 counted, 0 not
]]
local generation = redis.call('HGET', KEYS[1], 'g') or '0'
local stats = ARGV[1] .. 'pt:' .. generation
local skipped = redis.call('GETBIT', ARGV[1] .. 'ps:' .. generation, tonumber(ARGV[2]))
if ARGV[3] == '1' or skipped == 1 then
  redis.call('HINCRBY', stats, 'la', 1)
  redis.call('EXPIRE', stats, 604800)
  return 1
end
return 0
