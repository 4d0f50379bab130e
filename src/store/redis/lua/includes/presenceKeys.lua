-- The room's presence keys of one reset generation (src/store/redis/presence.ts): the stats hash, the skipped,
-- beating and scratch bitmaps, the window index and every window bitmap it lists. `base` is "<prefix>{<event>}:".
local function unlinkPresence(base, generation)
  local index = base .. 'pi:' .. generation
  local keys = {}
  for _, suffix in ipairs(redis.call('ZRANGE', index, 0, -1)) do keys[#keys + 1] = base .. suffix end
  for _, kind in ipairs({'pt:', 'ps:', 'pb:', 'pv:', 'pi:'}) do keys[#keys + 1] = base .. kind .. generation end
  -- Far below Lua's unpack limit: the index keeps at most two hours of windows (presenceMarkSeen.lua).
  redis.call('UNLINK', unpack(keys))
end
