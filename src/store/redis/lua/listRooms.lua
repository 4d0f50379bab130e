--[[
  Rooms at runtime: every room and the rooms version they are of, read at one instant.

  KEYS[1] event ID -> settings hash
  KEYS[2] event ID -> creation version hash
  KEYS[3] rooms version string

  Output: {version, {event ID, settings, ...}, {event ID, creation version, ...}}.
]]
return {redis.call('GET', KEYS[3]) or '0', redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])}
