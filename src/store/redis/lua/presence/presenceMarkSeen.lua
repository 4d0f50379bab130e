--[[
  Merges the positions one node saw during one presence window into the room's bitmap of that window
  (src/store/redis/presence.ts). The window's key carries the room's reset generation, so a reset starts
  presence afresh; it expires by itself once no presence timeout can reach back to it.

  KEYS[1] counters hash (for the generation 'g'); every other key is built here under the room's hash tag
  ARGV[1] key base "<prefix>{<event>}:"
  ARGV[2] now (epoch seconds)
  ARGV[3] window length in seconds
  ARGV[4..] positions
]]
local generation = redis.call('HGET', KEYS[1], 'g') or '0'
local windowSeconds = tonumber(ARGV[3])
local window = math.floor(tonumber(ARGV[2]) / windowSeconds)
local key = ARGV[1] .. 'pw:' .. generation .. ':' .. windowSeconds .. ':' .. window
for i = 4, #ARGV do
  redis.call('SETBIT', key, tonumber(ARGV[i]), 1)
end
-- A timeout spans at most 12 windows (presenceWindowSeconds): two more for the window being filled.
redis.call('EXPIRE', key, windowSeconds * 14)
return #ARGV - 3
