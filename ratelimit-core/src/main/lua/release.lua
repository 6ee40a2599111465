
-- Marks a state deleted on purpose as released for ttl_ms, at most as long as it would have lived, so that a
-- caller still expecting it, as Redis last told it, does not take it for lost (time.lua).
local function release(key, ttl_ms)
  if ttl_ms > 0 then
    redis.call('SET', key .. RELEASED, 1, 'PX', ttl_ms)
  end
end
