-- Moves the serving counter to `value` and, when it is a new highest value, records when it was first
-- reached: the time position P became servable is the reached-at of the smallest recorded value >= P.
-- The member carries the value so that two values reached in the same second stay distinct.
local function setServing(countersKey, historyKey, value, now)
  local highest = tonumber(redis.call('HGET', countersKey, 'ms') or '0')
  if value > highest then
    redis.call('ZADD', historyKey, value, string.format('%d:%s', value, now))
    redis.call('HSET', countersKey, 's', value, 'ms', value)
  else
    redis.call('HSET', countersKey, 's', value)
  end
end
