
-- The bucket algorithms (token bucket, GCRA, leaky bucket) keep one instant a whole number of intervals
-- (window / limit) ahead. Time is counted in integer microseconds; the interval is kept exact by counting
-- in ticks of 1/scale microsecond, scale = limit / gcd(window, limit), interval = window / gcd(window,
-- limit) ticks. Lua numbers are doubles, exact up to 2^53; the policies are validated so that every value
-- here stays below it. The instant is stored as one string, "micros" or "micros:ticks", followed by "r" while
-- it holds reservations: requests that may wait took permits past the burst, up to a window beyond it.

-- A duration in ticks as whole microseconds rounded up, and the nanoseconds that rounding added.
local function micros(ticks, scale)
  if ticks <= 0 then
    return 0, 0
  elseif scale == 1 then
    -- the interval is whole microseconds, as with every window the limit divides
    return ticks, 0
  end
  local us = ceil_div(ticks, scale)
  return us, floor_div((us * scale - ticks) * 1000, scale)
end

-- Writes the instant `ahead` ticks after now, kept while it lies ahead, marked if it holds reservations.
local function save_ahead(key, now, ahead, scale, reserved)
  local whole, ticks = ahead, 0
  if scale > 1 then
    whole = floor_div(ahead, scale)
    ticks = ahead - whole * scale
  end
  local at = now + whole
  if ticks > 0 then
    at = string.format('%d:%d', at, ticks)
    whole = whole + 1
  end
  if reserved then
    at = at .. 'r'
  end
  -- numbers go to Redis as they are: it writes whole numbers out in full, never with an exponent
  redis.call('SET', key, at, 'PX', ttl_ms(whole))
end

-- Moves the instant cost intervals on, max(instant, now) + cost x interval, writes it and returns it; past
-- `burst` intervals, it holds reservations.
local function take_ahead(key, now, ahead, cost, interval, scale, burst)
  ahead = ahead + cost * interval
  save_ahead(key, now, ahead, scale, ahead > burst * interval)
  return ahead
end

-- A bucket's policy in ticks and its state: scale, interval and `ahead`, the ticks from now to the stored
-- instant, at most `most_intervals` intervals, or a window more while it holds reservations; 0 when it has
-- passed or the key holds none; and whether it holds reservations.
local function bucket_state(key, limit, window, now, most_intervals)
  -- Euclid: fmod is exact on doubles, so it needs no correction
  local fmod, g, b = math.fmod, window, limit
  while b ~= 0 do
    g, b = b, fmod(g, b)
  end
  local scale, interval = limit / g, window / g
  -- a key of another type (the policy changed its algorithm) reads as empty and is overwritten
  local stored = redis.pcall('GET', key)
  if type(stored) ~= 'string' then
    return scale, interval, 0, false
  end
  local reserved = string.sub(stored, -1) == 'r'
  if reserved then
    stored = string.sub(stored, 1, -2)
    most_intervals = most_intervals + limit
  end
  local at, ticks = tonumber(stored), 0
  if not at then
    at, ticks = string.match(stored, '^(-?%d+):(%d+)$')
    at, ticks = tonumber(at), tonumber(ticks)
  end
  if not at or at < now then
    return scale, interval, 0, false
  end
  local ahead, most = (at - now) * scale + ticks, most_intervals * interval
  if ahead > most then
    -- no clock running forward puts the instant beyond `most` (a full queue's, an empty bucket's): Redis'
    -- clock stepped back, or a larger policy of the same name wrote it. Written back at once, even for a
    -- denied request, so that the key holds the client no longer than the retry-after it reports.
    ahead = most
    save_ahead(key, now, most, scale, reserved)
  end
  return scale, interval, ahead, reserved
end
