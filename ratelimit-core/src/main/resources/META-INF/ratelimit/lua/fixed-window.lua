--[[
Fixed window: counts the permits taken in each window, windows aligned to multiples of `window` since the
clock's zero (the Unix epoch with Redis TIME). The count starts over at each boundary, so up to twice the
limit can pass across one.

State: one string, "<window index>:<permits taken in it>".

Calling convention, the same for all six scripts (docs/redis.md):
  KEYS[1]  the state key; the script touches no other key
  ARGV[1]  limit      ARGV[2] window in microseconds   ARGV[3] burst   ARGV[4] cost
  ARGV[5]  now in microseconds, or "" to use Redis TIME
  ARGV[6]  leaky bucket only: queued requests that pass without waiting ("" = 0)
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

-- tostring() would print large numbers with an exponent.
local function int(n)
  return string.format('%d', n)
end

-- Redis counts a TTL from the script's start in whole milliseconds, up to 1 ms before `now`: one more
-- millisecond makes sure the key outlives its state.
local function ttl_ms(micros)
  return math.max(MIN_TTL_MS, ceil_div(micros, 1000) + 1)
end

function algorithm.load(key, limit, window, burst, cost, delay_after, now)
  local s = { key = key, limit = limit, cost = cost, now = now, used = 0 }
  s.index = floor_div(now, window)
  s.until_next = (s.index + 1) * window - now
  -- a key of another type (the policy changed its algorithm) reads as empty and is overwritten
  local ok, stored = pcall(redis.call, 'GET', key)
  if ok and stored then
    local index, count = string.match(stored, '^(-?%d+):(%d+)$')
    if tonumber(index) == s.index then
      s.used = tonumber(count)
    end
  end
  return s
end

function algorithm.admits(s)
  return s.used + s.cost <= s.limit
end

function algorithm.take(s)
  s.used = s.used + s.cost
  redis.call('SET', s.key, int(s.index) .. ':' .. int(s.used), 'PX', ttl_ms(s.until_next))
end

function algorithm.reply(s, allowed)
  -- a request that fits but was refused by a stacked policy has nothing to wait for here
  local retry = (not allowed and not algorithm.admits(s)) and s.until_next or 0
  local reset = (s.used > 0) and s.until_next or 0
  return { allowed and 1 or 0, s.limit - s.used, retry, reset, 0, 0, 0, 0 }
end

-- === entry point: the stacked script keeps only what is above this line ===

local function number(i, name)
  local value = tonumber(ARGV[i])
  if value == nil then
    error('ARGV[' .. i .. '] (' .. name .. ') must be an integer, was "' .. tostring(ARGV[i]) .. '"')
  end
  return value
end

local now = ARGV[5]
if now == nil or now == '' then
  -- Redis 3.2 to 4 refuse writes after TIME unless the script replicates its effects
  if redis.replicate_commands then
    redis.replicate_commands()
  end
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
else
  now = number(5, 'now')
end

local s = algorithm.load(KEYS[1], number(1, 'limit'), number(2, 'window'), number(3, 'burst'),
  number(4, 'cost'), tonumber(ARGV[6]) or 0, now)
local allowed = algorithm.admits(s)
if allowed then
  algorithm.take(s)
end
return algorithm.reply(s, allowed)
