--[[
Calling convention, the same for all six standalone scripts (docs/redis.md):
  KEYS[1]  the state key; the script touches no other key
  ARGV[1]  limit      ARGV[2] window in microseconds   ARGV[3] burst   ARGV[4] cost
  ARGV[5]  now in microseconds, or "" to use Redis TIME
  ARGV[6]  shaping ("" = 0): for the leaky bucket the queued requests that pass without waiting; for GCRA
           and the token bucket how long, in microseconds, a request may wait for its permits (a reservation)
  ARGV[7]  optional: the Redis TIME in microseconds after which the caller no longer waits; a call run
           later changes nothing and fails with an error starting "LATE"
  ARGV[8]  optional: "1" if the caller expects the state key to exist, as Redis last told it; a call that
           finds it gone changes nothing and fails with an error starting "LOST"
Returns: allowed (1/0), remaining, retry-after, reset-after, delay (microseconds, rounded up), then for
each of the three times how many nanoseconds the rounding up added (0 to 999), then the instant of the
decision in microseconds, which a give-back of the request needs (give-back.lua).

The build puts each script together from the pieces in ratelimit-core/src/main/lua: these helpers,
time.lua, entry.lua, then the algorithm's pieces. Every line runs on every call, so a script creates no
table and no function its decision does not use: the pieces define only the functions it calls, and the
last one holds the decision itself, straight-line code over the locals entry.lua sets (key, limit, window,
burst, cost, shaping, now), in three sections, each starting with its marker line:
  -- === decision   reads the state and ends with `local allowed`, whether this policy admits the request
  -- === take       `if allowed then` takes the request's cost `end`
  -- === reply      returns the reply
The stacked script runs the same sections in a function per algorithm (stacked.lua).
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
