--[[
Calling convention, the same for all six standalone scripts (docs/redis.md):
  KEYS[1]  the state key; the script touches no other key
  ARGV[1]  limit      ARGV[2] window in microseconds   ARGV[3] burst   ARGV[4] cost
  ARGV[5]  now in microseconds, or "" to use Redis TIME
  ARGV[6]  leaky bucket only: queued requests that pass without waiting ("" = 0)
  ARGV[7]  optional: the Redis TIME in microseconds after which the caller no longer waits; a call run
           later changes nothing and fails with an error starting "LATE"
Returns: allowed (1/0), remaining, retry-after, reset-after, delay (microseconds, rounded up), then for
each of the three times how many nanoseconds the rounding up added (0 to 999).

The build puts each script together from the pieces in ratelimit-core/src/main/lua: these helpers, the
algorithm's part, time.lua and entry.lua. Every line runs on every call, so each part defines only what
its decision uses and ends with one table constructor, local algorithm = { load = ..., admits = ...,
take = ..., reply = ... } (a table filled field by field is rebuilt as it grows).
]]

-- A key lives at least this long, so a caller whose clock runs slower than Redis' never loses state early.
local MIN_TTL_MS = 1000

local floor = math.floor

-- a / b is rounded in floating point; one correction makes the quotient exact.
local function floor_div(a, b)
  local q = floor(a / b)
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

-- Redis counts a TTL from the script's start in whole milliseconds, up to 1 ms before `now`: one more
-- millisecond makes sure the key outlives its state.
local function ttl_ms(micros)
  if micros <= (MIN_TTL_MS - 1) * 1000 then
    return MIN_TTL_MS
  end
  return ceil_div(micros, 1000) + 1
end
