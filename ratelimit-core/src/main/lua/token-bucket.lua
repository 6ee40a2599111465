--[[
Token bucket: a bucket of `burst` tokens, refilled at `limit` tokens per `window`, starting full. A request
takes `cost` tokens if the bucket holds that many.

State: one string, the instant at which the bucket is full again, as "micros" or "micros:ticks" (see
below). The tokens at `now` are burst - (full - now) / interval, so one number is all a bucket needs, and
the decisions are exactly those of GCRA.

Time is counted in integer microseconds; the refill interval window / limit is kept exact by counting in
ticks of 1/scale microsecond, scale = limit / gcd(window, limit), interval = window / gcd(window, limit)
ticks. Lua numbers are doubles, exact up to 2^53; the policies are validated so that every value here
stays below it.

Calling convention, the same for all six scripts (docs/redis.md):
  KEYS[1]  the state key; the script touches no other key
  ARGV[1]  limit      ARGV[2] window in microseconds   ARGV[3] burst   ARGV[4] cost
  ARGV[5]  now in microseconds, or "" to use Redis TIME
  ARGV[6]  leaky bucket only: queued requests that pass without waiting ("" = 0)
  ARGV[7]  optional: the Redis TIME in microseconds after which the caller no longer waits; a call run
           later changes nothing and fails with an error starting "LATE"
Returns: allowed (1/0), remaining, retry-after, reset-after, delay (microseconds, rounded up), then for
each of the three times how many nanoseconds the rounding up added (0 to 999).
]]

local algorithm = {}

-- A key lives at least this long, so a caller whose clock runs slower than Redis' never loses state early.
local MIN_TTL_MS = 1000

-- a / b is rounded in floating point; one correction makes the quotient exact.
local function floor_div(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then
    return q - 1
  elseif r >= b then
    return q + 1
  end
  return q
end

local function ceil_div(a, b)
  return -floor_div(-a, b)
end

local function gcd(a, b)
  while b ~= 0 do
    a, b = b, a - floor_div(a, b) * b
  end
  return a
end

-- Redis counts a TTL from the script's start in whole milliseconds, up to 1 ms before `now`: one more
-- millisecond makes sure the key outlives its state.
local function ttl_ms(micros)
  return math.max(MIN_TTL_MS, ceil_div(micros, 1000) + 1)
end

-- A duration in ticks as whole microseconds rounded up, and the nanoseconds that rounding added.
local function micros(ticks, scale)
  if ticks <= 0 then
    return 0, 0
  end
  local us = ceil_div(ticks, scale)
  return us, floor_div((us * scale - ticks) * 1000, scale)
end

-- Writes the instant s.ahead ticks after now.
local function save(s)
  local whole = floor_div(s.ahead, s.scale)
  local ticks = s.ahead - whole * s.scale
  local full = s.now + whole
  if ticks > 0 then
    full = string.format('%d:%d', full, ticks)
  end
  -- numbers go to Redis as they are: it writes whole numbers out in full, never with an exponent
  redis.call('SET', s.key, full, 'PX', ttl_ms(ceil_div(s.ahead, s.scale)))
end

function algorithm.load(key, limit, window, burst, cost, delay_after, now)
  local g = gcd(window, limit)
  local s = { key = key, limit = limit, burst = burst, cost = cost, now = now,
              scale = limit / g, interval = window / g, ahead = 0 }
  -- a key of another type (the policy changed its algorithm) reads as empty and is overwritten
  local stored = redis.pcall('GET', key)
  if type(stored) == 'string' then
    local full, ticks = tonumber(stored), 0
    if not full then
      full, ticks = string.match(stored, '^(-?%d+):(%d+)$')
      full, ticks = tonumber(full), tonumber(ticks)
    end
    if full and full >= now then
      -- ticks until the bucket is full
      s.ahead = (full - now) * s.scale + ticks
      local most = burst * s.interval
      if s.ahead > most then
        -- no clock running forward puts the full-again instant beyond now + burst x interval (an empty
        -- bucket's): Redis' clock stepped back, or a larger policy of the same name wrote it. Written back
        -- at once, even for a denied request, so that the key holds the client no longer than the
        -- retry-after it reports.
        s.ahead = most
        save(s)
      end
    end
  end
  return s
end

function algorithm.admits(s)
  return s.ahead <= (s.burst - s.cost) * s.interval
end

function algorithm.take(s)
  s.ahead = s.ahead + s.cost * s.interval
  save(s)
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

