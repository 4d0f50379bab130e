--[[
  One pre-queue entry and its position, read at one instant.

  KEYS[1] pre-queue hash, KEYS[2] request ID -> position hash
  ARGV[1] request ID

  Output: nil when the request ID is not in the pre-queue, else {entry value, position or nil}.
]]
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then
  return false
end
return {value, redis.call('HGET', KEYS[2], ARGV[1])}
