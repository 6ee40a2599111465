
-- === decision
-- ahead: max(full - now, 0), max(TAT - now, 0) for GCRA; a request that may wait, `shaping` microseconds at
-- most, reserves its permits past the burst
local scale, interval, ahead = bucket_state(key, limit, window, now, burst)
local wait = shaping * scale
local allowed = ahead <= (burst - cost) * interval + wait

-- === take
if allowed then
  ahead = take_ahead(key, now, ahead, cost, interval, scale, burst)
end

-- === reply
local remaining = floor_div(burst * interval - ahead, interval)
if remaining < 0 then
  remaining = 0
end
local retry, retry_ns, delay, delay_ns = 0, 0, 0, 0
if allowed then
  -- a reservation goes ahead once the instant it found, cost intervals back, is within the burst again
  delay, delay_ns = micros(ahead - burst * interval, scale)
else
  retry, retry_ns = micros(ahead - (burst - cost) * interval - wait, scale)
end
local reset, reset_ns = micros(ahead, scale)
return { allowed and 1 or 0, remaining, retry, reset, delay, retry_ns, reset_ns, delay_ns, now }
