--[[
  Rooms at runtime: creates a room or replaces its settings, bumping the rooms version that every node polls.
  Settings equal to those stored change nothing and bump nothing (nodes write their configured rooms at every
  start; that must not make every other node reload the rooms).

  KEYS[1] event ID -> settings (JSON text) hash
  KEYS[2] event ID -> rooms version at which the room was created hash
  KEYS[3] rooms version string
  ARGV[1] event ID
  ARGV[2] settings (JSON text, opaque here)

  Output: 'created', 'replaced' or 'unchanged'.
]]
local stored = redis.call('HGET', KEYS[1], ARGV[1])
if stored == ARGV[2] then
  return 'unchanged'
end
local version = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if stored then
  return 'replaced'
end
redis.call('HSET', KEYS[2], ARGV[1], version)
return 'created'
