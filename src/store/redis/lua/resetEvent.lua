--[[
  Deletes every position, token, history entry and counter of one event, in one atomic step: a request
  that straddles the reset sees either all of the old state or none of it. Keeps the signing keys and the
  expiry switch time (a setting, not state).

  KEYS[1]    counters hash
  KEYS[2..n] every other per-event state key
]]
local since = redis.call('HGET', KEYS[1], 'es')
-- UNLINK frees a million-entry hash in the background instead of blocking the server.
redis.call('UNLINK', unpack(KEYS))
if since then
  redis.call('HSET', KEYS[1], 'es', since)
end
return 0
