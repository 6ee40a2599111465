
--[[
Leaky bucket, queue type: admitted requests are served one per interval = window / limit, in order; a
request is admitted while fewer than `burst` requests wait, and must then wait for its slot (`delay`). As
nginx's limit_req `delay=`, the first `delay_after` queued requests pass at once instead of waiting.

State: the instant the last admitted request is done, "next free", as the bucket algorithms keep their
instant (ticks.lua). The requests waiting at `now` are the slots between now and next free:
ceil((next free - now) / interval) - 1 of them.
]]

-- s.ahead is max(next free - now, 0); a full queue's next free is (burst + 1) intervals ahead
local function load(key, limit, window, burst, cost, delay_after, now)
  return bucket_state(key, limit, window, burst, cost, delay_after, now, burst + 1)
end

local function queued(s)
  if s.ahead <= 0 then
    return 0
  end
  return ceil_div(s.ahead, s.interval) - 1
end

local function admits(s)
  return queued(s) + s.cost <= s.burst
end

local function reply(s, allowed)
  local remaining = s.burst - queued(s)
  if remaining < 0 then
    remaining = 0
  end
  local retry, retry_ns, delay, delay_ns = 0, 0, 0, 0
  if allowed then
    -- this request's slot starts where it found next free; the first delay_after slots are not waited for
    local slot = s.ahead - s.cost * s.interval
    delay, delay_ns = micros(slot - s.delay_after * s.interval, s.scale)
  else
    retry, retry_ns = micros(s.ahead - (s.burst - s.cost + 1) * s.interval, s.scale)
  end
  local reset, reset_ns = micros(s.ahead, s.scale)
  return { allowed and 1 or 0, remaining, retry, reset, delay, retry_ns, reset_ns, delay_ns }
end

local algorithm = { load = load, admits = admits, take = take_ahead, reply = reply }
