
-- === decision
-- ahead: max(full - now, 0), max(TAT - now, 0) for GCRA
local scale, interval, ahead = bucket_state(key, limit, window, now, burst)
local allowed = ahead <= (burst - cost) * interval

-- === take
if allowed then
  ahead = take_ahead(key, now, ahead, cost, interval, scale)
end

-- === reply
local remaining = floor_div(burst * interval - ahead, interval)
if remaining < 0 then
  remaining = 0
end
local retry, retry_ns = 0, 0
if not allowed then
  retry, retry_ns = micros(ahead - (burst - cost) * interval, scale)
end
local reset, reset_ns = micros(ahead, scale)
return { allowed and 1 or 0, remaining, retry, reset, 0, retry_ns, reset_ns, 0, now }
