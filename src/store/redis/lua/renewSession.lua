--[[
  The shared "last seen" of a gate session (QueueStore.renewSession), one atomic step.

  KEYS[1] counters hash
  KEYS[2] tokens hash
  KEYS[3] open sessions by exp sorted set
  KEYS[4] last seen hash: request ID -> epoch ms
  ARGV[1] request ID
  ARGV[2] now (ms)
  ARGV[3] idle before (ms), or '' for no idle check
  ARGV[4] touch: '1' records now as last seen, '0' only reads
  ARGV[5] '' (the token set is in KEYS[2]), or the token set's iat in ms when it lives elsewhere (the composite
          store keeps token sets in DynamoDB): then the token checks are the caller's and an idle session is
          answered 'idle', not closed here.

  Output: {'open', last seen} | {'ended'} | {'closed'} | {'no-session'} | {'idle'} (ARGV[5] given only).
]]
local counters, tokens, openByExp, lastSeenHash = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, now, idleBefore, touch, external = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]

local baseline, record, position, claims
if external ~= '' then
  baseline = tonumber(external)
else
  record = redis.call('HGET', tokens, id)
  if not record then
    return {'no-session'}
  end
  local current
  current, position, claims = string.match(record, '^(%-?%d+),(%d+),(.*)$')
  if current ~= '0' then
    return {'closed'}
  end
  baseline = tonumber(string.match(claims, '^%[(%-?%d+)')) * 1000
end

local seen = tonumber(redis.call('HGET', lastSeenHash, id)) or baseline
if idleBefore ~= '' and seen < tonumber(idleBefore) then
  if external ~= '' then
    return {'idle'}
  end
  redis.call('HSET', tokens, id, '-1,' .. position .. ',' .. claims)
  redis.call('ZREM', openByExp, struct.pack('>I6', tonumber(position)) .. id)
  redis.call('HINCRBY', counters, 'ab', 1)
  redis.call('HDEL', lastSeenHash, id)
  return {'ended'}
end
if touch == '1' and now > seen then
  redis.call('HSET', lastSeenHash, id, ARGV[2])
  seen = now
end
return {'open', tostring(seen)}
