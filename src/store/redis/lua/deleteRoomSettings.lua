--[[
  Rooms at runtime, first step of deleting a room: its settings go, and the rooms version is bumped, so every
  node stops serving the room within a second. The room's data is deleted next, by deleteRoomData.lua (another
  hash slot in a Redis Cluster, so another script; see RedisStore.deleteRoomSettings for the order).

  KEYS[1] event ID -> settings hash
  KEYS[2] event ID -> creation version hash
  KEYS[3] rooms version string
  ARGV[1] event ID

  Output: 1 when the room existed, else 0 (nothing changed).
]]
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('INCR', KEYS[3])
return 1
