
--[[
Leaky bucket, queue type: admitted requests are served one per interval = window / limit, in order; a
request is admitted while fewer than `burst` requests wait, and must then wait for its slot (`delay`). As
nginx's limit_req `delay=`, the first `delay_after` queued requests pass at once instead of waiting.

State: the instant the last admitted request is done, "next free", as the bucket algorithms keep their
instant (ticks.lua). The requests waiting at `now` are the slots between now and next free:
ceil((next free - now) / interval) - 1 of them.
]]

local function queued(ahead, interval)
  if ahead <= 0 then
    return 0
  end
  return ceil_div(ahead, interval) - 1
end

-- === decision
-- the policy's shaping is its delay_after
local delay_after = shaping
-- ahead: max(next free - now, 0); a full queue's next free is (burst + 1) intervals ahead
local scale, interval, ahead = bucket_state(key, limit, window, now, burst + 1)
local allowed = queued(ahead, interval) + cost <= burst

-- === take
if allowed then
  ahead = take_ahead(key, now, ahead, cost, interval, scale, burst + 1)
end

-- === reply
local remaining = burst - queued(ahead, interval)
if remaining < 0 then
  remaining = 0
end
local retry, retry_ns, delay, delay_ns = 0, 0, 0, 0
if allowed then
  -- this request's slot starts where it found next free; the first delay_after slots are not waited for
  local slot = ahead - cost * interval
  delay, delay_ns = micros(slot - delay_after * interval, scale)
else
  retry, retry_ns = micros(ahead - (burst - cost + 1) * interval, scale)
end
local reset, reset_ns = micros(ahead, scale)
return { allowed and 1 or 0, remaining, retry, reset, delay, retry_ns, reset_ns, delay_ns, now }
