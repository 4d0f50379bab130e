--[[
  Rooms at runtime: one room's settings and creation version, read at one instant.

  KEYS[1] event ID -> settings hash
  KEYS[2] event ID -> creation version hash
  ARGV[1] event ID

  Output: {settings, creation version}, or nil when the room does not exist.
]]
local settings = redis.call('HGET', KEYS[1], ARGV[1])
if not settings then
  return false
end
return {settings, redis.call('HGET', KEYS[2], ARGV[1]) or '0'}
