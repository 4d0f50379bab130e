--[[
  Stores a room's draw (seed, commitment, algorithm; state "committed") unless it has one.

  KEYS[1] draw hash
  ARGV    seed, commitment, algorithm

  Output: the draw hash as a flat [field, value, ...] list (the winner of any race).
]]
--- @include "prequeueDraw"
ensureDraw(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
return redis.call('HGETALL', KEYS[1])
