
local algorithm = {}

-- s.ahead is max(full - now, 0), max(TAT - now, 0) for GCRA
function algorithm.load(key, limit, window, burst, cost, delay_after, now)
  return bucket_state(key, limit, window, burst, cost, now, burst)
end

function algorithm.admits(s)
  return s.ahead <= (s.burst - s.cost) * s.interval
end

function algorithm.take(s)
  take_ahead(s)
end

function algorithm.reply(s, allowed)
  local remaining = math.max(0, floor_div(s.burst * s.interval - s.ahead, s.interval))
  local retry, retry_ns = 0, 0
  if not allowed then
    retry, retry_ns = micros(s.ahead - (s.burst - s.cost) * s.interval, s.scale)
  end
  local reset, reset_ns = micros(s.ahead, s.scale)
  return { allowed and 1 or 0, remaining, retry, reset, 0, retry_ns, reset_ns, 0 }
end
