--[[
  Composite store (Redis + DynamoDB): counts a session closed in DynamoDB in `completed` or `abandoned`, once
  per request ID, so that repeating it (a retry after a crash between the DynamoDB update and this step)
  never counts twice.

  KEYS[1] counters hash
  KEYS[2] closed sessions hash (request ID -> status)
  ARGV[1] request ID
  ARGV[2] status: '1' completed, '-1' abandoned

  Output: 1 if counted now, 0 if it had been counted before.
]]
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then
  return 0
end
redis.call('HINCRBY', KEYS[1], ARGV[2] == '1' and 'co' or 'ab', 1)
return 1
