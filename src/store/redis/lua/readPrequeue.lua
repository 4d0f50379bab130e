--[[
  Pre-queue entries in join order, from join order ARGV[1] + 1, at most ARGV[2] of them, read at one instant.

  KEYS[1] pre-queue list, KEYS[2] pre-queue hash, KEYS[3] request ID -> position hash
  ARGV    after (join order), limit

  Output: flat list request ID, entry value ("<join order>:<entry time>[:L]"), position or nil, ...
]]
local after, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local ids = redis.call('LRANGE', KEYS[1], after, after + limit - 1)
local result = {}
for _, id in ipairs(ids) do
  result[#result + 1] = id
  result[#result + 1] = redis.call('HGET', KEYS[2], id)
  result[#result + 1] = redis.call('HGET', KEYS[3], id)
end
return result
