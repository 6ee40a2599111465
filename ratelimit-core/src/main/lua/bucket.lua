
-- s.ahead is max(full - now, 0), max(TAT - now, 0) for GCRA
local function load(key, limit, window, burst, cost, delay_after, now)
  return bucket_state(key, limit, window, burst, cost, delay_after, now, burst)
end

local function admits(s)
  return s.ahead <= (s.burst - s.cost) * s.interval
end

local function reply(s, allowed)
  local remaining = floor_div(s.burst * s.interval - s.ahead, s.interval)
  if remaining < 0 then
    remaining = 0
  end
  local retry, retry_ns = 0, 0
  if not allowed then
    retry, retry_ns = micros(s.ahead - (s.burst - s.cost) * s.interval, s.scale)
  end
  local reset, reset_ns = micros(s.ahead, s.scale)
  return { allowed and 1 or 0, remaining, retry, reset, 0, retry_ns, reset_ns, 0 }
end

local algorithm = { load = load, admits = admits, take = take_ahead, reply = reply }
